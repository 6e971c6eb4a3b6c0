#pragma once
// One fd3d step on one rank as plain data: where it reads (Sources: its own box, and for rdl its
// neighbours' blocks of the distributed array), where it writes (Sink, and p2p_inline's pushes),
// and the update of one cell through them (fd_update). Plain C++ with GPSM_HD: the kernels
// (fd3d_kernels.cu) load, store and push through these very functions, and the CPU tests run
// fd_update over host memory (local boxes with their halo exchanges, a distributed array's
// layout), so every paradigm's index math is checked without a GPU.
//
// Coordinates are the rank's box (Slab3D::local, x fastest): along the split axis R halo planes,
// then its `count` owned planes at [R, R + count), then R more; the whole extent of the two other
// axes, their boundary layers included. Updated cells: [R, local - R) on every axis.
#include <climits>
#include <cstdint>

#include "apps/fd3d/fd3d_math.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"  // Box
#include "gpsm/gps/config.hpp"

namespace gpsm::apps::fd3d {

using stencil3d::Box;

// Memory addressed by box coordinates: element (x, y, z) at p[off + x + y * sy + z * sz]. off
// carries the shift along the split axis from this box's coordinate to the memory's (a
// neighbour's block, or this rank's block of a distributed array, which holds no halo planes).
struct Piece {
  const float* p = nullptr;
  std::int64_t sy = 0, sz = 0, off = 0;
};
struct Sink {
  float* p = nullptr;
  std::int64_t sy = 0, sz = 0, off = 0;
};
GPSM_HD std::int64_t index_in(std::int64_t off, std::int64_t sy, std::int64_t sz, std::int64_t x, std::int64_t y,
                              std::int64_t z) {
  return off + x + y * sy + z * sz;
}

// Where a step's input cells come from: along the split axis, coordinates below lo_end from `lo`,
// at or above hi_begin from `hi`, the rest from `mid`. The local-box paradigms have only mid
// (halos filled by copies or pushes); rdl reads the halo planes from its neighbours' blocks.
struct Sources {
  Piece lo, mid, hi;
  std::int64_t lo_end = INT64_MIN, hi_begin = INT64_MAX;
  GPSM_HD bool remote() const { return lo.p != nullptr || hi.p != nullptr; }
  // The faces whose halo is read from a neighbour's block: fd3d_plan.hpp's remote edge tiles.
  GPSM_HD int remote_faces() const { return (lo.p != nullptr ? 1 : 0) + (hi.p != nullptr ? 1 : 0); }
};

GPSM_HD std::int64_t coord(int axis, std::int64_t x, std::int64_t y, std::int64_t z) {
  return axis == 0 ? x : axis == 1 ? y : z;
}
GPSM_HD const Piece& piece_at(const Sources& s, int axis, std::int64_t x, std::int64_t y, std::int64_t z) {
  const std::int64_t c = coord(axis, x, y, z);
  return c < s.lo_end ? s.lo : c >= s.hi_begin ? s.hi : s.mid;
}
// kRemote false: mid only (the compiler drops the choice).
template <bool kRemote>
GPSM_HD float load(const Sources& s, int axis, std::int64_t x, std::int64_t y, std::int64_t z) {
  const Piece& q = kRemote ? piece_at(s, axis, x, y, z) : s.mid;
  return q.p[index_in(q.off, q.sy, q.sz, x, y, z)];
}

struct FdStep {
  Sources in;
  Sink out;
  // p2p_inline: the first R owned planes (split coordinate [R, 2R)) also go to `lower`, the last R
  // ([count, count + R)) to `upper`, into the neighbours' halo planes (p == nullptr: no push).
  Sink lower, upper;
  Box box;  // extents, split axis, owned planes
  int radius = 0;
  FdWeights w;
};

// Stores an updated cell's value, and pushes it where p2p_inline needs it.
GPSM_HD void fd_store(const FdStep& st, std::int64_t x, std::int64_t y, std::int64_t z, float v) {
  st.out.p[index_in(st.out.off, st.out.sy, st.out.sz, x, y, z)] = v;
  const std::int64_t c = coord(st.box.axis, x, y, z), r = st.radius;
  if (st.lower.p != nullptr && c < 2 * r) st.lower.p[index_in(st.lower.off, st.lower.sy, st.lower.sz, x, y, z)] = v;
  if (st.upper.p != nullptr && c >= st.box.count)
    st.upper.p[index_in(st.upper.off, st.upper.sy, st.upper.sz, x, y, z)] = v;
}

// The update of cell (x, y, z) (an updated cell) as the kernels compute it, one cell at a time:
// the CPU tests' model of a step.
GPSM_HD void fd_update(const FdStep& st, std::int64_t x, std::int64_t y, std::int64_t z) {
  const int a = st.box.axis;
  const auto at = [&](int d, int k) {
    return load<true>(st.in, a, x + (d == 0 ? k : 0), y + (d == 1 ? k : 0), z + (d == 2 ? k : 0));
  };
  fd_store(st, x, y, z, fd_cell(st.w, st.radius, at));
}

}  // namespace gpsm::apps::fd3d
