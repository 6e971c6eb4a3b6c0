#pragma once
// The synthetic producer's values (PROACT dissertation §2.4.3), shared by the producer kernel, the
// verifier and the host tests. CUDA-free.
#include <cstdint>

#include "gpsm/gps/config.hpp"  // GPSM_HD

namespace gpsm::proact {

// The value of word i (global index in the array) in phase `phase`: `work` dependent hash rounds,
// the compute per word the run time calibrates. Every phase's values differ, so stale data from an
// earlier rep never passes verification.
GPSM_HD std::uint32_t produce_value(std::uint64_t i, std::uint32_t seed, std::uint32_t phase, std::uint32_t work) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 0x9E3779B1u ^ static_cast<std::uint32_t>(i >> 32) * 0x85EBCA77u ^
                    seed * 0xC2B2AE3Du ^ phase * 0x27D4EB2Fu;
  for (std::uint32_t k = 0; k < work; ++k) {
    x = x * 1664525u + 1013904223u;
    x ^= x >> 13;
  }
  return x ^ (x >> 16);
}

}  // namespace gpsm::proact
