#pragma once
// Deterministic Poisson draws: each ray's count is a function of (seed, ray) alone, whatever the
// threading. Uniforms come from splitmix64 of a per-ray stream; means below 10 use Knuth's
// product of uniforms, larger ones Hormann's transformed rejection ("The transformed rejection
// method for generating Poisson random variables", PTRS), as numpy does.
#include <cmath>
#include <cstdint>

#include "common/splitmix.hpp"

namespace gpsm::apps::ct {

class RayRandom {
 public:
  RayRandom(std::uint64_t seed, std::uint64_t ray) : state_(splitmix64(seed ^ splitmix64(ray + 0x632be59bd9b4e019ull))) {}
  // uniform in (0, 1)
  double uniform() {
    state_ = splitmix64(state_);
    return (static_cast<double>(state_ >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }

 private:
  std::uint64_t state_;
};

inline std::int64_t poisson(double lam, RayRandom& rng) {
  if (!(lam > 0)) return 0;
  if (lam < 10) {
    const double limit = std::exp(-lam);
    std::int64_t k = 0;
    double prod = rng.uniform();
    while (prod > limit) {
      ++k;
      prod *= rng.uniform();
    }
    return k;
  }
  const double slam = std::sqrt(lam), loglam = std::log(lam);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = rng.uniform() - 0.5, v = rng.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + lam + 0.43);
    if (us >= 0.07 && v <= vr) return static_cast<std::int64_t>(k);
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <= -lam + k * loglam - std::lgamma(k + 1))
      return static_cast<std::int64_t>(k);
  }
}

}  // namespace gpsm::apps::ct
