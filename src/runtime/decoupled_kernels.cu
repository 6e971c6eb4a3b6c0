// The decoupled publish mode's kernels: the fence's settle step (which chunks were pushed
// complete, so the drain skips them) and the persistent agent (PROACT dissertation §2.3.3:
// long-lived warps that poll the chunks' readiness and push each complete chunk).
#include "common/cuda_check.hpp"
#include "common/warp_groups.hpp"
#include "gpsm/gps/decoupled.hpp"
#include "gpsm/gps/sync.hpp"
#include "gpsm/gps/view.hpp"
#include "runtime/runtime_state.hpp"

namespace gpsm::gps::detail {
namespace {

constexpr int kSettleThreads = 256;
// One block of 8 warps: enough to keep up with chunks that complete while a kernel runs (each
// warp moves a chunk with 16-byte stores), small enough to leave every other SM to the kernel.
constexpr int kAgentThreads = 256;

// Barrier of one warp group (named barrier group + 1; barrier 0 is __syncthreads'). It also
// orders lane 0's acquire of the ready word before the group's loads of the chunk.
__device__ __forceinline__ void group_sync(unsigned group, unsigned nthreads) {
  asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "r"(nthreads) : "memory");
}

__global__ void clear_dirty_any_kernel(Control* c) { c->dirty_any = 0u; }

// stop_agent on the device: after the stream's kernels (whose chunks the agent pushes) have ended.
__global__ void raise_stop_kernel(std::uint32_t* stop, std::uint32_t generation) {
  __threadfence_system();
  *reinterpret_cast<volatile std::uint32_t*>(stop) = generation;
}

// One thread per chunk: a chunk whose counter reached exactly its learned count and that an agent
// pushed this epoch was delivered; every store counted for it happened before the completing
// add, so its dirty bits are stale and are cleared. Any other chunk keeps its dirty bits for the
// drain (the kernel stored fewer or more words than learned, an atomic hit it, no count was
// learned, or no agent pushed it before the fence stopped the agents).
__global__ void settle_kernel(SettleArgs a) {
  bool any = false;
  for (std::uint64_t c = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; c < a.chunks;
       c += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const unsigned long long want = a.expect[c];
    const bool pushed = want != 0ull && a.count[c] == want && a.done[c] == a.epoch;
    const std::uint64_t first = (c << a.chunk_shift) / kLineBytes;
    const std::uint64_t e = (c + 1) << a.chunk_shift;
    const std::uint64_t last = (e < a.padded_bytes ? e : a.padded_bytes) / kLineBytes;
    for (std::uint64_t l = first; l < last; ++l) {
      if (pushed) {
        a.dirty[l] = 0u;
      } else if (a.dirty[l] != 0u) {
        any = true;
        break;
      }
    }
    // The interval's words are zeroed, not only outdated by the next epoch: a loop captured into
    // a CUDA graph replays one epoch value, and a chunk marked done or ready in the last replay
    // must not pass for pushed in this one.
    a.count[c] = 0ull;
    a.done[c] = 0u;
    a.ready[c] = 0u;
  }
  if (__syncthreads_or(any) && threadIdx.x == 0) a.ctl->dirty_any = 1u;
}

// Group g of the block's warps takes learned chunks g, g + groups, ... in order; for each, lane 0
// polls the chunk's ready word until it holds this epoch, or the stop word reaches this agent's
// generation, or the wait bound passes (a kernel that stores fewer words than learned never
// completes the chunk; the fence publishes it). Then the group pushes the chunk and marks it done.
__global__ void __launch_bounds__(kAgentThreads) decoupled_agent_kernel(AgentArgs a, std::uint32_t per_group) {
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const unsigned groups = (blockDim.x / 32) / per_group;
  const unsigned group = warp / per_group;
  if (group >= groups) return;
  const unsigned tid = (warp % per_group) * 32 + lane, nthreads = per_group * 32;
  const std::uint64_t start = globaltimer_ns();
  const std::uint32_t me = 1u << a.self;
  for (std::uint32_t k = group; k < a.nchunks; k += groups) {
    const std::uint32_t c = a.chunks[k];
    // Pushed this epoch by an earlier agent (stopped by a wait for the devices between two kernels).
    if (a.done[c] == a.epoch) continue;
    int go = 0;
    if (tid == 0) {
      for (;;) {
        if (ld_acquire_gpu(a.ready + c) == a.epoch) {
          go = 1;
          break;
        }
        if (*reinterpret_cast<const volatile std::uint32_t*>(a.stop) >= a.generation) break;
        if (globaltimer_ns() - start > a.timeout_ns) break;
        __nanosleep(128);
      }
    }
    // The group's warps agree through shared memory, one word per group, behind the group's own
    // named barrier (groups take different numbers of chunks, so no block-wide barrier).
    __shared__ int verdict[kAgentThreads / 32];
    if (tid == 0) verdict[group] = go;
    group_sync(group, nthreads);
    go = verdict[group];
    if (!go) return;
    const std::uint64_t begin = static_cast<std::uint64_t>(c) << a.chunk_shift;
    const std::uint64_t e = begin + (std::uint64_t{1} << a.chunk_shift);
    const std::uint64_t end = e < a.padded_bytes ? e : a.padded_bytes;
    const std::uint32_t to = a.masks[(begin >> a.page_shift)] & kDeviceBits & ~me;
    const unsigned long long moved = push_dirty_batched<8>(a.src, a.dst, to, a.dirty, begin, end, tid, nthreads);
    if (a.counters != nullptr)
      for (std::uint32_t o = to; o != 0u; o &= o - 1u) {
        const int d = __ffs(o) - 1;
        if (moved != 0ull) {
          atomicAdd(&a.counters->useful_bytes[d], moved);
          atomicAdd(&a.counters->link_bytes[d], moved);
        }
        if (tid == 0) atomicAdd(&a.counters->messages[d], 1ull);
      }
    group_sync(group, nthreads);
    if (tid == 0) a.done[c] = a.epoch;
  }
}

}  // namespace

void launch_settle(const SettleArgs& a, cudaStream_t s) {
  clear_dirty_any_kernel<<<1, 1, 0, s>>>(a.ctl);
  GPSM_CUDA_LAUNCH();
  if (a.chunks == 0) return;
  const std::uint64_t blocks = (a.chunks + kSettleThreads - 1) / kSettleThreads;
  settle_kernel<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kSettleThreads, 0, s>>>(a);
  GPSM_CUDA_LAUNCH();
}

void load_decoupled_kernels() {
  cudaFuncAttributes at{};
  GPSM_CUDA(cudaFuncGetAttributes(&at, clear_dirty_any_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, settle_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, raise_stop_kernel));
  GPSM_CUDA(cudaFuncGetAttributes(&at, decoupled_agent_kernel));
}

void launch_raise_stop(std::uint32_t* stop, std::uint32_t generation, cudaStream_t s) {
  raise_stop_kernel<<<1, 1, 0, s>>>(stop, generation);
  GPSM_CUDA_LAUNCH();
}

void launch_decoupled_agent(const AgentArgs& a, cudaStream_t s) {
  if (a.nchunks == 0) return;
  decoupled_agent_kernel<<<1, kAgentThreads, 0, s>>>(a, warps_per_group(kAgentThreads / 32, a.nchunks));
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::gps::detail
