#pragma once
// n items in `parts` contiguous parts as equal as can be: the first n % parts parts hold one more.
// One formula for every block split (CG's rows, CT's views and planes, a distributed array's blocks).
#include <algorithm>

namespace gpsm {

// Where part p (0 <= p <= parts) begins; part p is [even_part_begin(p), even_part_begin(p + 1)).
// I: a signed or unsigned 64-bit count (CG's and CT's rows are signed, a distributed array's
// elements unsigned, up to 2^63).
template <class I>
I even_part_begin(I n, int parts, int p) {
  const I k = static_cast<I>(p), m = static_cast<I>(parts);
  return k * (n / m) + std::min<I>(k, n % m);
}

}  // namespace gpsm
