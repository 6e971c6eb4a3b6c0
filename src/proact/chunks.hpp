#pragma once
// PROACT chunk mapping (PROACT dissertation §2.3.2, Algorithm 1): an array split into transfer
// chunks, which producer blocks write which chunk, and the per-chunk readiness counters. Plain C++.
//
// Each phase a chunk's counter starts at the number of producer blocks that write it; every such
// block decrements it once after its block barrier; the block that brings it to 0 marks the chunk
// ready (flag = phase number), and an agent ships it. Counters are reset from `initial` before
// every phase; flags are never reset (a flag >= phase means ready in this phase).
#include <cstdint>
#include <vector>

#include "proact/chunk_math.hpp"

namespace gpsm::proact {

struct ByteRange {
  std::uint64_t begin = 0, end = 0;  // [begin, end)
};

class ChunkPlan {
 public:
  // block_ranges[b]: the bytes producer block b writes (empty ranges: blocks that write nothing).
  // Throws gpsm::Error for chunk_bytes == 0, bytes == 0, a range outside [0, bytes) or reversed,
  // or a chunk no block writes (it would never become ready), naming the block or chunk.
  ChunkPlan(std::uint64_t bytes, std::uint64_t chunk_bytes, const std::vector<ByteRange>& block_ranges);

  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::uint64_t chunks() const { return initial_.size(); }
  std::uint64_t blocks() const { return offsets_.size() - 1; }
  ByteRange chunk_range(std::uint64_t c) const;
  // Counter start values, one per chunk: what the device counters are reset to every phase.
  const std::vector<std::uint32_t>& initial() const { return initial_; }
  // The chunks block b writes, ascending.
  std::vector<std::uint64_t> chunks_of_block(std::uint64_t b) const;

 private:
  std::uint64_t bytes_ = 0, chunk_bytes_ = 0;
  std::vector<std::uint32_t> initial_;
  std::vector<std::uint64_t> offsets_;  // CSR over blocks
  std::vector<std::uint64_t> chunk_ids_;
};

// Block b writes [b * block_bytes, (b + 1) * block_bytes) clipped to bytes (the synthetic
// producer and any grid-strided-free kernel). Throws gpsm::Error for a zero size.
std::vector<ByteRange> uniform_block_ranges(std::uint64_t bytes, std::uint64_t block_bytes);

// The host model of one phase of the device counters (Algorithm 1), used by the tests and to
// check a mapping before a run: block_done(b) decrements b's chunks and returns those that
// reached zero (became ready). A block reported twice in a phase throws gpsm::Error.
class ReadyTracker {
 public:
  explicit ReadyTracker(const ChunkPlan& plan);
  void reset();  // start of a phase
  std::vector<std::uint64_t> block_done(std::uint64_t b);
  bool ready(std::uint64_t c) const { return remaining_.at(c) == 0; }
  std::uint64_t ready_count() const { return ready_count_; }

 private:
  const ChunkPlan& plan_;
  std::vector<std::uint32_t> remaining_;
  std::vector<bool> done_;
  std::uint64_t ready_count_ = 0;
};

}  // namespace gpsm::proact
