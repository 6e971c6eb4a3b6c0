#pragma once
// Traces from an instrumented CPU execution of the apps' reference paths (no GPU needed): the
// stencil update runs on the CPU through accessors that record every load and store, coalesced
// into AccessRuns the way a GPU warp's accesses coalesce, with the same decomposition, block
// shape and halo pushes as the GPU kernels of each paradigm's data layout.
#include <string>

#include "apps/harness/app.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

struct TraceRequest {
  std::string app = "jacobi2d";   // jacobi2d, heat3d, wave3d
  apps::Problem problem;          // sizes, axis, seed; iterations = problem.iters
  int gpus = 1;
  // "slabs": per-GPU boxes with halo rows/planes, boundary rows stored into the neighbours'
  // halos by remote stores (p2p_inline's pattern; memcpy/infinite reuse it, the simulator decides
  // what travels how); "grid": one global grid (um, gps).
  std::string layout = "slabs";
  double sample = 1.0;            // fraction of blocks recorded (1: all), each recorded block weighted
};

// Throws std::invalid_argument on an unknown app/layout or a problem too small for `gpus`.
Trace make_trace(const TraceRequest& r);

}  // namespace gpsm::sim
