#pragma once
// One output pixel of the K x K filter, the same code on the CPU (the reference) and in every
// paradigm's kernel, so that results agree to the bit. The order of the float operations:
//
//   acc = 0.0f
//   for j = 0 .. K-1            (filter rows, top to bottom: image row clamp(y + j - r))
//     for i = 0 .. K-1          (filter columns, left to right: image column clamp(x + i - r))
//       acc = acc + w[j*K + i] * in(column, row)     (the product rounded to float, then the sum)
//
// with r = (K-1)/2 and clamp-to-edge borders (an index below 0 reads 0, past the end the last).
// No fused multiply-add: the device uses __fmul_rn / __fadd_rn, which the compiler never fuses,
// and the host build targets x86-64 without FMA, so the products round as on the device.
#include <cstdint>

#include "gpsm/gps/config.hpp"

namespace gpsm::apps::filter {

GPSM_HD std::int64_t clamp_index(std::int64_t v, std::int64_t n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

GPSM_HD float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
GPSM_HD float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// rows(gy) gives something indexable by the column (a row pointer, or an accessor that loads
// through a GPS view); w(t) the weight t = j*K + i. KT > 0: the side known at compile time (the
// loops unroll); KT == 0: the side is k.
template <int KT, class Rows, class Weights>
GPSM_HD float filter_point(const Rows& rows, const Weights& w, int k, std::int64_t x, std::int64_t y,
                           std::int64_t width, std::int64_t height) {
  const int side = KT > 0 ? KT : k;
  const int r = (side - 1) / 2;
  float acc = 0.0f;
  if constexpr (KT > 0) {
    // The side known: the K clamped columns once, in registers, for every row (same order).
    std::int64_t col[KT > 0 ? KT : 1];
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < KT; ++i) col[i] = clamp_index(x + i - r, width);
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int j = 0; j < KT; ++j) {
      const auto row = rows(clamp_index(y + j - r, height));
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (int i = 0; i < KT; ++i) acc = add_rn(acc, mul_rn(w(j * KT + i), row[col[i]]));
    }
  } else {
    for (int j = 0; j < side; ++j) {
      const auto row = rows(clamp_index(y + j - r, height));
      for (int i = 0; i < side; ++i) acc = add_rn(acc, mul_rn(w(j * side + i), row[clamp_index(x + i - r, width)]));
    }
  }
  return acc;
}

}  // namespace gpsm::apps::filter
