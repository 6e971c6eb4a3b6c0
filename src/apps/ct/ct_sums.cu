// The elementwise and reduction kernels of the CT run (launchers: ct_kernels.hpp): residual
// weighting as weighted_residual does it, and the cost's two sums in double. Built without FMA
// contraction like ct_project.cu (the residual is then the CPU's to the bit for equal A x).
#include <cstdint>

#include "apps/ct/ct_gps_kernels.hpp"
#include "apps/ct/ct_kernels.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::ct {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kMaxBlocks = 4096;  // grid-stride beyond: the sums' atomics stay few

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxBlocks ? (b > 0 ? b : 1) : kMaxBlocks);
}

// Adds the block's values of v to *sum (one atomic per block).
__device__ void block_add(double v, double* sum) {
  __shared__ double part[kThreads];
  part[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

__global__ void __launch_bounds__(kThreads)
    residual_kernel(std::int64_t cells, const float* __restrict__ y, const float* __restrict__ w,
                    const std::int32_t* __restrict__ views, std::int64_t n, float* __restrict__ r) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t k = i / cells, c = i - k * cells;
    const std::int64_t s = std::int64_t{views[k]} * cells + c;
    r[i] = static_cast<float>(w[s] * (static_cast<double>(r[i]) - y[s]));
  }
}

__global__ void __launch_bounds__(kThreads)
    residual_gps_kernel(std::int64_t cells, const float* __restrict__ y, const float* __restrict__ w,
                        const std::int32_t* __restrict__ views, std::int64_t n, const float* __restrict__ ax,
                        const GpsWrite r, std::int64_t first) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t k = i / cells, c = i - k * cells;
    const std::int64_t s = std::int64_t{views[k]} * cells + c;
    r.v.store(static_cast<std::uint64_t>(first + i), static_cast<float>(w[s] * (static_cast<double>(ax[i]) - y[s])));
  }
}

__global__ void __launch_bounds__(kThreads) scale_kernel(float* __restrict__ a, const float* __restrict__ w, std::int64_t n) {
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    a[i] *= w[i];
}

__global__ void __launch_bounds__(kThreads)
    data_term_kernel(const float* __restrict__ ax, const float* __restrict__ y, const float* __restrict__ w,
                     std::int64_t n, double* sum) {
  double s = 0;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const double e = static_cast<double>(ax[i]) - y[i];
    s += w[i] * e * e;
  }
  block_add(s, sum);
}

__global__ void __launch_bounds__(kThreads)
    penalty_kernel(Geometry g, Penalty pen, const float* __restrict__ x, double* sum) {
  double s = 0;
  const std::int64_t n = g.voxels();
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const int iz = static_cast<int>(i % g.nz);
    const std::int64_t col = i / g.nz;
    s += penalty_pairs(g, pen, x, static_cast<int>(col % g.nx), static_cast<int>(col / g.nx), iz);
  }
  block_add(s, sum);
}

}  // namespace

void launch_weighted_residual(const Geometry& g, const float* y, const float* w, const std::int32_t* views, int count,
                              float* r, cudaStream_t st) {
  const std::int64_t n = std::int64_t{count} * g.cells_per_view();
  if (n <= 0) return;
  residual_kernel<<<blocks_for(n), kThreads, 0, st>>>(g.cells_per_view(), y, w, views, n, r);
  GPSM_CUDA_LAUNCH();
}

void launch_weighted_residual_gps(const Geometry& g, const float* y, const float* w, const std::int32_t* views,
                                  int count, const float* ax, const gps::View<float>& r, std::int64_t first,
                                  cudaStream_t st) {
  const std::int64_t n = std::int64_t{count} * g.cells_per_view();
  if (n <= 0) return;
  residual_gps_kernel<<<blocks_for(n), kThreads, 0, st>>>(g.cells_per_view(), y, w, views, n, ax, GpsWrite{r}, first);
  GPSM_CUDA_LAUNCH();
}

void launch_scale(float* a, const float* w, std::int64_t n, cudaStream_t st) {
  if (n <= 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, st>>>(a, w, n);
  GPSM_CUDA_LAUNCH();
}

void launch_data_term(const float* ax, const float* y, const float* w, std::int64_t n, double* sum, cudaStream_t st) {
  data_term_kernel<<<blocks_for(n), kThreads, 0, st>>>(ax, y, w, n, sum);
  GPSM_CUDA_LAUNCH();
}

void launch_penalty_pairs(const Geometry& g, const Penalty& pen, const float* x, double* sum, cudaStream_t st) {
  penalty_kernel<<<blocks_for(g.voxels()), kThreads, 0, st>>>(g, pen, x, sum);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::ct
