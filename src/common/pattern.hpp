#pragma once
// Pseudo-random data pattern shared by host and device: buffers are filled with it before a timed
// run and checked after (untimed), so a benchmark never reports a time for bytes that did not move.
#include <cstdint>

#ifndef GPSM_HD
#ifdef __CUDACC__
#define GPSM_HD __host__ __device__ __forceinline__
#else
#define GPSM_HD inline
#endif
#endif

namespace gpsm {

// 32-bit mix of (word index, seed): cheap (a few integer ops, so store/load kernels stay
// bandwidth-bound), varies in every bit, and odd, so a zeroed (poisoned) word never matches.
GPSM_HD std::uint32_t pattern_word(std::uint64_t i, std::uint32_t seed) {
  std::uint32_t x = static_cast<std::uint32_t>(i) ^ (static_cast<std::uint32_t>(i >> 32) * 0x85EBCA6Bu) ^ seed;
  x *= 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 13;
  return x | 1u;
}

}  // namespace gpsm
