// Host side of the CPU-free runs' iteration sync (iter_sync.hpp): allocation and reset.
#include "apps/stencil/iter_sync.hpp"

#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {

IterSyncStates::IterSyncStates(const gps::Context& ctx) {
  if (ctx.size() > kIterSyncMaxRanks)
    throw gpsm::Error("gpsm: the CPU-free iteration sync takes at most " + std::to_string(kIterSyncMaxRanks) + " GPUs");
  st_.resize(static_cast<std::size_t>(ctx.size()));
  for (int r = 0; r < ctx.size(); ++r) st_[static_cast<std::size_t>(r)].alloc(ctx.device(r), 1);
  reset();
}

void IterSyncStates::reset() {
  for (auto& s : st_) {
    GPSM_CUDA(cudaSetDevice(s.dev));
    GPSM_CUDA(cudaMemset(s.p, 0, sizeof(IterSyncState)));
  }
  for (auto& s : st_) {
    GPSM_CUDA(cudaSetDevice(s.dev));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
}

IterSync IterSyncStates::handle(int rank, unsigned int blocks, const gps::WaitPolicy& wait) const {
  IterSync h;
  h.self = st_.at(static_cast<std::size_t>(rank)).p;
  for (std::size_t g = 0; g < st_.size(); ++g) h.all[g] = st_[g].p;
  h.rank = rank;
  h.ranks = static_cast<int>(st_.size());
  h.blocks = blocks;
  h.wait = wait;
  return h;
}

}  // namespace gpsm::apps
