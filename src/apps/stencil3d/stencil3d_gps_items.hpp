#pragma once
// gps's work items split on the host by how each one runs (the 3D apps' gps paradigm, issue: GPS at
// hand-written speed): `plain` items read only pages this GPU holds and store only into pages no
// other GPU holds (a slab's interior), so they run the hand-written step on the replicas, with no
// span, mask or branch per item and none of the GPS path's registers; `gps` items (the planes a
// neighbour subscribes to, or any item whose input pages this GPU lacks) run the GPS step, which
// publishes their stores through the view. The split is asked of the runtime (Array::reach) once per
// subscription change (Array::subscription_version), not per item per launch: the per-item checks it
// replaces cost the 2-GPU step about 35 % more instructions and local memory (ncu, heat3d 256^3).
// Plain C++, so the CPU tests check the split against a cell-by-cell walk.
#include <cstdint>
#include <vector>

#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"
#include "gpsm/gps/subscription.hpp"

namespace gpsm::apps::stencil3d {

struct GpsItems {
  std::vector<std::int32_t> plain, gps;  // item indices of the plan, each list ascending
};

// Every item of plan p over sub-box sb (radius r, v cells per thread, the box's local (0, 0, 0) at
// global cell `origin`). in_reach(lo, hi) / out_reach(lo, hi): the runtime's Reach of this GPU for
// global cells [lo, hi) of the input / output array. An item is plain when every range its threads
// read (item_input_ranges, one per other-axis row of its tile, over the tile's columns) is held
// (not checked) and its stored cells are sole; items without a cell (tiles past the box) go nowhere.
template <class InReach, class OutReach>
GpsItems classify_gps_items(const Plan& p, const SubBox& sb, int r, int v, std::int64_t origin, InReach in_reach,
                            OutReach out_reach) {
  using i64 = std::int64_t;
  const Box& b = sb.box;
  const int m = march_axis(b), o = 3 - m;
  const i64 sm = m == 1 ? sb.sy : sb.sz, so = m == 1 ? sb.sz : sb.sy;
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
    bool plain = true;
    for (i64 co = o0; plain && co < o1; ++co) {
      CellRange rg[kMaxItemRanges];
      const int nr = item_input_ranges(r, static_cast<int>(width), m, origin, sb.sy, sb.sz, x, co, m0, m1, rg);
      for (int k = 0; plain && k < nr; ++k) plain = in_reach(rg[k].lo, rg[k].hi) != gps::Reach::checked;
      const i64 lo = origin + x + co * so + m0 * sm;
      plain = plain && out_reach(lo, lo + (m1 - 1 - m0) * sm + width) == gps::Reach::sole;
    }
    (plain ? out.plain : out.gps).push_back(static_cast<std::int32_t>(w));
  }
  return out;
}

}  // namespace gpsm::apps::stencil3d
