// The separable-footprint projector pair: A^T is exactly the transpose of A (inner products agree
// to rounding, circular and helical), a point projects where the geometry says, and line
// integrals through a uniform cylinder are its chord lengths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "apps/ct/ct_footprint.hpp"
#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_projector.hpp"

using namespace gpsm::apps::ct;

namespace {

// <A x, y> and <x, A^T y> for random x, y over every `stride`-th view.
void expect_adjoint(const Geometry& g, int stride) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);  // positive: no cancellation to hide a mismatch
  std::vector<std::int32_t> views;
  for (int v = 0; v < g.views; v += stride) views.push_back(v);
  const int count = static_cast<int>(views.size());
  std::vector<float> x(static_cast<std::size_t>(g.voxels())), y(static_cast<std::size_t>(count * g.cells_per_view()));
  for (float& v : x) v = u(rng);
  for (float& v : y) v = u(rng);
  std::vector<float> ax(y.size()), aty(x.size());
  forward_project(g, x.data(), views.data(), count, ax.data());
  back_project(g, y.data(), views.data(), count, 0, g.ny, aty.data());
  double lhs = 0, rhs = 0;
  for (std::size_t i = 0; i < y.size(); ++i) lhs += static_cast<double>(ax[i]) * y[i];
  for (std::size_t i = 0; i < x.size(); ++i) rhs += static_cast<double>(x[i]) * aty[i];
  ASSERT_GT(lhs, 0);
  // Storage is float (each entry rounded once, relative 6e-8, errors of both signs that average
  // out), sums are double: measured 4e-11 apart; a coefficient off by 1e-6 in half the voxels
  // moves the sides 5e-7 apart.
  EXPECT_LT(std::fabs(lhs - rhs) / lhs, 1e-8) << g.label() << ": " << lhs << " vs " << rhs;
}

// Channel and row, as fractional cell indices, where the geometry puts point (x, y, z) in view v.
void predicted_cell(const Geometry& g, int v, double x, double y, double z, double& ch, double& row) {
  const double b = g.angle(v), c = std::cos(b), s = std::sin(b);
  const double d = g.source_radius - (x * c + y * s), u = -x * s + y * c;
  ch = g.source_detector * u / d / g.channel_size + 0.5 * (g.channels - 1);
  row = g.source_detector * (z - g.source_z(v)) / d / g.row_size + 0.5 * (g.rows - 1);
}

}  // namespace

TEST(CtProjector, BackProjectorIsTheExactAdjointHelical) { expect_adjoint(parse_geometry("small"), 12); }

TEST(CtProjector, BackProjectorIsTheExactAdjointCircular) {
  expect_adjoint(parse_geometry("64x64x16:96x16x96:circular"), 4);
}

TEST(CtProjector, PointProjectsWhereTheGeometrySays) {
  for (const char* spec : {"small", "64x64x16:96x16x96:circular"}) {
    const Geometry g = parse_geometry(spec);
    const int ix = 45, iy = 20;
    for (int v : {g.views / 4, g.views / 3 + 7, g.views / 2, 2 * g.views / 3 + 1}) {
      // the slice nearest the source's z (so the point is in the cone)
      const int iz = std::max(0, std::min(g.nz - 1, static_cast<int>(std::lround(g.source_z(v) / g.dz + 0.5 * (g.nz - 1)))));
      std::vector<float> x(static_cast<std::size_t>(g.voxels()), 0.0f);
      x[g.voxel_index(ix, iy, iz)] = 1.0f;
      std::vector<float> p(static_cast<std::size_t>(g.cells_per_view()));
      const std::int32_t view = v;
      forward_project(g, x.data(), &view, 1, p.data());
      double mass = 0, mc = 0, mr = 0;
      for (int l = 0; l < g.rows; ++l)
        for (int k = 0; k < g.channels; ++k) {
          const double a = p[static_cast<std::size_t>(l * g.channels + k)];
          mass += a, mc += a * k, mr += a * l;
        }
      ASSERT_GT(mass, 0) << spec << " view " << v;
      double ch, row;
      predicted_cell(g, v, g.x_center(ix), g.y_center(iy), g.z_center(iz), ch, row);
      // The centroid of cell-averaged weights sits within a quarter cell of the true shadow's center
      // (exactly on it only when the shadow spans many cells).
      EXPECT_NEAR(mc / mass, ch, 0.25) << spec << " view " << v;
      ASSERT_GT(row, 1);
      ASSERT_LT(row, g.rows - 2);
      EXPECT_NEAR(mr / mass, row, 0.25) << spec << " view " << v;
      // Far from the detector's edges the footprint's mass is the voxel's volume over the cell's
      // area back-projected to the voxel: dx^2 dz M^2 / (ds dt), up to the obliquity and the
      // trapezoid's perspective (a few %).
      if (row > 2 && row < g.rows - 3) {
        const double b = g.angle(v);
        const double mag = g.source_detector / (g.source_radius - (g.x_center(ix) * std::cos(b) + g.y_center(iy) * std::sin(b)));
        const double want = g.dx * g.dx * g.dz * mag * mag / (g.channel_size * g.row_size);
        EXPECT_NEAR(mass / want, 1.0, 0.05) << spec << " view " << v;
      }
    }
  }
}

TEST(CtProjector, UniformCylinderGivesItsChordLengths) {
  // A cylinder of radius 150 mm along z, attenuation 1 per mm, on a fine circular grid: the
  // projection at a channel is the chord 2 sqrt(r^2 - p^2), p the ray's distance from the axis.
  const Geometry g = parse_geometry("128x128x4:8x16x96:circular");
  const double r = 150.0;
  std::vector<float> x(static_cast<std::size_t>(g.voxels()), 0.0f);
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      if (std::hypot(g.x_center(ix), g.y_center(iy)) <= r)
        for (int iz = 0; iz < g.nz; ++iz) x[g.voxel_index(ix, iy, iz)] = 1.0f;
  const std::int32_t view = 3;
  std::vector<float> p(static_cast<std::size_t>(g.cells_per_view()));
  forward_project(g, x.data(), &view, 1, p.data());
  const int row = g.rows / 2;
  int checked = 0;
  for (int k = 0; k < g.channels; ++k) {
    const double s = g.channel_center(k);
    const double dist = g.source_radius * std::fabs(s) / std::hypot(g.source_detector, s);
    if (dist > 0.8 * r) continue;  // near the rim the chord changes faster than a cell resolves
    const double chord = 2 * std::sqrt(r * r - dist * dist);
    EXPECT_NEAR(p[static_cast<std::size_t>(row * g.channels + k)] / chord, 1.0, 0.02) << "channel " << k;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}
