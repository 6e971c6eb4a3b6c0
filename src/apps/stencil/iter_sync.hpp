#pragma once
// End-of-iteration synchronization of the CPU-free (persistent kernel) stencil runs: the
// runtime's device fence (gpsm/gps/device_fence.hpp, which says how it works), one arrival counter
// per GPU and one tagged word per (GPU, parity) carrying the GPU's partial sum (the norm) to every
// GPU, without a grid-wide barrier. The hand-written paradigms allocate its state themselves
// (IterSyncStates); GPS kernels take it from Context::device_fences.
#include <cstdint>

#include "apps/harness/peer_states.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::apps {

constexpr int kIterSyncMaxRanks = gps::kMaxDevices;
using IterSyncState = gps::DeviceFenceState;
using IterSync = gps::DeviceFence;

// Host side: one zeroed state per GPU of a run and the handles the kernels take.
class IterSyncStates : public PeerStates<IterSyncState, IterSync, kIterSyncMaxRanks> {
 public:
  explicit IterSyncStates(const gps::Context& ctx) : PeerStates(ctx, "the CPU-free iteration sync") {}
};

}  // namespace gpsm::apps
