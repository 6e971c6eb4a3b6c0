// The CT projector pair and the PWLS slab update on the GPU (launchers: ct_kernels.hpp). The
// footprints are ct_footprint.hpp's, the penalty ct_penalty.hpp's; this file is built without FMA
// contraction, so each coefficient, each column's back-projected sum and each updated voxel is
// the CPU core's to the bit. Only the forward projection's per-cell sums run in another order.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_gps_kernels.hpp"
#include "apps/ct/ct_kernels.hpp"
#include "apps/ct/ct_ready.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::ct {
namespace {

constexpr int kThreads = 256;

// Stores of the update: plain memory, or through a GPS view (published by the runtime).
__device__ __forceinline__ void put(float* __restrict__ p, std::int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void put(const GpsWrite& w, std::int64_t i, float v) {
  w.v.store(static_cast<std::uint64_t>(i), v);
}
// A back-projecting thread holds the sums of one run of kZRun voxels of its column (local
// memory, ct_forward_tiles.hpp), over all the views, so every voxel still adds its views in list
// order. A view whose cone misses the run is skipped before its footprint is computed.

// Forward: block (tile, k, split) accumulates detector rows [l0, l1) of view views[k] in shared
// memory over split `blockIdx.z`'s run of voxel columns; its threads share out those columns. Per
// voxel the contributions are forward_project's (wx = w_l x, then wx f_k), added with
// shared-memory atomics in double. One split stores the tile as floats into `out`; several store
// their doubles into `partial` ([split][k][cell]) for sum_splits_kernel.
// Every voxel is visited, zeros included: skipping zero voxels made the work depend on the image,
// and the `infinite` bound, whose peers' slabs stay at x0 = 0, then did half the forward work of
// any real run.
// Img reads voxels as image[i]: a float pointer, or GpsRead (the gps paradigm's tracking pass).
template <class Img>
__device__ __forceinline__ void forward_body(const Geometry& g, const ViewPose* __restrict__ poses, const Img& image,
                                             const std::int32_t* __restrict__ views, int tile_rows,
                                             float* __restrict__ out, double* __restrict__ partial) {
  extern __shared__ double acc[];
  const int k = blockIdx.y;
  const int l0 = blockIdx.x * tile_rows, l1 = min(g.rows, l0 + tile_rows);
  const int cells = (l1 - l0) * g.channels;
  for (int i = threadIdx.x; i < cells; i += blockDim.x) acc[i] = 0.0;
  __syncthreads();
  const ViewPose p = poses[views[k]];
  ColumnFootprint fp;
  double w[kMaxFootprintCells];
  const std::int64_t columns = std::int64_t{g.nx} * g.ny;
  const int c0 = static_cast<int>(columns * blockIdx.z / gridDim.z);
  const int c1 = static_cast<int>(columns * (blockIdx.z + 1) / gridDim.z);
  for (int c = c0 + threadIdx.x; c < c1; c += blockDim.x) {
    const int iy = c / g.nx, ix = c - iy * g.nx;
    const double mag = column_magnification(g, p, ix, iy);
    int a, b, ta, tb;
    column_z_range(g, p, mag, a, b);
    tile_z_range(g, p, mag, l0, l1, ta, tb);
    a = max(a, ta), b = min(b, tb);
    if (a >= b || !column_footprint(g, p, ix, iy, fp)) continue;
    const std::int64_t col = g.voxel_index(ix, iy, 0);
    for (int iz = a; iz < b; ++iz) {
      const double xv = image[col + iz];
      int lv;
      const int nl = voxel_rows(g, p, fp, iz, lv, w);
      for (int i = 0; i < nl; ++i) {
        const int l = lv + i;
        if (l < l0 || l >= l1) continue;
        double* row = acc + (l - l0) * g.channels + fp.k0;
        const double wx = w[i] * xv;
        for (int j = 0; j < fp.nk; ++j) atomicAdd(row + j, wx * fp.f[j]);
      }
    }
  }
  __syncthreads();
  const std::int64_t at = k * g.cells_per_view() + std::int64_t{l0} * g.channels;
  if (gridDim.z == 1) {
    float* o = out + at;
    for (int i = threadIdx.x; i < cells; i += blockDim.x) o[i] = static_cast<float>(acc[i]);
  } else {
    double* o = partial + std::int64_t{blockIdx.z} * gridDim.y * g.cells_per_view() + at;
    for (int i = threadIdx.x; i < cells; i += blockDim.x) o[i] = acc[i];
  }
}

__global__ void __launch_bounds__(kThreads)
    forward_kernel(Geometry g, const ViewPose* __restrict__ poses, const float* __restrict__ image,
                   const std::int32_t* __restrict__ views, int tile_rows, float* __restrict__ out,
                   double* __restrict__ partial) {
  forward_body(g, poses, image, views, tile_rows, out, partial);
}

__global__ void __launch_bounds__(kThreads)
    forward_gps_kernel(Geometry g, const ViewPose* __restrict__ poses, const GpsRead image,
                       const std::int32_t* __restrict__ views, int tile_rows, float* __restrict__ out,
                       double* __restrict__ partial) {
  forward_body(g, poses, image, views, tile_rows, out, partial);
}

// out[i] = the splits' partial sums of cell i added in split order, rounded once to float.
__global__ void sum_splits_kernel(const double* __restrict__ partial, int splits, std::int64_t n,
                                  float* __restrict__ out) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double s = 0.0;
  for (int p = 0; p < splits; ++p) s += partial[p * n + i];
  out[i] = static_cast<float>(s);
}

// sums[i] = [A^T proj]_j for voxels j = (ix, iy, z0 + i), i < n: back_project_column restricted
// to a chunk, the views added in the same order.
template <class P>
__device__ __forceinline__ void back_project_chunk(const Geometry& g, const ViewPose* __restrict__ poses,
                                                   const P& proj, const std::int32_t* __restrict__ views, int count,
                                                   int ix, int iy, int z0, int n, double* sums) {
  for (int i = 0; i < n; ++i) sums[i] = 0.0;
  const std::int64_t cells = g.cells_per_view();
  ColumnFootprint fp;
  double w[kMaxFootprintCells];
  for (int k = 0; k < count; ++k) {
    const ViewPose p = poses[views[k]];
    int iz0, iz1;
    column_z_range(g, p, column_magnification(g, p, ix, iy), iz0, iz1);
    const int a = max(iz0, z0), b = min(iz1, z0 + n);
    if (a >= b || !column_footprint(g, p, ix, iy, fp)) continue;
    const std::int64_t view = k * cells;
    for (int iz = a; iz < b; ++iz) {
      int l0;
      const int nl = voxel_rows(g, p, fp, iz, l0, w);
      double sum = 0;
      for (int i = 0; i < nl; ++i) {
        const std::int64_t row = view + std::int64_t{l0 + i} * g.channels + fp.k0;
        double r = 0;
        for (int j = 0; j < fp.nk; ++j) r += fp.f[j] * proj[row + j];
        sum += w[i] * r;
      }
      sums[iz - z0] += sum;
    }
  }
}

// One thread per (voxel column, run of kZRun voxels) of planes [y0, y1) (ct_forward_tiles.hpp):
// block b holds columns [b * per_block, (b + 1) * per_block) of the slab, x fastest, and thread t
// column t % per_block's run t / per_block, voxels [z0, z0 + n).
__device__ __forceinline__ bool slab_run(const Geometry& g, int y0, int y1, int per_block, int& ix, int& iy, int& z0,
                                         int& n) {
  const int run = static_cast<int>(threadIdx.x) / per_block;
  const std::int64_t c = std::int64_t{blockIdx.x} * per_block + static_cast<int>(threadIdx.x) % per_block;
  z0 = run * kZRun;
  if (z0 >= g.nz || c >= std::int64_t{y1 - y0} * g.nx) return false;
  n = min(kZRun, g.nz - z0);
  iy = y0 + static_cast<int>(c / g.nx);
  ix = static_cast<int>(c % g.nx);
  return true;
}

__global__ void __launch_bounds__(kThreads)
    back_kernel(Geometry g, const ViewPose* __restrict__ poses, const float* __restrict__ proj,
                const std::int32_t* __restrict__ views, int count, int y0, int y1, int per_block,
                float* __restrict__ image) {
  int ix, iy, z0, n;
  if (!slab_run(g, y0, y1, per_block, ix, iy, z0, n)) return;
  double sums[kZRun];
  back_project_chunk(g, poses, proj, views, count, ix, iy, z0, n, sums);
  float* col = image + g.voxel_index(ix, iy, 0);
  for (int i = 0; i < n; ++i) col[z0 + i] = static_cast<float>(sums[i]);
}

template <class X, class R, class Out>
__device__ __forceinline__ void update_column(const Geometry& g, const Penalty& pen, const float* __restrict__ d,
                                              int subsets, const X& x, const ViewPose* __restrict__ poses, const R& r,
                                              const std::int32_t* __restrict__ views, int count, int ix, int iy,
                                              int z0, int n, const Out& x_new) {
  double sums[kZRun];
  const std::int64_t base = g.voxel_index(ix, iy, 0);
  back_project_chunk(g, poses, r, views, count, ix, iy, z0, n, sums);
  for (int i = 0; i < n; ++i) {
    const int iz = z0 + i;
    double grad, curv;
    penalty_gradient_curvature(g, pen, x, ix, iy, iz, grad, curv);
    const double denom = d[base + iz] + curv;
    const double xj = x[base + iz];
    const double next = denom > 0 ? xj - (subsets * sums[i] + grad) / denom : xj;
    put(x_new, base + iz, static_cast<float>(0.0 < next ? next : 0.0));  // std::max(0.0, next)
  }
}

// The gps paradigm's update (ct_gps_kernels.hpp): reads through the views while tracking (X, R =
// GpsRead), else from the local replicas (plain pointers); every voxel stored through the view.
template <class X, class R>
__global__ void __launch_bounds__(kThreads)
    update_gps_kernel(Geometry g, Penalty pen, const float* __restrict__ d, int subsets, const X x,
                      const ViewPose* __restrict__ poses, const R r, const std::int32_t* __restrict__ views,
                      int count, int y0, int y1, int per_block, const GpsWrite x_new) {
  int ix, iy, z0, n;
  if (slab_run(g, y0, y1, per_block, ix, iy, z0, n))
    update_column(g, pen, d, subsets, x, poses, r, views, count, ix, iy, z0, n, x_new);
}

// The column update of update_planes. kCount (the proact paradigm): once all of the block's columns
// are written, thread 0 makes them visible system-wide (the peers' copy engines read them) and adds
// the block's column counts to the readiness counters of the chunks of `per` columns they fall in
// (ct_ready.hpp); the other paradigms' kernel has no barrier or counter.
template <bool kCount>
__global__ void __launch_bounds__(kThreads)
    update_kernel(Geometry g, Penalty pen, const float* __restrict__ d, int subsets, const float* __restrict__ x,
                  const ViewPose* __restrict__ poses, const float* __restrict__ r,
                  const std::int32_t* __restrict__ views, int count, int y0, int y1, int per_block,
                  float* __restrict__ x_new, std::uint32_t* ready, std::int64_t per) {
  int ix, iy, z0, n;
  if (slab_run(g, y0, y1, per_block, ix, iy, z0, n))
    update_column(g, pen, d, subsets, x, poses, r, views, count, ix, iy, z0, n, x_new);
  if constexpr (kCount) {
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      const std::int64_t first = std::int64_t{blockIdx.x} * per_block;
      const std::int64_t end = min(first + per_block, std::int64_t{y1 - y0} * g.nx);
      for (std::int64_t c = first_chunk(first, per); c <= last_chunk(end, per); ++c)
        atomicAdd(ready + c, static_cast<unsigned>(columns_in_chunk(first, end, per, c)));
    }
  }
}

int per_block(const Geometry& g) {
  const int p = columns_per_block(g.nz, kThreads);
  if (p < 1)
    throw std::invalid_argument("ct: " + std::to_string(g.nz) + " voxels a column need more than " +
                                std::to_string(kThreads) + " threads of " + std::to_string(kZRun) + " voxels");
  return p;
}

unsigned slab_blocks(const Geometry& g, int y0, int y1) {
  const int p = per_block(g);
  return static_cast<unsigned>((std::int64_t{y1 - y0} * g.nx + p - 1) / p);
}

}  // namespace

// The column splits' double partials of `count` views added in split order into out (one split:
// the forward kernel wrote out itself).
static void sum_splits(const Geometry& g, int count, const ForwardSplit& split, float* out, cudaStream_t st) {
  if (split.splits == 1) return;
  const std::int64_t n = std::int64_t{count} * g.cells_per_view();
  sum_splits_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, st>>>(split.scratch,
                                                                                              split.splits, n, out);
  GPSM_CUDA_LAUNCH();
}

void launch_forward_project(const Geometry& g, const ViewPose* poses, const float* image, const std::int32_t* views,
                            int count, int tile_rows, float* out, cudaStream_t st, ForwardSplit split) {
  if (count <= 0) return;
  const std::size_t shared = static_cast<std::size_t>(tile_rows) * g.channels * sizeof(double);
  if (tile_rows < 1 || shared > kForwardSharedBytes)
    throw std::invalid_argument("ct forward projection: a tile of " + std::to_string(tile_rows) +
                                " rows does not fit shared memory");
  if (split.splits < 1 || (split.splits > 1 && split.scratch == nullptr))
    throw std::invalid_argument("ct forward projection: " + std::to_string(split.splits) +
                                " column splits need a scratch of splits x views x cells doubles");
  const dim3 grid(static_cast<unsigned>(forward_tiles(g.rows, tile_rows)), static_cast<unsigned>(count),
                  static_cast<unsigned>(split.splits));
  forward_kernel<<<grid, kThreads, shared, st>>>(g, poses, image, views, tile_rows, out, split.scratch);
  GPSM_CUDA_LAUNCH();
  sum_splits(g, count, split, out, st);
}

void launch_back_project(const Geometry& g, const ViewPose* poses, const float* proj, const std::int32_t* views,
                         int count, int y0, int y1, float* image, cudaStream_t st) {
  if (y1 <= y0) return;
  back_kernel<<<slab_blocks(g, y0, y1), kThreads, 0, st>>>(g, poses, proj, views, count, y0, y1, per_block(g),
                                                            image);
  GPSM_CUDA_LAUNCH();
}

void launch_update_planes(const Geometry& g, const Penalty& pen, const float* d, int subsets, const float* x,
                          const ViewPose* poses, const float* r, const std::int32_t* views, int count, int y0, int y1,
                          float* x_new, cudaStream_t st) {
  if (y1 <= y0) return;
  update_kernel<false><<<slab_blocks(g, y0, y1), kThreads, 0, st>>>(g, pen, d, subsets, x, poses, r, views, count, y0,
                                                                     y1, per_block(g), x_new, nullptr, 1);
  GPSM_CUDA_LAUNCH();
}

void launch_forward_project_gps(const Geometry& g, const ViewPose* poses, const gps::View<float>& image,
                                const std::int32_t* views, int count, int tile_rows, float* out, cudaStream_t st,
                                ForwardSplit split) {
  if (count <= 0) return;
  const std::size_t shared = static_cast<std::size_t>(tile_rows) * g.channels * sizeof(double);
  if (tile_rows < 1 || shared > kForwardSharedBytes || split.splits < 1 || (split.splits > 1 && !split.scratch))
    throw std::invalid_argument("ct forward projection (gps): bad tiling or splits");
  const dim3 grid(static_cast<unsigned>(forward_tiles(g.rows, tile_rows)), static_cast<unsigned>(count),
                  static_cast<unsigned>(split.splits));
  forward_gps_kernel<<<grid, kThreads, shared, st>>>(g, poses, GpsRead{image}, views, tile_rows, out, split.scratch);
  GPSM_CUDA_LAUNCH();
  sum_splits(g, count, split, out, st);
}

void launch_update_planes_gps(const Geometry& g, const Penalty& pen, const float* d, int subsets,
                              const gps::View<float>& x, const float* x_local, const ViewPose* poses,
                              const gps::View<float>& r, const float* r_local, const std::int32_t* views, int count,
                              int y0, int y1, const gps::View<float>& x_new, cudaStream_t st) {
  if (y1 <= y0) return;
  if ((x_local == nullptr) != (r_local == nullptr))
    throw std::invalid_argument("ct update (gps): both reads local or both through the views");
  const unsigned blocks = slab_blocks(g, y0, y1);
  if (x_local != nullptr)
    update_gps_kernel<<<blocks, kThreads, 0, st>>>(g, pen, d, subsets, x_local, poses, r_local, views, count, y0, y1,
                                                   per_block(g), GpsWrite{x_new});
  else
    update_gps_kernel<<<blocks, kThreads, 0, st>>>(g, pen, d, subsets, GpsRead{x}, poses, GpsRead{r}, views, count,
                                                   y0, y1, per_block(g), GpsWrite{x_new});
  GPSM_CUDA_LAUNCH();
}

void launch_update_planes_counted(const Geometry& g, const Penalty& pen, const float* d, int subsets, const float* x,
                                  const ViewPose* poses, const float* r, const std::int32_t* views, int count, int y0,
                                  int y1, float* x_new, std::uint32_t* ready, std::int64_t per, cudaStream_t st) {
  if (y1 <= y0) return;
  if (per < 1) throw std::invalid_argument("ct update: chunks of " + std::to_string(per) + " columns");
  update_kernel<true><<<slab_blocks(g, y0, y1), kThreads, 0, st>>>(g, pen, d, subsets, x, poses, r, views, count, y0,
                                                                    y1, per_block(g), x_new, ready, per);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::apps::ct
