// The `combine` fence on the device: drain (source side) and unpack (receiver side).
// Per-line decisions come from finepack.hpp, the same code the CPU tests run through drain_model.
#include "gpsm/gps/finepack.hpp"
#include "gpsm/gps/view.hpp"
#include "runtime/runtime_state.hpp"
#include "scope/cuda_check.hpp"

namespace gpsm::gps::detail {
namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned v) {
  const unsigned lane = threadIdx.x & 31u;
  for (unsigned o = 1; o < 32; o <<= 1) {
    const unsigned n = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += n;
  }
  return v;
}

constexpr int kDrainThreads = 256;
constexpr int kMaxPackedPerLine = 15;  // pack_line() needs 8k < 32 * sectors <= 128

// One thread per line (grid-stride, whole warps so warp collectives see every lane). Dense
// lines are written directly by the whole warp (lane w writes word w: one coalesced store);
// sparse lines become packed entries, queued per destination with one atomic per warp. The
// warp first stages its entries in shared memory (values read once for all destinations), then
// copies them to each destination's queue as contiguous 256 B warp stores: written lane by lane
// they would leave gaps and turn one remote store into several partial-sector ones.
__global__ void __launch_bounds__(kDrainThreads) drain_kernel(DrainArgs a) {
  __shared__ PackedEntry stage[kDrainThreads / 32][32 * kMaxPackedPerLine];
  if (*reinterpret_cast<volatile std::uint32_t*>(&a.ctl->dirty_any) == 0u) return;
  const unsigned lane = threadIdx.x & 31u;
  PackedEntry* my_stage = stage[threadIdx.x >> 5];
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t end = (a.lines + 31u) / 32u * 32u;
  for (std::uint64_t line = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < end;
       line += stride) {
    const std::uint32_t m = line < a.lines ? a.dirty[line] : 0u;
    std::uint32_t subs = 0;
    if (m != 0u) subs = a.masks[(line * kLineBytes) >> a.page_shift] & kDeviceBits & ~(1u << a.self);
    const bool packed = subs != 0u && pack_line(m);
    bool sent_all = true;

    unsigned direct = __ballot_sync(kFull, subs != 0u && !packed);
    while (direct != 0u) {
      const int l = __ffs(direct) - 1;
      direct &= direct - 1u;
      const std::uint64_t L = __shfl_sync(kFull, line, l);
      const std::uint32_t M = __shfl_sync(kFull, m, l);
      std::uint32_t S = __shfl_sync(kFull, subs, l);
      const bool mine = (M >> lane) & 1u;
      const std::uint32_t v = mine ? a.src[L * kLineWords + lane] : 0u;
      while (S != 0u) {
        const int d = __ffs(S) - 1;
        S &= S - 1u;
        if (mine) a.dst[d][L * kLineWords + lane] = v;
        if (a.counters != nullptr && lane == 0) {
          atomicAdd(&a.counters->useful_bytes[d], 4ull * popcount32(M));
          atomicAdd(&a.counters->link_bytes[d], static_cast<unsigned long long>(direct_link_bytes(M)));
          atomicAdd(&a.counters->messages[d], static_cast<unsigned long long>(sectors_touched(M)));
        }
      }
    }

    // Stage every packed entry of the warp, in lane order.
    const unsigned cnt_all = packed ? static_cast<unsigned>(popcount32(m)) : 0u;
    const unsigned incl_all = warp_inclusive_scan(cnt_all);
    const unsigned total_all = __shfl_sync(kFull, incl_all, 31);
    const unsigned packed_lanes = __ballot_sync(kFull, packed);
    if (total_all != 0u) {
      unsigned o = incl_all - cnt_all;
      for (std::uint32_t bits = cnt_all != 0u ? m : 0u; bits != 0u; bits &= bits - 1u) {
        const std::uint64_t word = line * kLineWords + static_cast<unsigned>(__ffs(bits) - 1);
        my_stage[o++] = PackedEntry{static_cast<std::uint32_t>(word), a.src[word]};
      }
    }
    __syncwarp();

    // A lane whose entries did not all fit in one destination's queue stops queueing for the
    // rest (its line stays dirty and goes to every subscriber next round): it must not take
    // queue space from lines that can still complete, or rounds could stop making progress.
    for (int d = 0; d < a.devices; ++d) {
      if (d == a.self) continue;
      const bool want = sent_all && packed && ((subs >> d) & 1u);
      // Usually every staged entry goes to d: the warp copies the stage as one contiguous block.
      // Otherwise each wanting lane copies its own slice of the stage.
      const bool whole = __ballot_sync(kFull, want) == packed_lanes;
      const unsigned cnt = want ? cnt_all : 0u;
      const unsigned incl = whole ? incl_all : warp_inclusive_scan(cnt);
      const unsigned total = __shfl_sync(kFull, incl, 31);
      if (total == 0u) continue;
      unsigned long long base = 0;
      if (lane == 0) base = atomicAdd(&a.ctl->queued[d], static_cast<unsigned long long>(total));
      base = __shfl_sync(kFull, base, 0);
      if (whole) {
        for (unsigned e = lane; e < total; e += 32u)
          if (base + e < a.capacity) a.queue[d][base + e] = my_stage[e];
      } else {
        const std::uint64_t first = base + incl - cnt;
        const unsigned from = incl_all - cnt_all;
        for (unsigned k = 0; k < cnt; ++k)
          if (first + k < a.capacity) a.queue[d][first + k] = my_stage[from + k];
      }
      if (cnt != 0u && base + incl > a.capacity) sent_all = false;
      if (a.counters != nullptr && lane == 0) {  // entries written: these crossed the link
        const std::uint64_t lo = base < a.capacity ? base : a.capacity;
        const std::uint64_t hi = base + total < a.capacity ? base + total : a.capacity;
        atomicAdd(&a.counters->link_bytes[d], static_cast<unsigned long long>(kPackedEntryBytes) * (hi - lo));
        atomicAdd(&a.counters->messages[d], static_cast<unsigned long long>(hi - lo));
      }
    }
    if (a.counters != nullptr && packed && sent_all) {  // delivered everywhere: useful once
      for (std::uint32_t S = subs; S != 0u; S &= S - 1u)
        atomicAdd(&a.counters->useful_bytes[__ffs(S) - 1], 4ull * popcount32(m));
    }
    if (m != 0u) {
      if (sent_all) {
        a.dirty[line] = 0u;
      } else {
        a.ctl->overflow = 1u;  // stays dirty: the next round sends it again
      }
    }
    __syncwarp();  // the stage is rewritten in the next iteration
  }
}

// Receiver: apply every queued entry from every source. A source queues each word at most once
// per round, so entries need no ordering among themselves.
__global__ void unpack_kernel(UnpackArgs a) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (int s = 0; s < a.devices; ++s) {
    if (s == a.self) continue;
    std::uint64_t n = *reinterpret_cast<const volatile unsigned long long*>(a.queued[s]);
    if (n > a.capacity) n = a.capacity;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
      const PackedEntry e = a.queue[s][i];
      a.words[e.word] = e.value;
    }
  }
}

int grid_for(std::uint64_t items, int threads) {
  int dev = 0, sms = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const std::uint64_t want = (items + threads - 1) / threads;
  const std::uint64_t cap = static_cast<std::uint64_t>(sms) * 8;
  return static_cast<int>(want < 1 ? 1 : (want < cap ? want : cap));
}

}  // namespace

void launch_drain(const DrainArgs& a, cudaStream_t s) {
  const int threads = kDrainThreads;
  drain_kernel<<<grid_for(a.lines, threads), threads, 0, s>>>(a);
  GPSM_CUDA_LAUNCH();
}

void launch_unpack(const UnpackArgs& a, cudaStream_t s) {
  const int threads = 256;
  unpack_kernel<<<grid_for(a.capacity, threads), threads, 0, s>>>(a);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::gps::detail
