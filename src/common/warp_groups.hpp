#pragma once
// Sharing copy warps among chunks, for the transfer agents that poll chunks' readiness (the
// PROACT engine's persistent agent and the GPS runtime's decoupled agent). CUDA-free.
#include <cstdint>

namespace gpsm {

// The agent's warps form groups of warps_per_group warps; group g ships chunks g, g + groups, ...
// While there are at least twice as many warps per group as chunks to spare, the groups double
// in size, so that about as many groups as chunks share the warps (a chunk of 16 MiB is not
// copied by one warp while others idle); with more chunks than warps, a warp each.
#if defined(__CUDACC__)
__host__ __device__
#endif
inline std::uint32_t warps_per_group(std::uint32_t warps, std::uint64_t chunks) {
  std::uint32_t per_group = 1;
  while (per_group * 2 <= warps && static_cast<std::uint64_t>(warps / (per_group * 2)) >= chunks) per_group *= 2;
  return per_group;
}

}  // namespace gpsm
