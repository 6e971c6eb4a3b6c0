#pragma once
// Traces from an instrumented CPU execution of the apps' reference paths (no GPU needed): the
// stencil update runs on the CPU through accessors that record every load and store, coalesced
// into AccessRuns the way a GPU warp's accesses coalesce, with the same decomposition, block
// shape and halo pushes as the GPU kernels of each paradigm's data layout.
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

struct TraceRequest {
  std::string app = "jacobi2d";   // jacobi2d, heat3d, wave3d, scatter (synthetic small stores),
                                  // pagerank, sssp (sim/trace_graph.hpp), ct (sim/trace_ct.hpp)
  apps::Problem problem;          // sizes (scatter: n[0] elements; graph apps and ct: the --size text in
                                  // `graph`), axis, seed; iterations = problem.iters
  int gpus = 1;
  // "slabs": per-GPU boxes with halo rows/planes, boundary rows stored into the neighbours'
  // halos by remote stores (p2p_inline's pattern; memcpy/infinite reuse it, the simulator decides
  // what travels how); "remote" (rdl): the 3D apps' boxes without pushes, the halo planes loaded
  // from the neighbours' boxes by the consumer's step (jacobi2d, scatter: the slabs trace);
  // "grid": one global grid in managed memory (um, um_hints: the 3D step marches each GPU's
  // sub-box of it; jacobi2d wraps rows by index); "replicas": a GPS
  // replicated array per buffer, the whole grid on every GPU, each GPU loading and storing only its
  // own replica (gps_hw, finepack: the simulator decides subscriptions and publishes).
  std::string layout = "slabs";
  double sample = 1.0;            // fraction of blocks recorded (1: all), each recorded block weighted
  // SMs of the GPU the 3D step's launch plans for: its work items go to sms x the kernel's
  // blocks per SM slots, as the launcher's do on the device it runs on (stencil3d_kernels.cu
  // resident_blocks). The simulator passes the simulated GPU's (V100: 80); a plan made for the
  // H200's 132 and replayed on 80 SMs marches in two rounds.
  int sms = 132;
};

// Throws std::invalid_argument on an unknown app/layout or a problem too small for `gpus`.
// Runs exactly problem.iters iterations (jacobi2d: tol is not checked; the norm's atomics appear
// on the iterations with iter % nccheck == 0).
Trace make_trace(const TraceRequest& r);
// The same, and (result != nullptr) the values the instrumented execution computed, in the CPU
// references' layout (apps/stencil/reference.hpp; scatter: the `out` buffer of the last
// iteration, all N elements): jacobi2d the ny x nx grid after the last
// iteration (rows 0 and ny-1 the periodic copies of rows ny-2 and 1, as jacobi_reference's);
// heat3d / wave3d the global box (x fastest) the reference returns. For tests.
Trace make_trace(const TraceRequest& r, std::vector<float>* result);

}  // namespace gpsm::sim
