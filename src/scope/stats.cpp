#include "scope/stats.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gpsm::scope {

Summary summarize(std::vector<double> s) {
  if (s.empty()) throw std::invalid_argument("summarize: no samples");
  std::sort(s.begin(), s.end());
  Summary r;
  r.n = static_cast<int>(s.size());
  r.min = s.front();
  r.max = s.back();
  const size_t h = s.size() / 2;
  r.median = (s.size() % 2) ? s[h] : 0.5 * (s[h - 1] + s[h]);
  r.mean = std::accumulate(s.begin(), s.end(), 0.0) / s.size();
  return r;
}

}  // namespace gpsm::scope
