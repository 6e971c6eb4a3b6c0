// fd3d's step kernel: GPU-SM's finite difference (GPU-SM paper, Listing 1) in the design its
// original follows (3D finite differences on GPUs, Micikevicius), for halos up to 16.
//
// Why not heat3d's and wave3d's march (stencil3d_kernels.cu): there a thread keeps float4 columns
// of all 2R + 1 planes along the march plus R rows on each side along the other axis in registers,
// (2R + 1) * 4 + 2R * 4 floats: 20 at R = 1, 36 at R = 2, but 260 at R = 16, far past the 255
// registers a thread may have. Here a thread keeps one cell's column of 2R + 1 planes along z in
// registers (33 at R = 16) and the block shares the current plane's x and y neighbours through a
// shared-memory tile with an apron of R cells (no corners: the stencil is a star), so registers grow
// by 2 per halo step and the tile by 4R (kTx + kTy) floats.
//
// Per plane, a thread (fd3d_block.hpp, whose phases the CPU tests also run): moves its column's
// queue one plane on and loads the cell a few planes ahead of its front (a prefetch: loads in
// flight while the block works on the plane), waits for the block, writes the queue's centre into
// the tile and loads its share of the apron (rows above and below the tile along y, columns left
// and right along x), waits again, and computes fd_cell (the CPU reference's order; multiplies
// __fmul_rn, the file built with --fmad=false) from the tile (x, y) and the queue (z). Threads
// whose column lies in the boundary layer or halo load and share it but store nothing. Every load
// goes through fd3d_step.hpp's Sources: rdl's variant picks the neighbour's block for a coordinate
// in the halo (only in tiles that reach one), the others read one box. Loads are plain (coherent,
// L1-cached): the values change between launches.
#include "apps/fd3d/fd3d_kernels.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>

#include "apps/fd3d/fd3d_block.hpp"
#include "common/cuda_check.hpp"
#include "common/resident_blocks.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {
namespace {

using i64 = std::int64_t;

// fd3d_block.hpp's phases, a block barrier between them, over items [first, last) of the plan.
template <int R, Pick kPick, bool kPush>
__global__ void __launch_bounds__(kThreads, fd_min_blocks(R))
    fd_step_kernel(const __grid_constant__ FdStep s, const Plan p, std::int64_t first, std::int64_t last) {
  __shared__ float tile[kTy + 2 * R][kTx + 2 * R];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (std::int64_t w = first + blockIdx.x; w < last; w += gridDim.x) {
    const Column c = column_of<R, kPick>(s, p, w, tx, ty);
    Queue<R> u;
    prime<R, kPick>(s, c, u);
    for (int z = c.z0; z < c.z1; ++z) {
      advance<R, kPick>(s, c, u, z);
      __syncthreads();  // the block is done with the previous plane's tile
      fill_tile<R, kPick>(s, c, u, z, tx, ty, tile);
      __syncthreads();
      compute<R, kPush>(s, c, u, z, tx, ty, tile);
    }
  }
}

using StepFn = void (*)(FdStep, Plan, std::int64_t, std::int64_t);

template <int R>
StepFn step_fn(Pick k, bool push) {
  if (k == Pick::z) return fd_step_kernel<R, Pick::z, false>;
  if (k == Pick::x) return fd_step_kernel<R, Pick::x, false>;
  if (k == Pick::y) return fd_step_kernel<R, Pick::y, false>;
  return push ? fd_step_kernel<R, Pick::none, true> : fd_step_kernel<R, Pick::none, false>;
}

StepFn pick(const FdStep& s) {
  const bool remote = s.in.remote(), push = s.lower.p != nullptr || s.upper.p != nullptr;
  if (remote && push) throw gpsm::Error("gpsm: fd3d: a step that both loads remote halos and pushes is not built");
  return with_halo(s.radius, [&](auto r) { return step_fn<decltype(r)::value>(pick_for(remote, s.box.axis), push); });
}

}  // namespace

Plan fd_cached_plan(const void* fn, const FdStep& s) {
  static std::mutex mu;
  static std::map<std::array<i64, 8>, Plan> cache;
  int dev = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  const std::array<i64, 8> key{reinterpret_cast<i64>(fn), dev, s.box.n[0], s.box.n[1], s.box.n[2], s.box.axis,
                               s.box.count, s.in.remote_faces()};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  // make_plan's search is cheap (a loop over chunk counts); the blocks a device holds are cached
  // per device (common/resident_blocks.hpp).
  if (it == cache.end())
    it = cache.emplace(key, make_plan(s.box, s.radius, gpsm::resident_blocks(fn, kThreads), s.in.remote_faces())).first;
  return it->second;
}

Plan fd_step_plan(const FdStep& s) { return fd_cached_plan(reinterpret_cast<const void*>(pick(s)), s); }

namespace {
void launch_items(StepFn fn, const FdStep& s, const Plan& p, i64 first, i64 last, cudaStream_t st) {
  const auto grid = static_cast<unsigned>(std::clamp<i64>(last - first, 1, INT_MAX));
  fn<<<grid, dim3(kTx, kTy), 0, st>>>(s, p, first, last);
  GPSM_CUDA_LAUNCH();
}
}  // namespace

void launch_fd_step(const FdStep& s, cudaStream_t st, RdlLaunch rdl) {
  const StepFn fn = pick(s);
  const Plan p = fd_cached_plan(reinterpret_cast<const void*>(fn), s);
  if (!s.in.remote() || resolve_rdl_launch(rdl, s.box.axis) == RdlLaunch::one)
    return launch_items(fn, s, p, 0, p.items, st);
  // split: the items near a halo (whole waves of them) in the picking kernel, then the rest in the
  // plain one, on the picking kernel's plan (the same items in the same order).
  const i64 slots = gpsm::resident_blocks(reinterpret_cast<const void*>(fn), kThreads);
  const i64 e = remote_prefix(s.in, s.box, p, s.radius, slots);
  if (e > 0) launch_items(fn, s, p, 0, e, st);
  if (e < p.items)  // none of these items loads outside mid
    launch_items(with_halo(s.radius, [](auto r) -> StepFn { return fd_step_kernel<decltype(r)::value, Pick::none, false>; }),
                 s, p, e, p.items, st);
}

}  // namespace gpsm::apps::fd3d
