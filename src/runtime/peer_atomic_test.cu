// The actual cross-GPU atomic test of a context's creation (runtime/peer_atomics.hpp): device `a`
// adds to a 64-bit counter and increments a 32-bit word by compare-and-swap in device `b`'s
// memory, at system scope, while `b` does the same locally; the totals must be exact. A peer
// link that does not perform the atomics at the memory loses updates.
#include <string>

#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "common/device.hpp"
#include "runtime/runtime_state.hpp"

namespace gpsm::gps::detail {
namespace {

// Every thread adds kRepeats times; one lane per warp increments by compare-and-swap (a CAS
// storm of every thread across the link would take milliseconds per pair).
constexpr int kBlocks = 8, kThreads = 128, kRepeats = 32, kCasRepeats = 4;

__global__ void hammer(unsigned long long* sum, unsigned* cas_word) {
  for (int i = 0; i < kRepeats; ++i) atomicAdd_system(sum, 1ull);
  if (threadIdx.x % 32 != 0) return;
  for (int i = 0; i < kCasRepeats; ++i) {
    unsigned seen = atomicCAS_system(cas_word, 0u, 0u);
    for (;;) {
      const unsigned got = atomicCAS_system(cas_word, seen, seen + 1u);
      if (got == seen) break;
      seen = got;
    }
  }
}

}  // namespace

std::string test_peer_atomics(int a, int b, cudaStream_t sa, cudaStream_t sb) {
  DevBuf<unsigned long long> sum;
  DevBuf<unsigned> word;
  sum.alloc(b, 1);
  word.alloc(b, 1);
  {
    DeviceGuard gb(b);
    GPSM_CUDA(cudaMemsetAsync(sum.p, 0, sizeof(unsigned long long), sb));
    GPSM_CUDA(cudaMemsetAsync(word.p, 0, sizeof(unsigned), sb));
    GPSM_CUDA(cudaStreamSynchronize(sb));
    hammer<<<kBlocks, kThreads, 0, sb>>>(sum.p, word.p);  // b's own atomics, concurrent with a's
    GPSM_CUDA_LAUNCH();
  }
  {
    DeviceGuard ga(a);
    hammer<<<kBlocks, kThreads, 0, sa>>>(sum.p, word.p);
    GPSM_CUDA_LAUNCH();
    GPSM_CUDA(cudaStreamSynchronize(sa));
  }
  unsigned long long got_sum = 0;
  unsigned got_word = 0;
  {
    DeviceGuard gb(b);
    GPSM_CUDA(cudaStreamSynchronize(sb));
    GPSM_CUDA(cudaMemcpy(&got_sum, sum.p, sizeof(got_sum), cudaMemcpyDeviceToHost));
    GPSM_CUDA(cudaMemcpy(&got_word, word.p, sizeof(got_word), cudaMemcpyDeviceToHost));
  }
  const unsigned long long want = 2ull * kBlocks * kThreads * kRepeats;
  const unsigned want_word = 2u * kBlocks * (kThreads / 32) * kCasRepeats;
  std::string out;
  if (got_sum != want)
    out = "a cross-GPU test's 64-bit atomic adds totalled " + std::to_string(got_sum) + " of " + std::to_string(want);
  if (got_word != want_word)
    out += (out.empty() ? "a cross-GPU test's" : ", its") + std::string(" 32-bit compare-and-swap increments totalled ") +
           std::to_string(got_word) + " of " + std::to_string(want_word);
  return out;
}

}  // namespace gpsm::gps::detail
