#pragma once
// fd3d's step kernel (fd3d_kernels.cu): one rank's box, read through a step's Sources (its own box,
// or for rdl the neighbours' blocks for the halo), written through its Sink (and p2p_inline's
// pushes), with fd3d_plan.hpp's work items. The design is in fd3d_plan.hpp's header comment.
#include <cuda_runtime.h>

#include <type_traits>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_plan.hpp"
#include "apps/fd3d/fd3d_spec.hpp"  // kHaloList
#include "apps/fd3d/fd3d_step.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {

// f(std::integral_constant<int, R>{}) for halo r, one of kHalos (the kernels are compiled for
// those); throws gpsm::Error naming them otherwise. The step kernels pick their instantiation so.
template <class F>
auto with_halo(int r, const F& f) {
  switch (r) {
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: break;
  }
  throw gpsm::Error(fmt::format("gpsm: fd3d: no kernel for halo {}; use {}", r, kHaloList));
}

// Blocks per SM the step kernels' registers must allow: 2 (32 warps, at most 64 registers a
// thread) to hide the loads behind another block's arithmetic; at R = 16 one (16 warps: the queue
// of 33 planes and the addressing need more than 64 registers, which spilled 88-164 bytes per
// thread; GPU-SM's Table 1 runs halo 16 at 31 % occupancy too).
constexpr int fd_min_blocks(int r) { return r >= 16 ? 1 : 2; }

// The plan of a step kernel `fn` (kThreads threads a block) for s's box on the current device,
// sized by the blocks of fn the device holds at once. Kept per (kernel, device, shape): a captured
// loop asks per GPU and iteration, and the plan depends only on the launch's shape.
Plan fd_cached_plan(const void* fn, const FdStep& s);

// One step on the current device. s.radius must be one of kHalos (fd3d_spec.hpp); a step both
// reading remote sources and pushing is refused (no paradigm does both). Throws gpsm::Error.
// `rdl`: how a step reading remote sources is launched (fd3d_plan.hpp's RdlLaunch; the run that
// owns the step reads GPSM_FD3D_RDL_LAUNCH once and says it in its timing).
void launch_fd_step(const FdStep& s, cudaStream_t st, RdlLaunch rdl = RdlLaunch::automatic);
// The plan launch_fd_step runs s with on the current device.
Plan fd_step_plan(const FdStep& s);

}  // namespace gpsm::apps::fd3d
