#include "apps/graphapps/graph_kernels.hpp"

#include <cuda_runtime.h>

#include "scope/cuda_check.hpp"

namespace gpsm::apps::graphapps {
namespace {

template <Access A>
struct Acc;
template <>
struct Acc<Access::local> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.local[e]; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.local[e] = x; }
};
template <>
struct Acc<Access::owner> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.rep[e / v.chunk_elems][e]; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.local[e] = x; }
};
template <>
struct Acc<Access::push> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.local[e]; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) {
    for (int d = 0; d < v.ranks; ++d) v.rep[d][e] = x;
  }
};
template <>
struct Acc<Access::gps> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.view.load(e); }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.view.store(e, x); }
};

constexpr int kThreads = 256;

// `lanes` consecutive threads per row; every thread of a warp reaches the shuffles.
template <Access A>
__global__ void pagerank_kernel(CsrArg a, VecArg x, VecArg y, const float* __restrict__ inv_deg, float base,
                                float damping, double* change, int lanes) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t row = t / lanes;
  const int lane = static_cast<int>(t % lanes);
  float sum = 0;
  if (row < a.rows)
    for (std::int64_t e = a.row_ptr[row] + lane; e < a.row_ptr[row + 1]; e += lanes) {
      const std::int32_t j = a.col[e];
      sum += Acc<A>::load(x, j) * inv_deg[j];
    }
  for (int off = lanes / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, lanes);
  if (row < a.rows && lane == 0) {
    const std::int64_t slot = a.first_slot + row;
    const float v = base + damping * sum;
    Acc<A>::store(y, slot, v);
    if (change != nullptr) atomicAdd(change, static_cast<double>(fabsf(v - Acc<A>::load(x, slot))));
  }
}

template <Access A>
__global__ void sssp_kernel(CsrArg a, VecArg x, VecArg y, int* changed, int lanes) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t row = t / lanes;
  const int lane = static_cast<int>(t % lanes);
  float d = __int_as_float(0x7f800000);  // +inf
  if (row < a.rows)
    for (std::int64_t e = a.row_ptr[row] + lane; e < a.row_ptr[row + 1]; e += lanes)
      d = fminf(d, Acc<A>::load(x, a.col[e]) + a.val[e]);
  for (int off = lanes / 2; off > 0; off /= 2) d = fminf(d, __shfl_down_sync(0xffffffffu, d, off, lanes));
  if (row < a.rows && lane == 0) {
    const std::int64_t slot = a.first_slot + row;
    const float old = Acc<A>::load(x, slot);
    const float v = fminf(old, d);
    Acc<A>::store(y, slot, v);
    if (v < old) *changed = 1;
  }
}

template <Access A>
__global__ void sgd_kernel(CsrArg a, VecArg own, VecArg other, float lr, float lambda) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  const std::int64_t at = (a.first_slot + row) * kSgdRank;
  float p[kSgdRank], q[kSgdRank];
#pragma unroll
  for (int f = 0; f < kSgdRank; ++f) p[f] = Acc<A>::load(own, at + f);
  for (std::int64_t e = a.row_ptr[row]; e < a.row_ptr[row + 1]; ++e) {
    const std::int64_t c = static_cast<std::int64_t>(a.col[e]) * kSgdRank;
    float pred = 0;
#pragma unroll
    for (int f = 0; f < kSgdRank; ++f) {
      q[f] = Acc<A>::load(other, c + f);
      pred += p[f] * q[f];
    }
    const float err = a.val[e] - pred;
#pragma unroll
    for (int f = 0; f < kSgdRank; ++f) p[f] += lr * (err * q[f] - lambda * p[f]);
  }
#pragma unroll
  for (int f = 0; f < kSgdRank; ++f) Acc<A>::store(own, at + f, p[f]);
}

unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

// Calls f.template operator()<A>() for the run-time kind (C++17: a generic lambda taking a tag).
template <Access A>
struct Tag {
  static constexpr Access value = A;
};
template <class F>
void dispatch(Access k, F&& f) {
  switch (k) {
    case Access::local: f(Tag<Access::local>{}); break;
    case Access::owner: f(Tag<Access::owner>{}); break;
    case Access::push: f(Tag<Access::push>{}); break;
    case Access::gps: f(Tag<Access::gps>{}); break;
  }
}

}  // namespace

void launch_pagerank(const CsrArg& a, const VecArg& x, const VecArg& y, const float* inv_deg, float base,
                     float damping, double* change, int lanes, cudaStream_t s) {
  if (a.rows == 0) return;
  dispatch(x.kind, [&](auto tag) {
    pagerank_kernel<decltype(tag)::value>
        <<<blocks_for(a.rows * lanes), kThreads, 0, s>>>(a, x, y, inv_deg, base, damping, change, lanes);
  });
  GPSM_CUDA(cudaGetLastError());
}

void launch_sssp(const CsrArg& a, const VecArg& x, const VecArg& y, int* changed, int lanes, cudaStream_t s) {
  if (a.rows == 0) return;
  dispatch(x.kind, [&](auto tag) {
    sssp_kernel<decltype(tag)::value><<<blocks_for(a.rows * lanes), kThreads, 0, s>>>(a, x, y, changed, lanes);
  });
  GPSM_CUDA(cudaGetLastError());
}

void launch_sgd(const CsrArg& a, const VecArg& own, const VecArg& other, float lr, float lambda, cudaStream_t s) {
  if (a.rows == 0) return;
  dispatch(own.kind, [&](auto tag) {
    sgd_kernel<decltype(tag)::value><<<blocks_for(a.rows), kThreads, 0, s>>>(a, own, other, lr, lambda);
  });
  GPSM_CUDA(cudaGetLastError());
}

}  // namespace gpsm::apps::graphapps
