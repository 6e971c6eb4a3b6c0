#pragma once
// The edge-preserving regularizer R(x) = beta * sum over neighbour pairs {j, k} of
// w_jk * psi(x_j - x_k), over the 26-neighbourhood with w_jk = 1 / (distance in voxel steps),
// psi the Fair potential psi(t) = delta^2 (|t| / delta - log(1 + |t| / delta)): quadratic below
// delta, linear above, so edges larger than delta are smoothed less. Its derivative is
// psi'(t) = t / (1 + |t| / delta) and its Huber curvature omega(t) = psi'(t) / t = 1 / (1 + |t| / delta).
//
// For one voxel the separable quadratic surrogate needs the gradient
//   dR/dx_j = beta * sum_{k in N_j} w_jk psi'(x_j - x_k)
// and the curvature (De Pierro's split of each pair halves, so each voxel carries twice the pair's)
//   c_j = beta * sum_{k in N_j} 2 w_jk omega(x_j - x_k).
// Neighbours outside the image do not exist (no boundary term).
#include <cmath>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

struct Penalty {
  double beta = 0;   // strength (set relative to the data term: pwls.hpp)
  double delta = 0;  // Fair potential's corner, in 1/mm
};

GPSM_CT_HD inline double fair(double t, double delta) {
  const double a = std::fabs(t) / delta;
  return delta * delta * (a - std::log1p(a));
}
GPSM_CT_HD inline double fair_derivative(double t, double delta) { return t / (1.0 + std::fabs(t) / delta); }
GPSM_CT_HD inline double fair_curvature(double t, double delta) { return 1.0 / (1.0 + std::fabs(t) / delta); }

// w_jk by the squared offset (1: face, 2: edge, 3: corner neighbour). A function, not a table,
// so device code can call it (a namespace-scope array lives in host memory only).
GPSM_CT_HD inline double neighbour_weight(int d2) {
  return d2 == 1 ? 1.0 : d2 == 2 ? 0.70710678118654752440 : 0.57735026918962576451;
}

// R(x) over the whole image, in double.
double penalty_value(const Geometry& g, const Penalty& p, const float* x);

// sum of w_jk psi(x_j - x_k) over the pairs voxel (ix, iy, iz) opens: the 13 offsets after
// (0, 0, 0) in (dy, dx, dz) order, so each pair is counted once over the image (R = beta x the
// sum of these over all voxels).
GPSM_CT_HD inline double penalty_pairs(const Geometry& g, const Penalty& p, const float* x, int ix, int iy, int iz) {
  const double xj = x[g.voxel_index(ix, iy, iz)];
  double total = 0;
  for (int dy = 0; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx)
      for (int dz = -1; dz <= 1; ++dz) {
        if (dy == 0 && (dx < 0 || (dx == 0 && dz <= 0))) continue;
        const int jy = iy + dy, jx = ix + dx, jz = iz + dz;
        if (jy >= g.ny || jx < 0 || jx >= g.nx || jz < 0 || jz >= g.nz) continue;
        const double t = xj - x[g.voxel_index(jx, jy, jz)];
        total += neighbour_weight(dy * dy + dx * dx + dz * dz) * fair(t, p.delta);
      }
  return total;
}

// Gradient and surrogate curvature of R at voxel (ix, iy, iz) (the CPU update and the GPU
// kernel both call this, so they agree to the bit). X reads voxels as x[i]: a float pointer, or
// the GPU's reader of a GPS array (loads through its view, so tracking sees the pages read).
template <class X>
GPSM_CT_HD inline void penalty_gradient_curvature(const Geometry& g, const Penalty& p, const X& x, int ix, int iy,
                                                  int iz, double& grad, double& curv) {
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
        const double w = neighbour_weight(dy * dy + dx * dx + dz * dz);
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
