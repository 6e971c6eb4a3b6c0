// Host side of the CPU-free CG kernels' synchronization (cg_sync.hpp): allocation and reset.
#include "apps/cg/cg_sync.hpp"

#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::cg {

CgSyncStates::CgSyncStates(const gps::Context& ctx) {
  if (ctx.size() > kMaxRanks)
    throw gpsm::Error("gpsm: cg: the CPU-free solver takes at most " + std::to_string(kMaxRanks) + " GPUs");
  st_.resize(static_cast<std::size_t>(ctx.size()));
  for (int r = 0; r < ctx.size(); ++r) st_[static_cast<std::size_t>(r)].alloc(ctx.device(r), 1);
  reset();
}

void CgSyncStates::reset() {
  for (auto& s : st_) {
    GPSM_CUDA(cudaSetDevice(s.dev));
    GPSM_CUDA(cudaMemset(s.p, 0, sizeof(CgSyncState)));
  }
  for (auto& s : st_) {
    GPSM_CUDA(cudaSetDevice(s.dev));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
}

CgSync CgSyncStates::handle(int rank, unsigned blocks, const gps::WaitPolicy& wait) const {
  CgSync h;
  h.self = st_.at(static_cast<std::size_t>(rank)).p;
  for (std::size_t g = 0; g < st_.size(); ++g) h.all[g] = st_[g].p;
  h.rank = rank;
  h.ranks = static_cast<int>(st_.size());
  h.blocks = blocks;
  h.wait = wait;
  return h;
}

}  // namespace gpsm::apps::cg
