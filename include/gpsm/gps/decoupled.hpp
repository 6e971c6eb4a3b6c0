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
// Each thread takes kUnroll 16-byte units per round, their dirty words and data loaded before
// any of them is sent (the data whether or not it is dirty, so its load need not wait for the
// dirty word's). One unit per round with the data load behind the dirty test made every unit two
// L2 round trips in a row, and one warp pushes a whole chunk (the inline agent): gpsm publish
// coalesced on 2xH200 took 3.93 ms decoupled against combine's 0.96. A round's units stay
// warp-contiguous (unit q0 + u * nthreads + tid), so a warp's store fills whole lines. The inline
// agent runs inside the user's store kernel, whose registers are the kernel's whole budget
// (ptxas sm_90, gpsm publish's store kernel: 32 registers with kUnroll 1, 40 with 2, 56 with 4,
// 80 with 8; a __noinline__ push does not help, the call graph's registers count): it takes 2.
// The persistent agent is a kernel of its own and takes 8.
template <int kUnroll>
__device__ __forceinline__ unsigned long long push_dirty(const char* src, char* const* dst, std::uint32_t others,
                                                         const std::uint32_t* dirty, std::uint64_t begin,
                                                         std::uint64_t end, unsigned tid, unsigned nthreads) {
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
