// Trust, then verify: peer access can be reported and still corrupt data on some PCIe/IOMMU
// set-ups, so a context checks every ordered pair with a pattern before any replica relies on it.
#include <string>

#include "runtime/runtime_state.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "common/device.hpp"

namespace gpsm::gps::detail {

std::string verify_peer_pair(int a, int b, std::uint64_t words, cudaStream_t sa, cudaStream_t sb) {
  const std::size_t bytes = words * sizeof(std::uint32_t);
  DevBuf<std::uint32_t> a_buf, b_buf;
  a_buf.alloc(a, words);
  b_buf.alloc(b, words);
  const unsigned seed = 0x5EED0000u + static_cast<unsigned>(a * 64 + b);
  std::string out;
  auto note = [&](const char* how, unsigned long long n) {
    if (n == 0) return;
    if (!out.empty()) out += "; ";
    out += std::to_string(n) + " of " + std::to_string(words) + " words wrong after " + how;
  };
  auto check_on = [&](int dev, const void* p, unsigned s, cudaStream_t st) {
    DeviceGuard g(dev);
    return check_pattern_device(p, bytes, s, st);
  };

  {  // 1. stores issued on a into b's memory, checked on b
    DeviceGuard gb(b);
    GPSM_CUDA(cudaMemsetAsync(b_buf.p, 0, bytes, sb));
    GPSM_CUDA(cudaStreamSynchronize(sb));
    DeviceGuard ga(a);
    fill_pattern_device(b_buf.p, bytes, seed, sa);
    GPSM_CUDA(cudaStreamSynchronize(sa));
  }
  note("peer stores", check_on(b, b_buf.p, seed, sb));
  // 2. loads issued on a from b's memory (b holds the pattern now)
  note("peer loads", check_on(a, b_buf.p, seed, sa));
  {  // 3. copy engine a -> b
    DeviceGuard ga(a);
    fill_pattern_device(a_buf.p, bytes, seed ^ 0xFFFFu, sa);
    GPSM_CUDA(cudaMemcpyPeerAsync(b_buf.p, b, a_buf.p, a, bytes, sa));
    GPSM_CUDA(cudaStreamSynchronize(sa));
  }
  note("a copy-engine copy", check_on(b, b_buf.p, seed ^ 0xFFFFu, sb));
  return out;
}

}  // namespace gpsm::gps::detail
