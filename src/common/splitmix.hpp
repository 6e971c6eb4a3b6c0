#pragma once
// splitmix64 (Steele, Lea, Flood 2014): the one 64-bit mixing function behind every
// deterministic, seed-derived value on the host (graph generators, graph-app initial factors,
// publish-benchmark patterns, the simulator's scatter targets). Plain C++.
#include <cstdint>

namespace gpsm {

inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace gpsm
