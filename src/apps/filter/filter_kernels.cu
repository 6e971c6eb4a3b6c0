// The image filter's kernels: a 32 x 8 block of threads per 32 x 8 pixels, each thread one output
// pixel by filter_point (filter_math.hpp). Compiled with --fmad=false (src/CMakeLists.txt) on top
// of filter_math.hpp's explicit rounding, so every paradigm gives the CPU reference's bits.
#include "apps/filter/filter_kernels.hpp"

#include <algorithm>

#include "apps/filter/filter_math.hpp"
#include "apps/filter/filter_pass.hpp"
#include "apps/filter/filter_spec.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::filter {
namespace {

__constant__ float c_weights[kMaxFilterSide * kMaxFilterSide];

constexpr int kBx = 32, kBy = 8;

// The weights' two homes, each its own kernel (no per-tap choice): constant memory, or an array
// (replicated or remote) read through the read-only cache.
struct WtConstant {
  __device__ __forceinline__ float operator()(int t) const { return c_weights[t]; }
};
struct WtArray {
  const float* p;
  __device__ __forceinline__ float operator()(int t) const { return __ldg(p + t); }
};

// Rows of thread blocks in dispatch order: the first and the last swap places with the second, so
// that the two rows of blocks at a slab's edges (those that load halo rows from a neighbour, rdl,
// or store edge rows into it, p2p_inline; a halo of up to kBy rows touches only them) are in the
// first wave and their link latency overlaps the interior's blocks instead of ending the pass.
__device__ __forceinline__ std::int64_t edges_first(std::int64_t by, std::int64_t n) {
  return n > 2 ? (by == 1 ? n - 1 : (by == n - 1 ? 1 : by)) : by;
}

// Blocks along y at most 65535 (the grid's limit); taller slabs loop over the rest.
dim3 grid_for(std::int64_t width, std::int64_t rows) {
  const std::int64_t by = std::min<std::int64_t>((rows + kBy - 1) / kBy, 65535);
  return dim3(static_cast<unsigned>((width + kBx - 1) / kBx), static_cast<unsigned>(by));
}

// Calls pixel(x, y) for this thread's pixel of every row of blocks it is given in [y0, y1).
template <class Pixel>
__device__ __forceinline__ void for_my_pixels(std::int64_t width, std::int64_t y0, std::int64_t y1, const Pixel& pixel) {
  const std::int64_t x = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x;
  const std::int64_t n = (y1 - y0 + kBy - 1) / kBy;
  for (std::int64_t by = blockIdx.y; by < n; by += gridDim.y) {
    const std::int64_t y = y0 + edges_first(by, n) * kBy + threadIdx.y;
    if (x < width && y < y1) pixel(x, y);
  }
}

template <int KT, class Wts>
__global__ void local_pass(LocalPass a, Wts w, int k) {
  for_my_pixels(a.width, a.y0, a.y1, [&](std::int64_t x, std::int64_t y) { local_pixel<KT>(a, w, k, x, y); });
}

template <int KT, class Wts>
__global__ void distributed_pass(DistributedPass a, Wts w, int k) {
  for_my_pixels(a.width, a.y0, a.y1, [&](std::int64_t x, std::int64_t y) { distributed_pixel<KT>(a, w, k, x, y); });
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

template <int KT, class Wts>
__global__ void gps_pass(GpsPass a, Wts w, int k) {
  const std::uint64_t W = static_cast<std::uint64_t>(a.width);
  const gps::View<float>& in = a.in;
  auto rows = [&](std::int64_t gy) {
    const std::uint64_t b = static_cast<std::uint64_t>(gy) * W;
    return GpsRow{in.local_span(b, W), &in, b};
  };
  for_my_pixels(a.width, a.y0, a.y1, [&](std::int64_t x, std::int64_t y) {
    const float v = filter_point<KT>(rows, w, k, x, y, a.width, a.height);
    a.out.store(static_cast<std::uint64_t>(y) * W + static_cast<std::uint64_t>(x), v);
  });
}

// The side known at compile time for the common filters (unrolled loops), else a loop over k.
template <template <int> class Launch, class... A>
void by_side(int k, A&&... args) {
  if (k == 3) Launch<3>::run(args...);
  else if (k == 5) Launch<5>::run(args...);
  else Launch<0>::run(args...);
}

// A kernel of side KT with the weights where kw says.
#define GPSM_FILTER_LAUNCHER(Name, kernel, Pass)                                                          \
  template <int KT>                                                                                      \
  struct Name {                                                                                          \
    static void run(const Pass& a, const KernelWeights& kw, cudaStream_t st) {                           \
      const dim3 g = grid_for(a.width, a.y1 - a.y0), b(kBx, kBy);                                        \
      if (kw.p == nullptr) kernel<KT, WtConstant><<<g, b, 0, st>>>(a, WtConstant{}, kw.k);               \
      else kernel<KT, WtArray><<<g, b, 0, st>>>(a, WtArray{kw.p}, kw.k);                                  \
    }                                                                                                    \
  };
GPSM_FILTER_LAUNCHER(LaunchLocal, local_pass, LocalPass)
GPSM_FILTER_LAUNCHER(LaunchDistributed, distributed_pass, DistributedPass)
GPSM_FILTER_LAUNCHER(LaunchGps, gps_pass, GpsPass)
#undef GPSM_FILTER_LAUNCHER

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
