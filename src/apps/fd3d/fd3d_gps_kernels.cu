// fd3d's GPS steps (fd3d_gps_kernels.hpp). Built with --fmad=false like fd3d_kernels.cu: the same
// cell (fd3d_math.hpp) in the same order, so the gps paradigm's volume is the reference's bit for bit.
//
// The tile kernel is fd3d_kernels.cu's march with one change, at the store. Per work item the
// block asks the output view for the subscribers of its stored cells, one span per plane, all
// planes at once (a thread each, View::span: one mask read per run of pages with equal masks).
// Where no other GPU subscribes to any of them (a slab's interior: most items), the item runs the
// hand-written march with plain stores; else (the items holding the planes or rows a neighbour
// reads) every cell is stored through the view, which publishes it. Measured on one H200 with
// every item through the view (GPSM_FD3D_GPS_STEP=published, before this choice was made): 1.10x
// the hand-written step at 512^3:h4, 1.09x at 768^3:h16: the store's branches keep the compiler
// from scheduling the next plane's loads across them.
#include "apps/fd3d/fd3d_gps_kernels.hpp"

#include <algorithm>
#include <climits>

#include "apps/fd3d/fd3d_block.hpp"
#include "apps/fd3d/fd3d_kernels.hpp"  // fd_min_blocks, fd_cached_plan
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {
namespace {

using i64 = std::int64_t;
using gps::View;

__device__ __forceinline__ i64 cell_at(const FdStep& s, i64 x, i64 y, i64 z) {
  return index_in(s.out.off, s.out.sy, s.out.sz, x, y, z);
}

template <int R>
__global__ void __launch_bounds__(kThreads, fd_min_blocks(R))
    fd_gps_kernel(const __grid_constant__ FdStep s, const Plan p, const __grid_constant__ View<float> out) {
  __shared__ float tile[kTy + 2 * R][kTx + 2 * R];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y), t = tx + kTx * ty;
  const int n0 = static_cast<int>(s.box.n[0]), n1 = static_cast<int>(s.box.n[1]);
  for (i64 w = blockIdx.x; w < p.items; w += gridDim.x) {
    const Column c = column_of<R, Pick::none>(s, p, w, tx, ty);
    // The item's updated cells: x [x0, xe), y [y0, ye), planes [z0, z1); at each plane one run of
    // the volume from (x0, y0) to (xe - 1, ye - 1). Thread t asks for plane z0 + t's run: where
    // every one is this GPU's alone, the item stores plainly, as the hand-written step does.
    const int xe = min(c.x0 + kTx, n0 - R), ye = min(c.y0 + kTy, n1 - R);
    const i64 run = cell_at(s, xe - 1, ye - 1, 0) - cell_at(s, c.x0, c.y0, 0) + 1;
    bool mine = true;
    for (int z = c.z0 + t; z < c.z1; z += kThreads) {
      const auto sp = out.span(static_cast<std::uint64_t>(cell_at(s, c.x0, c.y0, z)), static_cast<std::uint64_t>(run));
      mine = mine && sp.uniform && sp.others == 0u && sp.here != nullptr;
    }
    mine = __syncthreads_and(mine);
    // One march for both kinds of item, as fd3d_kernels.cu's (a march per kind, each in a function
    // of its own, made ptxas address the tile anew in every plane: 750 instructions a plane at
    // R = 16 against the hand-written kernel's 668); the choice is at the store, uniform over the block.
    Queue<R> u;
    prime<R, Pick::none>(s, c, u);
    for (int z = c.z0; z < c.z1; ++z) {
      advance<R, Pick::none>(s, c, u, z);
      __syncthreads();  // the block is done with the previous plane's tile
      fill_tile<R, Pick::none>(s, c, u, z, tx, ty, tile);
      __syncthreads();
      if (!c.upd) continue;
      const float v = cell_value<R>(s, u, tx, ty, tile);
      const i64 i = cell_at(s, c.x, c.y, z);
      if (mine) {
        s.out.p[i] = v;
      } else {
        // Published: each warp asks for its row of the tile at this plane (a page holds whole rows
        // or planes, so the span is uniform and put reaches the page's subscribers directly).
        out.store(out.span(static_cast<std::uint64_t>(i - tx), static_cast<std::uint64_t>(xe - c.x0)),
                  static_cast<std::uint64_t>(i), v);
      }
    }
  }
}

// One thread per updated cell of the box ([R, n - R) on every axis), grid-stride.
template <int R>
__global__ void __launch_bounds__(kThreads)
    fd_checked_kernel(const __grid_constant__ FdStep s, const __grid_constant__ View<float> in,
                      const __grid_constant__ View<float> out) {
  const i64 e0 = s.box.n[0] - 2 * R, e1 = s.box.n[1] - 2 * R, e2 = s.box.n[2] - 2 * R;
  const i64 cells = e0 * e1 * e2;
  const Piece& q = s.in.mid;
  for (i64 j = static_cast<i64>(blockIdx.x) * kThreads + threadIdx.x; j < cells;
       j += static_cast<i64>(gridDim.x) * kThreads) {
    const i64 x = R + j % e0, y = R + (j / e0) % e1, z = R + j / (e0 * e1);
    const i64 c = index_in(q.off, q.sy, q.sz, x, y, z);
    const auto at = [&](int d, int k) {
      return in.load(static_cast<std::uint64_t>(c + k * (d == 0 ? 1 : d == 1 ? q.sy : q.sz)));
    };
    out.store(static_cast<std::uint64_t>(cell_at(s, x, y, z)), fd_cell(s.w, R, at));
  }
}

using GpsFn = void (*)(FdStep, Plan, View<float>);
using CheckedFn = void (*)(FdStep, View<float>, View<float>);

void check_local(const FdStep& s) {
  if (s.in.remote()) throw gpsm::Error("gpsm: fd3d: a GPS step reads one replica, not remote pieces");
}

}  // namespace

void launch_fd_gps_step(const FdStep& s, const View<float>& out, cudaStream_t st) {
  check_local(s);
  const GpsFn fn = with_halo(s.radius, [](auto r) -> GpsFn { return fd_gps_kernel<decltype(r)::value>; });
  const Plan p = fd_cached_plan(reinterpret_cast<const void*>(fn), s);
  fn<<<static_cast<unsigned>(std::clamp<i64>(p.items, 1, INT_MAX)), dim3(kTx, kTy), 0, st>>>(s, p, out);
  GPSM_CUDA_LAUNCH();
}

void launch_fd_checked_step(const FdStep& s, const View<float>& in, const View<float>& out, cudaStream_t st) {
  check_local(s);
  const CheckedFn fn = with_halo(s.radius, [](auto r) -> CheckedFn { return fd_checked_kernel<decltype(r)::value>; });
  i64 cells = 1;
  for (int d = 0; d < 3; ++d) cells *= s.box.n[d] - 2 * s.radius;
  if (cells <= 0) return;
  const auto blocks = static_cast<unsigned>(std::clamp<i64>((cells + kThreads - 1) / kThreads, 1, 8192));
  fn<<<blocks, kThreads, 0, st>>>(s, in, out);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::fd3d
