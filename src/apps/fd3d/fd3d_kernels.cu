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
// Per plane, a thread: loads its column's cell R planes ahead into the queue's front, writes the
// queue's centre into the tile, loads its share of the apron (rows above and below the tile along
// y, columns left and right along x), waits for the block, and computes fd_cell (the CPU
// reference's order; multiplies __fmul_rn, the file built with --fmad=false) from the tile (x, y)
// and the queue (z). Threads whose column lies in the boundary layer or halo load and share it but
// store nothing. Every load goes through fd3d_step.hpp's Sources (load<kRemote>): rdl's variant
// picks the neighbour's block for a coordinate in the halo, the others read one box. Loads are plain
// (coherent, L1-cached): the values change between launches.
#include "apps/fd3d/fd3d_kernels.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_spec.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {
namespace {

using i64 = std::int64_t;

// Blocks per SM the registers must allow: 2 (32 warps, at most 64 registers a thread) to hide the
// loads behind another block's arithmetic; at R = 16 one (16 warps: the queue of 33 planes and the
// addressing need more than 64 registers, which spilled 88-164 bytes per thread; GPU-SM's Table 1
// runs halo 16 at 31 % occupancy too).
constexpr int min_blocks(int r) { return r >= 16 ? 1 : 2; }

// Whether a tile's loads may reach the remote pieces: its cells along the split axis, widened by R
// on both sides, meet a halo coordinate (uniform over the block, so the interior's loads take the
// plain path). lo, hi: the tile's updated coordinates [lo, hi) along the split axis.
__device__ __forceinline__ bool near_halo(const Sources& in, int r, i64 lo, i64 hi) {
  return lo - r < in.lo_end || hi + r > in.hi_begin;
}

// Coordinates are 32-bit in the kernel (extents are at most 99999, fd3d_spec.cpp), indices 64-bit:
// at R = 16 the queue alone takes 33 of the registers.
template <int R, bool kRemote, bool kPush>
__global__ void __launch_bounds__(kThreads, min_blocks(R)) fd_step_kernel(const __grid_constant__ FdStep s, const Plan p) {
  __shared__ float tile[kTy + 2 * R][kTx + 2 * R];  // the current plane: the block's cells and an apron of R
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int tid = tx + kTx * ty;
  const int a = s.box.axis;
  const int n0 = static_cast<int>(s.box.n[0]), n1 = static_cast<int>(s.box.n[1]);
  const Piece& mid = s.in.mid;
  for (i64 w = blockIdx.x; w < p.items; w += gridDim.x) {
    int x0, y0, z0, z1;
    {
      i64 bx, by, ch, lo, hi;
      item_of(p, w, bx, by, ch);
      chunk_planes(p, s.box, R, ch, lo, hi);
      x0 = R + static_cast<int>(bx) * kTx;
      y0 = R + static_cast<int>(by) * kTy;
      z0 = static_cast<int>(lo);
      z1 = static_cast<int>(hi);
    }
    const int x = x0 + tx, y = y0 + ty;
    const bool has = x < n0 && y < n1;           // a cell of the box: loaded and shared
    const bool upd = x < n0 - R && y < n1 - R;   // an updated cell: also computed and stored
    // rdl: whether this tile's loads may reach a neighbour's block (else every load is mid's).
    bool remote = false;
    if constexpr (kRemote) {
      const int lo = a == 0 ? x0 : a == 1 ? y0 : z0;
      const int hi = a == 0 ? x0 + kTx : a == 1 ? y0 + kTy : z1;
      remote = near_halo(s.in, R, lo, hi);
    }
    // Split along z, only the column's loads of halo planes are remote (the tile's plane is always
    // an owned one): each is picked as it is loaded, the test uniform over the block. Split along x
    // or y, the column's piece is fixed by (x, y) and only the apron's loads are picked, per cell.
    const bool zpick = remote && a == 2, xypick = remote && a != 2;
    const Piece& cp = xypick ? piece_at(s.in, a, x, y, 0) : mid;
    const float* col = cp.p + (cp.off + x + y * cp.sy);
    const auto front = [&](int z) {
      return zpick && (z < s.in.lo_end || z >= s.in.hi_begin) ? load<true>(s.in, a, x, y, z) : col[z * cp.sz];
    };
    float q[2 * R + 1];  // planes z - R .. z + R of this column
#pragma unroll
    for (int d = 0; d < 2 * R; ++d) q[d + 1] = has ? front(z0 - R + d) : 0.0f;
    for (int z = z0; z < z1; ++z) {
#pragma unroll
      for (int d = 0; d < 2 * R; ++d) q[d] = q[d + 1];
      q[2 * R] = has ? front(z + R) : 0.0f;
      const float* plane = mid.p + (mid.off + z * mid.sz);  // mid's plane z
      const auto apron = [&](int xx, int yy) {
        return xypick ? load<true>(s.in, a, xx, yy, z) : plane[xx + yy * mid.sy];
      };
      __syncthreads();  // the block is done with the previous plane's tile
      if (has) tile[ty + R][tx + R] = q[R];
      // Apron along y: R rows above and below the tile, the tile's columns.
      for (int j = ty; j < 2 * R; j += kTy) {
        const int yy = j < R ? y0 - R + j : y0 + kTy + (j - R);
        if (x < n0 && yy < n1) tile[yy - y0 + R][tx + R] = apron(x, yy);
      }
      // Apron along x: R columns left and right of the tile, the tile's rows.
      for (int k = tid; k < kTy * 2 * R; k += kThreads) {
        const int row = k / (2 * R), c = k % (2 * R);
        const int xx = c < R ? x0 - R + c : x0 + kTx + (c - R), yy = y0 + row;
        if (xx < n0 && yy < n1) tile[row + R][xx - x0 + R] = apron(xx, yy);
      }
      __syncthreads();
      if (upd) {
        const auto at = [&](int d, int k) -> float {
          return d == 0 ? tile[ty + R][tx + R + k] : d == 1 ? tile[ty + R + k][tx + R] : q[R + k];
        };
        const float v = fd_cell(s.w, R, at);
        if constexpr (kPush)
          fd_store(s, x, y, z, v);
        else
          s.out.p[index_in(s.out.off, s.out.sy, s.out.sz, x, y, z)] = v;
      }
    }
  }
}

using StepFn = void (*)(FdStep, Plan);

template <int R>
StepFn step_fn(bool remote, bool push) {
  if (remote) return fd_step_kernel<R, true, false>;
  return push ? fd_step_kernel<R, false, true> : fd_step_kernel<R, false, false>;
}

StepFn pick(const FdStep& s) {
  const bool remote = s.in.remote(), push = s.lower.p != nullptr || s.upper.p != nullptr;
  if (remote && push) throw gpsm::Error("gpsm: fd3d: a step that both loads remote halos and pushes is not built");
  switch (s.radius) {
    case 2: return step_fn<2>(remote, push);
    case 4: return step_fn<4>(remote, push);
    case 8: return step_fn<8>(remote, push);
    case 16: return step_fn<16>(remote, push);
    default: break;
  }
  throw gpsm::Error(fmt::format("gpsm: fd3d: no kernel for halo {}; use {}", s.radius, kHaloList));
}

// Blocks of `kernel` the current device holds at once; cached per device.
i64 resident_blocks(const void* kernel) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, i64> cache;
  int dev = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find({kernel, dev});
  if (it != cache.end()) return it->second;
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const i64 n = std::max<i64>(1, static_cast<i64>(per_sm) * sms);
  cache.emplace(std::make_pair(kernel, dev), n);
  return n;
}

std::pair<StepFn, Plan> step_launch(const FdStep& s) {
  const StepFn fn = pick(s);
  return {fn, make_plan(s.box, s.radius, resident_blocks(reinterpret_cast<const void*>(fn)))};
}

}  // namespace

Plan fd_step_plan(const FdStep& s) { return step_launch(s).second; }

void launch_fd_step(const FdStep& s, cudaStream_t st) {
  // make_plan's search is cheap (a loop over chunk counts), but a captured loop asks per GPU and
  // iteration: the plan depends only on the launch's shape, so it is kept.
  static std::mutex mu;
  static std::map<std::array<i64, 7>, std::pair<StepFn, Plan>> cache;
  int dev = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  const StepFn fn = pick(s);
  const std::array<i64, 7> key{reinterpret_cast<i64>(fn), dev, s.box.n[0], s.box.n[1], s.box.n[2], s.box.axis,
                               s.box.count};
  std::pair<StepFn, Plan> k;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, step_launch(s)).first;
    k = it->second;
  }
  const auto grid = static_cast<unsigned>(std::clamp<i64>(k.second.items, 1, INT_MAX));
  k.first<<<grid, dim3(kTx, kTy), 0, st>>>(s, k.second);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::fd3d
