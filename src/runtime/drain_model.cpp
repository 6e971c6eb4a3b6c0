#include "gpsm/gps/drain_model.hpp"

#include <string>

#include "gpsm/error.hpp"

namespace gpsm::gps {

std::vector<DrainPlan> plan_drain(const Geometry& g, const std::uint32_t* dirty, const std::uint32_t* src_words,
                                  const std::uint32_t* masks, int self) {
  if (self < 0 || self >= kMaxDevices)
    throw Error("gpsm: drain plan for device " + std::to_string(self) + ": devices are 0.." +
                std::to_string(kMaxDevices - 1));
  const std::uint64_t lines = g.lines();
  if (lines == 0) return {};
  if (dirty == nullptr || src_words == nullptr || masks == nullptr)
    throw Error("gpsm: drain plan got a null dirty bitmap, source replica or mask table");
  if (g.words() > kMaxPackedWords)
    throw Error("gpsm: an allocation of " + std::to_string(g.bytes) +
                " bytes is too large for packed entries (32-bit word offsets cover 16 GiB); use bulk mode or split "
                "the array");

  DrainPlan plans[32];
  for (int d = 0; d < 32; ++d) plans[d].dst = d;
  std::uint32_t receivers = 0;
  for (std::uint64_t l = 0; l < lines; ++l) {
    const std::uint32_t mask = dirty[l];
    if (mask == 0) continue;
    const std::uint32_t dsts = masks[g.page_of_line(l)] & ~bit(self);
    if (dsts == 0) continue;
    receivers |= dsts;
    const bool packed = pack_line(mask);
    const std::uint32_t useful = static_cast<std::uint32_t>(popcount32(mask)) * kWordBytes;
    const std::uint32_t link = packed ? packed_link_bytes(mask) : direct_link_bytes(mask);
    for (std::uint32_t rest = dsts; rest; rest &= rest - 1) {
      DrainPlan& p = plans[__builtin_ctz(rest)];
      if (packed) {
        for (std::uint32_t m = mask; m; m &= m - 1) {
          const std::uint64_t w = l * kLineWords + static_cast<std::uint32_t>(__builtin_ctz(m));
          p.packed.push_back({static_cast<std::uint32_t>(w), src_words[w]});
        }
      } else {
        p.direct.push_back({l, mask});
      }
      p.useful_bytes += useful;
      p.link_bytes += link;
    }
  }
  std::vector<DrainPlan> out;
  for (int d = 0; d < 32; ++d)
    if ((receivers >> d) & 1u) out.push_back(std::move(plans[d]));
  return out;
}

void apply_drain(const DrainPlan& plan, const std::uint32_t* src_words, std::uint32_t* dst_words) {
  for (const LineWrite& lw : plan.direct)
    for (std::uint32_t m = lw.mask; m; m &= m - 1) {
      const std::uint64_t w = lw.line * kLineWords + static_cast<std::uint32_t>(__builtin_ctz(m));
      dst_words[w] = src_words[w];
    }
  for (const PackedEntry& e : plan.packed) dst_words[e.word] = e.value;
}

}  // namespace gpsm::gps
