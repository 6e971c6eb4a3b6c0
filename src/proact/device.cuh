#pragma once
// Device pieces shared by the PROACT kernels: the producer block body, the readiness-counter
// epilogue (PROACT dissertation Algorithm 1) and the cooperative chunk copy.
#include <cstdint>

#include "gpsm/gps/sync.hpp"
#include "proact/chunk_math.hpp"
#include "proact/kernels.hpp"

namespace gpsm::proact::dev {

// Block b computes words [b * 1024, (b + 1) * 1024) of the slice, 4 per thread (one 16 B store),
// into the local replica and, for Track::inline_peers, every peer's.
template <bool Inline>
__device__ __forceinline__ void produce_block(const ProducerArgs& a, std::uint64_t b) {
  const std::uint64_t w = (b * kProducerThreads + threadIdx.x) * 4;
  if (w >= a.words) return;
  const std::uint64_t g = a.first_word + w;
  uint4 v;
  v.x = produce_value(g, a.seed, a.phase, a.work);
  v.y = produce_value(g + 1, a.seed, a.phase, a.work);
  v.z = produce_value(g + 2, a.seed, a.phase, a.work);
  v.w = produce_value(g + 3, a.seed, a.phase, a.work);
  reinterpret_cast<uint4*>(a.local)[w / 4] = v;
  if constexpr (Inline) {
    for (int p = 0; p < a.npeers; ++p) reinterpret_cast<uint4*>(a.peers[p])[w / 4] = v;
  }
}

// Algorithm 1, lines 3-8: after every thread of the block stored, thread 0 releases the block's
// stores and decrements each chunk counter the block writes; the block that takes a counter to
// zero acquires the other blocks' stores and calls on_ready(chunk). Returns after a block barrier.
template <class OnReady>
__device__ __forceinline__ void block_done(const ProducerArgs& a, std::uint64_t b, OnReady&& on_ready) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const ChunkGeometry g{a.words * 4, a.chunk_bytes, static_cast<std::uint64_t>(kProducerThreads) * 16};
    gps::fence_sys();  // release: this block's stores (cumulative over the barrier) before the decrement
    for (std::uint64_t c = g.first_chunk(b); c <= g.last_chunk(b); ++c) {
      if (atomicSub(&a.remaining[c], 1u) == 1u) {
        gps::fence_sys();  // acquire the other writers' releases before publishing readiness
        on_ready(c);
      }
    }
  }
}

// Copies words [begin, end) of src to every destination in mask, 16 B at a time, by `nthreads`
// cooperating threads (tid in [0, nthreads)). Loads bypass L1 (the data was produced by other SMs).
__device__ __forceinline__ void copy_chunk(const CopyArgs& a, std::uint64_t begin, std::uint64_t end,
                                           std::uint32_t mask, std::uint64_t tid, std::uint64_t nthreads) {
  const uint4* s = reinterpret_cast<const uint4*>(a.src);
  const std::uint64_t n = end / 4;
  std::uint64_t i = begin / 4 + tid;
  // Four loads in flight per thread before the stores: with one, a thread waits a whole L2 round
  // trip per 16 B and 1024 agent threads moved ~100 GB/s (4xH200, fbf3acec1ae0: persistent/1024t
  // 0.52x memcpy); the stores are posted and need no such help.
  for (; i + 3 * nthreads < n; i += 4 * nthreads) {
    const uint4 v0 = __ldcg(s + i), v1 = __ldcg(s + i + nthreads), v2 = __ldcg(s + i + 2 * nthreads),
                v3 = __ldcg(s + i + 3 * nthreads);
    for (int r = 0; r < kMaxPeers; ++r)
      if ((mask >> r) & 1u) {
        uint4* d = reinterpret_cast<uint4*>(a.dst[r]);
        d[i] = v0;
        d[i + nthreads] = v1;
        d[i + 2 * nthreads] = v2;
        d[i + 3 * nthreads] = v3;
      }
  }
  for (; i < n; i += nthreads) {
    const uint4 v = __ldcg(s + i);
    for (int r = 0; r < kMaxPeers; ++r)
      if ((mask >> r) & 1u) reinterpret_cast<uint4*>(a.dst[r])[i] = v;
  }
}

}  // namespace gpsm::proact::dev
