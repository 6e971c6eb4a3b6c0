#pragma once
// Index math shared by the PROACT host plan (chunks.cpp) and the device code (producer and
// agents): a producer's slice of `bytes` is written by blocks of `block_bytes` each (block b
// writes [b * block_bytes, (b + 1) * block_bytes) clipped to the slice) and shipped in chunks of
// `chunk_bytes` (chunk c is [c * chunk_bytes, (c + 1) * chunk_bytes) clipped). CUDA-free.
#include <cstdint>

#include "common/warp_groups.hpp"
#include "gpsm/gps/config.hpp"  // GPSM_HD

namespace gpsm::proact {

GPSM_HD std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

struct ChunkGeometry {
  std::uint64_t bytes = 0;        // the producer's slice
  std::uint64_t chunk_bytes = 0;  // transfer granularity
  std::uint64_t block_bytes = 0;  // bytes one producer block writes

  GPSM_HD std::uint64_t chunks() const { return ceil_div(bytes, chunk_bytes); }
  GPSM_HD std::uint64_t blocks() const { return ceil_div(bytes, block_bytes); }
  GPSM_HD std::uint64_t chunk_begin(std::uint64_t c) const { return c * chunk_bytes; }
  GPSM_HD std::uint64_t chunk_end(std::uint64_t c) const {
    const std::uint64_t e = (c + 1) * chunk_bytes;
    return e < bytes ? e : bytes;
  }
  // The chunks block b writes: [first_chunk(b), last_chunk(b)] (a block larger than a chunk, or
  // straddling a chunk boundary, writes several; the block decrements each of their counters).
  GPSM_HD std::uint64_t first_chunk(std::uint64_t b) const { return (b * block_bytes) / chunk_bytes; }
  GPSM_HD std::uint64_t last_chunk(std::uint64_t b) const {
    const std::uint64_t e = (b + 1) * block_bytes;
    return ((e < bytes ? e : bytes) - 1) / chunk_bytes;
  }
  // How many blocks write chunk c: the counter's start value each phase.
  GPSM_HD std::uint32_t writers(std::uint64_t c) const {
    const std::uint64_t first_block = chunk_begin(c) / block_bytes;
    const std::uint64_t last_block = (chunk_end(c) - 1) / block_bytes;
    return static_cast<std::uint32_t>(last_block - first_block + 1);
  }
};

// The persistent agent's warp groups (common/warp_groups.hpp, shared with the GPS runtime's
// decoupled agent).
using gpsm::warps_per_group;

}  // namespace gpsm::proact
