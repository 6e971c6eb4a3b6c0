#pragma once
// End-of-iteration synchronization of the CPU-free (persistent kernel) stencil runs: the
// runtime's device fence (gpsm/gps/device_fence.hpp, which says how it works), one arrival counter
// per GPU and one tagged word per (GPU, parity) carrying the GPU's partial sum (the norm) to every
// GPU, without a grid-wide barrier. The hand-written paradigms allocate its state themselves
// (IterSyncStates, iter_sync_states.hpp: apart, so that the kernel files including this header do
// not depend on the context's); GPS kernels take it from Context::device_fences.
#include <cstdint>

#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::apps {

constexpr int kIterSyncMaxRanks = gps::kMaxDevices;
using IterSyncState = gps::DeviceFenceState;
using IterSync = gps::DeviceFence;

}  // namespace gpsm::apps
