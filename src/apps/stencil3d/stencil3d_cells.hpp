#pragma once
// The cell accessor of gps's 3D per-cell path (whose input is not one plain local box
// with filled halos), the regions a rank updates, and the mappings with which um and rdl run the
// marching step (sub_box, remote_of). Plain C++ with GPSM_HD, so the CPU tests run the very index
// math the GPU kernels use (tests/cpu/test_stencil_apps.cpp).
//
// An accessor g holds strides sy, sz (x stride 1) and gives
//   g.at(i, c, d, k)  the input k cells along axis d from the cell with index i, coordinates c;
//   g.prev(i)         the output buffer's value at i before the update (wave3d's prev);
//   g.put(i, v)       the updated value.
// update_cell computes through heat_cell / wave_cell (stencil_math.hpp): the CPU reference's
// values in the CPU reference's order, whatever memory they come from.
#include <cstdint>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"  // Box, Remote

namespace gpsm::apps::stencil3d {

GPSM_HD std::int64_t stride_of(std::int64_t sy, std::int64_t sz, int d) { return d == 0 ? 1 : d == 1 ? sy : sz; }

// The cells a sweep updates: [lo[d], hi[d]) along each axis, in the accessor's coordinates.
struct Region {
  std::int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
};

// A rank's cells of the global grid (um, gps): owned planes along the split axis, the interior
// of the two others.
inline Region owned_region(const Slab3D& s) {
  Region g;
  for (int d = 0; d < 3; ++d) {
    g.lo[d] = s.radius;
    g.hi[d] = s.n[d] - s.radius;
  }
  const int a = static_cast<int>(s.axis);
  g.lo[a] = s.first;
  g.hi[a] = s.first + s.count;
  return g;
}

// The planes of the global grid along the split axis a rank keeps (um's first touch, um_hints'
// preferred location): its owned planes, and the boundary layer below rank 0 and above the last
// rank. The ranks' spans tile [0, n[axis]).
inline Range span_of(const Slab3D& s) {
  Range r;
  r.begin = s.has_lower() ? s.first : 0;
  r.end = s.has_upper() ? s.first + s.count : s.n[static_cast<int>(s.axis)];
  return r;
}

// The whole grid in one array, x fastest: gps's index math (stencil3d_kernels.cu's GpsCells
// loads and stores the same indices through GPS views), in plain memory for the CPU tests.
struct GridCells {
  const float* in = nullptr;
  float* out = nullptr;
  std::int64_t sy = 0, sz = 0;
  GPSM_HD float at(std::int64_t i, const std::int64_t* /*c*/, int d, int k) const {
    return in[i + k * stride_of(sy, sz, d)];
  }
  GPSM_HD float prev(std::int64_t i) const { return out[i]; }
  GPSM_HD void put(std::int64_t i, float v) const { out[i] = v; }
};

// um on the marching step (stencil3d_kernels.hpp Step): rank s's cells of the global grid as a
// box of it. Along the split axis the planes [first - radius, first + count + radius) (its owned
// planes and the ones it reads on both sides), the whole grid along the two others; `offset`
// (cells from the grid's start to the box's local (0, 0, 0)) and the grid's strides sy, sz. The
// box's updated cells, local [radius, local - radius) on every axis, are owned_region(s).
struct SubBox {
  Box box;
  std::int64_t offset = 0, sy = 0, sz = 0;
};
inline SubBox sub_box(const Slab3D& s) {
  SubBox g;
  const int a = static_cast<int>(s.axis);
  for (int d = 0; d < 3; ++d) g.box.n[d] = s.local[d];
  g.box.axis = a;
  g.box.count = s.count;
  g.sy = s.n[0];
  g.sz = s.n[0] * s.n[1];
  g.offset = (s.first - s.radius) * stride_of(g.sy, g.sz, a);
  return g;
}

// Where rank s's halo planes live in its neighbour nb's box (rdl), whose buffer is src:
// Slabs::push_to's mapping, read instead of written. The lower neighbour's split coordinate is
// s's plus its count (s's lower halo is its last owned planes), the upper one's s's minus s's
// count (s's upper halo is its first owned planes).
inline Remote remote_of(const Slab3D& s, const Slab3D& nb, const float* src) {
  Remote r;
  r.src = src;
  r.sy = nb.local[0];
  r.sz = nb.local[0] * nb.local[1];
  r.shift = nb.rank < s.rank ? nb.count : -s.count;
  return r;
}

// gps's check of one thread's work item (stencil3d_kernels.cu gps_item): contiguous ranges
// [lo, hi) of global cell indices that hold every cell the march (run_item) reads for the column
// x .. x + v - 1 at coordinate co of the other axis, march coordinates [m0, m1) along m (2: z,
// the other axis y; 1: y, the other axis z), radius r, in a sub-box whose local (0, 0, 0) is
// global index `origin`, with the grid's strides sy, sz. run_item reads the column on planes
// [m0 - r, m1 + r) of m, and on planes [m0, m1) the rows co +- 1 .. r along the other axis and the
// r cells west and east of the column (a float4 row's first and last vector reach into the row
// before and after, same plane). Marching along z, every one of them lies between the column's
// first and last cell: one range, holding only planes [m0 - r, m1 + r) (a z split: this rank's
// own and halo planes). Marching along y, the rows of other z planes get ranges of their own
// (1 + 2r in all), so a y split's ranges hold no other rank's rows.
struct CellRange {
  std::int64_t lo = 0, hi = 0;
};
constexpr int kMaxItemRanges = 5;  // 1 + 2r, r <= 2
GPSM_HD int item_input_ranges(int r, int v, int m, std::int64_t origin, std::int64_t sy, std::int64_t sz,
                              std::int64_t x, std::int64_t co, std::int64_t m0, std::int64_t m1,
                              CellRange (&out)[kMaxItemRanges]) {
  const std::int64_t sm = m == 1 ? sy : sz, so = m == 1 ? sz : sy;
  const auto at = [&](std::int64_t xx, std::int64_t o, std::int64_t mm) { return origin + xx + o * so + mm * sm; };
  int k = 0;
  out[k++] = CellRange{at(x, co, m0 - r), at(x + v, co, m1 + r - 1)};
  if (m == 1)
    for (int d = 1; d <= r; ++d) {
      out[k++] = CellRange{at(x, co - d, m0), at(x + v, co - d, m1 - 1)};
      out[k++] = CellRange{at(x, co + d, m0), at(x + v, co + d, m1 - 1)};
    }
  return k;
}

// Updates cell (x, y, z) through accessor g: heat3d, or wave3d (kWave: out holds prev).
#if defined(__CUDACC__)
#pragma nv_exec_check_disable  // device-only accessors (GPS views) instantiate it from kernels only
#endif
template <bool kWave, class Cells>
GPSM_HD void update_cell(const Cells& g, std::int64_t x, std::int64_t y, std::int64_t z) {
  const std::int64_t c[3] = {x, y, z};
  const std::int64_t i = x + y * g.sy + z * g.sz;
  const auto at = [&](int d, int k) { return g.at(i, c, d, k); };
  if constexpr (kWave)
    g.put(i, wave_cell(g.prev(i), at));
  else
    g.put(i, heat_cell(at));
}

}  // namespace gpsm::apps::stencil3d
