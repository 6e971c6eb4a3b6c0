#pragma once
// Device pieces of the decoupled publish mode (PROACT inside GPS), shared by View's store path
// (the inline agent: the warp whose store completes a chunk pushes it) and the runtime's
// persistent agent kernel. A push copies only the words this device marked dirty in the chunk:
// another device may have stored other words of the same chunk, and those must not be
// overwritten with this replica's stale copy.
#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/sync.hpp"  // ld_acquire_gpu

namespace gpsm::gps {

struct LinkCounters;

#if defined(__CUDACC__)
namespace detail {

// Algorithm 1's counter update as one instruction: the release orders every store the warp made
// (after __syncwarp) before the count, and the acquire lets the completing warp read the stores
// of every warp counted before it.
__device__ __forceinline__ unsigned long long add_acq_rel_gpu(unsigned long long* p, unsigned long long v) {
  unsigned long long old;
  asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
__device__ __forceinline__ void st_release_gpu(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Pushes the dirty words of bytes [begin, end) (whole lines) of `src` to replica dst[d] of each
// device d in `others`, 16 bytes per store where all four words of a 16-byte unit are dirty, by
// `nthreads` cooperating threads (tid in [0, nthreads)). Loads go to L2 (__ldcg): other SMs
// stored the data, and this SM's L1 may hold an older copy of the line. Returns the dirty bytes
// this thread moved (per destination), for the link counters.
// One unit per round, its data load behind the dirty test: this runs inside the user's kernel
// (the inline agent), whose registers are that kernel's whole budget. Loading ahead as
// push_dirty_batched does made ptxas (sm_90) spill in Jacobi's persistent GPS kernel, even at one
// unit a round (0 -> 100-124 bytes), though that kernel never publishes in decoupled mode: the
// mode is chosen at run time, so every View kernel carries the path. (Jacobi's gps on 4xH200 ran
// 10-15 % slower with it on 2026-11-29; not A/B-tested.)
__device__ __forceinline__ unsigned long long push_dirty(const char* src, char* const* dst, std::uint32_t others,
                                                         const std::uint32_t* dirty, std::uint64_t begin,
                                                         std::uint64_t end, unsigned tid, unsigned nthreads) {
  const uint4* s = reinterpret_cast<const uint4*>(src);
  unsigned long long moved = 0;
  for (std::uint64_t q = begin / 16 + tid; q < end / 16; q += nthreads) {
    const std::uint32_t bits = (__ldcg(dirty + q / 8) >> ((q % 8) * 4)) & 0xFu;
    if (bits == 0u) continue;
    const uint4 v = __ldcg(s + q);
    for (std::uint32_t o = others; o != 0u; o &= o - 1u) {
      const int d = __ffs(o) - 1;
      if (bits == 0xFu) {
        reinterpret_cast<uint4*>(dst[d])[q] = v;
      } else {
        std::uint32_t* w = reinterpret_cast<std::uint32_t*>(dst[d]) + q * 4;
        if (bits & 1u) w[0] = v.x;
        if (bits & 2u) w[1] = v.y;
        if (bits & 4u) w[2] = v.z;
        if (bits & 8u) w[3] = v.w;
      }
    }
    moved += 4u * static_cast<unsigned>(__popc(bits));
  }
  return moved;
}

// push_dirty for a kernel of its own (the persistent agent): each thread takes kUnroll 16-byte
// units per round, their dirty words and data loaded before any of them is sent (the data whether
// or not it is dirty, so its load need not wait for the dirty word's); a round's units stay
// warp-contiguous (unit q0 + u * nthreads + tid), so a warp's store fills whole lines. Measured
// once (4xH200, gpsm publish coalesced, kUnroll 8 here and 2 in the inline agent then): decoupled
// 1.32 ms with the persistent agent, 2.61 with the inline one, combine 1.17; no A/B of the batching.
template <int kUnroll>
__device__ __forceinline__ unsigned long long push_dirty_batched(const char* src, char* const* dst,
                                                                 std::uint32_t others, const std::uint32_t* dirty,
                                                                 std::uint64_t begin, std::uint64_t end, unsigned tid,
                                                                 unsigned nthreads) {
  const uint4* s = reinterpret_cast<const uint4*>(src);
  const std::uint64_t lim = end / 16;
  unsigned long long moved = 0;
  for (std::uint64_t q0 = begin / 16; q0 < lim; q0 += static_cast<std::uint64_t>(nthreads) * kUnroll) {
    std::uint32_t bits[kUnroll];
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t q = q0 + static_cast<std::uint64_t>(u) * nthreads + tid;
      bits[u] = q < lim ? (__ldcg(dirty + q / 8) >> ((q % 8) * 4)) & 0xFu : 0u;
      if (q < lim) v[u] = __ldcg(s + q);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (bits[u] == 0u) continue;
      const std::uint64_t q = q0 + static_cast<std::uint64_t>(u) * nthreads + tid;
      for (std::uint32_t o = others; o != 0u; o &= o - 1u) {
        const int d = __ffs(o) - 1;
        if (bits[u] == 0xFu) {
          reinterpret_cast<uint4*>(dst[d])[q] = v[u];
        } else {
          std::uint32_t* w = reinterpret_cast<std::uint32_t*>(dst[d]) + q * 4;
          if (bits[u] & 1u) w[0] = v[u].x;
          if (bits[u] & 2u) w[1] = v[u].y;
          if (bits[u] & 4u) w[2] = v[u].z;
          if (bits[u] & 8u) w[3] = v[u].w;
        }
      }
      moved += 4u * static_cast<unsigned>(__popc(bits[u]));
    }
  }
  return moved;
}

}  // namespace detail
#endif  // __CUDACC__

}  // namespace gpsm::gps
