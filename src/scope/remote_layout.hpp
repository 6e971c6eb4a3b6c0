#pragma once
// Which elements of the remote-access study's matrices live on the other GPU (the GPU-SM paper's
// §4 microbenchmarks, Fig 5), and the arithmetic each thread does on its datum. Shared by the
// kernels (remote_kernels.cu) and the host code that plans, traces and checks them, so both sides
// agree on every element.
//
// The matrix is n x n, row-major; a 2D grid of kBlockX x kBlockY threads per block covers it, one
// element per thread, blocks launched x fastest (the order the hardware schedules them in). The
// first `cut` rows (batch: the first blocks all access remote memory at once, Fig 5a) or the
// first `cut` columns (spread: every row of blocks has a few remote blocks, Fig 5b) are remote.
#include <math.h>

#include <cstdint>

#include "common/pattern.hpp"  // GPSM_HD

namespace gpsm::scope::remote {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr int kThreads = kBlockX * kBlockY;

enum class Distribution { batch, spread };

GPSM_HD bool is_remote(Distribution d, std::uint32_t x, std::uint32_t y, std::uint32_t cut) {
  return (d == Distribution::batch ? y : x) < cut;
}

// Remote rows or columns for `percent` % of n (rounded to the nearest whole row or column).
std::uint32_t cut_for_percent(std::uint32_t n, double percent);

// The datum's work: flops / 2 dependent fused multiply-adds (each two FLOPs), rounded once each, so
// the host (std::fma) and the device (fmaf) give the same bits.
GPSM_HD float work(float v, int flops) {
  for (int k = 0; k < flops / 2; ++k) v = fmaf(v, 0.999f, 0.001f);
  return v;
}

// Input values: a float in [1, 2) from the data pattern (finite whatever the work does to it).
GPSM_HD float input_value(std::uint64_t i, std::uint32_t seed) {
  return 1.0f + float(pattern_word(i, seed) >> 8) * (1.0f / 16777216.0f);
}

}  // namespace gpsm::scope::remote
