#include "proact/destinations.hpp"

#include <fmt/format.h>

#include "gpsm/error.hpp"

namespace gpsm::proact {

std::vector<std::uint32_t> destinations_all_peers(const ChunkPlan& plan, int ranks, int producer) {
  if (ranks < 1 || ranks > 32)
    throw Error(fmt::format("gpsm proact: {} ranks; a destination mask holds 1 to 32", ranks));
  if (producer < 0 || producer >= ranks)
    throw Error(fmt::format("gpsm proact: producer rank {} outside [0, {})", producer, ranks));
  const std::uint32_t all = ranks == 32 ? 0xffffffffu : ((1u << ranks) - 1u);
  return std::vector<std::uint32_t>(plan.chunks(), all & ~(1u << producer));
}

std::vector<std::uint32_t> destinations_from_subscriptions(const gps::SubscriptionTable& table,
                                                           std::uint64_t page_bytes, const ChunkPlan& plan,
                                                           int producer, std::uint64_t array_offset) {
  if (page_bytes == 0) throw Error("gpsm proact: page size 0 in the subscription lookup");
  if (producer < 0 || producer >= table.devices())
    throw Error(fmt::format("gpsm proact: producer rank {} is not a rank of the subscription table ({} devices)",
                            producer, table.devices()));
  const std::uint64_t end = array_offset + plan.bytes();
  if (end > table.pages() * page_bytes)
    throw Error(fmt::format("gpsm proact: producer slice [{}, {}) runs past the array's {} pages of {} bytes",
                            array_offset, end, table.pages(), page_bytes));
  std::vector<std::uint32_t> out(plan.chunks(), 0);
  for (std::uint64_t c = 0; c < plan.chunks(); ++c) {
    const ByteRange r = plan.chunk_range(c);
    std::uint32_t m = 0;
    for (std::uint64_t p = (array_offset + r.begin) / page_bytes; p <= (array_offset + r.end - 1) / page_bytes; ++p)
      m |= table.mask(p);
    out[c] = m & ~(1u << producer);
  }
  return out;
}

std::vector<int> ranks_of(std::uint32_t mask) {
  std::vector<int> out;
  for (int r = 0; r < 32; ++r)
    if ((mask >> r) & 1u) out.push_back(r);
  return out;
}

}  // namespace gpsm::proact
