#pragma once
// fd3d's step kernel (fd3d_kernels.cu): one rank's box, read through a step's Sources (its own box,
// or for rdl the neighbours' blocks for the halo), written through its Sink (and p2p_inline's
// pushes), with fd3d_plan.hpp's work items. The design is in fd3d_plan.hpp's header comment.
#include <cuda_runtime.h>

#include "apps/fd3d/fd3d_plan.hpp"
#include "apps/fd3d/fd3d_step.hpp"

namespace gpsm::apps::fd3d {

// One step on the current device. s.radius must be one of kHalos (fd3d_spec.hpp); a step both
// reading remote sources and pushing is refused (no paradigm does both). Throws gpsm::Error.
void launch_fd_step(const FdStep& s, cudaStream_t st);
// The plan launch_fd_step runs s with on the current device.
Plan fd_step_plan(const FdStep& s);

}  // namespace gpsm::apps::fd3d
