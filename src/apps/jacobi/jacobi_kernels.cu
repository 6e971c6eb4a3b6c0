// Jacobi 2D kernels: the plain sweep (single, memcpy, p2p_inline, infinite), the GPS sweep and the
// CPU-free persistent kernel. Point update: apps/stencil/stencil_math.hpp (shared with the CPU
// reference, so results match it bit for bit).
#include "apps/jacobi/jacobi_kernels.hpp"

#include <algorithm>
#include <cstdint>

#include "apps/jacobi/jacobi_device.cuh"
#include "gpsm/gps/sync.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::jacobi {
namespace {


__global__ void init_rows_kernel(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison) {
  init_rows(buf, bcol, nx, rows, poison);
}

// One row of a slab, by the threads of one block (blockDim.x threads, 1D). Returns this thread's
// sum of (a_new - a)^2 when kNorm. Row iy's neighbours are rows iy - 1 and iy + 1 of the slab,
// or `north` / `south` when set (rdl: the neighbours' edge rows through peer pointers). The row
// also goes to `push_a` and `push_b` when set (neighbours' halo rows: device-initiated peer
// stores; a one-row slab is both neighbours' halo).
//
// kVec (nx % 4 == 0, 16-byte aligned rows): a thread updates four cells from three float4 loads
// (centre, north, south) and two scalar loads for the outer west/east neighbours, which the
// neighbouring threads' float4 loads have just brought into L1; columns 0 and nx - 1 keep their
// (fixed boundary) value. Pushes are float4 stores: 16-byte packets over the link.
template <bool kNorm, bool kVec>
__device__ __forceinline__ float sweep_row(const float* __restrict__ a, float* __restrict__ an, std::int64_t nx,
                                           std::int64_t iy, const float* north, const float* south, float* push_a,
                                           float* push_b) {
  float d2 = 0;
  const float* c_row = a + iy * nx;
  const float* n_row = north != nullptr ? north : c_row - nx;
  const float* s_row = south != nullptr ? south : c_row + nx;
  float* o_row = an + iy * nx;
  if constexpr (kVec) {
    const std::int64_t nv = nx / 4;
#pragma unroll 4  // several rows' worth of loads in flight per thread (nx = 16384: 16 float4 per thread)
    for (std::int64_t j = threadIdx.x; j < nv; j += blockDim.x) {
      const float4 c = reinterpret_cast<const float4*>(c_row)[j];
      const float4 n = reinterpret_cast<const float4*>(n_row)[j];
      const float4 s = reinterpret_cast<const float4*>(s_row)[j];
      const float w = c_row[4 * j - 1];  // j == 0: the previous row's last cell (unused)
      const float e = c_row[4 * j + 4];  // j == nv - 1: the next row's first cell (unused)
      float4 v;
      v.x = j == 0 ? c.x : jacobi_point(c.y, w, s.x, n.x);
      v.y = jacobi_point(c.z, c.x, s.y, n.y);
      v.z = jacobi_point(c.w, c.y, s.z, n.z);
      v.w = j == nv - 1 ? c.w : jacobi_point(e, c.z, s.w, n.w);
      reinterpret_cast<float4*>(o_row)[j] = v;
      if (push_a != nullptr) reinterpret_cast<float4*>(push_a)[j] = v;
      if (push_b != nullptr) reinterpret_cast<float4*>(push_b)[j] = v;
      if (kNorm) {
        const float dx = v.x - c.x, dy = v.y - c.y, dz = v.z - c.z, dw = v.w - c.w;
        d2 += ((dx * dx + dy * dy) + dz * dz) + dw * dw;
      }
    }
  } else {
    for (std::int64_t ix = 1 + threadIdx.x; ix < nx - 1; ix += blockDim.x) {
      const float c = c_row[ix];
      const float v = jacobi_point(c_row[ix + 1], c_row[ix - 1], s_row[ix], n_row[ix]);
      o_row[ix] = v;
      if (push_a != nullptr) push_a[ix] = v;
      if (push_b != nullptr) push_b[ix] = v;
      if (kNorm) {
        const float d = v - c;
        d2 += d * d;
      }
    }
  }
  return d2;
}

bool vec_ok(std::int64_t nx, const void* a, const void* b) {
  return rows_vectorized(nx) && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 && reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

// Blocks for a row-per-block sweep of `rows` rows: enough to fill the GPU a few times over while
// keeping the norm's one atomic per block cheap (one per row would be thousands).
unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(rows, 2048))); }
constexpr int kRowThreads = 256;

template <bool kNorm, bool kVec>
__global__ void __launch_bounds__(kRowThreads) sweep_kernel(Sweep s) {
  float d2 = 0;
  for (std::int64_t iy = 1 + blockIdx.x; iy <= s.rows; iy += gridDim.x) {
    d2 += sweep_row<kNorm, kVec>(s.a, s.a_new, s.nx, iy, iy == 1 ? s.north : nullptr, iy == s.rows ? s.south : nullptr,
                                 iy == 1 ? s.push_top : nullptr, iy == s.rows ? s.push_bottom : nullptr);
    if (s.ready != nullptr && (iy == 1 || iy == s.rows)) {  // uniform over the block
      __syncthreads();
      if (threadIdx.x == 0) {
        gps::fence_sys();  // the block's row (cumulative over the barrier) before the flag
        if (iy == 1) gps::st_release_sys(&s.ready[0], s.phase);
        if (iy == s.rows) gps::st_release_sys(&s.ready[1], s.phase);
      }
    }
  }
  if (kNorm) block_add(d2, s.norm);
}

// Whole-grid sweeps (um's managed memory, gps's replicated arrays): the same loop over rows
// [first_row, first_row + rows) with index wrap for the periodic halo, on either kind of grid;
// a block per row, like sweep_kernel (scalar: a GPS view loads one element at a time).
struct PlainRows {
  const float* a;
  float* a_new;
  __device__ __forceinline__ float load(std::int64_t i) const { return a[i]; }
  __device__ __forceinline__ void store(std::int64_t i, float v) const { a_new[i] = v; }
};
struct GpsRows {
  gps::View<float> a, a_new;
  __device__ __forceinline__ float load(std::int64_t i) const { return a.load(i); }
  __device__ __forceinline__ void store(std::int64_t i, float v) const { a_new.store(i, v); }
};
template <class Rows>
struct WrapArgs {
  Rows g;
  std::int64_t nx, ny, first_row, rows;
  float* norm;
};

template <bool kNorm, class Rows>
__global__ void __launch_bounds__(kRowThreads) wrap_sweep_kernel(WrapArgs<Rows> s) {
  float d2 = 0;
  for (std::int64_t k = blockIdx.x; k < s.rows; k += gridDim.x) {
    const std::int64_t iy = s.first_row + k;
    const std::int64_t north = iy == 1 ? s.ny - 2 : iy - 1, south = iy == s.ny - 2 ? 1 : iy + 1;
    for (std::int64_t ix = 1 + threadIdx.x; ix < s.nx - 1; ix += blockDim.x) {
      const std::int64_t i = iy * s.nx + ix;
      const float c = s.g.load(i);
      const float v = jacobi_point(s.g.load(i + 1), s.g.load(i - 1), s.g.load(south * s.nx + ix), s.g.load(north * s.nx + ix));
      s.g.store(i, v);
      if (kNorm) {
        const float d = v - c;
        d2 += d * d;
      }
    }
  }
  if (kNorm) block_add(d2, s.norm);
}

template <class A>
void launch_rows(void (*with_norm)(A), void (*plain)(A), const A& a, std::int64_t rows, bool norm, cudaStream_t st) {
  (norm ? with_norm : plain)<<<row_blocks(rows), kRowThreads, 0, st>>>(a);
  GPSM_CUDA_LAUNCH();
}

// The CPU-free persistent kernel. Block b takes the rows k = b, b + gridDim.x, ... in the order
// 1, rows, 2, 3, ..., rows - 1: the two halo rows first, so their peer stores travel while the
// interior is computed. Iterations end in IterSync::arrive_and_wait (no grid barrier).
template <bool kVec>
__global__ void __launch_bounds__(kCpuFreeThreads) cpu_free_kernel_impl(CpuFree c) {
  int iter = 0;
  float norm = 0;
  while (iter < c.niter) {
    const int p = iter & 1;
    const float* a = c.buf[p];
    float* an = c.buf[1 - p];
    const bool calc = iter % c.nccheck == 0;
    float d2 = 0;
    bool pushed = false;
    for (std::int64_t k = blockIdx.x; k < c.rows; k += gridDim.x) {
      const std::int64_t iy = k == 0 ? 1 : k == 1 ? c.rows : k;
      float* top = iy == 1 ? c.top_halo[1 - p] : nullptr;
      float* bottom = iy == c.rows ? c.bottom_halo[1 - p] : nullptr;
      pushed = pushed || top != nullptr || bottom != nullptr;
      d2 += calc ? sweep_row<true, kVec>(a, an, c.nx, iy, nullptr, nullptr, top, bottom)
                 : sweep_row<false, kVec>(a, an, c.nx, iy, nullptr, nullptr, top, bottom);
    }
    const float sum = c.sync.arrive_and_wait(iter, d2, calc, pushed);
    ++iter;
    if (calc) {
      norm = sqrtf(sum);
      if (norm <= c.tol) break;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    c.done[0] = iter;
    reinterpret_cast<float*>(c.done + 2)[0] = norm;
  }
}

}  // namespace

void launch_init_rows(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison,
                      cudaStream_t st) {
  init_rows_kernel<<<1024, 256, 0, st>>>(buf, bcol, nx, rows, poison);
  GPSM_CUDA_LAUNCH();
}

void launch_sweep(const Sweep& s, cudaStream_t st) {
  if (vec_ok(s.nx, s.a, s.a_new) && vec_ok(s.nx, s.north, s.south) && vec_ok(s.nx, s.push_top, s.push_bottom))
    launch_rows(sweep_kernel<true, true>, sweep_kernel<false, true>, s, s.rows, s.norm != nullptr, st);
  else
    launch_rows(sweep_kernel<true, false>, sweep_kernel<false, false>, s, s.rows, s.norm != nullptr, st);
}

void launch_grid_sweep(const GridSweep& s, cudaStream_t st) {
  const WrapArgs<PlainRows> w{PlainRows{s.a, s.a_new}, s.nx, s.ny, s.first_row, s.rows, s.norm};
  launch_rows(wrap_sweep_kernel<true, PlainRows>, wrap_sweep_kernel<false, PlainRows>, w, s.rows, s.norm != nullptr, st);
}

void launch_gps_sweep(const GpsSweep& s, cudaStream_t st) {
  const WrapArgs<GpsRows> w{GpsRows{s.a, s.a_new}, s.nx, s.ny, s.first_row, s.rows, s.norm};
  launch_rows(wrap_sweep_kernel<true, GpsRows>, wrap_sweep_kernel<false, GpsRows>, w, s.rows, s.norm != nullptr, st);
}

bool cpu_free_vec(const CpuFree& c) {
  return vec_ok(c.nx, c.buf[0], c.buf[1]) && vec_ok(c.nx, c.top_halo[0], c.top_halo[1]) &&
         vec_ok(c.nx, c.bottom_halo[0], c.bottom_halo[1]);
}

int cpu_free_blocks(int device) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cpu_free_kernel_impl<true>, kCpuFreeThreads, 0));
  int per_sm_scalar = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_scalar, cpu_free_kernel_impl<false>, kCpuFreeThreads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(per_sm, per_sm_scalar) * sms;
}

const void* cpu_free_kernel(const CpuFree& c) {
  return cpu_free_vec(c) ? reinterpret_cast<const void*>(cpu_free_kernel_impl<true>)
                         : reinterpret_cast<const void*>(cpu_free_kernel_impl<false>);
}

void launch_cpu_free(const CpuFree& c, int blocks, cudaStream_t st) {
  CpuFree arg = c;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(cpu_free_kernel(c), dim3(static_cast<unsigned>(blocks)), dim3(kCpuFreeThreads),
                                        args, 0, st));
}

}  // namespace gpsm::apps::jacobi
