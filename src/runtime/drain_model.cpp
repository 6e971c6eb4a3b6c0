#include "runtime/drain_model.hpp"

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
  std::uint64_t last_record[32];  // block of each destination's latest record, + 1 (0: none)
  std::uint32_t record_entries[32];
  for (int d = 0; d < 32; ++d) {
    plans[d].dst = d;
    last_record[d] = 0;
    record_entries[d] = 0;
  }
  auto close_record = [&](int d) {  // the record's padding to a whole number of 8-entry groups
    plans[d].link_bytes += std::uint64_t{kPackedEntryBytes} * (padded_entries(record_entries[d]) - record_entries[d]);
    record_entries[d] = 0;
  };
  const std::uint32_t block_lines = block_lines_for(g.page_shift);
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
      const int d = __builtin_ctz(rest);
      DrainPlan& p = plans[d];
      if (packed && last_record[d] != l / block_lines + 1) {  // lines come in order: a new block
        close_record(d);
        last_record[d] = l / block_lines + 1;
        p.records += 1;
        p.link_bytes += kDirEntryBytes;
      }
      if (packed) {
        record_entries[d] += static_cast<std::uint32_t>(popcount32(mask));
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
  for (int d = 0; d < 32; ++d) close_record(d);
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
