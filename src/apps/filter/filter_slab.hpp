#pragma once
// Rows split in contiguous blocks over the GPUs (the even split of common/even_parts.hpp, the
// same cuts as the distributed array's blocks::along(..., Axis::y, n)), and the halo rows each GPU
// needs from its neighbours for a K x K filter. Plain C++, checked by the CPU tests.
#include <cstdint>

namespace gpsm::apps::filter {

// Rank r's part of an image of `height` rows. The hand-written paradigms keep it in a local
// buffer of rows + 2*halo rows: local row halo + (gy - first) holds image row gy, so the halo
// above is local rows [halo - above, halo) and the halo below [halo + rows, halo + rows + below).
struct FilterSlab {
  std::int64_t first = 0, rows = 0;  // owned image rows [first, first + rows)
  std::int64_t halo = 0;             // (K-1)/2
  std::int64_t above = 0, below = 0; // halo rows that are image rows (fewer at the image's edges)
  int top = -1, bottom = -1;         // the neighbours' ranks; -1 at the image's edge
  std::int64_t local_rows() const { return rows + 2 * halo; }
  std::int64_t local_row(std::int64_t gy) const { return gy - first + halo; }
};

// split_problem (filter_spec.hpp) must be "" for (height, k, parts): every neighbour then holds
// the whole halo it sends (above, below <= its rows).
FilterSlab filter_slab(std::int64_t height, int k, int parts, int rank);

}  // namespace gpsm::apps::filter
