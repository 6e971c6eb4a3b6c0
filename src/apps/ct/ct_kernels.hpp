#pragma once
// The CT kernels' launchers: ct_project.cu (the projector pair and the PWLS slab update, which
// share the voxel-major column loop) and ct_sums.cu (residual weighting and the cost's sums).
// Every coefficient and penalty term comes from the CPU core's headers (ct_footprint.hpp,
// ct_penalty.hpp, compiled for the device), and both .cu files are built without FMA contraction
// (src/CMakeLists.txt), so the device does the CPU's arithmetic operation for operation.
//
// Pointers are device memory. `poses` holds every view's pose (view_poses(g), indexed by view
// number); `views` the list being projected, proj/out/r buffers are [k][row][channel] over it.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "apps/ct/ct_footprint.hpp"
#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_penalty.hpp"

namespace gpsm::apps::ct {

// The poses on the host (std::cos / std::sin of the CPU core), uploaded as they are: the device
// never evaluates a trigonometric function, so it sees the CPU's angles to the bit.
inline std::vector<ViewPose> view_poses(const Geometry& g) {
  std::vector<ViewPose> p(static_cast<std::size_t>(g.views));
  for (int v = 0; v < g.views; ++v) p[static_cast<std::size_t>(v)] = view_pose(g, v);
  return p;
}

// The forward projection's column splits (ct_forward_tiles.hpp): `splits` runs of voxel columns,
// and for more than one a device scratch of forward_scratch_doubles(splits, count, cells) doubles.
struct ForwardSplit {
  int splits = 1;
  double* scratch = nullptr;
};

// The splits forward_splits gives a launch of `count` views at `tile_rows` rows a tile on a GPU
// of `sms` SMs.
inline int forward_splits_for(const Geometry& g, int tile_rows, int count, int sms) {
  return forward_splits(forward_tiles(g.rows, tile_rows), count, std::int64_t{g.nx} * g.ny, sms);
}

// out[k] = A_{views[k]} image for k in [0, count): one block per (row tile, view, column split),
// tile_rows from forward_tile_rows (ct_forward_tiles.hpp). Matches forward_project up to the order
// of each cell's double sum (shared-memory atomics, then the splits in order), i.e. within one
// float rounding. Throws std::invalid_argument for a tile beyond shared memory or splits > 1
// without scratch.
void launch_forward_project(const Geometry& g, const ViewPose* poses, const float* image, const std::int32_t* views,
                            int count, int tile_rows, float* out, cudaStream_t st, ForwardSplit split = {});

// image planes [y0, y1) = A^T proj over the listed views: one thread per (voxel column, run of
// kZRun voxels), looping over the views in list order (back_project_column's order: the CPU's
// result to the bit).
void launch_back_project(const Geometry& g, const ViewPose* poses, const float* proj, const std::int32_t* views,
                         int count, int y0, int y1, float* image, cudaStream_t st);

// update_planes on the GPU: x_new planes [y0, y1) = max(0, x - (M A^T r + grad R) / (d + c)),
// one thread per (voxel column, run of kZRun voxels); a block holds whole columns.
void launch_update_planes(const Geometry& g, const Penalty& pen, const float* d, int subsets, const float* x,
                          const ViewPose* poses, const float* r, const std::int32_t* views, int count, int y0, int y1,
                          float* x_new, cudaStream_t st);

// launch_update_planes for the proact paradigm: each block, once its columns are written, adds
// them to the readiness counters `ready` of the slab's chunks of `per` columns (ct_ready.hpp),
// columns counted from plane y0's first. Throws std::invalid_argument for per < 1.
void launch_update_planes_counted(const Geometry& g, const Penalty& pen, const float* d, int subsets, const float* x,
                                  const ViewPose* poses, const float* r, const std::int32_t* views, int count, int y0,
                                  int y1, float* x_new, std::uint32_t* ready, std::int64_t per, cudaStream_t st);

// r[k] = w (r[k] - y) at views[k], in place (r holds A x of the listed views): weighted_residual's
// second half. y and w are the whole sinograms.
void launch_weighted_residual(const Geometry& g, const float* y, const float* w, const std::int32_t* views, int count,
                              float* r, cudaStream_t st);

// a[i] *= w[i] (float, as data_curvature does) for i in [0, n).
void launch_scale(float* a, const float* w, std::int64_t n, cudaStream_t st);

// *sum += sum_i w_i (ax_i - y_i)^2 in double (the cost's data term before the 1/2).
void launch_data_term(const float* ax, const float* y, const float* w, std::int64_t n, double* sum, cudaStream_t st);

// *sum += sum over voxels of penalty_pairs (R(x) / beta).
void launch_penalty_pairs(const Geometry& g, const Penalty& pen, const float* x, double* sum, cudaStream_t st);

}  // namespace gpsm::apps::ct
