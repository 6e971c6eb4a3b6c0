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

}  // namespace detail
#endif  // __CUDACC__

}  // namespace gpsm::gps
