// The host-launched CG kernels (single, cpu_ctrl_std, cpu_ctrl_pipe): one block per chunk, one
// kernel per step, the scalars read from the reductions' gathered partials on the GPU (no host
// round trip), the stop decision kept in Control so later launches of a stopped run do nothing.
#include <type_traits>

#include "apps/cg/cg_device.cuh"
#include "apps/cg/cg_kernels.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

__device__ __forceinline__ double gathered_sum(const double* g, int ranks, int stride, int which) {
  double s = 0.0;
  for (int r = 0; r < ranks; ++r) s = s + g[r * stride + which];
  return s;
}

__device__ __forceinline__ bool first_thread() { return blockIdx.x == 0 && threadIdx.x == 0; }

template <int kL, class V, class Ix>
__global__ void __launch_bounds__(kThreads) std_spmv_kernel(StdStep s) {
  extern __shared__ double sq[];
  if (s.ctl->stop) return;
  double rho = s.rho0, beta = 0.0;
  if (s.k > 0) {
    rho = gathered_sum(s.gathered, s.ranks, 1, 0);
    if (cg_done(rho, s.threshold)) {  // every block decides alike
      if (first_thread()) {
        s.hist[s.k] = rho;
        s.ctl->iterations = s.k;
        s.ctl->stop = 1;
      }
      return;
    }
    beta = cg_ratio(rho, s.ctl->rho[(s.k - 1) & 1]);
  }
  if (first_thread()) {
    s.ctl->rho[s.k & 1] = rho;
    s.hist[s.k] = rho;
  }
  if (static_cast<std::int32_t>(blockIdx.x) < s.a.chunks)
    std_spmv_step<kL, V, Ix>(s.a, s.v, s.k & 1, beta, blockIdx.x, s.part, sq);
  else
    std_halo_step(s.a, s.v, s.k & 1, beta, blockIdx.x - s.a.chunks);
}

__global__ void __launch_bounds__(kThreads) std_update_kernel(StdStep s) {
  if (s.ctl->stop) return;
  const double pq = gathered_sum(s.gathered, s.ranks, 1, 0);
  if (pq == 0.0) {
    if (first_thread()) {
      s.ctl->iterations = s.k;
      s.ctl->stop = 1;
    }
    return;
  }
  std_update_step(s.a, s.v, s.k & 1, cg_ratio(s.ctl->rho[s.k & 1], pq), blockIdx.x, s.part, s.push);
}

__global__ void std_finish_kernel(StdStep s, int iters) {
  if (s.ctl->stop) return;
  s.hist[iters] = gathered_sum(s.gathered, s.ranks, 1, 0);
  s.ctl->iterations = iters;
  s.ctl->stop = 1;
}

template <int kL, class V, class Ix>
__global__ void __launch_bounds__(kThreads) pipe_spmv_kernel(PipeStep s) {
  if (s.ctl->stop) return;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * chunk_rows(s.a.rows_per_thread);
  double* n = s.v.n;
  pipe_spmv_step<kL, V, Ix>(s.a, pick(s.v.w, s.i & 1), blockIdx.x, [&](std::int64_t off, double v) { n[first + off] = v; });
}

__global__ void __launch_bounds__(kThreads) pipe_update_kernel(PipeStep s) {
  if (s.ctl->stop) return;
  const double gamma = gathered_sum(s.gathered, s.ranks, 2, 0), delta = gathered_sum(s.gathered, s.ranks, 2, 1);
  double alpha = 0, beta = 0;
  bool stop = s.i == s.iters || cg_done(gamma, s.threshold);
  if (!stop) stop = !pipe_scalars(s.i, gamma, delta, s.ctl->gamma[(s.i - 1) & 1], s.ctl->alpha[(s.i - 1) & 1], alpha, beta);
  if (first_thread()) {
    s.hist[s.i] = gamma;
    if (stop) {
      s.ctl->iterations = s.i;
      s.ctl->stop = 1;
    } else {
      s.ctl->gamma[s.i & 1] = gamma;
      s.ctl->alpha[s.i & 1] = alpha;
    }
  }
  if (stop) return;
  const double* n = s.v.n;
  pipe_update_step(s.a, s.v, s.i & 1, alpha, beta, blockIdx.x, [&](std::int64_t i) { return n[i]; }, s.part, s.push);
}

__global__ void __launch_bounds__(kThreads) rank_partial_kernel(const double* part, std::int32_t chunks, int count,
                                                                  double* out) {
  for (int k = 0; k < count; ++k) {
    double acc = 0.0;
    for (std::int32_t c = threadIdx.x; c < chunks; c += kThreads) acc = acc + part[static_cast<std::int64_t>(c) * count + k];
    const double t = block_sum(acc);
    if (threadIdx.x == 0) out[k] = t;
  }
}

unsigned grid_of(std::int64_t blocks) { return static_cast<unsigned>(blocks > 0 ? blocks : 1); }

}  // namespace

void launch_std_spmv(const StdStep& s, cudaStream_t st) {
  const std::size_t smem = static_cast<std::size_t>(chunk_rows(s.a.rows_per_thread)) * sizeof(double);
  with_shape(s.a.lanes, s.a.kind(), [&](auto l, auto v, auto ix) {
    std_spmv_kernel<decltype(l)::value, decltype(v), decltype(ix)><<<grid_of(std_spmv_items(s.a)), kThreads, smem, st>>>(s);
  });
  GPSM_CUDA_LAUNCH();
}

void launch_std_update(const StdStep& s, cudaStream_t st) {
  std_update_kernel<<<grid_of(s.a.chunks), kThreads, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

void launch_std_finish(const StdStep& s, int iters, cudaStream_t st) {
  std_finish_kernel<<<1, 1, 0, st>>>(s, iters);
  GPSM_CUDA_LAUNCH();
}

void launch_pipe_spmv(const PipeStep& s, cudaStream_t st) {
  with_shape(s.a.lanes, s.a.kind(), [&](auto l, auto v, auto ix) {
    pipe_spmv_kernel<decltype(l)::value, decltype(v), decltype(ix)><<<grid_of(s.a.chunks), kThreads, 0, st>>>(s);
  });
  GPSM_CUDA_LAUNCH();
}

void launch_pipe_update(const PipeStep& s, cudaStream_t st) {
  // The last call (i == iters) only decides: one block.
  pipe_update_kernel<<<s.i == s.iters ? 1u : grid_of(s.a.chunks), kThreads, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

void launch_rank_partial(const double* part, std::int32_t chunks, int count, double* out, cudaStream_t st) {
  rank_partial_kernel<<<1, kThreads, 0, st>>>(part, chunks, count, out);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::cg
