#include "runtime/sweep_plan.hpp"

#include <stdexcept>

namespace gpsm::gps {

std::uint64_t apply_chain_host(const std::vector<SweepRecord>& newest_first, std::vector<std::uint32_t>& block) {
  std::vector<bool> seen(block.size(), false);
  std::uint64_t wrote = 0;
  for (const SweepRecord& r : newest_first) {
    if (r.offset.size() != r.value.size()) throw std::invalid_argument("apply_chain_host: offsets and values differ");
    for (std::size_t i = 0; i < r.offset.size(); ++i) {
      const std::uint32_t o = r.offset[i];
      if (o >= block.size()) throw std::invalid_argument("apply_chain_host: offset past the block");
      if (seen[o]) continue;
      seen[o] = true;
      block[o] = r.value[i];
      ++wrote;
    }
  }
  return wrote;
}

}  // namespace gpsm::gps
