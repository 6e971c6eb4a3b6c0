#pragma once
// End-of-iteration synchronization of the CPU-free (persistent kernel) stencil runs: the
// runtime's device fence (gpsm/gps/device_fence.hpp, which says how it works), one arrival counter
// per GPU and one tagged word per (GPU, parity) carrying the GPU's partial sum (the norm) to every
// GPU, without a grid-wide barrier. The hand-written paradigms allocate its state themselves
// (IterSyncStates); GPS kernels take it from Context::device_fences.
#include <cstdint>
#include <vector>

#include "common/dev_buf.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::gps {
class Context;
}

namespace gpsm::apps {

constexpr int kIterSyncMaxRanks = gps::kMaxDevices;
using IterSyncState = gps::DeviceFenceState;
using IterSync = gps::DeviceFence;

// Host side: one zeroed state per GPU of a run (index = rank) and the handles the kernels take.
class IterSyncStates {
 public:
  explicit IterSyncStates(const gps::Context& ctx);  // one state per GPU of ctx, rank order
  void reset();  // zero every state (before each launch; synchronous)
  IterSync handle(int rank, unsigned int blocks, const gps::WaitPolicy& wait) const;

 private:
  std::vector<DevBuf<IterSyncState>> st_;
};

}  // namespace gpsm::apps
