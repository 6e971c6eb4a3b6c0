#pragma once
// The finite-difference point update of fd3d, shared by the CPU reference and the GPU kernels
// (GPSM_HD), in one order of operations, so every paradigm's result is the reference's bit for bit.
//
// GPU-SM's kernel (GPU-SM paper, Listing 1) sums, for s = 1 .. R, 3 (left + right) + 2 (top +
// bottom) + 1 (back + front) onto the centre: 9 FLOPs per s (Table 1: 18, 36, 72, 144 for halos 2,
// 4, 8, 16). Those weights add up to 1 + 12 R, so iterating it grows the field by that factor per
// step and overflows float within a few dozen steps; fd3d divides every weight by 1 + 12 R (a
// weighted average: values stay inside the initial range for any number of steps). Per cell:
//   acc = w0 * c
//   for s = 1 .. R:  acc = acc + ((wx * (x-s + x+s) + wy * (y-s + y+s)) + wz * (z-s + z+s))
// 9 R + 1 FLOPs. Multiplications go through mul() (stencil_math.hpp: __fmul_rn on the device, never
// contracted into a fused multiply-add), so host and device round alike.
#include <cstdint>

#include "apps/stencil/stencil_math.hpp"  // mul, GPSM_HD

namespace gpsm::apps::fd3d {

struct FdWeights {
  float w0 = 0, wx = 0, wy = 0, wz = 0;
};

// GPU-SM's weights 1 (centre), 3 (x), 2 (y), 1 (z) over 1 + 12 R, each rounded once from double.
inline FdWeights fd_weights(int radius) {
  const double d = 1.0 + 12.0 * radius;
  return FdWeights{static_cast<float>(1.0 / d), static_cast<float>(3.0 / d), static_cast<float>(2.0 / d),
                   static_cast<float>(1.0 / d)};
}

// One s term added onto acc: the neighbours s cells away along x, y and z.
GPSM_HD float fd_term(const FdWeights& w, float acc, float xm, float xp, float ym, float yp, float zm, float zp) {
  return acc + ((mul(w.wx, xm + xp) + mul(w.wy, ym + yp)) + mul(w.wz, zm + zp));
}

// The whole update through an accessor: at(d, k) is the input k cells away from the updated cell
// along axis d (0 = x, 1 = y, 2 = z); R compile-time (the kernels) or not (the CPU reference).
template <class At>
GPSM_HD float fd_cell(const FdWeights& w, int radius, const At& at) {
  float acc = mul(w.w0, at(0, 0));
#if defined(__CUDA_ARCH__)
#pragma unroll  // R is a constant in the kernels: at()'s register-queue indices become static
#endif
  for (int s = 1; s <= radius; ++s) acc = fd_term(w, acc, at(0, -s), at(0, s), at(1, -s), at(1, s), at(2, -s), at(2, s));
  return acc;
}

// FLOPs per updated cell (the paper's 9 R plus the centre's multiply).
constexpr double fd_flops_per_cell(int radius) { return 9.0 * radius + 1.0; }

}  // namespace gpsm::apps::fd3d
