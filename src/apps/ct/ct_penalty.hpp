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

inline double fair(double t, double delta) {
  const double a = std::fabs(t) / delta;
  return delta * delta * (a - std::log1p(a));
}
inline double fair_derivative(double t, double delta) { return t / (1.0 + std::fabs(t) / delta); }
inline double fair_curvature(double t, double delta) { return 1.0 / (1.0 + std::fabs(t) / delta); }

// R(x) over the whole image, in double.
double penalty_value(const Geometry& g, const Penalty& p, const float* x);

// Gradient and surrogate curvature of R at voxel (ix, iy, iz).
void penalty_gradient_curvature(const Geometry& g, const Penalty& p, const float* x, int ix, int iy, int iz,
                                double& grad, double& curv);

}  // namespace gpsm::apps::ct
