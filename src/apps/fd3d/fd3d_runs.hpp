#pragma once
// fd3d's paradigms (fd3d_runs_cuda.cpp), driven by the 3D apps' host loop (stencil3d_host_loop.hpp:
// a step per GPU per iteration, each GPU waiting for its neighbours' previous iteration, the whole
// loop captured into one CUDA graph):
//   single      one GPU, its box
//   memcpy      per-GPU boxes with halo planes, the edge planes copied into the neighbours' halos
//               by copy engines after each step (packed first along x and y: strided there)
//   p2p_inline  the same boxes, the edge planes also stored into the neighbours' halos by the step
//   rdl         both volumes distributed arrays (one virtual range over every GPU's memory, one
//               slab per GPU, slab_blocks): no halo planes, no copies; each GPU's step loads the
//               cells next to its slab from its neighbours' blocks through the one range (GPU-SM)
//   gps         the whole volume in two GPS arrays, each GPU updating its slab through its views;
//               the runtime publishes the stored cells a neighbour reads (fd3d_gps_run_cuda.cpp)
//   infinite    memcpy's loop with every copy elided (one GPU: single's run): the opportunity bound
// Buffers: iteration t reads buffer t % 2 and writes the other; both start at fd3d_initial's
// values (the boundary layer is never written).
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/stencil3d/stencil3d_host_loop.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::fd3d {

class FdRun : public stencil3d::HostLoop {
 public:
  // The whole volume from buffer b (row-major, x fastest): buffer iters % 2 holds the result,
  // the other the step before it (the sampled check of a one-GPU run reads both).
  virtual std::vector<float> gather_buffer(int b) const = 0;
  std::vector<float> gather() const override { return gather_buffer(p_.iters % 2); }
  // The loop's (the CUDA graph's, or the host wall clock of the loop), then what the run adds.
  std::string timing() const override;

 protected:
  using HostLoop::HostLoop;
  virtual std::string timing_note() const { return ""; }
};

bool fd_has(Paradigm p);
// gps (fd3d_gps_run_cuda.cpp); make_fd_run calls it.
std::unique_ptr<FdRun> make_fd_gps_run(gps::Context& ctx, const Problem& p, int radius);
// p.axis is the split axis (the app resolves the size's axis first). Throws gpsm::Error when the
// setup fails (a CUDA call, a distributed array the GPUs cannot map) and for a paradigm fd_has
// does not list.
std::unique_ptr<FdRun> make_fd_run(gps::Context& ctx, Paradigm par, const Problem& p, int radius);

}  // namespace gpsm::apps::fd3d
