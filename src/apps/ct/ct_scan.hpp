#pragma once
// The simulated measurement: counts N_i ~ Poisson(I0 exp(-[A mu]_i)) per ray, seeded per ray, the
// post-log sinogram y_i = log(I0 / max(N_i, 1)) and the statistical weights w_i = N_i (the
// inverse variance of y_i to first order; a ray with no counts gets weight 0, so its y does not
// matter). The line integrals come from the same projector the reconstruction uses (the
// benchmark measures the algorithm's cost, not model mismatch). Layout [view][row][channel].
#include <cstdint>
#include <vector>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

struct Scan {
  double i0 = 0;              // incident photons per ray (the dose)
  std::uint64_t seed = 0;
  std::vector<float> y;       // post-log sinogram
  std::vector<float> w;       // weights (counts)
};

// From the phantom's attenuation mu (1/mm, layout [iy][ix][iz]).
Scan simulate_scan(const Geometry& g, const std::vector<float>& mu, double i0, std::uint64_t seed);

// The same from line integrals already computed (l = A mu, [view][row][channel]).
Scan scan_from_line_integrals(const std::vector<float>& l, double i0, std::uint64_t seed);

}  // namespace gpsm::apps::ct
