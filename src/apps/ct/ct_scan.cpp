#include "apps/ct/ct_scan.hpp"

#include <algorithm>
#include <cmath>

#include "apps/ct/ct_poisson.hpp"
#include "apps/ct/ct_projector.hpp"
#include "common/omp.hpp"

namespace gpsm::apps::ct {

Scan scan_from_line_integrals(const std::vector<float>& l, double i0, std::uint64_t seed) {
  Scan s;
  s.i0 = i0;
  s.seed = seed;
  const std::int64_t n = static_cast<std::int64_t>(l.size());
  s.y.resize(l.size());
  s.w.resize(l.size());
  GPSM_OMP(parallel for schedule(static))
  for (std::int64_t i = 0; i < n; ++i) {
    RayRandom rng(seed, static_cast<std::uint64_t>(i));
    const std::int64_t counts = poisson(i0 * std::exp(-static_cast<double>(l[i])), rng);
    s.w[i] = static_cast<float>(counts);
    s.y[i] = static_cast<float>(std::log(i0 / static_cast<double>(std::max<std::int64_t>(counts, 1))));
  }
  return s;
}

Scan simulate_scan(const Geometry& g, const std::vector<float>& mu, double i0, std::uint64_t seed) {
  std::vector<float> l(static_cast<std::size_t>(g.sinogram_cells()));
  const std::vector<std::int32_t> v = all_views(g);
  forward_project(g, mu.data(), v.data(), g.views, l.data());
  return scan_from_line_integrals(l, i0, seed);
}

}  // namespace gpsm::apps::ct
