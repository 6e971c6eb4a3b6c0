#pragma once
// fd3d on GPS arrays (gps): where a rank's step reads and writes in a whole-volume replica, and
// which cells it reads. Plain C++: the run (fd3d_gps_run_cuda.cpp) and the CPU tests use these same
// functions.
//
// A GPS array holds the whole volume (global cells, x fastest) in every replica; each GPU updates
// its slab (Slab3D) of it. The step kernels keep the local boxes' coordinates (fd3d_step.hpp: along
// the split axis R halo planes, the owned planes, R more), so a replica is addressed as a Piece
// whose offset moves box coordinate l along the split axis to global plane first - R + l.
#include <array>
#include <cstdint>
#include <string>

#include "apps/fd3d/fd3d_step.hpp"
#include "apps/stencil/decomp.hpp"

namespace gpsm::apps::fd3d {

// Slab s's box coordinates over a whole-volume buffer (a replica): element (x, y, z) of its box is
// global cell index_in(off, sy, sz, x, y, z).
Piece global_piece(const Slab3D& s, const float* volume);
Sink global_sink(const Slab3D& s, float* volume);

// Global cells [lo[d], hi[d]) along each axis.
struct CellBox {
  std::int64_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  std::int64_t cells() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
};

// The cells slab s's step reads: its updated cells (the owned planes, [R, n - R) along the other
// axes) widened by R along one axis at a time. A star reads no corner, so these three boxes are
// what a GPU must hold for its loads to be local, and what tracking the checked step marks.
std::array<CellBox, 3> read_boxes(const Slab3D& s);

// Box b of a volume of extents n as maximal runs of consecutive global cells (x fastest), in
// increasing order: f(first, count) per run. Whole planes when b spans x and y, runs of whole rows
// when it spans x, else one run per row.
template <class F>
void box_runs(const std::int64_t n[3], const CellBox& b, F f) {
  if (b.cells() <= 0) return;
  const bool full_x = b.lo[0] == 0 && b.hi[0] == n[0], full_y = full_x && b.lo[1] == 0 && b.hi[1] == n[1];
  if (full_y) {
    f(b.lo[2] * n[0] * n[1], (b.hi[2] - b.lo[2]) * n[0] * n[1]);
    return;
  }
  for (std::int64_t z = b.lo[2]; z < b.hi[2]; ++z) {
    if (full_x) {
      f((z * n[1] + b.lo[1]) * n[0], (b.hi[1] - b.lo[1]) * n[0]);
      continue;
    }
    for (std::int64_t y = b.lo[1]; y < b.hi[1]; ++y) f((z * n[1] + y) * n[0] + b.lo[0], b.hi[0] - b.lo[0]);
  }
}

// Which step the gps paradigm runs (GPSM_FD3D_GPS_STEP): automatic (the hand-written step where a
// GPU alone holds both arrays, the tile kernel with published stores where it holds every page it
// reads, else the checked step), or one forced for an A/B: `published` (the tile kernel even on one
// GPU; refused where a GPU lacks a page it reads) or `checked` (every access through the views).
// Tracking always runs the checked step: its loads are what the runtime learns from.
enum class GpsStepChoice : std::uint8_t { automatic, published, checked };
// GPSM_FD3D_GPS_STEP's value: null, "" or "auto", "published", "checked". Throws gpsm::Error otherwise.
GpsStepChoice parse_gps_step_choice(const char* text);
GpsStepChoice gps_step_choice_from_env();

}  // namespace gpsm::apps::fd3d
