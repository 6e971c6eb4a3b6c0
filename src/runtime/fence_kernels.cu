// The `combine` fence on the device: drain (source side) and unpack (receiver side), block by
// block (finepack.hpp). Per-line decisions come from finepack.hpp, the same code the CPU tests run
// through drain_model.
#include "runtime/finepack.hpp"
#include "gpsm/gps/view.hpp"
#include "runtime/runtime_state.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::gps::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Drain block shape: compile-time knobs for the sweep in docs/gps.md (512/3, 256/8, 256/4 and
// 256/6 measured within noise of each other; 128 threads was slower).
#ifndef GPSM_DRAIN_THREADS
#define GPSM_DRAIN_THREADS 256
#endif
#ifndef GPSM_DRAIN_MIN_BLOCKS
#define GPSM_DRAIN_MIN_BLOCKS 6
#endif
constexpr int kDrainThreads = GPSM_DRAIN_THREADS;
constexpr int kDrainWarps = kDrainThreads / 32;

__device__ __forceinline__ void count(LinkCounters* c, int d, unsigned long long useful, unsigned long long link,
                                      unsigned long long msgs) {
  if (useful) atomicAdd(&c->useful_bytes[d], useful);
  atomicAdd(&c->link_bytes[d], link);
  atomicAdd(&c->messages[d], msgs);
}

// One thread block per block of lines (grid-stride). Warps take lines: a dense line is written
// directly by its warp (lane w writes word w: one coalesced masked store per subscriber); a
// sparse line's words are read the same way and compacted into shared memory as {offset, value}.
// Then one reservation per subscriber, the offsets and values copied out as contiguous runs, and
// the directory entry written last. A block whose record did not fit keeps its dirty bits (the
// next round sends it again: resending is idempotent, values come from the replica).
__global__ void __launch_bounds__(kDrainThreads, GPSM_DRAIN_MIN_BLOCKS) drain_kernel(DrainArgs a) {
  __shared__ __align__(16) std::uint16_t s_off[kMaxBlockWords];
  __shared__ __align__(16) std::uint32_t s_val[kMaxBlockWords];
  __shared__ std::uint32_t s_m[kMaxBlockLines];
  __shared__ unsigned s_count;
  __shared__ unsigned long long s_base;
  __shared__ int s_fail;
  if (*reinterpret_cast<volatile std::uint32_t*>(&a.ctl->dirty_any) == 0u) return;
  constexpr int kLinesPerWarp = kMaxBlockLines / kDrainWarps;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (std::uint64_t blk = a.first_block + blockIdx.x; blk < a.last_block; blk += gridDim.x) {
    const std::uint64_t first = blk * a.block_lines;
    const unsigned nl = static_cast<unsigned>(
        a.lines - first < a.block_lines ? a.lines - first : static_cast<std::uint64_t>(a.block_lines));
    // A block lies in one page: one subscriber set.
    const std::uint32_t subs = a.masks[(first * kLineBytes) >> a.page_shift] & kDeviceBits & ~(1u << a.self);
    for (unsigned j = threadIdx.x; j < kMaxBlockLines; j += kDrainThreads) s_m[j] = j < nl ? a.dirty[first + j] : 0u;
    if (threadIdx.x == 0) {
      s_count = 0;
      s_fail = 0;
    }
    __syncthreads();
    if (subs != 0u) {
      // Every dirty line of the warp is loaded before any is used, so the loads overlap, and
      // whole: one 128 B request per line costs less than one per touched sector.
      std::uint32_t v[kLinesPerWarp];
#pragma unroll
      for (int k = 0; k < kLinesPerWarp; ++k) {
        const unsigned j = warp + k * kDrainWarps;
        v[k] = s_m[j] != 0u ? a.src[(first + j) * kLineWords + lane] : 0u;
      }
#pragma unroll
      for (int k = 0; k < kLinesPerWarp; ++k) {
        const unsigned j = warp + k * kDrainWarps;
        const std::uint64_t line = first + j;
        const std::uint32_t m = s_m[j];
        if (m == 0u) continue;
        const bool mine = (m >> lane) & 1u;
        if (!pack_line(m)) {
          for (std::uint32_t S = subs; S != 0u; S &= S - 1u) {
            const int d = __ffs(S) - 1;
            if (mine) a.dst[d][line * kLineWords + lane] = v[k];
            if (a.counters != nullptr && lane == 0)
              count(a.counters, d, 4ull * popcount32(m), direct_link_bytes(m), sectors_touched(m));
          }
        } else {
          unsigned base = 0;
          if (lane == 0) base = atomicAdd(&s_count, static_cast<unsigned>(popcount32(m)));
          base = __shfl_sync(0xFFFFFFFFu, base, 0);
          if (mine) {
            const unsigned at = base + static_cast<unsigned>(popcount32(m & ((1u << lane) - 1u)));
            s_off[at] = static_cast<std::uint16_t>(j * kLineWords + lane);
            s_val[at] = v[k];
          }
        }
      }
    }
    __syncthreads();
    const unsigned n = s_count;
    if (n != 0u) {
      // One reservation serves every subscriber: the record sits at the same entries in each
      // destination's area (areas of non-subscribers keep unused gaps). Records start on
      // 8-entry boundaries so every thread copies 16 bytes (a warp: 512 B runs on the link).
      const unsigned n8 = padded_entries(n);
      if (threadIdx.x == 0) {
        const unsigned long long b = atomicAdd(&a.ctl->reserved, static_cast<unsigned long long>(n8));
        s_base = b;
        s_fail = b + n8 > a.capacity ? 1 : 0;
      }
      __syncthreads();
      const unsigned long long b = s_base;
      for (std::uint32_t S = s_fail ? 0u : subs; S != 0u; S &= S - 1u) {
        const int d = __ffs(S) - 1;
        for (unsigned i = threadIdx.x * 8u; i < n8; i += kDrainThreads * 8u)
          *reinterpret_cast<uint4*>(a.off[d] + b + i) = *reinterpret_cast<const uint4*>(s_off + i);
        for (unsigned i = threadIdx.x * 4u; i < n8; i += kDrainThreads * 4u)
          *reinterpret_cast<uint4*>(a.val[d] + b + i) = *reinterpret_cast<const uint4*>(s_val + i);
        if (threadIdx.x == 0) {
          a.dir[d][blk] = make_uint2(static_cast<unsigned>(b), n);
          if (a.counters != nullptr)
            count(a.counters, d, 0, static_cast<unsigned long long>(kPackedEntryBytes) * n8 + kDirEntryBytes, n);
        }
      }
      // Useful bytes once the block reached every subscriber.
      if (a.counters != nullptr && threadIdx.x == 0 && !s_fail)
        for (std::uint32_t S = subs; S != 0u; S &= S - 1u) atomicAdd(&a.counters->useful_bytes[__ffs(S) - 1], 4ull * n);
    }
    __syncthreads();
    if (s_fail && a.spill_direct) {
      // fence_async has no second round: the record's words go to every subscriber as word
      // stores (the same words and values, a sector on the link each), and the next fence_async
      // outside stream capture doubles the inbound areas.
      for (std::uint32_t S = subs; S != 0u; S &= S - 1u) {
        const int d = __ffs(S) - 1;
        for (unsigned i = threadIdx.x; i < n; i += kDrainThreads) a.dst[d][first * kLineWords + s_off[i]] = s_val[i];
        if (a.counters != nullptr && threadIdx.x == 0) count(a.counters, d, 4ull * n, 1ull * kSectorBytes * n, n);
      }
      if (threadIdx.x == 0 && a.spill_hint != nullptr) *reinterpret_cast<volatile std::uint32_t*>(a.spill_hint) = 1u;
    }
    if (s_fail && !a.spill_direct) {
      if (threadIdx.x == 0) a.ctl->overflow = 1u;  // stays dirty: the next round sends it again
    } else {
      for (unsigned j = threadIdx.x; j < nl; j += kDrainThreads)
        if (s_m[j] != 0u) a.dirty[first + j] = 0u;
    }
    __syncthreads();  // shared state is reset for the next block
  }
}

// One thread block per block of lines: every source's record lands in shared memory (a word
// stored by two GPUs is a race; either value may win), then each line's touched words are
// written with one coalesced store. Directory entries are cleared once read, so a source that
// sends nothing for a block next round leaves a zero count behind.
__global__ void __launch_bounds__(kThreads) unpack_kernel(UnpackArgs a) {
  __shared__ std::uint32_t s_val[kMaxBlockWords];
  __shared__ std::uint32_t s_touch[kMaxBlockLines];
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  for (std::uint64_t blk = a.first_block + blockIdx.x; blk < a.last_block; blk += gridDim.x) {
    const std::uint64_t first = blk * a.block_lines;
    const unsigned nl = static_cast<unsigned>(
        a.lines - first < a.block_lines ? a.lines - first : static_cast<std::uint64_t>(a.block_lines));
    for (unsigned j = threadIdx.x; j < nl; j += kThreads) s_touch[j] = 0u;
    __syncthreads();
    bool any = false;
    for (int s = 0; s < a.devices; ++s) {
      if (s == a.self) continue;
      const uint2 e = a.dir[s][blk];
      if (e.y == 0u) continue;
      any = true;
      for (unsigned i = threadIdx.x; i < e.y; i += kThreads) {
        const unsigned o = a.off[s][e.x + i];
        s_val[o] = a.val[s][e.x + i];
        atomicOr(&s_touch[o >> 5], 1u << (o & 31u));
      }
    }
    __syncthreads();
    if (any) {
      if (threadIdx.x < static_cast<unsigned>(a.devices) && static_cast<int>(threadIdx.x) != a.self &&
          a.dir[threadIdx.x][blk].y != 0u)
        a.dir[threadIdx.x][blk] = make_uint2(0u, 0u);
      for (unsigned j = warp; j < nl; j += kWarps) {
        const std::uint32_t m = s_touch[j];
        if ((m >> lane) & 1u) a.words[(first + j) * kLineWords + lane] = s_val[j * kLineWords + lane];
      }
    }
    __syncthreads();
  }
}

// End of a fence round, in stream order after the round's kernels: the counters restart; lines
// that did not fit stay dirty (dirty_any kept set) for the next round (fence_async's spilled
// blocks went as word stores: nothing stays); sys_any is the fence's.
__global__ void reset_control_kernel(Control* c) {
  const bool again = c->overflow != 0u;
  c->dirty_any = again ? 1u : 0u;
  c->overflow = 0u;
  c->reserved = 0ull;
}

int grid_for(std::uint64_t items) {
  int dev = 0, sms = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::uint64_t cap = static_cast<std::uint64_t>(sms) * 8;
  return static_cast<int>(items < 1 ? 1 : (items < cap ? items : cap));
}

}  // namespace

void launch_drain(const DrainArgs& a, cudaStream_t s) {
  if (a.last_block <= a.first_block) return;
  drain_kernel<<<grid_for(a.last_block - a.first_block), kDrainThreads, 0, s>>>(a);
  GPSM_CUDA_LAUNCH();
}

// fence_async's barrier: the previous kernels on this stream have ended (stream order), the
// barrier's release (a system-scope fence before the arrival) covers their stores, and the work
// after it on this stream starts once every GPU arrived.
__global__ void async_fence_kernel(const BarrierHandle h) {
  std::uint64_t round = 0;
  h.sync(round);
}

void launch_async_fence(const BarrierHandle& h, cudaStream_t s) {
  async_fence_kernel<<<1, 32, 0, s>>>(h);
  GPSM_CUDA_LAUNCH();
}

void launch_reset_control(Control* c, cudaStream_t s) {
  reset_control_kernel<<<1, 1, 0, s>>>(c);
  GPSM_CUDA_LAUNCH();
}

void load_fence_kernels() {
  cudaFuncAttributes at{};
  GPSM_CUDA(cudaFuncGetAttributes(&at, drain_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, unpack_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, reset_control_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, async_fence_kernel));
}

void launch_unpack(const UnpackArgs& a, cudaStream_t s) {
  if (a.last_block <= a.first_block) return;
  unpack_kernel<<<grid_for(a.last_block - a.first_block), kThreads, 0, s>>>(a);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::gps::detail
