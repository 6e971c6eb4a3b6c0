#pragma once
// Host side of a CPU-free run's cross-GPU synchronization: one zeroed State per GPU of a context
// (index = rank), each in its GPU's memory, and the Handle a persistent kernel takes (its own state,
// every GPU's state through peer pointers, its rank, the GPU count, the blocks that arrive and the
// bounded-wait policy). The stencils' iteration sync and CG's reduction both keep their states so.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {

template <class State, class Handle, int kMaxRanks>
class PeerStates {
 public:
  // `what` names the user of the states in the error for too many GPUs.
  PeerStates(const gps::Context& ctx, const char* what) {
    if (ctx.size() > kMaxRanks)
      throw gpsm::Error(std::string("gpsm: ") + what + " takes at most " + std::to_string(kMaxRanks) + " GPUs");
    st_.resize(static_cast<std::size_t>(ctx.size()));
    for (int r = 0; r < ctx.size(); ++r) st_[static_cast<std::size_t>(r)].alloc(ctx.device(r), 1);
    reset();
  }

  // Zeroes every state (before each launch); returns when every GPU holds zeros, so no peer's
  // first write can land before the reset.
  void reset() {
    for (auto& s : st_) {
      GPSM_CUDA(cudaSetDevice(s.dev));
      GPSM_CUDA(cudaMemset(s.p, 0, sizeof(State)));
    }
    for (auto& s : st_) {
      GPSM_CUDA(cudaSetDevice(s.dev));
      GPSM_CUDA(cudaDeviceSynchronize());
    }
  }

  Handle handle(int rank, unsigned blocks, const gps::WaitPolicy& wait) const {
    Handle h;
    h.self = st_.at(static_cast<std::size_t>(rank)).p;
    for (std::size_t g = 0; g < st_.size(); ++g) h.all[g] = st_[g].p;
    h.rank = rank;
    h.ranks = static_cast<int>(st_.size());
    h.blocks = blocks;
    h.wait = wait;
    return h;
  }

 private:
  std::vector<DevBuf<State>> st_;
};

}  // namespace gpsm::apps
