// Trust, then verify: peer access can be reported and still corrupt data on some PCIe/IOMMU
// set-ups, so a context checks every ordered pair with a pattern before any replica relies on it.
#include <string>

#include "runtime/runtime_state.hpp"
#include "scope/cuda_check.hpp"
#include "scope/pattern.hpp"

namespace gpsm::gps::detail {
namespace {

__global__ void fill_kernel(std::uint32_t* dst, std::uint64_t n, std::uint32_t seed) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = gpsm::scope::pattern_word(i, seed);
}

__global__ void check_kernel(const std::uint32_t* src, std::uint64_t n, std::uint32_t seed, unsigned long long* bad) {
  unsigned long long mine = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    mine += src[i] != gpsm::scope::pattern_word(i, seed);
  if (mine != 0) atomicAdd(bad, mine);
}

struct DevBuf {
  int dev;
  void* p = nullptr;
  DevBuf(int d, std::size_t bytes) : dev(d) {
    GPSM_CUDA(cudaSetDevice(d));
    GPSM_CUDA(cudaMalloc(&p, bytes));
  }
  ~DevBuf() {
    cudaSetDevice(dev);
    cudaFree(p);
  }
  template <class U>
  U* as() const {
    return static_cast<U*>(p);
  }
};

unsigned long long run_check(int dev, const std::uint32_t* src, std::uint64_t n, std::uint32_t seed, cudaStream_t s,
                             unsigned long long* bad) {
  GPSM_CUDA(cudaSetDevice(dev));
  GPSM_CUDA(cudaMemsetAsync(bad, 0, sizeof(*bad), s));
  check_kernel<<<64, 256, 0, s>>>(src, n, seed, bad);
  GPSM_CUDA_LAUNCH();
  unsigned long long h = 0;
  GPSM_CUDA(cudaMemcpyAsync(&h, bad, sizeof(h), cudaMemcpyDeviceToHost, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
  return h;
}

}  // namespace

std::string verify_peer_pair(int a, int b, std::uint64_t words, cudaStream_t sa, cudaStream_t sb) {
  const std::size_t bytes = words * sizeof(std::uint32_t);
  DevBuf on_a(a, bytes), on_b(b, bytes), bad_a(a, sizeof(unsigned long long)), bad_b(b, sizeof(unsigned long long));
  const std::uint32_t seed = 0x5EED0000u + static_cast<std::uint32_t>(a * 64 + b);
  std::string out;
  auto note = [&](const char* how, unsigned long long n) {
    if (n == 0) return;
    if (!out.empty()) out += "; ";
    out += std::to_string(n) + " of " + std::to_string(words) + " words wrong after " + how;
  };

  // 1. stores issued on a into b's memory, checked on b
  GPSM_CUDA(cudaSetDevice(b));
  GPSM_CUDA(cudaMemsetAsync(on_b.p, 0, bytes, sb));
  GPSM_CUDA(cudaStreamSynchronize(sb));
  GPSM_CUDA(cudaSetDevice(a));
  fill_kernel<<<64, 256, 0, sa>>>(on_b.as<std::uint32_t>(), words, seed);
  GPSM_CUDA_LAUNCH();
  GPSM_CUDA(cudaStreamSynchronize(sa));
  note("peer stores", run_check(b, on_b.as<std::uint32_t>(), words, seed, sb, bad_b.as<unsigned long long>()));

  // 2. loads issued on a from b's memory (b holds the pattern now)
  note("peer loads", run_check(a, on_b.as<std::uint32_t>(), words, seed, sa, bad_a.as<unsigned long long>()));

  // 3. copy engine a -> b
  GPSM_CUDA(cudaSetDevice(a));
  fill_kernel<<<64, 256, 0, sa>>>(on_a.as<std::uint32_t>(), words, seed ^ 0xFFFFu);
  GPSM_CUDA_LAUNCH();
  GPSM_CUDA(cudaMemcpyPeerAsync(on_b.p, b, on_a.p, a, bytes, sa));
  GPSM_CUDA(cudaStreamSynchronize(sa));
  note("a copy-engine copy", run_check(b, on_b.as<std::uint32_t>(), words, seed ^ 0xFFFFu, sb, bad_b.as<unsigned long long>()));
  return out;
}

}  // namespace gpsm::gps::detail
