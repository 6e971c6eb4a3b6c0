#pragma once
// splitmix64 (Steele, Lea, Flood 2014): the one 64-bit mixing function behind every
// deterministic, seed-derived value (graph generators, graph-app initial factors,
// publish-benchmark patterns, the simulator's scatter targets, gpsm scope's random gathers, on
// the GPU too). Plain C++; host and device under nvcc.
#include <cstdint>

#ifdef __CUDACC__
#define GPSM_SPLITMIX_HD __host__ __device__
#else
#define GPSM_SPLITMIX_HD
#endif

namespace gpsm {

GPSM_SPLITMIX_HD inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace gpsm
