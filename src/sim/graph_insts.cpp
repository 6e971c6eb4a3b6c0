#include "sim/graph_insts.hpp"

#include <algorithm>

namespace gpsm::sim {

// Block sizes from the SASS (graph_insts.hpp). pagerank_kernel<local>: 0000-0160 (23, always),
// 0170 (14, row), 0250 (6, unsplit), 02b0 + 0530 (15 + 2, edges), 03a0 (7) / 0410 (18) the
// remainder loop, 0550 (5) / 05a0 (41) the unrolled loop, 0830 (6, always), 0890 (3) / 08c0 (7)
// the shuffles, 0930 (1, always), 0940 (15) the store. Its push variant from 0940: 0940 + 09c0
// (8 + 6), 0a20 + 0a90 + 0f20 + 1180 (7 + 3 + 2 + 2) then 11a0 (21 per 4 stores), 12f0 (2),
// 1310 (4) / 1350 (8 per store), 13d0 (4). sssp_kernel<local>: 22 / 15 / 6 / 15 + 2, 03a0 (13) /
// 0470 (22), 05f0 (10) / 0690 (48), 0990 (6), 09f0 (3) / 0a20 (7), 0a90 (1), 0aa0 (16, the old
// value and the store), 0ba0 (3, changed). Its push variant from 0aa0: 0aa0 + 0b70 (13 + 6), 0bd0
// + 0c20 + 10b0 + 1310 (5 + 3 + 2 + 2), 1330 (21 per 4), 1480 (2), 14a0 (3) / 14d0 (8 per store),
// 1550 (2), 1570 (3, changed).
const RowKernelInsts& row_kernel_insts(bool pagerank) {
  static const RowKernelInsts pr{23 + 6 + 1, 14, 6, 17, 7, 18, 5, 41, 3, 7, 15, 0, 14, 14, 21, 2, 4, 8, 4};
  static const RowKernelInsts ss{22 + 6 + 1, 15, 6, 17, 13, 22, 10, 48, 3, 7, 16, 3, 19, 12, 21, 2, 3, 8, 2};
  return pagerank ? pr : ss;
}

void WarpLanes::add(bool split, std::int64_t trips, bool is_lane0, bool raised) {
  any_row = true;
  if (split) return;
  any_unsplit = true;
  if (trips > 0) {
    any_edges = true;
    max_rem = std::max(max_rem, trips & 3);
    max_quad = std::max(max_quad, trips >> 2);
  }
  if (is_lane0) {
    lane0 = true;
    changed = changed || raised;
  }
}

std::uint32_t warp_insts(const RowKernelInsts& c, const WarpLanes& w, int lanes, int push_gpus) {
  std::int64_t n = c.always;
  if (w.any_row) n += c.row;
  if (w.any_unsplit) n += c.unsplit;
  if (w.any_edges) n += c.edges;
  if (w.max_rem > 0) n += c.rem_setup + c.rem_iter * w.max_rem;
  if (w.max_quad > 0) n += c.quad_setup + c.quad_iter * w.max_quad;
  if (lanes > 1) {
    int halvings = 0;
    for (int l = lanes; l > 1; l /= 2) ++halvings;
    n += c.shfl_setup + c.shfl_step * halvings;
  }
  if (w.lane0) {
    if (push_gpus <= 0) {
      n += c.store;
    } else {
      n += c.push_head + c.push_join + c.push_end;
      if (push_gpus >= 4) n += c.push_mid + c.push_quad * (push_gpus / 4);
      if (push_gpus % 4 > 0) n += c.push_tail_setup + c.push_tail * (push_gpus % 4);
    }
    if (w.changed) n += c.changed;
  }
  return static_cast<std::uint32_t>(n);
}

}  // namespace gpsm::sim
