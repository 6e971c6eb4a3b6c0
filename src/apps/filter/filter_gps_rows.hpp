#pragma once
// The filter's gps pass split on the host by how its rows run (as the 3D apps split their work
// items, stencil3d_gps_items.hpp): the band of a slab's rows whose input rows (the row and `r`
// rows either side) this GPU holds and whose output rows no other GPU holds runs the plain pass
// on the replicas, with no span or mask per tile; the rows around it (those a neighbour reads, or
// whose input pages this GPU lacks) run the GPS pass, which publishes their stores. Asked of the
// runtime (Array::reach) once per subscription change (Array::subscription_version). Plain C++
// for the CPU tests.
#include <algorithm>
#include <cstdint>

#include "gpsm/gps/subscription.hpp"

namespace gpsm::apps::filter {

// [y0, plain_lo) and [plain_hi, y1) run the GPS pass, [plain_lo, plain_hi) the plain one (empty
// when plain_lo == plain_hi, then every row is the GPS pass's: plain_lo = plain_hi = y1).
struct RowSplit {
  std::int64_t plain_lo = 0, plain_hi = 0;
};

// Rows [y0, y1) of an image `height` rows tall, filter radius r. in_reach(lo, hi) / out_reach(lo,
// hi): the runtime's Reach of this GPU for rows [lo, hi) of the input / output image. The plain
// band is the longest run of rows each of which is plain by itself (the first such run if several
// are as long).
template <class InReach, class OutReach>
RowSplit split_rows(std::int64_t y0, std::int64_t y1, std::int64_t r, std::int64_t height, InReach in_reach,
                    OutReach out_reach) {
  RowSplit best{y1, y1};
  std::int64_t run = y0;  // first row of the current run of plain rows
  for (std::int64_t y = y0; y < y1; ++y) {
    const bool plain = out_reach(y, y + 1) == gps::Reach::sole &&
                       in_reach(std::max<std::int64_t>(y - r, 0), std::min(y + r + 1, height)) != gps::Reach::checked;
    if (!plain) {
      run = y + 1;
      continue;
    }
    if (y + 1 - run > best.plain_hi - best.plain_lo) best = {run, y + 1};
  }
  return best;
}

}  // namespace gpsm::apps::filter
