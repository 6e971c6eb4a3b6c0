#pragma once
// The projector pair on the CPU: forward projection A (view-major: each view's detector values
// are finished together, as the forward phase's views are shared out over GPUs) and its exact
// adjoint A^T (voxel-major: each voxel column loops over the views that see it, so columns are
// finished one after another, in image order; PROACT dissertation §3.2.3, "Sequencing data
// generation"). Both take every coefficient from ct_footprint.hpp, so <A x, y> = <x, A^T y> up to
// rounding. Storage is float; sums run in double.
//
// Layouts: image [iy][ix][iz]; a projection buffer for a list of views is [k][row][channel], k
// the position in the list (a subset's views, or a GPU's share of them).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "common/omp.hpp"

namespace gpsm::apps::ct {

// out[k] = A_{views[k]} x for k in [0, count): count * rows * channels floats.
void forward_project(const Geometry& g, const float* image, const std::int32_t* views, int count, float* out);

// acc[iz] += sum over k of (A_{views[k]}^T proj[k]) for the voxels of column (ix, iy); acc holds nz
// doubles. The back projector's unit of work: one column, all its views.
void back_project_column(const Geometry& g, const float* proj, const std::int32_t* views, int count, int ix, int iy,
                         double* acc);

// Voxel-major back projection of the y-planes [y0, y1), columns in parallel: for each column
// (ix, iy), acc (nz doubles) = A^T proj over the listed views, then use(ix, iy, acc). Back
// projection and the PWLS update differ only in what they do with a column's sums.
template <class Use>
void for_each_back_projected_column(const Geometry& g, const float* proj, const std::int32_t* views, int count, int y0,
                                    int y1, const Use& use) {
  const std::int64_t columns = std::int64_t{y1 - y0} * g.nx;
  GPSM_OMP(parallel) {
    std::vector<double> acc(static_cast<std::size_t>(g.nz));
    GPSM_OMP(for schedule(dynamic, 16))
    for (std::int64_t c = 0; c < columns; ++c) {
      const int iy = y0 + static_cast<int>(c / g.nx), ix = static_cast<int>(c % g.nx);
      std::fill(acc.begin(), acc.end(), 0.0);
      back_project_column(g, proj, views, count, ix, iy, acc.data());
      use(ix, iy, acc.data());
    }
  }
}

// image = A^T proj over the listed views for the y-planes [y0, y1) (image is the whole volume;
// other planes are left as they are).
void back_project(const Geometry& g, const float* proj, const std::int32_t* views, int count, int y0, int y1,
                  float* image);

// 0, 1, ..., views - 1.
std::vector<std::int32_t> all_views(const Geometry& g);

}  // namespace gpsm::apps::ct
