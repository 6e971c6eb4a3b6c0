// The device-launch agent (seed 000 §2.3.3 "dynamic kernel launches", Algorithm 1 line 15): the
// producer block that completes a chunk launches a copy kernel for it (CUDA dynamic parallelism,
// fire-and-forget stream). Relocatable device code: built as its own small target
// (gpsm_proact_cdp, src/CMakeLists.txt) with the device runtime.
#include <cuda_runtime.h>

#include "transfer/device.cuh"

namespace gpsm::transfer {

namespace {

__device__ __forceinline__ void note_time(unsigned long long* t) { atomicMax(t, gps::globaltimer_ns()); }

__global__ void chunk_copy_kernel(CopyArgs a, std::uint64_t c, unsigned long long* times) {
  const std::uint64_t begin = c * a.chunk_words;
  const std::uint64_t end = begin + a.chunk_words < a.words ? begin + a.chunk_words : a.words;
  dev::copy_chunk(a, begin, end, a.dest_mask[c], blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x,
                  static_cast<std::uint64_t>(gridDim.x) * blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence_system();
    note_time(&times[1]);
  }
}

__global__ void __launch_bounds__(kProducerThreads)
    producer_device_launch(ProducerArgs a, CopyArgs c, unsigned grid, unsigned block, LaunchTimes t) {
  const std::uint64_t b = blockIdx.x;
  dev::produce_block<false>(a, b);
  __syncthreads();
  if (threadIdx.x == 0) note_time(&t.times[0]);
  dev::block_done(a, b, [&](std::uint64_t chunk) {
    if (c.dest_mask[chunk] == 0) return;
    chunk_copy_kernel<<<grid, block, 0, cudaStreamFireAndForget>>>(c, chunk, t.times);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess && atomicCAS(&t.error[0], 0u, static_cast<unsigned>(e) + 1u) == 0u)
      t.error[1] = static_cast<unsigned>(chunk);
  });
}

}  // namespace

void launch_producer_device_launch(const ProducerArgs& a, const CopyArgs& c, int threads, const LaunchTimes& t,
                                   cudaStream_t s) {
  unsigned block = 256;
  while (threads % block) block /= 2;
  const unsigned blocks = static_cast<unsigned>(ceil_div(a.words, kProducerThreads * 4));
  producer_device_launch<<<blocks, kProducerThreads, 0, s>>>(a, c, threads / block, block, t);
}

bool device_launch_built() { return true; }

}  // namespace gpsm::transfer
