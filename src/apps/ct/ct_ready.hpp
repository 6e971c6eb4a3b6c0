#pragma once
// Readiness counting of the multi-GPU update (the PROACT dissertation's per-chunk counters,
// §3.2.3): the update kernel's blocks each hold a run of consecutive voxel columns of a GPU's
// y-slab (all z runs of each, ct_forward_tiles.hpp), in slab order, and a slab's readiness chunks are runs of `per` whole
// columns (CtPartition::image_chunks). When a block has written all its columns it adds, to each
// chunk its columns fall in, how many of them fall there; a chunk's counter then reaches its
// column count (Chunk::target) exactly when every column of the chunk is written, whichever order
// the blocks finish in. Counters are never reset within a solve: after u updates a chunk is ready
// for the u-th time when its counter reaches u * target (the copy's wait, cyclic >=).
// Host and device share these (the kernel calls them; the CPU test sums them over every block).
#include <cstdint>

#include "apps/ct/ct_geometry.hpp"  // GPSM_CT_HD

namespace gpsm::apps::ct {

// The chunks columns [first, end) of a slab touch: [first / per, (end - 1) / per].
GPSM_CT_HD inline std::int64_t first_chunk(std::int64_t first, std::int64_t per) { return first / per; }
GPSM_CT_HD inline std::int64_t last_chunk(std::int64_t end, std::int64_t per) { return (end - 1) / per; }

// How many of columns [first, end) fall in chunk c of `per` columns.
GPSM_CT_HD inline std::int64_t columns_in_chunk(std::int64_t first, std::int64_t end, std::int64_t per,
                                                std::int64_t c) {
  const std::int64_t a = first > c * per ? first : c * per;
  const std::int64_t b = end < (c + 1) * per ? end : (c + 1) * per;
  return b > a ? b - a : 0;
}

}  // namespace gpsm::apps::ct
