#include "apps/ct/ct_projector.hpp"

#include <algorithm>
#include <numeric>

#include "apps/ct/ct_footprint.hpp"
#include "common/omp.hpp"

namespace gpsm::apps::ct {

void forward_project(const Geometry& g, const float* image, const std::int32_t* views, int count, float* out) {
  const std::int64_t cells = g.cells_per_view();
  GPSM_OMP(parallel) {
    std::vector<double> acc(static_cast<std::size_t>(cells));
    ColumnFootprint fp;
    double w[kMaxFootprintCells];
    GPSM_OMP(for schedule(dynamic, 1))
    for (int k = 0; k < count; ++k) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const ViewPose p = view_pose(g, views[k]);
      for (int iy = 0; iy < g.ny; ++iy)
        for (int ix = 0; ix < g.nx; ++ix) {
          if (!column_footprint(g, p, ix, iy, fp)) continue;
          int iz0, iz1;
          column_z_range(g, p, fp, iz0, iz1);
          const float* col = image + g.voxel_index(ix, iy, 0);
          for (int iz = iz0; iz < iz1; ++iz) {
            const double xv = col[iz];
            if (xv == 0) continue;
            int l0;
            const int nl = voxel_rows(g, p, fp, iz, l0, w);
            for (int i = 0; i < nl; ++i) {
              double* row = acc.data() + std::int64_t{l0 + i} * g.channels + fp.k0;
              const double wx = w[i] * xv;
              for (int j = 0; j < fp.nk; ++j) row[j] += wx * fp.f[j];
            }
          }
        }
      float* o = out + k * cells;
      for (std::int64_t c = 0; c < cells; ++c) o[c] = static_cast<float>(acc[c]);
    }
  }
}

void back_project_column(const Geometry& g, const float* proj, const std::int32_t* views, int count, int ix, int iy,
                         double* acc) {
  const std::int64_t cells = g.cells_per_view();
  ColumnFootprint fp;
  double w[kMaxFootprintCells];
  for (int k = 0; k < count; ++k) {
    const ViewPose p = view_pose(g, views[k]);
    if (!column_footprint(g, p, ix, iy, fp)) continue;
    int iz0, iz1;
    column_z_range(g, p, fp, iz0, iz1);
    const float* view = proj + k * cells;
    for (int iz = iz0; iz < iz1; ++iz) {
      int l0;
      const int nl = voxel_rows(g, p, fp, iz, l0, w);
      double sum = 0;
      for (int i = 0; i < nl; ++i) {
        const float* row = view + std::int64_t{l0 + i} * g.channels + fp.k0;
        double r = 0;
        for (int j = 0; j < fp.nk; ++j) r += fp.f[j] * row[j];
        sum += w[i] * r;
      }
      acc[iz] += sum;
    }
  }
}

void back_project(const Geometry& g, const float* proj, const std::int32_t* views, int count, int y0, int y1,
                  float* image) {
  for_each_back_projected_column(g, proj, views, count, y0, y1, [&](int ix, int iy, const double* acc) {
    float* col = image + g.voxel_index(ix, iy, 0);
    for (int iz = 0; iz < g.nz; ++iz) col[iz] = static_cast<float>(acc[iz]);
  });
}

std::vector<std::int32_t> all_views(const Geometry& g) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(g.views));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace gpsm::apps::ct
