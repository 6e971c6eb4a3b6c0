#pragma once
// heat3d / wave3d paradigms that live in their own files, one factory each; the app
// (stencil3d_app_cuda.cpp) registers them and drives them like its own host-loop runs. Every
// factory sets up the buffers on ctx's GPUs and throws gpsm::Error when a CUDA / NCCL call fails
// or the setup is not what was asked (a um_hints hint that does not read back).
#include <memory>

#include "apps/harness/app.hpp"
#include "apps/stencil3d/stencil3d_host_loop.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::stencil3d {

// um / um_hints (stencil3d_um_rdl_cuda.cpp): the whole grid, both buffers, in managed memory;
// each GPU updates its own planes of the global grid, reading its neighbours' planes in place
// (the marching step on its sub-box of the grid, stencil3d_cells.hpp sub_box).
// hints: preferred location, accessed-by and prefetch per page, every hint read back.
std::unique_ptr<Run> make_um_run(gps::Context& ctx, Kind kind, const Problem& p, bool hints);
constexpr const char* kUmHintsAlongX =
    "um_hints along x: a GPU's planes are a few cells of every row, so every page holds cells of every GPU and "
    "no page can be preferred on the GPU that owns it (use --axis y or z)";

// um_hints' hints for problem p on ctx's GPUs, placed on a fresh grid and read back (as the run's
// setup and init do; throws gpsm::Error naming a hint that did not take): how many page runs of
// each hint were checked, over both buffers, and how many GPUs hold a preferred page.
struct UmHintCount {
  int preferred = 0, accessed_by = 0, prefetched = 0;
  int gpus_with_pages = 0;
};
UmHintCount check_um_hints(gps::Context& ctx, Kind kind, const Problem& p);

// rdl (stencil3d_um_rdl_cuda.cpp): per-GPU boxes without halo exchange; the cells next to the
// split read the neighbours' owned planes through peer pointers (remote demand loads: the
// marching step's Step::from_lower / from_upper).
std::unique_ptr<Run> make_rdl_run(gps::Context& ctx, Kind kind, const Problem& p);

// gps (stencil3d_gps_cuda.cpp): the whole grid in two GPS arrays, subscriptions learned by
// tracking an untimed profiling pass, inline publish, a fence after every iteration.
std::unique_ptr<Run> make_gps_run(gps::Context& ctx, Kind kind, const Problem& p);

// nccl (stencil3d_nccl_cuda.cpp): per-GPU boxes, halo planes by ncclSend / ncclRecv (packed
// along x and y). Throws gpsm::Error in a build without NCCL (nccl_built()).
std::unique_ptr<Run> make_nccl_run(gps::Context& ctx, Kind kind, const Problem& p);

// proact (stencil3d_proact_cuda.cpp): per-GPU boxes; the step counts the blocks that finished
// each edge (Step::ready) and copy engines, waiting on the counts through stream memory
// operations (proact/stream_wait.hpp), ship the edge planes into the neighbours' halos while
// the interior is computed (the memcpy paradigm's planes and bytes). Split along y or z; its
// check() says why not when stream waits are unsupported.
std::unique_ptr<Run> make_proact_run(gps::Context& ctx, Kind kind, const Problem& p);
constexpr const char* kProactAlongX =
    "proact along x: a GPU's edge planes are a few cells of every row, which copy engines would move as one "
    "tiny row per (y, z), and the march has no chunk holding only them to count (use --axis y or z)";

}  // namespace gpsm::apps::stencil3d
