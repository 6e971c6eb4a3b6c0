#pragma once
// Small kernels several benchmark files launch.
#include <cstdint>

#include <cuda_runtime.h>

namespace gpsm::scope {

// Reads src with 16 B loads that bypass L1 and leaves one XOR per block in out (plain stores, so
// repeated launches leave the same value; the XOR of out proves every word was read correctly).
__global__ void xor_read_kernel(const uint4* __restrict__ src, size_t n, std::uint32_t* out);

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// XOR of the pattern words [0, words) with `seed` (the expected result of xor_read_kernel).
std::uint32_t pattern_xor(size_t words, unsigned seed);

// Launches xor_read_kernel on the current device and returns the XOR of all blocks (synchronous).
std::uint32_t xor_read(const void* src, size_t bytes, int blocks, cudaStream_t s);
// The same kernel, only launched (out: `blocks` words of device memory); xor_of reads them back
// (synchronous) and returns their XOR. For reads that must run on several GPUs at once.
void xor_read_launch(const void* src, size_t bytes, int blocks, std::uint32_t* out, cudaStream_t s);
std::uint32_t xor_of(const std::uint32_t* out, int blocks, cudaStream_t s);

}  // namespace gpsm::scope
