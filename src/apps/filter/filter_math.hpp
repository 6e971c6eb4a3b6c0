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

// TY x TX output pixels (rows row0 .. row0 + TY - 1, adjacent columns c .. c + TX - 1) of a tile
// of input pixels already clamped (tile row s at tile + s * pitch; output (t, u) reads tile rows
// row0 + t .. row0 + t + K - 1 and columns c + u .. c + u + K - 1), each in filter_point's order:
// acc[t][u] gets its products j = 0 .. K-1, i = 0 .. K-1 in turn. KT > 0: each tile row's K + TX - 1
// values are read once into registers and given to every output they serve (j = s - t for output
// row t), so TY x TX outputs read (TY + K - 1) * (K + TX - 1) values instead of TY * TX * K * K; for
// one output j still rises with s, so the order per pixel is unchanged. KT == 0: the side is k,
// each output by its own loops. On the device, with K + TX - 1 even, row + c must be 8-byte
// aligned (pitch and c even): the values are read in pairs.
template <int KT, int TY, int TX, class Weights>
GPSM_HD void filter_tile_block(const float* tile, int pitch, int c, int row0, const Weights& w, int k,
                               float (&acc)[TY][TX]) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int t = 0; t < TY; ++t)
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int u = 0; u < TX; ++u) acc[t][u] = 0.0f;
  if constexpr (KT > 0) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int s = 0; s < TY + KT - 1; ++s) {
      const float* row = tile + (row0 + s) * pitch + c;
      float v[KT + TX - 1];
#ifdef __CUDA_ARCH__
      if constexpr ((KT + TX - 1) % 2 == 0) {
        // Pairs: 8-byte shared loads, half the instructions and no 2-way bank conflict of a warp
        // reading every other word (the caller keeps pitch and c even, the tile 8-byte aligned).
#pragma unroll
        for (int i = 0; i < KT + TX - 1; i += 2) {
          const float2 q = *reinterpret_cast<const float2*>(row + i);
          v[i] = q.x;
          v[i + 1] = q.y;
        }
      } else {
#pragma unroll
        for (int i = 0; i < KT + TX - 1; ++i) v[i] = row[i];
      }
#else
      for (int i = 0; i < KT + TX - 1; ++i) v[i] = row[i];
#endif
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (int t = 0; t < TY; ++t) {
        const int j = s - t;
        if (j < 0 || j >= KT) continue;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
        for (int u = 0; u < TX; ++u)
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
          for (int i = 0; i < KT; ++i) acc[t][u] = add_rn(acc[t][u], mul_rn(w(j * KT + i), v[u + i]));
      }
    }
  } else {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int t = 0; t < TY; ++t)
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
      for (int u = 0; u < TX; ++u) {
        float a = 0.0f;
        for (int j = 0; j < k; ++j) {
          const float* row = tile + (row0 + t + j) * pitch + c + u;
          for (int i = 0; i < k; ++i) a = add_rn(a, mul_rn(w(j * k + i), row[i]));
        }
        acc[t][u] = a;
      }
  }
}

}  // namespace gpsm::apps::filter
