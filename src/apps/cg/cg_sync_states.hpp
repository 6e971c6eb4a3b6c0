#pragma once
// Host side of CG's CPU-free synchronization (cg_sync.hpp): one zeroed CgSyncState per GPU of a
// run and the handles the kernels take. Apart from cg_sync.hpp so that the kernel files, which
// include that one, do not depend on the context's header (gpsm/gps/context.hpp and its settings).
#include "apps/cg/cg_sync.hpp"
#include "apps/harness/peer_states.hpp"

namespace gpsm::apps::cg {

class CgSyncStates : public PeerStates<CgSyncState, CgSync, kMaxRanks> {
 public:
  explicit CgSyncStates(const gps::Context& ctx) : PeerStates(ctx, "cg: the CPU-free solver") {}
};

}  // namespace gpsm::apps::cg
