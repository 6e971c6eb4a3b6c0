// The persistent transfer agent (PROACT dissertation §2.3.3 "long-lived software threads"): warps
// that poll the chunks' ready flags and push each ready chunk to its destinations with peer stores.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "proact/device.cuh"

namespace gpsm::proact {

namespace {

constexpr int kAgentBlockThreads = 256;

// groups of warps_per_group warps; group g ships chunks g, g + groups, ... in order (the producer
// finishes chunks roughly in block order, so in-order polling rarely waits on a late chunk).
__global__ void persistent_agent(CopyArgs a, std::uint32_t warps_per_group) {
  const std::uint64_t gtid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t warp = gtid / 32, lane = gtid % 32;
  const std::uint64_t total_warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / 32;
  const std::uint64_t groups = total_warps / warps_per_group;
  const std::uint64_t group = warp / warps_per_group;
  if (group >= groups) return;
  const std::uint64_t tid = (warp % warps_per_group) * 32 + lane, nthreads = warps_per_group * 32ull;
  for (std::uint64_t c = group; c < a.chunks; c += groups) {
    if (lane == 0) gps::wait_geq_sys(&a.flags[c], a.phase, a.wait, "proact persistent agent: chunk ready flag");
    __syncwarp();
    const std::uint64_t begin = c * a.chunk_words;
    const std::uint64_t end = begin + a.chunk_words < a.words ? begin + a.chunk_words : a.words;
    dev::copy_chunk(a, begin, end, a.dest_mask[c], tid, nthreads);
  }
}

}  // namespace

void preload_persistent_agent() {
  cudaFuncAttributes fa{};
  GPSM_CUDA(cudaFuncGetAttributes(&fa, persistent_agent));
}

void launch_persistent_agent(const CopyArgs& a, int threads, cudaStream_t s) {
  const std::uint32_t warps = static_cast<std::uint32_t>(threads / 32);
  const std::uint32_t per_group = warps_per_group(warps, a.chunks);
  int block = kAgentBlockThreads;  // the largest of 256, 128, 64, 32 dividing threads: exactly `threads` run
  while (threads % block) block /= 2;
  persistent_agent<<<threads / block, block, 0, s>>>(a, per_group);
}

}  // namespace gpsm::proact
