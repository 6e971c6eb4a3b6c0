#pragma once
// Device-side barrier across the context's GPUs (and the blocks on each).
//
// Every device holds one 64-bit arrival counter in its own memory. A block arrives by adding 1,
// with release semantics at system scope, to every device's counter (so waiting polls local
// memory), then waits until its own device's counter reaches base + participants * (round + 1).
// Counters only ever increase: generations are counter values, never a reset to zero, so a late
// reader can't mistake an old generation for a new one. The host reads `base` between launches.
// All participating blocks must be co-resident: launch with Context::check_coresident first.
#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::gps {

struct BarrierHandle {
  std::uint64_t* counters[kMaxDevices] = {};  // counters[d] lives on device d
  std::uint64_t base = 0;                     // counter value when the launch began
  std::uint32_t participants = 0;             // blocks over all devices per generation
  std::int32_t devices = 0;
  std::int32_t self = 0;
  WaitPolicy wait;

#if defined(__CUDACC__)
  // Block-collective: every thread of every participating block calls it; `round` is this
  // block's count of completed barriers in this launch (starts at 0, incremented here).
  __device__ __forceinline__ void sync(std::uint64_t& round) const {
    __syncthreads();  // the block's writes happen before thread 0's release below
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      fence_sys();  // cumulative: covers every thread's writes ordered by the block barrier
      for (int d = 0; d < devices; ++d) red_add_relaxed_sys(counters[d], 1);
      const std::uint64_t target = base + static_cast<std::uint64_t>(participants) * (round + 1);
      wait_geq_sys<std::uint64_t>(counters[self], target, wait, "device barrier counter");
    }
    ++round;
    __syncthreads();  // the other threads wait for thread 0's acquire
  }
#endif
};

}  // namespace gpsm::gps
