// The marching step's costs (sim/march.hpp).
#include "sim/march.hpp"

#include <algorithm>

namespace gpsm::sim {

void add_range(ByteRanges& r, std::uint64_t lo, std::uint64_t hi) {
  if (!r.empty() && lo <= r.back().second && hi >= r.back().first) {
    r.back().first = std::min(r.back().first, lo);
    r.back().second = std::max(r.back().second, hi);
  } else {
    r.emplace_back(lo, hi);
  }
}

double distinct_bytes(ByteRanges& r) {
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  double u = 0;
  std::uint64_t a = r[0].first, b = r[0].second;
  for (const auto& iv : r) {
    if (iv.first > b) {
      u += double(b - a);
      a = iv.first;
      b = iv.second;
    } else {
      b = std::max(b, iv.second);
    }
  }
  return u + double(b - a);
}

ByteRanges merged(ByteRanges& r) {
  ByteRanges out;
  std::sort(r.begin(), r.end());
  for (const auto& iv : r)
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  return out;
}

double march_step_seconds(double resident, double bytes_per_step, double hbm_GBps) {
  if (!(resident > 0) || !(bytes_per_step > 0) || !(hbm_GBps > 0)) return 0;
  return resident * bytes_per_step / (hbm_GBps * 1e9);
}

}  // namespace gpsm::sim
