// The whole-grid initializer (um, gps). um, rdl and gps run the marching step (stencil3d_kernels.cu).
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"

#include <algorithm>

#include "apps/stencil/stencil_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

using i64 = std::int64_t;
constexpr int kFlatThreads = 256;       // init: one cell per thread, grid-stride

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
