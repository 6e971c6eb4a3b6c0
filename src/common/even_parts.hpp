#pragma once
// n items in `parts` contiguous parts as equal as can be: the first n % parts parts hold one more.
// One formula for every block split (CG's rows, CT's views and planes).
#include <algorithm>
#include <cstdint>

namespace gpsm {

// Where part p (0 <= p <= parts) begins; part p is [even_part_begin(p), even_part_begin(p + 1)).
inline std::int64_t even_part_begin(std::int64_t n, int parts, int p) {
  return static_cast<std::int64_t>(p) * (n / parts) + std::min<std::int64_t>(p, n % parts);
}

}  // namespace gpsm
