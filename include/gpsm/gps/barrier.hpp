#pragma once
// Device-side barrier across the context's GPUs (and the blocks on each).
//
// Every device holds one 64-bit arrival counter in its own memory. A block arrives by adding 1 to
// its own device's counter (an atomic that returns the old value), then to every other device's
// (so waiting polls local memory), all after a system-scope fence that releases the block's
// writes. Its generation is the old value's distance from `base`, in whole generations of
// `participants` arrivals, so it waits for the counter to reach the end of that generation.
// Counters only ever increase: a late reader can't mistake an old generation for a new one, and
// a handle stays valid for every later launch (a kernel that ends with every block past the
// same barriers leaves the counters at a generation boundary): nothing to re-arm between
// launches. The `round` argument counts this block's barriers for the caller; the generation
// never depends on it. Handles carry the arming they came from (Context::barrier re-arms only
// when the participant count changes): a handle of an older arming traps with a
// "stale barrier handle" message, which the host turns into gpsm::Error.
// All participating blocks must be co-resident: launch with Context::check_coresident first.
#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::gps {

struct BarrierHandle {
  std::uint64_t* counters[kMaxDevices] = {};  // counters[d] lives on device d
  std::uint64_t base = 0;                     // counter value when this arming began
  std::uint32_t participants = 0;             // blocks over all devices per generation
  const std::uint64_t* armed = nullptr;       // the context's current arming, on device `self`
  std::uint64_t arming = 0;                   // the arming this handle belongs to
  std::int32_t devices = 0;
  std::int32_t self = 0;
  WaitPolicy wait;

#if defined(__CUDACC__)
  // Block-collective: every thread of every participating block calls it; `round` is this
  // block's count of completed barriers (incremented here; the caller may start it at 0 each launch).
  __device__ __forceinline__ void sync(std::uint64_t& round) const {
    __syncthreads();  // the block's writes happen before thread 0's release below
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      const std::uint64_t now = ld_relaxed_sys(armed);
      if (now != arming)
        record_and_trap(wait, WaitRecord::kStaleBarrier, "stale barrier handle", armed, arming, now);
      fence_sys();  // cumulative: covers every thread's writes ordered by the block barrier
      const std::uint64_t before = atom_add_relaxed_sys(counters[self], 1);
      // Our own arrival lands before any other device's: no block can pass this generation (and
      // arrive at the next one on our counter) until it has seen our arrival, so `before` lies
      // inside this generation.
      if (devices > 1) fence_sys();
      for (int d = 0; d < devices; ++d)
        if (d != self) red_add_relaxed_sys(counters[d], 1);
      const std::uint64_t generation = (before - base) / participants;
      const std::uint64_t target = base + static_cast<std::uint64_t>(participants) * (generation + 1);
      wait_geq_sys<std::uint64_t>(counters[self], target, wait, "device barrier counter");
    }
    ++round;
    __syncthreads();  // the other threads wait for thread 0's acquire
  }
#endif
};

}  // namespace gpsm::gps
