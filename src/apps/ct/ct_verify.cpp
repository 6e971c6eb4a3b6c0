#include "apps/ct/ct_verify.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/ct/ct_phantom.hpp"

namespace gpsm::apps::ct {

double split_tolerance_hu(int updates, int subsets, double x_max) {
  if (updates < 0 || subsets < 1)
    throw std::invalid_argument(fmt::format("ct: tolerance for {} updates of {} subsets", updates, subsets));
  return updates * (subsets + 1.0) * std::ldexp(1.0, -24) * std::max(0.0, x_max) * 1000.0 / kMuWater;
}

double max_difference_hu(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    throw std::invalid_argument(fmt::format("ct: images of {} and {} voxels", a.size(), b.size()));
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return worst * 1000.0 / kMuWater;
}

RunCheck check_run(const PwlsRun& ref, const PwlsRun& got, int subsets) {
  RunCheck c;
  if (got.cost.size() != ref.cost.size()) {
    c.failure = fmt::format("{} cost records, the one-GPU run {}", got.cost.size(), ref.cost.size());
    return c;
  }
  const int iterations = static_cast<int>(ref.cost.size()) - 1;
  const float x_max = ref.x.empty() ? 0.0f : *std::max_element(ref.x.begin(), ref.x.end());
  c.tolerance_hu = 2 * split_tolerance_hu(iterations * subsets, subsets, x_max);
  for (std::size_t k = 0; k < got.cost.size(); ++k) {
    if (!(std::abs(got.cost[k] - ref.cost[k]) <= 1e-5 * std::abs(ref.cost[k]))) {
      c.failure = fmt::format("cost after {} iterations {:.9g}, the one-GPU run's {:.9g} (more than 1e-5 apart)", k,
                              got.cost[k], ref.cost[k]);
      return c;
    }
    if (k > 0 && !(got.cost[k] <= got.cost[k - 1] * (1 + 1e-9))) {
      c.failure = fmt::format("cost rose from {:.9g} to {:.9g} in iteration {}", got.cost[k - 1], got.cost[k], k);
      return c;
    }
  }
  c.difference_hu = max_difference_hu(ref.x, got.x);
  if (!(c.difference_hu <= c.tolerance_hu))
    c.failure = fmt::format("image differs from the one-GPU image by {:.3g} HU (tolerance {:.3g} HU)",
                            c.difference_hu, c.tolerance_hu);
  return c;
}

}  // namespace gpsm::apps::ct
