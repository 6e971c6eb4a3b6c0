#include "apps/ct/ct_phantom.hpp"

#include <cmath>

#include "common/omp.hpp"

namespace gpsm::apps::ct {

const std::vector<Ellipsoid>& phantom_ellipsoids() {
  // Shepp-Logan geometry; values: skull 800 HU, brain 40 HU, ventricles ~0 HU, lesions.
  static const std::vector<Ellipsoid> e = {
      {0.0, 0.0, 0.0, 0.69, 0.92, 0.90, 0.0, 1800.0},      // skull (air -1000 -> 800)
      {0.0, -0.0184, 0.0, 0.6624, 0.874, 0.88, 0.0, -760.0},  // brain (800 -> 40)
      {0.22, 0.0, 0.0, 0.11, 0.31, 0.22, -18.0, -40.0},    // right ventricle (-> 0)
      {-0.22, 0.0, 0.0, 0.16, 0.41, 0.28, 18.0, -40.0},    // left ventricle
      {0.0, 0.35, -0.15, 0.21, 0.25, 0.41, 0.0, 20.0},     // upper lesion
      {0.0, 0.1, 0.25, 0.046, 0.046, 0.05, 0.0, 30.0},
      {0.0, -0.1, 0.25, 0.046, 0.046, 0.05, 0.0, 30.0},
      {-0.08, -0.605, 0.0, 0.046, 0.023, 0.05, 0.0, 10.0},
      {0.0, -0.606, 0.0, 0.023, 0.023, 0.02, 0.0, 10.0},
      {0.06, -0.605, 0.0, 0.023, 0.046, 0.02, 0.0, -10.0},
  };
  return e;
}

double phantom_hu(double x, double y, double z) {
  constexpr double kDeg = 3.14159265358979323846 / 180.0;
  double hu = -1000.0;
  for (const Ellipsoid& e : phantom_ellipsoids()) {
    const double c = std::cos(e.phi * kDeg), s = std::sin(e.phi * kDeg);
    const double px = x - e.cx, py = y - e.cy, pz = z - e.cz;
    const double u = (c * px + s * py) / e.ax, v = (-s * px + c * py) / e.ay, w = pz / e.az;
    if (u * u + v * v + w * w <= 1.0) hu += e.hu;
  }
  return hu;
}

std::vector<float> phantom_mu(const Geometry& g) {
  std::vector<float> mu(static_cast<std::size_t>(g.voxels()));
  const double hx = 0.5 * g.nx * g.dx, hy = 0.5 * g.ny * g.dx, hz = 0.5 * g.nz * g.dz;
  GPSM_OMP(parallel for schedule(static))
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      for (int iz = 0; iz < g.nz; ++iz) {
        const double hu = phantom_hu(g.x_center(ix) / hx, g.y_center(iy) / hy, g.z_center(iz) / hz);
        mu[static_cast<std::size_t>(g.voxel_index(ix, iy, iz))] = static_cast<float>(mu_from_hu(hu));
      }
  return mu;
}

}  // namespace gpsm::apps::ct
