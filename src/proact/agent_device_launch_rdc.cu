// The device-launch agent (PROACT dissertation §2.3.3 "dynamic kernel launches", Algorithm 1 line
// 15): the producer block that completes a chunk launches a copy kernel for it (CUDA dynamic
// parallelism, fire-and-forget stream). Relocatable device code: built as its own small target
// (gpsm_proact_cdp, src/CMakeLists.txt) with the device runtime.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "proact/device.cuh"

namespace gpsm::proact {

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

__global__ void warm_child(unsigned* done) { atomicAdd(done, 1u); }

__global__ void warm_parent(unsigned* done) { warm_child<<<1, 1, 0, cudaStreamFireAndForget>>>(done); }

}  // namespace

void preload_device_launch() {
  cudaFuncAttributes fa{};
  GPSM_CUDA(cudaFuncGetAttributes(&fa, producer_device_launch));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, chunk_copy_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, warm_parent));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, warm_child));
  unsigned* done = nullptr;
  GPSM_CUDA(cudaMalloc(&done, sizeof(unsigned)));
  GPSM_CUDA(cudaMemset(done, 0, sizeof(unsigned)));
  warm_parent<<<1, 1>>>(done);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  unsigned got = 0;
  if (e == cudaSuccess) e = cudaMemcpy(&got, done, sizeof(unsigned), cudaMemcpyDeviceToHost);
  cudaFree(done);
  GPSM_CUDA(e);
  if (got != 1) throw Error("gpsm proact: the device-launch warm-up's child kernel did not run");
}

void launch_producer_device_launch(const ProducerArgs& a, const CopyArgs& c, int threads, const LaunchTimes& t,
                                   cudaStream_t s) {
  unsigned block = 256;
  while (threads % block) block /= 2;
  const unsigned blocks = static_cast<unsigned>(ceil_div(a.words, kProducerThreads * 4));
  producer_device_launch<<<blocks, kProducerThreads, 0, s>>>(a, c, threads / block, block, t);
}

bool device_launch_built() { return true; }

}  // namespace gpsm::proact
