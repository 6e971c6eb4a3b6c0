// heat3d / wave3d kernels: the host-driven step (single, memcpy, p2p_inline), the initialiser,
// the halo pack/unpack copy (memcpy on the x and y axes) and the CPU-free persistent kernel
// (cpu_free, and infinite with its pushes kept local). Point updates: apps/stencil/stencil_math.hpp
// (shared with the CPU reference, so results match it bit for bit).
#include "apps/stencil3d/stencil3d_kernels.hpp"

#include <cooperative_groups.h>

#include <algorithm>

#include "apps/stencil/stencil_math.hpp"
#include "scope/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

namespace cg = cooperative_groups;
using i64 = std::int64_t;
constexpr int kBx = 32, kBy = 8;       // step: a warp along x, 8 rows of y per block
constexpr int kFlatThreads = 256;      // init and box copy: one cell per thread, grid-stride
constexpr unsigned kMaxGridYZ = 65535; // CUDA's limit on gridDim.y and gridDim.z

// The updated value of cell i (strides 1, sy, sz). No __restrict__: in the persistent kernel the
// buffers change between iterations, so reads must not go through the read-only cache.
template <Kind K>
__device__ __forceinline__ float point(const float* in, const float* out, i64 i, i64 sy, i64 sz) {
  if constexpr (K == Kind::heat) {
    return heat_point(in[i], in[i - 1], in[i + 1], in[i - sy], in[i + sy], in[i - sz], in[i + sz]);
  } else {
    const float lx = wave_axis(in[i - 2], in[i - 1], in[i], in[i + 1], in[i + 2]);
    const float ly = wave_axis(in[i - 2 * sy], in[i - sy], in[i], in[i + sy], in[i + 2 * sy]);
    const float lz = wave_axis(in[i - 2 * sz], in[i - sz], in[i], in[i + sz], in[i + 2 * sz]);
    return wave_point(out[i], in[i], lx, ly, lz);  // out holds prev here: read before written
  }
}

__device__ __forceinline__ void push_store(const Push& p, i64 x, i64 y, i64 z, int axis, float v) {
  i64 c[3] = {x, y, z};
  c[axis] += p.shift;
  p.dst[c[0] + c[1] * p.sy + c[2] * p.sz] = v;
}

// Updates cell (x, y, z) of s.out and pushes it to the neighbours whose halos hold it.
template <Kind K>
__device__ __forceinline__ void update(const Step& s, i64 x, i64 y, i64 z) {
  constexpr int R = radius_of(K);
  const i64 sy = s.box.n[0], sz = s.box.n[0] * s.box.n[1];
  const i64 i = x + y * sy + z * sz;
  const float v = point<K>(s.in, s.out, i, sy, sz);
  s.out[i] = v;
  const i64 c[3] = {x, y, z};
  const i64 l = c[s.box.axis];  // owned planes are [R, R + count)
  if (s.lower.dst != nullptr && l < 2 * R) push_store(s.lower, x, y, z, s.box.axis, v);
  if (s.upper.dst != nullptr && l >= s.box.count) push_store(s.upper, x, y, z, s.box.axis, v);
}

// One thread per cell: x from blockIdx.x, y and z grid-stride (their grid extents are capped).
template <Kind K>
__global__ void __launch_bounds__(kBx* kBy) step_kernel(Step s) {
  constexpr int R = radius_of(K);
  const i64 x = R + static_cast<i64>(blockIdx.x) * kBx + threadIdx.x;
  if (x >= s.box.n[0] - R) return;
  for (i64 z = R + blockIdx.z; z < s.box.n[2] - R; z += gridDim.z)
    for (i64 y = R + static_cast<i64>(blockIdx.y) * kBy + threadIdx.y; y < s.box.n[1] - R;
         y += static_cast<i64>(gridDim.y) * kBy)
      update<K>(s, x, y, z);
}

__global__ void __launch_bounds__(kFlatThreads) init_kernel(Init s) {
  const i64 nx = s.box.n[0], ny = s.box.n[1], cells = nx * ny * s.box.n[2];
  const i64 r = s.radius;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 l[3] = {i % nx, (i / nx) % ny, i / (nx * ny)};
    i64 g[3] = {l[0], l[1], l[2]};
    g[s.box.axis] += s.offset;
    bool interior = true;
    for (int d = 0; d < 3; ++d) interior = interior && g[d] >= r && g[d] < s.global[d] - r;
    const auto cell = static_cast<std::uint64_t>((g[2] * s.global[1] + g[1]) * s.global[0] + g[0]);
    float v = initial_value(cell, interior ? s.seed_interior : s.seed_boundary);
    // A neighbour's halo cell is global interior along the split axis; those of the other axes'
    // boundary layer are fixed values that no neighbour sends, so they stay valid.
    const i64 la = l[s.box.axis];
    if (interior && ((s.poison_lower && la < r) || (s.poison_upper && la >= r + s.box.count)))
      v = __int_as_float(0x7fc00000);  // quiet NaN
    s.buf[i] = v;
  }
}

__global__ void __launch_bounds__(kFlatThreads) box_copy_kernel(BoxCopy c) {
  const i64 ex = c.e[0], ey = c.e[1], cells = ex * ey * c.e[2];
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 x = i % ex, y = (i / ex) % ey, z = i / (ex * ey);
    c.dst[x + y * c.dst_sy + z * c.dst_sz] = c.src[x + y * c.src_sy + z * c.src_sz];
  }
}

// A block per x row of the updated region (grid-stride over rows), threads along x: coalesced,
// one index division per row.
template <Kind K>
__global__ void __launch_bounds__(kCpuFreeThreads) cpu_free_kernel_impl(CpuFree c) {
  constexpr int R = radius_of(K);
  cg::grid_group grid = cg::this_grid();
  const i64 wy = c.box.n[1] - 2 * R, rows = wy * (c.box.n[2] - 2 * R);
  std::uint64_t round = 0;
  int iter = 0;
  for (; iter < c.iters; ++iter) {
    const int p = iter & 1;
    Step s;
    s.in = c.buf[p];
    s.out = c.buf[1 - p];
    s.box = c.box;
    s.lower = c.lower[1 - p];
    s.upper = c.upper[1 - p];
    for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
      const i64 y = R + row % wy, z = R + row / wy;
      for (i64 x = R + threadIdx.x; x < c.box.n[0] - R; x += blockDim.x) update<K>(s, x, y, z);
    }
    // Every block's stores (local and peer) are ordered before block 0's system-scope release in
    // the barrier below by this grid barrier (release is cumulative); the second grid barrier
    // holds every block until block 0 has seen all GPUs arrive, so no block reads a halo (or
    // overwrites a neighbour's) early.
    grid.sync();
    if (blockIdx.x == 0) c.barrier.sync(round);
    grid.sync();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *c.done = iter;
}

unsigned flat_blocks(i64 cells) {
  return static_cast<unsigned>(std::clamp<i64>((cells + kFlatThreads - 1) / kFlatThreads, 1, 4096));
}

template <Kind K>
void launch_step_as(const Step& s, cudaStream_t st) {
  constexpr int R = radius_of(K);
  // slab3d guarantees at least one updated cell per axis (else the launch fails loudly).
  const i64 wx = s.box.n[0] - 2 * R, wy = s.box.n[1] - 2 * R, wz = s.box.n[2] - 2 * R;
  const dim3 block(kBx, kBy);
  const dim3 grid(static_cast<unsigned>((wx + kBx - 1) / kBx),
                  static_cast<unsigned>(std::min<i64>((wy + kBy - 1) / kBy, kMaxGridYZ)),
                  static_cast<unsigned>(std::min<i64>(wz, kMaxGridYZ)));
  step_kernel<K><<<grid, block, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

}  // namespace

void launch_step(Kind k, const Step& s, cudaStream_t st) {
  if (k == Kind::heat)
    launch_step_as<Kind::heat>(s, st);
  else
    launch_step_as<Kind::wave>(s, st);
}

void launch_init(const Init& s, cudaStream_t st) {
  init_kernel<<<flat_blocks(s.box.n[0] * s.box.n[1] * s.box.n[2]), kFlatThreads, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

void launch_box_copy(const BoxCopy& c, cudaStream_t st) {
  box_copy_kernel<<<flat_blocks(c.e[0] * c.e[1] * c.e[2]), kFlatThreads, 0, st>>>(c);
  GPSM_CUDA_LAUNCH();
}

const void* cpu_free_kernel(Kind k) {
  return k == Kind::heat ? reinterpret_cast<const void*>(cpu_free_kernel_impl<Kind::heat>)
                         : reinterpret_cast<const void*>(cpu_free_kernel_impl<Kind::wave>);
}

int cpu_free_blocks(Kind k, int device) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cpu_free_kernel(k), kCpuFreeThreads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return per_sm * sms;
}

void launch_cpu_free(Kind k, const CpuFree& c, int blocks, cudaStream_t st) {
  CpuFree arg = c;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(cpu_free_kernel(k), dim3(static_cast<unsigned>(blocks)),
                                        dim3(kCpuFreeThreads), args, 0, st));
}

}  // namespace gpsm::apps::stencil3d
