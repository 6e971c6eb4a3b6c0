// Jacobi 2D kernels: the plain sweep (single, memcpy, p2p_inline, infinite), the GPS sweep and the
// CPU-free persistent kernel. Point update: apps/stencil/stencil_math.hpp (shared with the CPU
// reference, so results match it bit for bit).
#include "apps/jacobi/jacobi_kernels.hpp"

#include <cooperative_groups.h>

#include "apps/jacobi/jacobi_device.cuh"
#include "apps/stencil/stencil_math.hpp"
#include "scope/cuda_check.hpp"

namespace gpsm::apps::jacobi {
namespace {

namespace cg = cooperative_groups;
constexpr int kBx = 32, kBy = 8;

__global__ void init_rows_kernel(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison) {
  init_rows(buf, bcol, nx, rows, poison);
}

template <bool kNorm>
__global__ void __launch_bounds__(kBx* kBy) sweep_kernel(Sweep s) {
  const std::int64_t ix = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x + 1;
  const std::int64_t iy = static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y + 1;
  float d2 = 0;
  if (ix < s.nx - 1 && iy <= s.rows) {
    const std::int64_t i = iy * s.nx + ix;
    const float south = (iy == s.rows && s.south != nullptr) ? s.south[ix] : s.a[i + s.nx];
    const float north = (iy == 1 && s.north != nullptr) ? s.north[ix] : s.a[i - s.nx];
    const float v = jacobi_point(s.a[i + 1], s.a[i - 1], south, north);
    s.a_new[i] = v;
    if (iy == 1 && s.push_top != nullptr) s.push_top[ix] = v;
    if (iy == s.rows && s.push_bottom != nullptr) s.push_bottom[ix] = v;
    if (kNorm) {
      const float d = v - s.a[i];
      d2 = d * d;
    }
  }
  if (kNorm) block_add(d2, s.norm);
}

// Whole-grid sweeps (um's managed memory, gps's replicated arrays): the same loop over rows
// [first_row, first_row + rows) with index wrap for the periodic halo, on either kind of grid.
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
__global__ void __launch_bounds__(kBx* kBy) wrap_sweep_kernel(WrapArgs<Rows> s) {
  const std::int64_t ix = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x + 1;
  const std::int64_t iy = s.first_row + static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y;
  float d2 = 0;
  if (ix < s.nx - 1 && iy < s.first_row + s.rows) {
    const std::int64_t north = iy == 1 ? s.ny - 2 : iy - 1, south = iy == s.ny - 2 ? 1 : iy + 1;
    const std::int64_t i = iy * s.nx + ix;
    const float c = s.g.load(i);
    const float v = jacobi_point(s.g.load(i + 1), s.g.load(i - 1), s.g.load(south * s.nx + ix), s.g.load(north * s.nx + ix));
    s.g.store(i, v);
    if (kNorm) {
      const float d = v - c;
      d2 = d * d;
    }
  }
  if (kNorm) block_add(d2, s.norm);
}

// One thread per cell of `rows` rows of nx - 2 interior columns; the norm variant when asked.
template <class A>
void launch_rows(void (*with_norm)(A), void (*plain)(A), const A& a, std::int64_t nx, std::int64_t rows, bool norm,
                 cudaStream_t st) {
  const dim3 block(kBx, kBy);
  const dim3 grid(static_cast<unsigned>((nx - 2 + kBx - 1) / kBx), static_cast<unsigned>((rows + kBy - 1) / kBy));
  (norm ? with_norm : plain)<<<grid, block, 0, st>>>(a);
  GPSM_CUDA_LAUNCH();
}

__global__ void __launch_bounds__(kCpuFreeThreads) cpu_free_kernel_impl(CpuFree c) {
  cg::grid_group grid = cg::this_grid();
  std::uint64_t round = 0;
  int iter = 0;
  while (iter < c.niter) {
    const int p = iter & 1;
    const float* a = c.buf[p];
    float* an = c.buf[1 - p];
    float* top = c.top_halo[1 - p];
    float* bottom = c.bottom_halo[1 - p];
    const bool calc = iter % c.nccheck == 0;
    float d2 = 0;
    // A block per row (grid-stride): coalesced, no index division.
    for (std::int64_t iy = 1 + blockIdx.x; iy <= c.rows; iy += gridDim.x) {
      for (std::int64_t ix = 1 + threadIdx.x; ix < c.nx - 1; ix += blockDim.x) {
        const std::int64_t i = iy * c.nx + ix;
        const float v = jacobi_point(a[i + 1], a[i - 1], a[i + c.nx], a[i - c.nx]);
        an[i] = v;
        if (iy == 1) top[ix] = v;  // device-initiated halo stores (peer memory)
        if (iy == c.rows) bottom[ix] = v;
        if (calc) {
          const float d = v - a[i];
          d2 += d * d;
        }
      }
    }
    if (calc) block_add(d2, &c.acc[p]);
    // Every block's stores (local and peer) are ordered before block 0's system-scope release in
    // the barrier below by this grid barrier (release is cumulative).
    grid.sync();
    if (blockIdx.x == 0) {
      if (threadIdx.x == 0 && calc) {
        const float mine = atomicExch(&c.acc[p], 0.0f);
        for (int g = 0; g < c.ranks; ++g) c.slots[g][p * 8 + c.rank] = mine;
      }
      c.barrier.sync(round);
      if (threadIdx.x == 0 && calc) {
        const volatile float* mine = c.slots[c.rank];
        float sum = 0;
        for (int g = 0; g < c.ranks; ++g) sum += mine[p * 8 + g];
        const float norm = sqrtf(sum);
        reinterpret_cast<volatile float*>(c.done + 2)[0] = norm;
        reinterpret_cast<volatile int*>(c.done)[1] = norm > c.tol ? 0 : 1;
      }
    }
    grid.sync();
    ++iter;
    if (calc && reinterpret_cast<volatile int*>(c.done)[1] != 0) break;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) c.done[0] = iter;
}

}  // namespace

void launch_init_rows(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison,
                      cudaStream_t st) {
  init_rows_kernel<<<1024, 256, 0, st>>>(buf, bcol, nx, rows, poison);
  GPSM_CUDA_LAUNCH();
}

void launch_sweep(const Sweep& s, cudaStream_t st) {
  launch_rows(sweep_kernel<true>, sweep_kernel<false>, s, s.nx, s.rows, s.norm != nullptr, st);
}

void launch_grid_sweep(const GridSweep& s, cudaStream_t st) {
  const WrapArgs<PlainRows> w{PlainRows{s.a, s.a_new}, s.nx, s.ny, s.first_row, s.rows, s.norm};
  launch_rows(wrap_sweep_kernel<true, PlainRows>, wrap_sweep_kernel<false, PlainRows>, w, s.nx, s.rows,
              s.norm != nullptr, st);
}

void launch_gps_sweep(const GpsSweep& s, cudaStream_t st) {
  const WrapArgs<GpsRows> w{GpsRows{s.a, s.a_new}, s.nx, s.ny, s.first_row, s.rows, s.norm};
  launch_rows(wrap_sweep_kernel<true, GpsRows>, wrap_sweep_kernel<false, GpsRows>, w, s.nx, s.rows, s.norm != nullptr,
              st);
}

int cpu_free_blocks(int device) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cpu_free_kernel_impl, kCpuFreeThreads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return per_sm * sms;
}

const void* cpu_free_kernel() { return reinterpret_cast<const void*>(cpu_free_kernel_impl); }

void launch_cpu_free(const CpuFree& c, int blocks, cudaStream_t st) {
  CpuFree arg = c;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(cpu_free_kernel(), dim3(static_cast<unsigned>(blocks)),
                                        dim3(kCpuFreeThreads), args, 0, st));
}

}  // namespace gpsm::apps::jacobi
