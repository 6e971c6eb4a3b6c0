// The synthetic producer (PROACT dissertation §2.4.3) with its tracking variants, the verifier and
// the gate.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "proact/device.cuh"

namespace gpsm::proact {

namespace {

template <Track T>
__global__ void __launch_bounds__(kProducerThreads) producer_kernel(ProducerArgs a) {
  const std::uint64_t b = blockIdx.x;
  dev::produce_block<T == Track::inline_peers>(a, b);
  if constexpr (T == Track::counters)
    dev::block_done(a, b, [&](std::uint64_t c) { gps::st_release_sys(&a.flags[c], a.phase); });
}

__global__ void verify_kernel(const std::uint32_t* dst, std::uint64_t words, std::uint64_t first_word,
                              std::uint32_t seed, std::uint32_t phase, std::uint32_t work, unsigned long long* out) {
  unsigned long long bad = 0, first = ~0ull;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    if (__ldcg(dst + i) != produce_value(first_word + i, seed, phase, work)) {
      ++bad;
      if (i < first) first = i;
    }
  }
  if (bad) {
    atomicAdd(&out[0], bad);
    atomicMin(&out[1], first);
  }
}

// Bounded like gps::wait_geq_sys, but a timeout opens the gate instead of trapping: the run then
// drains (nothing waits on the host any more) and the host, seeing *timed_out, fails the run
// without losing the device context (e.g. when enqueueing blocked the host past the timeout).
__global__ void gate_kernel(const std::uint32_t* go, std::uint32_t value, std::uint64_t timeout_ns,
                            std::uint32_t* timed_out) {
  const std::uint64_t start = gps::globaltimer_ns();
  for (unsigned spin = 0; gps::ld_acquire_sys(go) < value; ++spin) {
    if ((spin & 63u) == 63u && gps::globaltimer_ns() - start > timeout_ns) {
      gps::st_release_sys(timed_out, value);
      return;
    }
  }
}

}  // namespace

void preload_producer_kernels() {
  cudaFuncAttributes fa{};
  GPSM_CUDA(cudaFuncGetAttributes(&fa, producer_kernel<Track::none>));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, producer_kernel<Track::counters>));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, producer_kernel<Track::inline_peers>));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, verify_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&fa, gate_kernel));
}

void launch_producer(Track t, const ProducerArgs& a, cudaStream_t s) {
  const unsigned blocks = static_cast<unsigned>(ceil_div(a.words, kProducerThreads * 4));
  switch (t) {
    case Track::none: producer_kernel<Track::none><<<blocks, kProducerThreads, 0, s>>>(a); break;
    case Track::counters: producer_kernel<Track::counters><<<blocks, kProducerThreads, 0, s>>>(a); break;
    case Track::inline_peers: producer_kernel<Track::inline_peers><<<blocks, kProducerThreads, 0, s>>>(a); break;
  }
}

void launch_verify(const std::uint32_t* dst, std::uint64_t words, std::uint64_t first_word, std::uint32_t seed,
                   std::uint32_t phase, std::uint32_t work, unsigned long long* out, cudaStream_t s) {
  cudaMemsetAsync(out, 0, sizeof(unsigned long long), s);                  // bad words
  cudaMemsetAsync(out + 1, 0xFF, sizeof(unsigned long long), s);           // first bad word: none
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>(ceil_div(words, 256), 8192));
  verify_kernel<<<blocks, 256, 0, s>>>(dst, words, first_word, seed, phase, work, out);
}

void launch_gate(const std::uint32_t* go, std::uint32_t value, std::uint64_t timeout_ns, std::uint32_t* timed_out,
                 cudaStream_t s) {
  gate_kernel<<<1, 1, 0, s>>>(go, value, timeout_ns, timed_out);
}

}  // namespace gpsm::proact
