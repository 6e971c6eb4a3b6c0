#include "proact/chunks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "gpsm/error.hpp"

namespace gpsm::proact {

ChunkPlan::ChunkPlan(std::uint64_t bytes, std::uint64_t chunk_bytes, const std::vector<ByteRange>& block_ranges)
    : bytes_(bytes), chunk_bytes_(chunk_bytes) {
  if (bytes == 0) throw Error("gpsm proact: chunk plan of an empty array (0 bytes); give the array a size");
  if (chunk_bytes == 0) throw Error("gpsm proact: chunk size 0; use a chunk size of at least 4 KiB");
  const std::uint64_t n = ceil_div(bytes, chunk_bytes);
  initial_.assign(n, 0);
  offsets_.reserve(block_ranges.size() + 1);
  offsets_.push_back(0);
  for (std::size_t b = 0; b < block_ranges.size(); ++b) {
    const auto& r = block_ranges[b];
    if (r.begin > r.end || r.end > bytes)
      throw Error(fmt::format("gpsm proact: block {} writes [{}, {}), outside the array [0, {}); fix the block->range "
                              "mapping",
                              b, r.begin, r.end, bytes));
    if (r.begin < r.end)
      for (std::uint64_t c = r.begin / chunk_bytes; c <= (r.end - 1) / chunk_bytes; ++c) {
        if (initial_[c] == UINT32_MAX) throw Error(fmt::format("gpsm proact: chunk {} has over 2^32 writers", c));
        ++initial_[c];
        chunk_ids_.push_back(c);
      }
    offsets_.push_back(chunk_ids_.size());
  }
  for (std::uint64_t c = 0; c < n; ++c)
    if (initial_[c] == 0)
      throw Error(fmt::format("gpsm proact: no producer block writes chunk {} (bytes [{}, {})), so it would never "
                              "become ready; the block->range mapping must cover the whole array",
                              c, c * chunk_bytes, std::min(bytes, (c + 1) * chunk_bytes)));
}

ByteRange ChunkPlan::chunk_range(std::uint64_t c) const {
  if (c >= chunks()) throw Error(fmt::format("gpsm proact: chunk {} of {}", c, chunks()));
  return {c * chunk_bytes_, std::min(bytes_, (c + 1) * chunk_bytes_)};
}

std::vector<std::uint64_t> ChunkPlan::chunks_of_block(std::uint64_t b) const {
  if (b >= blocks()) throw Error(fmt::format("gpsm proact: block {} of {}", b, blocks()));
  return {chunk_ids_.begin() + static_cast<std::ptrdiff_t>(offsets_[b]),
          chunk_ids_.begin() + static_cast<std::ptrdiff_t>(offsets_[b + 1])};
}

std::vector<ByteRange> uniform_block_ranges(std::uint64_t bytes, std::uint64_t block_bytes) {
  if (bytes == 0 || block_bytes == 0)
    throw Error(fmt::format("gpsm proact: uniform blocks of {} bytes over {} bytes; both must be > 0", block_bytes,
                            bytes));
  const ChunkGeometry g{bytes, block_bytes, block_bytes};
  std::vector<ByteRange> out(g.blocks());
  for (std::uint64_t b = 0; b < out.size(); ++b) out[b] = {b * block_bytes, std::min(bytes, (b + 1) * block_bytes)};
  return out;
}

ReadyTracker::ReadyTracker(const ChunkPlan& plan) : plan_(plan) { reset(); }

void ReadyTracker::reset() {
  remaining_ = plan_.initial();
  done_.assign(plan_.blocks(), false);
  ready_count_ = 0;
}

std::vector<std::uint64_t> ReadyTracker::block_done(std::uint64_t b) {
  if (b >= done_.size()) throw Error(fmt::format("gpsm proact: block {} of {}", b, done_.size()));
  if (done_[b]) throw Error(fmt::format("gpsm proact: block {} reported done twice in one phase", b));
  done_[b] = true;
  std::vector<std::uint64_t> ready;
  for (std::uint64_t c : plan_.chunks_of_block(b))
    if (--remaining_[c] == 0) {
      ready.push_back(c);
      ++ready_count_;
    }
  return ready;
}

}  // namespace gpsm::proact
