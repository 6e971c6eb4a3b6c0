#include "apps/ct/ct_pwls.hpp"

#include <algorithm>
#include <cmath>

#include "apps/ct/ct_phantom.hpp"
#include "apps/ct/ct_projector.hpp"
#include "apps/ct/ct_subsets.hpp"
#include "apps/harness/reference_cache.hpp"
#include "common/omp.hpp"

namespace gpsm::apps::ct {

namespace {
// sum over the 26 neighbours of 2 w_jk (the penalty's curvature per unit beta in a flat region)
constexpr double kFlatCurvature = 2 * (6 * 1.0 + 12 * 0.70710678118654752440 + 8 * 0.57735026918962576451);
}

std::vector<float> data_curvature(const Geometry& g, const std::vector<float>& w) {
  const std::vector<float> ones(static_cast<std::size_t>(g.voxels()), 1.0f);
  const std::vector<std::int32_t> v = all_views(g);
  std::vector<float> a1(static_cast<std::size_t>(g.sinogram_cells()));
  forward_project(g, ones.data(), v.data(), g.views, a1.data());
  for (std::size_t i = 0; i < a1.size(); ++i) a1[i] *= w[i];
  std::vector<float> d(static_cast<std::size_t>(g.voxels()));
  back_project(g, a1.data(), v.data(), g.views, 0, g.ny, d.data());
  return d;
}

Penalty make_penalty(const Geometry& g, const PwlsSettings& s, const std::vector<float>& d) {
  (void)g;
  double sum = 0;
  for (float v : d) sum += v;
  Penalty p;
  p.beta = s.beta_scale * (d.empty() ? 0.0 : sum / static_cast<double>(d.size())) / kFlatCurvature;
  p.delta = s.delta_hu / 1000.0 * kMuWater;
  return p;
}

double pwls_cost(const Geometry& g, const Scan& scan, const Penalty& pen, const std::vector<float>& x) {
  const std::vector<std::int32_t> v = all_views(g);
  std::vector<float> ax(static_cast<std::size_t>(g.sinogram_cells()));
  forward_project(g, x.data(), v.data(), g.views, ax.data());
  double data = 0;
  const std::int64_t n = static_cast<std::int64_t>(ax.size());
  GPSM_OMP(parallel for reduction(+ : data) schedule(static))
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(ax[i]) - scan.y[i];
    data += scan.w[i] * e * e;
  }
  return 0.5 * data + penalty_value(g, pen, x.data());
}

void weighted_residual(const Geometry& g, const Scan& scan, const float* x, const std::int32_t* views, int count,
                       float* r) {
  forward_project(g, x, views, count, r);
  const std::int64_t cells = g.cells_per_view();
  for (int k = 0; k < count; ++k) {
    const std::int64_t base = std::int64_t{views[k]} * cells;
    float* rk = r + k * cells;
    for (std::int64_t c = 0; c < cells; ++c)
      rk[c] = static_cast<float>(scan.w[base + c] * (static_cast<double>(rk[c]) - scan.y[base + c]));
  }
}

void update_planes(const Geometry& g, const Penalty& pen, const std::vector<float>& d, int subsets, const float* x,
                   const float* r, const std::int32_t* views, int count, int y0, int y1, float* x_new) {
  for_each_back_projected_column(g, r, views, count, y0, y1, [&](int ix, int iy, const double* acc) {
    const std::int64_t base = g.voxel_index(ix, iy, 0);
    for (int iz = 0; iz < g.nz; ++iz) {
      double grad, curv;
      penalty_gradient_curvature(g, pen, x, ix, iy, iz, grad, curv);
      const double denom = d[base + iz] + curv;
      const double xj = x[base + iz];
      const double next = denom > 0 ? xj - (subsets * acc[iz] + grad) / denom : xj;
      x_new[base + iz] = static_cast<float>(std::max(0.0, next));
    }
  });
}

double rmse_hu(const std::vector<float>& x, const std::vector<float>& truth) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = static_cast<double>(x[i]) - truth[i];
    s += e * e;
  }
  return 1000.0 / kMuWater * std::sqrt(s / static_cast<double>(x.size()));
}

PwlsRun pwls_os(const Geometry& g, const Scan& scan, const PwlsSettings& s, std::vector<float> x0, int iterations,
                const std::vector<float>& truth) {
  const std::vector<float> d = data_curvature(g, scan.w);
  const Penalty pen = make_penalty(g, s, d);
  const std::vector<int> order = subset_order(s.subsets);
  std::vector<std::vector<std::int32_t>> sv;
  for (int m = 0; m < s.subsets; ++m) sv.push_back(subset_views(g.views, s.subsets, m));
  PwlsRun run;
  run.x = std::move(x0);
  std::vector<float> next(run.x.size());
  std::vector<float> r;
  auto record = [&] {
    run.cost.push_back(pwls_cost(g, scan, pen, run.x));
    if (!truth.empty()) run.rmse_hu.push_back(rmse_hu(run.x, truth));
  };
  record();
  for (int it = 0; it < iterations; ++it) {
    for (int m : order) {
      const std::vector<std::int32_t>& v = sv[m];
      const int count = static_cast<int>(v.size());
      r.resize(static_cast<std::size_t>(count * g.cells_per_view()));
      weighted_residual(g, scan, run.x.data(), v.data(), count, r.data());
      update_planes(g, pen, d, s.subsets, run.x.data(), r.data(), v.data(), count, 0, g.ny, next.data());
      run.x.swap(next);
    }
    record();
  }
  return run;
}

void ref_fields(RefFields& f, PwlsRun& run) {
  f.array(run.cost);
  f.array(run.rmse_hu);
  f.array(run.x);
}

}  // namespace gpsm::apps::ct
