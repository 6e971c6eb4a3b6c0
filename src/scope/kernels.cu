#include "scope/kernels.cuh"

#include <vector>

#include "common/cuda_check.hpp"
#include "common/pattern.hpp"

namespace gpsm::scope {

__global__ void xor_read_kernel(const uint4* __restrict__ src, size_t n, std::uint32_t* out) {
  std::uint32_t acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ std::uint32_t warp_acc[32];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t b = 0;
    for (int w = 0; w < (int)(blockDim.x + 31) / 32; ++w) b ^= warp_acc[w];
    out[blockIdx.x] = b;
  }
}

std::uint32_t pattern_xor(size_t words, unsigned seed) {
  std::uint32_t x = 0;
  for (size_t w = 0; w < words; ++w) x ^= pattern_word(w, seed);
  return x;
}

void xor_read_launch(const void* src, size_t bytes, int blocks, std::uint32_t* out, cudaStream_t s) {
  xor_read_kernel<<<blocks, 512, 0, s>>>(static_cast<const uint4*>(src), bytes / 16, out);
  GPSM_CUDA_LAUNCH();
}

namespace {
// Enqueues the copy of the per-block XORs to the host (h: blocks words); after a sync, fold(h).
void enqueue_xors(const std::uint32_t* out, int blocks, std::vector<std::uint32_t>& h, cudaStream_t s) {
  h.resize(blocks);
  GPSM_CUDA(cudaMemcpyAsync(h.data(), out, blocks * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
}
std::uint32_t fold(const std::vector<std::uint32_t>& h) {
  std::uint32_t x = 0;
  for (auto v : h) x ^= v;
  return x;
}
}  // namespace

std::uint32_t xor_of(const std::uint32_t* out, int blocks, cudaStream_t s) {
  std::vector<std::uint32_t> h;
  enqueue_xors(out, blocks, h, s);
  GPSM_CUDA(cudaStreamSynchronize(s));
  return fold(h);
}

// One sync for the read-back and the free: um_fault times this whole call.
std::uint32_t xor_read(const void* src, size_t bytes, int blocks, cudaStream_t s) {
  std::uint32_t* out = nullptr;
  GPSM_CUDA(cudaMallocAsync(&out, blocks * sizeof(std::uint32_t), s));
  xor_read_launch(src, bytes, blocks, out, s);
  std::vector<std::uint32_t> h;
  enqueue_xors(out, blocks, h, s);
  GPSM_CUDA(cudaFreeAsync(out, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
  return fold(h);
}

}  // namespace gpsm::scope
