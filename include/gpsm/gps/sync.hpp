#pragma once
// Ordering-named memory operations at system scope, and bounded waits.
//
// Every cross-GPU synchronization goes through these wrappers so each call site says what it
// orders (DeepEP/MSCCL++ style):
//   st_release_sys   store that publishes everything this thread (and, after a block barrier,
//                    its block: the fence is cumulative) wrote before it, to every GPU and the CPU
//   ld_acquire_sys   load after which this thread sees everything released before the value
//   *_relaxed_sys    strong (coherent, not torn, not cached stale) but orders nothing else
// Flags and counters used with them live outside replicated (GPS) memory; see docs/gps.md.
//
// A wait never spins forever: after GPSM_WAIT_TIMEOUT_MS it prints device, block, what it waited
// for, expected and observed values, records them in host-mapped memory (readable after the
// context is lost) and traps. The host turns the record into a gpsm::Error.
#include <cstdint>
#include <cstdio>  // device printf in the bounded waits

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

// Host-mapped, written once by the first wait that times out.
struct WaitRecord {
  std::uint32_t valid;     // 0 until a wait failed
  std::int32_t device;     // context rank
  std::uint32_t block;     // linear block index
  std::uint32_t thread;    // linear thread index
  std::uint32_t kind;      // WaitRecord::kTimedOut, or kStaleBarrier (expected: the handle's arming,
                           // observed: the context's)
  std::uint32_t pad;
  std::uint64_t expected;  // waited for value >= expected
  std::uint64_t observed;  // last value read
  std::uint64_t address;
  char what[64];
  static constexpr std::uint32_t kTimedOut = 0;
  static constexpr std::uint32_t kStaleBarrier = 1;
};

struct WaitPolicy {
  WaitRecord* record = nullptr;   // host-mapped (may be null: print + trap only)
  std::uint64_t timeout_ns = 10ull * 1000 * 1000 * 1000;
  std::int32_t rank = 0;
};

#if defined(__CUDACC__)

__device__ __forceinline__ std::uint64_t globaltimer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void fence_sys() { asm volatile("fence.acq_rel.sys;" ::: "memory"); }
// GPU scope (fence_gpu, ld_acquire_gpu): for synchronization that never leaves one GPU (a
// one-GPU run's reductions, a device's own readiness counters).
__device__ __forceinline__ void fence_gpu() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
// fence_sys, or fence_gpu when `sys` is false (every reader on this GPU): wait_geq's pair.
__device__ __forceinline__ void fence(bool sys) {
  if (sys)
    fence_sys();
  else
    fence_gpu();
}

__device__ __forceinline__ void st_release_sys(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_release_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ std::uint32_t ld_acquire_sys(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint64_t ld_acquire_sys(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint64_t ld_acquire_gpu(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_acquire_gpu(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_relaxed_sys(const std::uint32_t* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ std::uint64_t ld_relaxed_sys(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
// Fire-and-forget add that releases this thread's earlier writes (arrive side of a barrier).
__device__ __forceinline__ void red_add_release_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("red.release.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void red_add_relaxed_sys(std::uint64_t* p, std::uint64_t v) {
  asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Atomic add at system scope that returns the old value, ordering nothing else.
__device__ __forceinline__ std::uint64_t atom_add_relaxed_sys(std::uint64_t* p, std::uint64_t v) {
  std::uint64_t old;
  asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}

// Records a failure of `kind` (first one wins) and traps.
__device__ __noinline__ inline void record_and_trap(const WaitPolicy& w, std::uint32_t kind, const char* what,
                                                    const void* addr, std::uint64_t expected, std::uint64_t observed) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  if (w.record != nullptr && atomicCAS(reinterpret_cast<unsigned*>(&w.record->valid), 0u, 2u) == 0u) {
    w.record->kind = kind;
    w.record->device = w.rank;
    w.record->block = block;
    w.record->thread = thread;
    w.record->expected = expected;
    w.record->observed = observed;
    w.record->address = reinterpret_cast<std::uint64_t>(addr);
    int i = 0;
    for (; what[i] != '\0' && i < 63; ++i) w.record->what[i] = what[i];
    w.record->what[i] = '\0';
    __threadfence_system();
    st_release_sys(&w.record->valid, 1u);
  }
  __trap();
}

// Prints the timed-out wait, records it and traps.
__device__ __noinline__ inline void wait_timed_out(const WaitPolicy& w, const char* what, const void* addr,
                                                   std::uint64_t expected, std::uint64_t observed) {
  printf("gpsm: bounded wait timed out on device %d block %u thread %u: %s at %p expected >= %llu observed %llu\n",
         w.rank, blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z),
         threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z), what, addr,
         static_cast<unsigned long long>(expected), static_cast<unsigned long long>(observed));
  record_and_trap(w, WaitRecord::kTimedOut, what, addr, expected, observed);
}

// Spins (acquire, system scope when kSys, else GPU scope) until *p >= expected; returns the value
// seen. Bounded.
template <bool kSys, class U>
__device__ __forceinline__ U wait_geq_scoped(const U* p, U expected, const WaitPolicy& w, const char* what) {
  auto load = [p] {
    if constexpr (kSys)
      return ld_acquire_sys(p);
    else
      return ld_acquire_gpu(p);
  };
  U v = load();
  if (v >= expected) return v;
  const std::uint64_t start = globaltimer_ns();
  for (unsigned spin = 0;; ++spin) {
    v = load();
    if (v >= expected) return v;
    if ((spin & 63u) == 63u && globaltimer_ns() - start > w.timeout_ns) wait_timed_out(w, what, p, expected, v);
  }
}

template <class U>
__device__ __forceinline__ U wait_geq_sys(const U* p, U expected, const WaitPolicy& w, const char* what) {
  return wait_geq_scoped<true>(p, expected, w, what);
}

// wait_geq_sys, or with GPU-scope acquires when `sys` is false (every writer on this GPU).
template <class U>
__device__ __forceinline__ U wait_geq(bool sys, const U* p, U expected, const WaitPolicy& w, const char* what) {
  return sys ? wait_geq_scoped<true>(p, expected, w, what) : wait_geq_scoped<false>(p, expected, w, what);
}

#endif  // __CUDACC__

}  // namespace gpsm::gps
