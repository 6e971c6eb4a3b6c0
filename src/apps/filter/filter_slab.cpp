#include "apps/filter/filter_slab.hpp"

#include <algorithm>

#include "common/even_parts.hpp"

namespace gpsm::apps::filter {

FilterSlab filter_slab(std::int64_t height, int k, int parts, int rank) {
  FilterSlab s;
  s.first = even_part_begin<std::int64_t>(height, parts, rank);
  s.rows = even_part_begin<std::int64_t>(height, parts, rank + 1) - s.first;
  s.halo = (k - 1) / 2;
  s.above = std::min(s.halo, s.first);
  s.below = std::min(s.halo, height - (s.first + s.rows));
  s.top = rank > 0 ? rank - 1 : -1;
  s.bottom = rank + 1 < parts ? rank + 1 : -1;
  return s;
}

}  // namespace gpsm::apps::filter
