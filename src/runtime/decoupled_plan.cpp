#include "runtime/decoupled_plan.hpp"

#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

ChunkLayout chunk_layout(const Geometry& g, std::uint64_t chunk_bytes) {
  const int s = page_shift_of(chunk_bytes);
  if (s < 0)
    throw Error("gpsm: decoupled chunk size " + std::to_string(chunk_bytes) + " is not a power of two of at least " +
                std::to_string(kLineBytes) + " bytes");
  ChunkLayout l;
  l.padded_bytes = g.padded_bytes();
  l.page_shift = g.page_shift;
  l.chunk_shift = static_cast<std::uint32_t>(s) < g.page_shift ? static_cast<std::uint32_t>(s) : g.page_shift;
  if (l.chunks() > 0xFFFFFFFFull)
    throw Error("gpsm: " + std::to_string(l.chunks()) + " decoupled chunks in one array; use a larger chunk size");
  return l;
}

StoreCountLearner::StoreCountLearner(int devices, std::uint64_t chunks)
    : seen_(static_cast<std::size_t>(devices), std::vector<std::uint64_t>(chunks, 0)) {}

void StoreCountLearner::observe(const std::vector<std::vector<std::uint64_t>>& counts) {
  if (counts.size() != seen_.size())
    throw Error("gpsm: store counts of " + std::to_string(counts.size()) + " devices for a learner of " +
                std::to_string(seen_.size()));
  bool any = false;
  for (std::size_t d = 0; d < counts.size(); ++d) {
    if (counts[d].size() != seen_[d].size())
      throw Error("gpsm: store counts of " + std::to_string(counts[d].size()) + " chunks for a learner of " +
                  std::to_string(seen_[d].size()));
    for (std::uint64_t x : counts[d]) any = any || x != 0;
  }
  if (!any) return;
  for (std::size_t d = 0; d < counts.size(); ++d)
    for (std::size_t c = 0; c < counts[d].size(); ++c) {
      std::uint64_t& s = seen_[d][c];
      if (intervals_ == 0)
        s = counts[d][c];
      else if (s != counts[d][c])
        s = kDisagree;
    }
  ++intervals_;
}

std::vector<std::vector<std::uint64_t>> StoreCountLearner::expectations(const std::vector<std::uint32_t>& masks,
                                                                        const ChunkLayout& layout) const {
  const std::size_t n = seen_.size();
  std::vector<std::vector<std::uint64_t>> out(n, std::vector<std::uint64_t>(layout.chunks(), 0));
  if (intervals_ == 0) return out;
  for (std::uint64_t c = 0; c < layout.chunks(); ++c) {
    if (c >= (n ? seen_[0].size() : 0)) break;
    const std::uint64_t page = layout.page_of_chunk(c);
    if (page >= masks.size()) throw Error("gpsm: chunk " + std::to_string(c) + " lies past the subscription table");
    const std::uint32_t m = masks[page];
    for (std::size_t d = 0; d < n; ++d) {
      const std::uint64_t x = seen_[d][c];
      if (x == 0 || x == kDisagree || x >= kIrregularCount) continue;
      bool alone = true;
      for (std::size_t e = 0; e < n; ++e) alone = alone && (e == d || seen_[e][c] == 0);
      const std::uint32_t me = bit(static_cast<int>(d));
      if (alone && (m & me) && (m & ~me & ((1u << kMaxDevices) - 1u))) out[d][c] = x;
    }
  }
  return out;
}

std::vector<std::uint32_t> learned_chunks(const std::vector<std::uint64_t>& expect) {
  std::vector<std::uint32_t> out;
  for (std::size_t c = 0; c < expect.size(); ++c)
    if (expect[c] != 0) out.push_back(static_cast<std::uint32_t>(c));
  return out;
}

}  // namespace gpsm::gps
