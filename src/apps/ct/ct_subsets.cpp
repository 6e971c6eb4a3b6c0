#include "apps/ct/ct_subsets.hpp"

#include <stdexcept>
#include <string>

namespace gpsm::apps::ct {

namespace {
void check(int views, int subsets) {
  if (subsets < 1 || subsets > views)
    throw std::invalid_argument("ct: " + std::to_string(subsets) + " subsets for " + std::to_string(views) +
                                " views; use 1 to " + std::to_string(views) + " subsets");
}
}  // namespace

std::vector<std::int32_t> subset_views(int views, int subsets, int m) {
  check(views, subsets);
  if (m < 0 || m >= subsets) throw std::invalid_argument("ct: subset " + std::to_string(m) + " out of range");
  std::vector<std::int32_t> v;
  for (int x = m; x < views; x += subsets) v.push_back(x);
  return v;
}

std::vector<int> subset_order(int subsets) {
  check(subsets, subsets);
  int bits = 0;
  while ((1 << bits) < subsets) ++bits;
  std::vector<int> order;
  for (int i = 0; i < (1 << bits); ++i) {
    int r = 0;
    for (int b = 0; b < bits; ++b)
      if (i & (1 << b)) r |= 1 << (bits - 1 - b);
    if (r < subsets) order.push_back(r);
  }
  return order;
}

}  // namespace gpsm::apps::ct
