#pragma once
// Host logic of the decoupled publish mode (CUDA-free, tested on the CPU): the chunk layout of an
// array, and the reduction of the store counts seen while tracking into the count each device's
// readiness counter must reach before its agent pushes the chunk (PROACT dissertation, Algorithm 1,
// with the counters' start values learned from the user's kernel instead of written by hand).
#include <cstdint>
#include <vector>

#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps {

// Chunks of chunk_bytes (capped at the page, so each chunk has one subscriber mask) over the
// array's padded bytes; the last chunk may be shorter. Lines are the dirty bitmap's words.
struct ChunkLayout {
  std::uint64_t padded_bytes = 0;
  std::uint32_t chunk_shift = 14;
  std::uint32_t page_shift = 16;

  std::uint64_t chunk_bytes() const { return std::uint64_t{1} << chunk_shift; }
  std::uint64_t chunks() const { return (padded_bytes + chunk_bytes() - 1) >> chunk_shift; }
  std::uint64_t first_line(std::uint64_t c) const { return (c << chunk_shift) / kLineBytes; }
  std::uint64_t end_line(std::uint64_t c) const {
    const std::uint64_t e = (c + 1) << chunk_shift;
    return (e < padded_bytes ? e : padded_bytes) / kLineBytes;
  }
  std::uint64_t page_of_chunk(std::uint64_t c) const { return (c << chunk_shift) >> page_shift; }
};
// Throws gpsm::Error for a chunk size that is not a power of two of at least one line.
ChunkLayout chunk_layout(const Geometry& g, std::uint64_t chunk_bytes);

// Store counts per fence interval while tracking, per device and chunk (words stored by that
// device into that chunk). A chunk keeps a count only when every interval agreed on it.
class StoreCountLearner {
 public:
  StoreCountLearner() = default;
  StoreCountLearner(int devices, std::uint64_t chunks);
  // counts[d][c] of one interval; an interval in which no device stored a word is skipped (a fence
  // with no kernel in between says nothing about the kernel).
  void observe(const std::vector<std::vector<std::uint64_t>>& counts);
  std::uint64_t intervals() const { return intervals_; }
  // The count device d's counter must reach before its agent pushes chunk c, or 0 (the fence
  // publishes the chunk): the intervals agreed, d was the chunk's only writer (a push copies d's
  // dirty words, but a chunk with several writers gains nothing from being pushed by one), d
  // subscribes to the chunk's page under `masks` and the page has another subscriber.
  std::vector<std::vector<std::uint64_t>> expectations(const std::vector<std::uint32_t>& masks,
                                                       const ChunkLayout& layout) const;

 private:
  static constexpr std::uint64_t kDisagree = ~std::uint64_t{0};
  std::vector<std::vector<std::uint64_t>> seen_;
  std::uint64_t intervals_ = 0;
};

// The chunks with a non-zero expectation, in order (what a persistent agent polls).
std::vector<std::uint32_t> learned_chunks(const std::vector<std::uint64_t>& expect);

}  // namespace gpsm::gps
