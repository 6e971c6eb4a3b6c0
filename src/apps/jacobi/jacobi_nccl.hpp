#pragma once
// Jacobi 2D on NCCL (`gpsm bench --paradigm nccl`): NVIDIA multi-gpu-programming-models' "nccl"
// variant in one process over every GPU of the run: per iteration a sweep on each rank's stream,
// then the halo rows by ncclSend/ncclRecv in one group, and the norm (every nccheck iterations)
// by ncclAllReduce. jacobi_app_cuda.cpp drives it like its other host-loop paradigms.
#include <memory>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/jacobi/jacobi_host_loop.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::jacobi {

// Whether this gpsm was built with NCCL, and why the paradigm is unsupported when not.
using ::gpsm::kNcclMissing;
using ::gpsm::nccl_built;

// Allocates the slabs and creates the communicators (ncclCommInitAll over the context's
// devices, rank r on ctx.device(r); none on one GPU). Throws gpsm::Error when a CUDA or NCCL call
// fails, or when gpsm was built without NCCL.
std::unique_ptr<JacobiRun> make_nccl_run(gps::Context& ctx, const Problem& p);

}  // namespace gpsm::apps::jacobi
