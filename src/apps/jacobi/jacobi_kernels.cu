// Jacobi 2D kernels: the plain sweep (single, memcpy, p2p_inline, infinite), the whole-grid sweep
// (um), the CPU-free persistent kernel and its GPS counterpart. Point update: apps/stencil/stencil_math.hpp (shared with the CPU
// reference, so results match it bit for bit).
#include "apps/jacobi/jacobi_kernels.hpp"

#include <algorithm>
#include <cstdint>

#include "apps/jacobi/jacobi_device.cuh"
#include "gpsm/gps/sync.hpp"
#include "gpsm/gps/view.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::jacobi {
namespace {


__global__ void init_rows_kernel(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison) {
  init_rows(buf, bcol, nx, rows, poison);
}

// One row, by the threads of one block (blockDim.x threads, 1D): c_row the row, n_row and s_row
// its northern and southern neighbours; `out` takes every computed value (out.put4(j, v): cells
// 4j .. 4j + 3; out.put(ix, v): cell ix). Returns this thread's sum of (a_new - a)^2 when kNorm.
//
// kVec (nx % 4 == 0, 16-byte aligned rows): a thread updates four cells from three float4 loads
// (centre, north, south) and two scalar loads for the outer west/east neighbours, which the
// neighbouring threads' float4 loads have just brought into L1; columns 0 and nx - 1 keep their
// (fixed boundary) value. Stores are float4: 16-byte packets over the link where they are pushed.
template <bool kNorm, bool kVec, class Out>
__device__ __forceinline__ float sweep_cells(const float* __restrict__ c_row, const float* __restrict__ n_row,
                                             const float* __restrict__ s_row, const Out& out, std::int64_t nx) {
  float d2 = 0;
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
      out.put4(j, v);
      if (kNorm) {
        const float dx = v.x - c.x, dy = v.y - c.y, dz = v.z - c.z, dw = v.w - c.w;
        d2 += ((dx * dx + dy * dy) + dz * dz) + dw * dw;
      }
    }
  } else {
    for (std::int64_t ix = 1 + threadIdx.x; ix < nx - 1; ix += blockDim.x) {
      const float c = c_row[ix];
      const float v = jacobi_point(c_row[ix + 1], c_row[ix - 1], s_row[ix], n_row[ix]);
      out.put(ix, v);
      if (kNorm) {
        const float d = v - c;
        d2 += d * d;
      }
    }
  }
  return d2;
}

// A slab row's destination: the row itself, and the neighbours' halo rows when set (peer
// pointers: device-initiated stores; a one-row slab is both neighbours' halo).
struct SlabOut {
  float* o_row;
  float* push_a;
  float* push_b;
  __device__ __forceinline__ void put4(std::int64_t j, const float4& v) const {
    reinterpret_cast<float4*>(o_row)[j] = v;
    if (push_a != nullptr) reinterpret_cast<float4*>(push_a)[j] = v;
    if (push_b != nullptr) reinterpret_cast<float4*>(push_b)[j] = v;
  }
  __device__ __forceinline__ void put(std::int64_t ix, float v) const {
    o_row[ix] = v;
    if (push_a != nullptr) push_a[ix] = v;
    if (push_b != nullptr) push_b[ix] = v;
  }
};

// Row iy of a slab; its neighbours are rows iy - 1 and iy + 1 of the slab, or `north` / `south`
// when set (rdl: the neighbours' edge rows through peer pointers).
template <bool kNorm, bool kVec>
__device__ __forceinline__ float sweep_row(const float* __restrict__ a, float* __restrict__ an, std::int64_t nx,
                                           std::int64_t iy, const float* north, const float* south, float* push_a,
                                           float* push_b) {
  const float* c_row = a + iy * nx;
  return sweep_cells<kNorm, kVec>(c_row, north != nullptr ? north : c_row - nx, south != nullptr ? south : c_row + nx,
                                  SlabOut{an + iy * nx, push_a, push_b}, nx);
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

// The whole-grid sweep (um's managed memory): rows [first_row, first_row + rows) with index wrap
// for the periodic halo; a block per row, like sweep_kernel.
template <bool kNorm>
__global__ void __launch_bounds__(kRowThreads) grid_sweep_kernel(GridSweep s) {
  float d2 = 0;
  for (std::int64_t k = blockIdx.x; k < s.rows; k += gridDim.x) {
    const std::int64_t iy = s.first_row + k;
    const std::int64_t north = iy == 1 ? s.ny - 2 : iy - 1, south = iy == s.ny - 2 ? 1 : iy + 1;
    for (std::int64_t ix = 1 + threadIdx.x; ix < s.nx - 1; ix += blockDim.x) {
      const std::int64_t i = iy * s.nx + ix;
      const float c = s.a[i];
      const float v = jacobi_point(s.a[i + 1], s.a[i - 1], s.a[south * s.nx + ix], s.a[north * s.nx + ix]);
      s.a_new[i] = v;
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

// ---- gps: the CPU-free model on GPS memory, written with the public API only ------------------
// A row's destination in a GPS array: the span says where the row goes (this replica, and each
// other subscriber of its pages, inline).
struct GpsOut {
  const gps::View<float>& v;
  gps::View<float>::Span s;
  std::int64_t base;  // the row's first element
  __device__ __forceinline__ void put4(std::int64_t j, const float4& x) const { v.put(s, base + 4 * j, x); }
  __device__ __forceinline__ void put(std::int64_t ix, float x) const { v.put(s, base + ix, x); }
};

// Where one row of one iteration parity reads and writes, from its spans: the three rows it reads
// (row starts, nullptr where no single replica holds the row) and the span of the row it writes.
// Subscriptions change only between kernels, so a row's plan holds for the whole launch.
struct RowPlan {
  const float* c;
  const float* n;
  const float* s;
  gps::View<float>::Span o;
};
__device__ __forceinline__ RowPlan plan_row(const gps::View<float>& in, const gps::View<float>& out, std::int64_t nx,
                                            std::int64_t iy, std::int64_t north, std::int64_t south) {
  const auto c = in.span(iy * nx, nx), n = in.span(north * nx, nx), s = in.span(south * nx, nx);
  return RowPlan{c.from != nullptr ? c.from + iy * nx : nullptr, n.from != nullptr ? n.from + north * nx : nullptr,
                 s.from != nullptr ? s.from + south * nx : nullptr, out.span(iy * nx, nx)};
}

// The block's k-th row of this GPU, in the CPU-free order (first and last row first, so their
// publishes travel while the interior is computed), and its neighbours (periodic).
struct RowAt {
  std::int64_t iy, north, south;
};
__device__ __forceinline__ RowAt row_at(const GpsSolve& g, std::int64_t k) {
  const std::int64_t local = k == 0 ? 0 : k == 1 ? g.rows - 1 : k - 1;
  const std::int64_t iy = g.first_row + local;
  return RowAt{iy, iy == 1 ? g.ny - 2 : iy - 1, iy == g.ny - 2 ? 1 : iy + 1};
}

// Global row r of `in` into `out`. The fast path reads the three rows where the plan says (this
// replica, once subscribed) and stores through the output row's span; a row whose pages do not
// share one subscriber set (pages that straddle rows) goes cell by cell through load() and
// store(). `published`: a store went to another GPU (the device fence then releases at system
// scope).
template <bool kNorm, bool kVec>
__device__ __forceinline__ float gps_row(const RowPlan& p, const gps::View<float>& in, const gps::View<float>& out,
                                         std::int64_t nx, const RowAt& r, bool& published) {
  if (p.c != nullptr && p.n != nullptr && p.s != nullptr && p.o.uniform) {
    published = published || p.o.others != 0u;
    return sweep_cells<kNorm, kVec>(p.c, p.n, p.s, GpsOut{out, p.o, r.iy * nx}, nx);
  }
  published = true;
  float d2 = 0;
  for (std::int64_t ix = 1 + threadIdx.x; ix < nx - 1; ix += blockDim.x) {
    const std::int64_t i = r.iy * nx + ix;
    const float x = in.load(i);
    const float v = jacobi_point(in.load(i + 1), in.load(i - 1), in.load(r.south * nx + ix), in.load(r.north * nx + ix));
    out.store(i, v);
    if (kNorm) d2 += (v - x) * (v - x);
  }
  return d2;
}

// The plans of a block's first kPlannedRows rows, both parities, made once per launch by the
// block's threads in parallel (one round trip for the subscriber masks, not one per row and
// iteration); rows beyond them are planned as they come.
constexpr int kPlannedRows = 32;
struct BlockPlans {
  RowPlan p[2][kPlannedRows];  // [parity: the array read][j: the block's j-th row]
  int count;
};

__device__ __forceinline__ void make_plans(const GpsSolve& g, BlockPlans& bp) {
  const std::int64_t mine = blockIdx.x < g.rows ? (g.rows - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  const int count = static_cast<int>(mine < kPlannedRows ? mine : kPlannedRows);
  for (int t = threadIdx.x; t < 2 * count; t += blockDim.x) {
    const int par = t / count, j = t % count;
    const RowAt r = row_at(g, blockIdx.x + static_cast<std::int64_t>(j) * gridDim.x);
    bp.p[par][j] = par == 0 ? plan_row(g.a[0], g.a[1], g.nx, r.iy, r.north, r.south)
                            : plan_row(g.a[1], g.a[0], g.nx, r.iy, r.north, r.south);
  }
  if (threadIdx.x == 0) bp.count = count;
  __syncthreads();
}

// One iteration's rows of this GPU (reading parity `par`).
template <bool kVec, int par>
__device__ __forceinline__ float gps_rows(const GpsSolve& g, const BlockPlans& bp, bool calc, bool& published) {
  const gps::View<float>& in = g.a[par];
  const gps::View<float>& out = g.a[1 - par];
  float d2 = 0;
  int j = 0;
  for (std::int64_t k = blockIdx.x; k < g.rows; k += gridDim.x, ++j) {
    const RowAt r = row_at(g, k);
    const RowPlan p = j < bp.count ? bp.p[par][j] : plan_row(in, out, g.nx, r.iy, r.north, r.south);
    d2 += calc ? gps_row<true, kVec>(p, in, out, g.nx, r, published) : gps_row<false, kVec>(p, in, out, g.nx, r, published);
  }
  return d2;
}

// __grid_constant__: the views stay in parameter space, and the references above point there
// (no per-thread copy of the views).
template <bool kVec>
__global__ void __launch_bounds__(kCpuFreeThreads) gps_solve_kernel_impl(const __grid_constant__ GpsSolve g) {
  __shared__ BlockPlans plans;
  make_plans(g, plans);
  int iter = 0;
  float norm = 0;
  while (iter < g.niter) {
    const bool calc = iter % g.nccheck == 0;
    bool published = false;
    // Two copies of the loop, each with a constant index into the views.
    const float d2 = (iter & 1) ? gps_rows<kVec, 1>(g, plans, calc, published) : gps_rows<kVec, 0>(g, plans, calc, published);
    const float sum = g.fence.arrive_and_wait(iter, d2, calc, published);
    ++iter;
    if (calc) {
      norm = sqrtf(sum);
      if (norm <= g.tol) break;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    g.done[0] = iter;
    reinterpret_cast<float*>(g.done + 2)[0] = norm;
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
  launch_rows(grid_sweep_kernel<true>, grid_sweep_kernel<false>, s, s.rows, s.norm != nullptr, st);
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

bool gps_solve_vec(const GpsSolve& g) { return rows_vectorized(g.nx); }

int gps_solve_blocks(int device) {
  int v = 0, sc = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, gps_solve_kernel_impl<true>, kCpuFreeThreads, 0));
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&sc, gps_solve_kernel_impl<false>, kCpuFreeThreads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return std::min(v, sc) * sms;
}

const void* gps_solve_kernel(const GpsSolve& g) {
  return gps_solve_vec(g) ? reinterpret_cast<const void*>(gps_solve_kernel_impl<true>)
                          : reinterpret_cast<const void*>(gps_solve_kernel_impl<false>);
}

void launch_gps_solve(const GpsSolve& g, int blocks, cudaStream_t st) {
  GpsSolve arg = g;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(gps_solve_kernel(g), dim3(static_cast<unsigned>(blocks)), dim3(kCpuFreeThreads),
                                        args, 0, st));
}

}  // namespace gpsm::apps::jacobi
