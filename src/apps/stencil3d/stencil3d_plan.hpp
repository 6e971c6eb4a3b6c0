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

// Strides of a step's buffers (x stride 1): explicit ones (um: a rank's sub-box of the global
// grid, whose rows and planes are the grid's), or 0 for the box's own extents.
GPSM_HD std::int64_t row_stride(const Box& b, std::int64_t sy) { return sy != 0 ? sy : b.n[0]; }
GPSM_HD std::int64_t plane_stride(const Box& b, std::int64_t sz) { return sz != 0 ? sz : b.n[0] * b.n[1]; }

// Where a step reads cells of the split axis that lie outside the box's owned planes (rdl):
// a neighbour's buffer, its y and z strides, and the shift from this box's split coordinate to
// the neighbour's (the two other coordinates are the same in both boxes). Push's mapping, for
// loads. src == nullptr: that side's planes come from the box itself.
struct Remote {
  const float* src = nullptr;
  std::int64_t sy = 0, sz = 0, shift = 0;
};

// Index in r.src of the cell at x, other-axis coordinate o and march coordinate m (this box's
// local coordinates) of a march along axis m_axis (1 = y, 2 = z; the other axis is 3 - m_axis).
GPSM_HD std::int64_t remote_index(const Remote& r, int m_axis, std::int64_t x, std::int64_t o, std::int64_t m) {
  const std::int64_t sm = m_axis == 1 ? r.sy : r.sz, so = m_axis == 1 ? r.sz : r.sy;
  return x + o * so + (m + r.shift) * sm;
}

// The coordinates along axis a whose cells a step of radius r reads from the remote sources:
// < lo from the lower one, >= hi from the upper one. Only the halo of a split along a, and only
// on a side that has a source (else lo = 0 / hi = INT64_MAX: never). The march asks for its march
// axis (halo planes, split along y or z) and for x (halo columns, split along x).
struct RemotePlanes {
  std::int64_t lo = 0, hi = INT64_MAX;
};
GPSM_HD RemotePlanes remote_planes(const Box& b, int a, int r, bool lower, bool upper) {
  RemotePlanes p;
  if (b.axis != a) return p;
  if (lower) p.lo = r;
  if (upper) p.hi = r + b.count;
  return p;
}

// Split along x: index in r.src of this box's cell (x, y, z), x a halo column.
GPSM_HD std::int64_t remote_x_index(const Remote& r, std::int64_t x, std::int64_t y, std::int64_t z) {
  return (x + r.shift) + y * r.sy + z * r.sz;
}

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
// once, `pushes` = the launch stores to a neighbour (or scratch) on some side.
//
// The interior chunk length is chosen by the longest block: items go to `target` slots in order
// (item w to slot w % target, as the persistent kernel runs them; the hardware's dynamic block
// scheduling of the step kernel does no worse), an item of c planes costing c + 2R plane loads
// (the register queue is primed with 2R planes). Edge chunks are R planes and cheap, so they are
// not subtracted from the slots as whole items: at 512^3 on 4 GPUs (heat, 256 x/y tiles, 528
// slots) that rule gave one 126-plane chunk per tile, 768 items and the long ones on half the
// slots; the split below gives two 63-plane chunks. Chunks are at least 4R planes (or all of
// them), so the re-read planes at chunk ends stay a small part of the traffic.
inline std::int64_t plan_ceil_div(std::int64_t a, std::int64_t d) { return (a + d - 1) / d; }

inline std::int64_t plan_interior_chunks(std::int64_t planes, std::int64_t tiles01, std::int64_t edge_chunks, int r,
                                         std::int64_t target) {
  using i64 = std::int64_t;
  const auto ceil_div = plan_ceil_div;
  if (planes <= 0) return 1;
  target = std::max<i64>(1, target);
  const i64 min_chunk = std::min<i64>(planes, 4 * r);
  const i64 most = std::max<i64>(1, std::min(ceil_div(planes, min_chunk), ceil_div(2 * target, tiles01) + 1));
  i64 best_chunk = planes, best_cost = -1, best_items = 0;
  for (i64 want = 1; want <= most; ++want) {
    const i64 chunk = std::max(ceil_div(planes, want), min_chunk);
    const i64 chunks = ceil_div(planes, chunk);
    const i64 items = tiles01 * (edge_chunks + chunks);
    // The longest slot: slot s gets items s, s + target, ...; items are ordered chunk by chunk
    // (all tiles of chunk 0, then chunk 1, ...), the edge chunks first.
    i64 worst = 0;
    const i64 slots = std::min(items, target);
    for (i64 s = 0; s < slots; ++s) {
      i64 cost = 0;
      for (i64 w = s; w < items; w += target) {
        const i64 ch = w / tiles01;
        if (ch < edge_chunks) {
          cost += 3 * r;
        } else {
          const i64 k = ch - edge_chunks, first = k * chunk;
          cost += std::min(chunk, planes - first) + 2 * r;
        }
      }
      worst = std::max(worst, cost);
    }
    if (best_cost < 0 || worst < best_cost || (worst == best_cost && items < best_items)) {
      best_cost = worst;
      best_chunk = chunk;
      best_items = items;
    }
  }
  return best_chunk;
}

inline Plan make_plan(int r, int v, const Box& b, bool pushes, std::int64_t target) {
  using i64 = std::int64_t;
  const auto ceil_div = plan_ceil_div;
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
  p.chunk = plan_interior_chunks(planes, p.tiles[0] * p.tiles[1], edge_chunks, r, target);
  p.tiles[2] = edge_chunks + (planes > 0 ? ceil_div(planes, p.chunk) : 0);
  p.items = p.tiles[0] * p.tiles[1] * p.tiles[2];
  return p;
}

// Planes a work item's block marches, the register queue's 2R priming planes included: its
// chunk's planes (R for an edge chunk). Each plane's loads wait for the one before (the
// simulator's serial_steps).
GPSM_HD std::int64_t item_chunk_planes(const Plan& p, std::int64_t ch, int r) {
  const std::int64_t edge_chunks = p.edges ? 2 : 0;
  if (ch < edge_chunks) return r;
  const std::int64_t first = p.mi0 + (ch - edge_chunks) * p.chunk;
  return first + p.chunk <= p.mi1 ? p.chunk : p.mi1 - first;
}

// March coordinates [m0, m1) of chunk ch of a box owning `count` planes along the split axis:
// the edge chunks (p.edges) are the pushed planes [R, 2R) and [count, count + R), the interior
// chunks split [mi0, mi1) into p.chunk planes (the last one shorter).
GPSM_HD void chunk_range(const Plan& p, std::int64_t count, int r, std::int64_t ch, std::int64_t& m0,
                         std::int64_t& m1) {
  if (p.edges && ch < 2) {
    m0 = ch == 0 ? r : count;
    m1 = m0 + r;
  } else {
    m0 = p.mi0 + (ch - (p.edges ? 2 : 0)) * p.chunk;
    m1 = m0 + p.chunk < p.mi1 ? m0 + p.chunk : p.mi1;
  }
}

// Whether chunk ch writes any of the planes that the neighbour on side `side` reads as its halo
// (proact's readiness): rank's first R owned planes [R, 2R) (side 0, the lower neighbour's) or
// its last R [count, count + R) (side 1). With edge chunks that is exactly chunk `side`; with
// count < 2R (no edge chunks) the interior chunks that overlap them.
GPSM_HD bool chunk_touches_edge(const Plan& p, std::int64_t count, int r, std::int64_t ch, int side) {
  std::int64_t m0 = 0, m1 = 0;
  chunk_range(p, count, r, ch, m0, m1);
  const std::int64_t lo = side == 0 ? r : count;
  return m0 < lo + r && lo < m1;
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
