#pragma once
// Host side of the CPU-free stencil runs' iteration sync (iter_sync.hpp): one zeroed state per GPU
// of a run and the handles the kernels take. Apart from iter_sync.hpp so that the kernel files,
// which include that one, do not depend on the context's header (gpsm/gps/context.hpp).
#include "apps/harness/peer_states.hpp"
#include "apps/stencil/iter_sync.hpp"

namespace gpsm::apps {

class IterSyncStates : public PeerStates<IterSyncState, IterSync, kIterSyncMaxRanks> {
 public:
  explicit IterSyncStates(const gps::Context& ctx) : PeerStates(ctx, "the CPU-free iteration sync") {}
};

}  // namespace gpsm::apps
