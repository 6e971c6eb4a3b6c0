// The image filter's kernels: a 32 x 8 block of threads per 32 x 8 pixels, each thread one output
// pixel by filter_point (filter_math.hpp). Compiled with --fmad=false (src/CMakeLists.txt) on top
// of filter_math.hpp's explicit rounding, so every paradigm gives the CPU reference's bits.
#include "apps/filter/filter_kernels.hpp"

#include "apps/filter/filter_math.hpp"
#include "apps/filter/filter_pass.hpp"
#include "apps/filter/filter_spec.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::filter {
namespace {

__constant__ float c_weights[kMaxFilterSide * kMaxFilterSide];

constexpr int kBx = 32, kBy = 8;

struct Wt {
  const float* p;
  __device__ __forceinline__ float operator()(int t) const { return p != nullptr ? __ldg(p + t) : c_weights[t]; }
};

dim3 grid_for(std::int64_t width, std::int64_t rows) {
  return dim3(static_cast<unsigned>((width + kBx - 1) / kBx), static_cast<unsigned>((rows + kBy - 1) / kBy));
}

template <int KT>
__global__ void local_pass(LocalPass a, KernelWeights kw) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x;
  const std::int64_t y = a.y0 + static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y;
  if (x < a.width && y < a.y1) local_pixel<KT>(a, Wt{kw.p}, kw.k, x, y);
}

template <int KT>
__global__ void distributed_pass(DistributedPass a, KernelWeights kw) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x;
  const std::int64_t y = a.y0 + static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y;
  if (x < a.width && y < a.y1) distributed_pixel<KT>(a, Wt{kw.p}, kw.k, x, y);
}

// A row of a GPS array: the local replica's pointer when this GPU holds the row's pages, else
// element loads (the page's home serves them).
struct GpsRow {
  const float* p;
  const gps::View<float>* v;
  std::uint64_t base;
  __device__ __forceinline__ float operator[](std::int64_t x) const {
    return p != nullptr ? p[x] : v->load(base + static_cast<std::uint64_t>(x));
  }
};

template <int KT>
__global__ void gps_pass(GpsPass a, KernelWeights kw) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x;
  const std::int64_t y = a.y0 + static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y;
  if (x >= a.width || y >= a.y1) return;
  const std::uint64_t W = static_cast<std::uint64_t>(a.width);
  const gps::View<float>& in = a.in;
  auto rows = [&](std::int64_t gy) {
    const std::uint64_t b = static_cast<std::uint64_t>(gy) * W;
    return GpsRow{in.local_span(b, W), &in, b};
  };
  const float v = filter_point<KT>(rows, Wt{kw.p}, kw.k, x, y, a.width, a.height);
  a.out.store(static_cast<std::uint64_t>(y) * W + static_cast<std::uint64_t>(x), v);
}

// The side known at compile time for the common filters (unrolled loops), else a loop over k.
template <template <int> class Launch, class... A>
void by_side(int k, A&&... args) {
  if (k == 3) Launch<3>::run(args...);
  else if (k == 5) Launch<5>::run(args...);
  else Launch<0>::run(args...);
}

template <int KT>
struct LaunchLocal {
  static void run(const LocalPass& a, const KernelWeights& w, cudaStream_t st) {
    local_pass<KT><<<grid_for(a.width, a.y1 - a.y0), dim3(kBx, kBy), 0, st>>>(a, w);
  }
};
template <int KT>
struct LaunchDistributed {
  static void run(const DistributedPass& a, const KernelWeights& w, cudaStream_t st) {
    distributed_pass<KT><<<grid_for(a.width, a.y1 - a.y0), dim3(kBx, kBy), 0, st>>>(a, w);
  }
};
template <int KT>
struct LaunchGps {
  static void run(const GpsPass& a, const KernelWeights& w, cudaStream_t st) {
    gps_pass<KT><<<grid_for(a.width, a.y1 - a.y0), dim3(kBx, kBy), 0, st>>>(a, w);
  }
};

}  // namespace

void set_constant_weights(const std::vector<float>& w) {
  GPSM_CUDA(cudaMemcpyToSymbol(c_weights, w.data(), w.size() * sizeof(float)));
}

void launch_local_pass(const LocalPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchLocal>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

void launch_distributed_pass(const DistributedPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchDistributed>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

void launch_gps_pass(const GpsPass& a, const KernelWeights& w, cudaStream_t st) {
  if (a.y1 <= a.y0) return;
  by_side<LaunchGps>(w.k, a, w, st);
  GPSM_CUDA(cudaGetLastError());
}

}  // namespace gpsm::apps::filter
