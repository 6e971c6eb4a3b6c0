#include "apps/ct/ct_penalty.hpp"

#include "common/omp.hpp"

namespace gpsm::apps::ct {

namespace {
constexpr double kW[4] = {0.0, 1.0, 0.70710678118654752440, 0.57735026918962576451};  // by |offset|^2
}

double penalty_value(const Geometry& g, const Penalty& p, const float* x) {
  double total = 0;
  GPSM_OMP(parallel for reduction(+ : total) schedule(static))
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      for (int iz = 0; iz < g.nz; ++iz) {
        const double xj = x[g.voxel_index(ix, iy, iz)];
        // each pair once: the 13 offsets that come after (0, 0, 0) in (dy, dx, dz) order
        for (int dy = 0; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
            for (int dz = -1; dz <= 1; ++dz) {
              if (dy == 0 && (dx < 0 || (dx == 0 && dz <= 0))) continue;
              const int jy = iy + dy, jx = ix + dx, jz = iz + dz;
              if (jy >= g.ny || jx < 0 || jx >= g.nx || jz < 0 || jz >= g.nz) continue;
              const double t = xj - x[g.voxel_index(jx, jy, jz)];
              total += kW[dy * dy + dx * dx + dz * dz] * fair(t, p.delta);
            }
      }
  return p.beta * total;
}

void penalty_gradient_curvature(const Geometry& g, const Penalty& p, const float* x, int ix, int iy, int iz,
                                double& grad, double& curv) {
  const double xj = x[g.voxel_index(ix, iy, iz)];
  double gs = 0, cs = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    const int jy = iy + dy;
    if (jy < 0 || jy >= g.ny) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int jx = ix + dx;
      if (jx < 0 || jx >= g.nx) continue;
      for (int dz = -1; dz <= 1; ++dz) {
        const int jz = iz + dz;
        if ((dy | dx | dz) == 0 || jz < 0 || jz >= g.nz) continue;
        const double w = kW[dy * dy + dx * dx + dz * dz];
        const double t = xj - x[g.voxel_index(jx, jy, jz)];
        gs += w * fair_derivative(t, p.delta);
        cs += 2 * w * fair_curvature(t, p.delta);
      }
    }
  }
  grad = p.beta * gs;
  curv = p.beta * cs;
}

}  // namespace gpsm::apps::ct
