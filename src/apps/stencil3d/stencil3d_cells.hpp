#pragma once
// The cell accessor of gps's 3D thread-per-cell sweep (whose input is not one plain local box
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

// The whole grid in one array, x fastest: gps's index math (stencil3d_grid_kernels.cu's GpsCells
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
