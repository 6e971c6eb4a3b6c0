#pragma once
// gps's work items split on the host by how each one runs (the 3D apps' gps paradigm, issue: GPS at
// hand-written speed), asked of the runtime once per subscription change
// (Array::subscription_version), not per item per launch:
// - `plain` items read only pages this GPU holds and store only into pages no other GPU holds (a
//   slab's interior): the hand-written step on the replicas, with no span, mask or branch;
// - `published` items read only held pages and store into runs whose pages all have one
//   subscriber set, this GPU among them (the planes a neighbour reads): the same hand-written
//   march, each stored vector put through View::span_with(mask) with the mask the host asked
//   (Array::subscribers), so it reaches the other subscribers with no mask read on the device;
// - `gps` items (any other: an input page this GPU lacks, stores into runs of mixed subscribers)
//   run the GPS step, whose views check per item and per store.
// Why: with per-item checks the published planes cost a 4-GPU 512^3 heat3d step 18.5 us of its own
// against about 1.6 us inside the hand-written step (Nsight Compute, serialized; the checks' mask
// reads are dependent loads and the publishing path spilled), which held gps at 1.13x um_hints.
// Plain C++, so the CPU tests check the split against a cell-by-cell walk.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"
#include "gpsm/gps/subscription.hpp"

namespace gpsm::apps::stencil3d {

struct GpsItems {
  std::vector<std::int32_t> plain, published, gps;  // item indices of the plan, each list ascending
  std::vector<std::uint32_t> published_mask;        // per published item: its stored runs' subscribers
};

// Every item of plan p over sub-box sb (radius r, v cells per thread, the box's local (0, 0, 0) at
// global cell `origin`) of rank `rank`. in_reach(lo, hi): the runtime's Reach of this GPU for
// global cells [lo, hi) of the input array; out_subscribers(lo, hi): the RangeSubscribers of those
// cells of the output array. An item's ranges are, per other-axis row of its tile, what its threads
// read (item_input_ranges, over the tile's columns) and store; it is plain when every input range
// is held (not checked) and every stored range has this GPU alone, published when the inputs are
// held and every stored range is uniform with one mask that holds this GPU and another, else gps.
// Items without a cell (tiles past the box) go nowhere.
template <class InReach, class OutSubscribers>
GpsItems classify_gps_items(const Plan& p, const SubBox& sb, int r, int v, std::int64_t origin, int rank,
                            InReach in_reach, OutSubscribers out_subscribers) {
  using i64 = std::int64_t;
  const Box& b = sb.box;
  const int m = march_axis(b), o = 3 - m;
  const i64 sm = m == 1 ? sb.sy : sb.sz, so = m == 1 ? sb.sz : sb.sy;
  const std::uint32_t me = 1u << rank;
  GpsItems out;
  for (i64 w = 0; w < p.items; ++w) {
    i64 xt = 0, ot = 0, ch = 0;
    item_tiles(p, w, xt, ot, ch);
    const i64 c0 = xt * kStepTx, c1 = std::min<i64>(c0 + kStepTx, p.cols);
    const i64 o0 = r + ot * kStepTy, o1 = std::min<i64>(o0 + kStepTy, b.n[o] - r);
    if (c0 >= c1 || o0 >= o1) continue;
    i64 m0 = 0, m1 = 0;
    chunk_range(p, b.count, r, ch, m0, m1);
    if (m0 >= m1) continue;
    const i64 x = p.x0 + c0 * v, width = (c1 - c0) * v;
    bool held = true, uniform = true;
    std::uint32_t mask = 0;
    for (i64 co = o0; held && uniform && co < o1; ++co) {
      CellRange rg[kMaxItemRanges];
      const int nr = item_input_ranges(r, static_cast<int>(width), m, origin, sb.sy, sb.sz, x, co, m0, m1, rg);
      for (int k = 0; held && k < nr; ++k) held = in_reach(rg[k].lo, rg[k].hi) != gps::Reach::checked;
      const i64 lo = origin + x + co * so + m0 * sm;
      const gps::RangeSubscribers s = out_subscribers(lo, lo + (m1 - 1 - m0) * sm + width);
      uniform = s.uniform && (co == o0 || s.mask == mask);
      mask = s.mask;
    }
    const auto item = static_cast<std::int32_t>(w);
    if (held && uniform && mask == me) {
      out.plain.push_back(item);
    } else if (held && uniform && (mask & me)) {
      out.published.push_back(item);
      out.published_mask.push_back(mask);
    } else {
      out.gps.push_back(item);
    }
  }
  return out;
}

}  // namespace gpsm::apps::stencil3d
