#pragma once
// heat3d / wave3d kernels of the paradigms in their own files (stencil3d_paradigms.hpp): gps's
// step on GPS arrays and the whole-grid initializer (um, gps). The marching step (um, rdl, gps
// and the per-box paradigms) is in stencil3d_kernels.cu.
#include <cuda_runtime.h>

#include <cstdint>

#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "common/fork_join.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::stencil3d {


// gps: one iteration of one rank on the whole grid in two GPS arrays (the rank's views of them),
// x fastest: the marching step of the hand-written paradigms (stencil3d_kernels.cu, float4 rows
// where nx % 4 == 0) over the rank's sub-box of the grid (sub_box, as um), loads from this
// device's replica (checked once per work item), each stored vector through View::span / put, so
// the runtime publishes it to the page's other subscribers. edges_first: the planes a neighbour
// reads are the launch's first work items, so their remote stores travel while the interior is
// computed (as p2p_inline's pushes). sole: this rank alone holds both arrays (Array::sole: one
// GPU), so the launch is the hand-written step itself on the replicas, none of the GPS path's
// checks or registers in the kernel.
//
// split_items (device memory): the host's split of the plan's items (classify_gps_items over
// gps_step_shape's plan): plain items run the hand-written step; published ones the same march
// putting each vector through View::span_with of their mask, and the gps ones the GPS step with
// its checks, both on `side`'s stream (forked from the launch's stream and joined back) when
// given. Null: every item through the GPS step with its per-item checks (tracking, whose views
// must see every access).
struct GpsStep {
  gps::View<float> in, out;
  Slab3D slab;
  bool edges_first = false;
  bool sole = false;
  // The host's split (classify_gps_items), when set: split_items = the published items, then the
  // plain ones (published_masks: one per published item); gps_items through the checked GPS step.
  // Unset (null): every item through the GPS step.
  const std::int32_t* split_items = nullptr;
  const std::uint32_t* published_masks = nullptr;
  const std::int32_t* gps_items = nullptr;
  int n_published = 0, n_plain = 0, n_gps = 0;
  const gpsm::ForkJoin* side = nullptr;
};
void launch_gps_step(Kind k, const GpsStep& s, cudaStream_t st);
// The plan launch_gps_step runs s with on the current device and its cells per thread (what
// classify_gps_items splits).
struct GpsStepShape {
  Plan plan;
  int v = 1;
};
GpsStepShape gps_step_shape(Kind k, const GpsStep& s);

// Initial values of planes [lo, hi) along `axis` of a whole n[0] x n[1] x n[2] grid (x fastest)
// at buf: initial_value(global cell, seed_interior) in the global interior (radius cells from
// every face), seed_boundary in the boundary layer. poison: interior cells whose split coordinate
// lies outside [keep_lo, keep_hi) are NaN instead (cells another rank must write before they
// are read, so a missed write or publish shows).
struct GridInit {
  float* buf = nullptr;
  std::int64_t n[3] = {0, 0, 0};
  int axis = 2, radius = 1;
  std::int64_t lo = 0, hi = 0;
  bool poison = false;
  std::int64_t keep_lo = 0, keep_hi = 0;
  std::uint32_t seed_interior = 1, seed_boundary = 1;
};
void launch_grid_init(const GridInit& s, cudaStream_t st);

}  // namespace gpsm::apps::stencil3d
