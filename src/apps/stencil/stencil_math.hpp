#pragma once
// Point updates of the three stencil apps, shared by the CPU references and the GPU kernels
// (GPSM_HD): both sides run the same arithmetic in the same order, so the verification error
// measures communication mistakes, not rounding differences.
//
//   jacobi2d  NVIDIA's multi-gpu-programming-models Jacobi: float, 5-point average,
//             new = 0.25 * (east + west + south + north), added in that order.
//   heat3d    7-point explicit diffusion: new = c + alpha * ((xm + xp) + (ym + yp) + (zm + zp) - 6c).
//   wave3d    4th-order 13-point star, leapfrog in time:
//             next = 2c - prev + k * (lap_x + lap_y + lap_z),
//             lap_a = -1/12 (a-2 + a+2) + 4/3 (a-1 + a+1) - 5/2 c  (unit grid spacing).
// The order of operations is fixed by parentheses, and multiplications go through mul(), which is
// __fmul_rn on the device: nvcc never contracts it into a fused multiply-add, and the host build
// (x86-64 without -mfma) has none, so both sides round the same way.
#include <cmath>
#include <cstdint>

#include "gpsm/gps/config.hpp"  // GPSM_HD

namespace gpsm::apps {

GPSM_HD float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

constexpr float kHeatAlpha = 0.125f;     // stable for alpha <= 1/6
constexpr float kWaveK = 0.1f;           // (c dt / dx)^2; stable well below the 3D 4th-order limit
constexpr float kWaveC1 = 4.0f / 3.0f;   // 4th-order second-derivative weights
constexpr float kWaveC2 = -1.0f / 12.0f;
constexpr float kWaveC0 = -5.0f / 2.0f;

GPSM_HD float jacobi_point(float east, float west, float south, float north) {
  return mul(0.25f, ((east + west) + south) + north);
}

GPSM_HD float heat_point(float c, float xm, float xp, float ym, float yp, float zm, float zp) {
  return c + mul(kHeatAlpha, (((xm + xp) + (ym + yp)) + (zm + zp)) - mul(6.0f, c));
}

// One axis of the 4th-order Laplacian: m2, m1 = the two neighbours below, p1, p2 above.
GPSM_HD float wave_axis(float m2, float m1, float c, float p1, float p2) {
  return (mul(kWaveC2, m2 + p2) + mul(kWaveC1, m1 + p1)) + mul(kWaveC0, c);
}
GPSM_HD float wave_point(float prev, float c, float lx, float ly, float lz) {
  return (mul(2.0f, c) - prev) + mul(kWaveK, (lx + ly) + lz);
}

// The same 3D updates through an accessor: at(d, k) is the input k cells away from the updated
// cell along axis d (0 = x, 1 = y, 2 = z). For kernels whose inputs are not one plain array (the
// neighbours' memory, GPS replicas); the values and their order are heat_point's and wave_point's.
template <class At>
GPSM_HD float heat_cell(const At& at) {
  return heat_point(at(0, 0), at(0, -1), at(0, 1), at(1, -1), at(1, 1), at(2, -1), at(2, 1));
}
template <class At>
GPSM_HD float wave_cell(float prev, const At& at) {
  const float c = at(0, 0);
  const float lx = wave_axis(at(0, -2), at(0, -1), c, at(0, 1), at(0, 2));
  const float ly = wave_axis(at(1, -2), at(1, -1), c, at(1, 1), at(1, 2));
  const float lz = wave_axis(at(2, -2), at(2, -1), c, at(2, 1), at(2, 2));
  return wave_point(prev, c, lx, ly, lz);
}

// Left/right boundary of Jacobi row iy (global index) in a grid of ny rows, as NVIDIA's code
// computes it: sin(2 pi iy / (ny - 1)) in double, stored as float.
inline float jacobi_boundary(std::int64_t iy, std::int64_t ny) {
  const double pi = 2.0 * std::asin(1.0);
  return static_cast<float>(std::sin(2.0 * pi * static_cast<double>(iy) / static_cast<double>(ny - 1)));
}

// Deterministic, never-all-zero initial values of the 3D apps: a hash of (global cell, seed)
// mapped to [0.25, 1.25) (never zero, so a cell that is never written cannot pass as correct).
GPSM_HD float initial_value(std::uint64_t cell, std::uint32_t seed) {
  std::uint64_t z = cell * 0x9E3779B97F4A7C15ull + (static_cast<std::uint64_t>(seed) << 32 | 0x5bd1e995u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return 0.25f + static_cast<float>(static_cast<std::uint32_t>(z >> 40)) * (1.0f / 16777216.0f);
}

}  // namespace gpsm::apps
