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
#include <optional>
#include <vector>

#include "apps/fd3d/fd3d_step.hpp"
#include "apps/stencil/decomp.hpp"
#include "gpsm/gps/subscription.hpp"  // RangeSubscribers

namespace gpsm::apps::fd3d {

// Slab s's box coordinates over a whole-volume buffer (a replica): element (x, y, z) of its box is
// global cell index_in(off, sy, sz, x, y, z).
Piece global_piece(const Slab3D& s, const float* volume);
Sink global_sink(const Slab3D& s, float* volume);
// Slab s's step from one whole-volume replica into another: global_piece and global_sink, its box,
// halo and weights.
FdStep replica_step(const Slab3D& s, const float* in, float* out);

// The GPS page size of fd3d's arrays: the largest power of two dividing one plane of the split axis
// (a row along y), at least a line and at most 2 MiB, so that every page lies in one plane and a
// plane is whole pages: a neighbour then subscribes to exactly the planes it reads, every plane's
// pages agree on their subscribers, and published_planes has an answer (768^3 along z: 256 KiB
// pages, 9 a plane; heat3d's rule, a plane where that is a power of two else ~R planes, gives 2 MiB
// pages across planes there). Along x (a plane is single cells) heat3d's rule.
std::uint64_t fd_gps_page_bytes(const std::int64_t n[3], int axis, int radius);

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

// The planes of a rank's split axis whose stored cells other GPUs subscribe to, in box coordinates
// along the split axis, as runs of planes with one set of subscribers each (this GPU included):
// asked on the host once per subscription change (Array::subscribers), so that the step can run
// the hand-written kernel on the replica and publish those planes after it by copy engine
// (Array::publish_box_async), as the memcpy paradigm copies its edge planes. Usually a slab's two
// faces; a slab thinner than 2R has planes both neighbours read, a run of their own.
struct PublishedPlanes {
  struct Run {
    std::int64_t begin = 0, end = 0;
    std::uint32_t mask = 0;
  };
  std::vector<Run> runs;
};

// subscribers(first, count): the runtime's subscribers of a run of global cells. nullopt where a
// plane's stored cells do not share one set of subscribers (pages across the plane's edge, as a
// split along x gives); the caller then asks per work item instead.
template <class F>
std::optional<PublishedPlanes> published_planes(const Slab3D& s, std::uint32_t me, F subscribers) {
  const int a = static_cast<int>(s.axis);
  PublishedPlanes out;
  for (std::int64_t c = s.radius; c < s.radius + s.count; ++c) {
    CellBox b;  // the plane's updated cells
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = d == a ? s.first + (c - s.radius) : s.radius;
      b.hi[d] = d == a ? b.lo[d] + 1 : s.n[d] - s.radius;
    }
    bool one = true, first = true;
    std::uint32_t mask = 0;
    box_runs(s.n, b, [&](std::int64_t f, std::int64_t n) {
      const gps::RangeSubscribers r = subscribers(f, n);
      one = one && r.uniform && (first || r.mask == mask);
      mask = r.mask;
      first = false;
    });
    if (!one) return std::nullopt;
    if (mask == me) continue;
    if (!out.runs.empty() && out.runs.back().end == c && out.runs.back().mask == mask)
      out.runs.back().end = c + 1;  // the run goes on
    else
      out.runs.push_back({c, c + 1, mask});
  }
  return out;
}

// The boxes of global cells the copies step publishes after rank s's hand-written step: each run
// of published planes (box coordinates along the split axis) as global planes, the updated cells
// of the other two axes. Empty runs give no box.
std::vector<CellBox> published_boxes(const Slab3D& s, const PublishedPlanes& pub);

// Which step the gps paradigm runs (GPSM_FD3D_GPS_STEP): automatic (the hand-written step where a
// GPU alone holds both arrays; where it holds every page it reads, the hand-written step with its
// published planes copied after it where published_planes answers, else the tile kernel asking
// the view per work item; else the checked step), or one forced for an A/B: `copies` or `items`
// (refused where it does not apply; `items` runs its kernel on one GPU too) or `checked` (every
// access through the views).
// Tracking always runs the checked step: its loads are what the runtime learns from.
enum class GpsStepChoice : std::uint8_t { automatic, copies, items, checked };
// GPSM_FD3D_GPS_STEP's value: null, "" or "auto", "copies", "items", "checked". Throws gpsm::Error otherwise.
GpsStepChoice parse_gps_step_choice(const char* text);
GpsStepChoice gps_step_choice_from_env();

}  // namespace gpsm::apps::fd3d
