#include "common/device.hpp"

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/pattern.hpp"

namespace gpsm {

namespace {

__global__ void fill_kernel(std::uint32_t* p, size_t words, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
    p[i] = pattern_word(i, seed);
}

__global__ void check_kernel(const std::uint32_t* p, size_t words, unsigned seed, std::uint32_t add,
                             unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
    local += (p[i] != pattern_word(i, seed) + add);
  if (local) atomicAdd(bad, local);
}

int grid_for(size_t words) {
  return static_cast<int>(std::min<size_t>((words + 255) / 256, 4096));
}

}  // namespace

DeviceGuard::DeviceGuard(int dev) {
  GPSM_CUDA(cudaGetDevice(&prev));
  GPSM_CUDA(cudaSetDevice(dev));
}
DeviceGuard::~DeviceGuard() { cudaSetDevice(prev); }

void fill_pattern_device(void* p, size_t bytes, unsigned seed, cudaStream_t s) {
  const size_t words = bytes / 4;
  fill_kernel<<<grid_for(words), 256, 0, s>>>(static_cast<std::uint32_t*>(p), words, seed);
  GPSM_CUDA_LAUNCH();
}

unsigned long long check_pattern_device(const void* p, size_t bytes, unsigned seed, cudaStream_t s, std::uint32_t add) {
  const size_t words = bytes / 4;
  unsigned long long* bad = nullptr;
  GPSM_CUDA(cudaMallocAsync(&bad, sizeof(*bad), s));
  GPSM_CUDA(cudaMemsetAsync(bad, 0, sizeof(*bad), s));
  check_kernel<<<grid_for(words), 256, 0, s>>>(static_cast<const std::uint32_t*>(p), words, seed, add, bad);
  GPSM_CUDA_LAUNCH();
  unsigned long long h = 0;
  GPSM_CUDA(cudaMemcpyAsync(&h, bad, sizeof(h), cudaMemcpyDeviceToHost, s));
  GPSM_CUDA(cudaFreeAsync(bad, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
  return h;
}

void fill_pattern_host(void* p, size_t bytes, unsigned seed) {
  auto* w = static_cast<std::uint32_t*>(p);
  const size_t words = bytes / 4;
  for (size_t i = 0; i < words; ++i) w[i] = pattern_word(i, seed);
}

unsigned long long check_pattern_host(const void* p, size_t bytes, unsigned seed) {
  const auto* w = static_cast<const std::uint32_t*>(p);
  const size_t words = bytes / 4;
  unsigned long long bad = 0;
  for (size_t i = 0; i < words; ++i) bad += (w[i] != pattern_word(i, seed));
  return bad;
}

bool enable_peer(int src, int dst, std::string* why) {
  int can = 0;
  GPSM_CUDA(cudaDeviceCanAccessPeer(&can, src, dst));
  if (!can) {
    if (why) *why = "device " + std::to_string(src) + " cannot access device " + std::to_string(dst) + " as a peer";
    return false;
  }
  DeviceGuard g(src);
  cudaError_t e = cudaDeviceEnablePeerAccess(dst, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();
    return true;
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string("cudaDeviceEnablePeerAccess(") + std::to_string(src) + "->" + std::to_string(dst) + "): " + cudaGetErrorString(e);
    return false;
  }
  return true;
}

void disable_peer(int src, int dst) {
  DeviceGuard g(src);
  cudaError_t e = cudaDeviceDisablePeerAccess(dst);
  if (e == cudaErrorPeerAccessNotEnabled) cudaGetLastError();
  else GPSM_CUDA(e);
}

}  // namespace gpsm
