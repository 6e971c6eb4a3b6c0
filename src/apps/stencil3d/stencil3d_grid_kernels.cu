// gps's thread-per-cell sweep over its cell accessor (GPS views: a page lookup per access) and
// the whole-grid initializer (um, gps). um and rdl run the marching step (stencil3d_kernels.cu).
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"

#include <algorithm>

#include "apps/stencil/stencil_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

using i64 = std::int64_t;
constexpr int kBx = 32, kBy = 8;        // a warp along x, 8 rows of y per block
constexpr int kFlatThreads = 256;       // init: one cell per thread, grid-stride
constexpr unsigned kMaxGridYZ = 65535;  // CUDA's limit on gridDim.y and gridDim.z

// GPS replicas: loads from this GPU's replica (or the page's home when not subscribed), stores
// published to the page's other subscribers.
struct GpsCells {
  gps::View<float> in, out;
  i64 sy, sz;
  __device__ __forceinline__ float at(i64 i, const i64* /*c*/, int d, int k) const {
    return in.load(static_cast<std::uint64_t>(i + k * stride_of(sy, sz, d)));
  }
  __device__ __forceinline__ float prev(i64 i) const { return out.load(static_cast<std::uint64_t>(i)); }
  __device__ __forceinline__ void put(i64 i, float v) const { out.store(static_cast<std::uint64_t>(i), v); }
};

// One thread per cell: x from blockIdx.x, y and z grid-stride (their grid extents are capped).
template <bool kWave, class Cells>
__global__ void __launch_bounds__(kBx* kBy) sweep_kernel(Cells g, Region r) {
  const i64 x = r.lo[0] + static_cast<i64>(blockIdx.x) * kBx + threadIdx.x;
  if (x >= r.hi[0]) return;
  for (i64 z = r.lo[2] + blockIdx.z; z < r.hi[2]; z += gridDim.z)
    for (i64 y = r.lo[1] + static_cast<i64>(blockIdx.y) * kBy + threadIdx.y; y < r.hi[1];
         y += static_cast<i64>(gridDim.y) * kBy)
      update_cell<kWave>(g, x, y, z);
}

template <class Cells>
void launch_sweep(Kind k, const Cells& g, const Region& r, cudaStream_t st) {
  const i64 w[3] = {r.hi[0] - r.lo[0], r.hi[1] - r.lo[1], r.hi[2] - r.lo[2]};
  if (w[0] <= 0 || w[1] <= 0 || w[2] <= 0) return;  // nothing to update (never for slab3d's splits)
  const dim3 block(kBx, kBy);
  const dim3 grid(static_cast<unsigned>((w[0] + kBx - 1) / kBx),
                  static_cast<unsigned>(std::min<i64>((w[1] + kBy - 1) / kBy, kMaxGridYZ)),
                  static_cast<unsigned>(std::min<i64>(w[2], kMaxGridYZ)));
  if (k == Kind::heat)
    sweep_kernel<false, Cells><<<grid, block, 0, st>>>(g, r);
  else
    sweep_kernel<true, Cells><<<grid, block, 0, st>>>(g, r);
  GPSM_CUDA_LAUNCH();
}

__global__ void __launch_bounds__(kFlatThreads) grid_init_kernel(GridInit s) {
  const int a = s.axis;
  i64 e[3] = {s.n[0], s.n[1], s.n[2]};
  e[a] = s.hi - s.lo;
  const i64 cells = e[0] * e[1] * e[2];
  for (i64 j = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; j < cells;
       j += static_cast<i64>(gridDim.x) * blockDim.x) {
    i64 g[3] = {j % e[0], (j / e[0]) % e[1], j / (e[0] * e[1])};
    g[a] += s.lo;
    bool interior = true;
    for (int d = 0; d < 3; ++d) interior = interior && g[d] >= s.radius && g[d] < s.n[d] - s.radius;
    const i64 cell = (g[2] * s.n[1] + g[1]) * s.n[0] + g[0];
    float v = initial_value(static_cast<std::uint64_t>(cell), interior ? s.seed_interior : s.seed_boundary);
    if (s.poison && interior && (g[a] < s.keep_lo || g[a] >= s.keep_hi)) v = __int_as_float(0x7fc00000);  // quiet NaN
    s.buf[cell] = v;
  }
}

}  // namespace

void launch_gps_sweep(Kind k, const GpsSweep& s, cudaStream_t st) {
  launch_sweep(k, GpsCells{s.in, s.out, s.sy, s.sz}, s.region, st);
}

void launch_grid_init(const GridInit& s, cudaStream_t st) {
  i64 e[3] = {s.n[0], s.n[1], s.n[2]};
  e[s.axis] = s.hi - s.lo;
  const i64 cells = e[0] * e[1] * e[2];
  if (cells <= 0) return;
  const auto blocks = static_cast<unsigned>(std::clamp<i64>((cells + kFlatThreads - 1) / kFlatThreads, 1, 4096));
  grid_init_kernel<<<blocks, kFlatThreads, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::stencil3d
