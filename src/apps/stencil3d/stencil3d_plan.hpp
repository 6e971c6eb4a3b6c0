#pragma once
// heat3d / wave3d work plan: how a step splits one rank's box into work items (x tile, other-axis
// tile, chunk of the march axis). Plain C++ (GPSM_HD where the kernels need it), so the GPU
// kernels (stencil3d_kernels.cu) and the simulator's instrumented execution (sim/trace_gen.cpp)
// run one and the same plan; the design is in stencil3d_kernels.cu's header comment.
#include <algorithm>
#include <cstdint>

#include "gpsm/gps/config.hpp"  // GPSM_HD

namespace gpsm::apps::stencil3d {

// One rank's local box: extents (x fastest), the split axis (0 = x, 1 = y, 2 = z) and the planes
// it owns along that axis, local [radius, radius + count).
struct Box {
  std::int64_t n[3] = {0, 0, 0};
  int axis = 2;
  std::int64_t count = 0;
};

constexpr int kStepTx = 32, kStepTy = 8;  // step block: a warp of columns along x, 8 of them along the other axis

// How a launch splits its box into work items.
struct Plan {
  std::int64_t x0 = 0;          // x of column 0's first cell
  std::int64_t cols = 0;        // columns along x (V cells each)
  std::int64_t tiles[3] = {};   // [0] x tiles of kStepTx columns, [1] other-axis tiles of kStepTy, [2] chunks along M
  std::int64_t chunk = 1;       // planes per interior chunk
  std::int64_t mi0 = 0, mi1 = 0;// interior chunks cover march coordinates [mi0, mi1)
  bool edges = false;           // chunks 0 and 1 are the pushed planes [R, 2R) and [count, count + R)
  bool x_first = false;         // x tiles vary slowest, in the order 0, last, 1, last - 1, ... (split along x)
  std::int64_t items = 0;
};

// The march axis: the split axis when it is y or z (its pushed planes become chunks of their
// own), else z.
inline int march_axis(const Box& b) { return b.axis == 1 ? 1 : 2; }

// Work items of one launch of radius r, V = v cells per thread: `target` = the blocks that run at
// once (items about equal to it make one wave), `pushes` = the launch stores to a neighbour (or
// scratch) on some side.
inline Plan make_plan(int r, int v, const Box& b, bool pushes, std::int64_t target) {
  using i64 = std::int64_t;
  auto ceil_div = [](i64 a, i64 d) { return (a + d - 1) / d; };
  const int m = march_axis(b), o = 3 - m;
  Plan p;
  p.x0 = v == 4 ? 0 : r;
  p.cols = v == 4 ? b.n[0] / 4 : b.n[0] - 2 * r;
  p.tiles[0] = ceil_div(p.cols, kStepTx);
  p.tiles[1] = ceil_div(b.n[o] - 2 * r, kStepTy);
  p.edges = pushes && b.axis == m && b.count >= 2 * r;
  p.x_first = pushes && b.axis == 0;
  p.mi0 = p.edges ? 2 * r : r;
  p.mi1 = p.edges ? b.count : b.n[m] - r;
  const i64 planes = p.mi1 - p.mi0;  // >= 1 unless edges (then the two edge chunks cover it all)
  const i64 edge_chunks = p.edges ? 2 : 0;
  const i64 want = std::max<i64>(1, target / (p.tiles[0] * p.tiles[1]) - edge_chunks);
  p.chunk = planes > 0 ? std::max(ceil_div(planes, want), std::min<i64>(planes, 4 * r)) : 1;
  p.tiles[2] = edge_chunks + (planes > 0 ? ceil_div(planes, p.chunk) : 0);
  p.items = p.tiles[0] * p.tiles[1] * p.tiles[2];
  return p;
}

// Work item w -> (x tile, other tile, chunk).
GPSM_HD void item_tiles(const Plan& p, std::int64_t w, std::int64_t& xt, std::int64_t& ot, std::int64_t& ch) {
  if (p.x_first) {
    const std::int64_t per = p.tiles[1] * p.tiles[2];
    const std::int64_t s = w / per, r = w - s * per;
    xt = (s & 1) ? p.tiles[0] - 1 - (s >> 1) : (s >> 1);
    ot = r % p.tiles[1];
    ch = r / p.tiles[1];
  } else {
    const std::int64_t per = p.tiles[0] * p.tiles[1];
    ch = w / per;
    const std::int64_t r = w - ch * per;
    xt = r % p.tiles[0];
    ot = r / p.tiles[0];
  }
}

}  // namespace gpsm::apps::stencil3d
