#pragma once
// End-of-iteration synchronization of the CPU-free (persistent kernel) stencil runs, without a
// grid-wide barrier: one arrival counter per GPU, and one tagged word per (GPU, parity) that
// carries the GPU's partial sum (the norm) to every GPU.
//
// Per iteration t (parity p = t & 1), every block of every GPU calls arrive_and_wait once:
//   1. the block's partial sum goes into this GPU's acc[p] (one atomic per block);
//   2. thread 0 fences (system scope when the block stored to a peer: its halo pushes must be
//      visible before the neighbour hears that this GPU is done) and counts itself in arrive[p];
//   3. the last block of the GPU to arrive takes acc[p] and arrive[p] back to zero and stores
//      {tag t + 1, partial sum} with release semantics into slot [p][rank] of EVERY GPU;
//   4. every block then polls its own GPU's slots [p][0..ranks) until each carries tag >= t + 1
//      (one lane per slot, in parallel; acquire: the peers' halo pushes of iteration t are
//      visible after it) and returns the sum of the partials, in rank order, so every block of
//      every GPU gets the same float.
// Compared with the grid.sync + one-block cross-GPU barrier + grid.sync it replaces, a GPU's
// blocks never wait for each other except through the peers' words, and the barrier and the norm
// exchange are one message per GPU pair per iteration.
//
// Why two parities are enough: a GPU publishes tag t + 3 into slot p only after all its blocks
// passed iteration t + 2's wait, which needs every GPU's tag t + 2, which every GPU publishes
// only after all its blocks arrived at t + 1, i.e. after they finished waiting for tag t + 1.
// So a slot never moves on while somebody still waits on it; acc[p] and arrive[p] are reset by
// the publisher before its release, and used again (iteration t + 2) only after its acquire.
//
// All blocks of a GPU must be co-resident (cooperative launch); waits are bounded (WaitPolicy).
#include <cstdint>
#include <vector>

#include "common/dev_buf.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::gps {
class Context;
}

namespace gpsm::apps {

constexpr int kIterSyncMaxRanks = 8;

// One per GPU, in that GPU's memory, zeroed before each launch.
struct IterSyncState {
  std::uint64_t slot[2][kIterSyncMaxRanks];  // {tag (t + 1) << 32 | float bits of rank's partial}
  unsigned int arrive[2];
  float acc[2];
};

struct IterSync {
  IterSyncState* self = nullptr;
  IterSyncState* all[kIterSyncMaxRanks] = {};  // all[g]: GPU g's state (peer pointers)
  int rank = 0, ranks = 1;
  unsigned int blocks = 1;  // blocks per GPU that arrive each iteration
  gps::WaitPolicy wait;

#if defined(__CUDACC__)
  // Block-collective (every thread of the block calls it). `part`: this thread's contribution
  // (ignored unless `sum`); `pushed_peer`: the block stored into another GPU's memory this
  // iteration. Returns the sum over every thread of every GPU (0 when !sum).
  __device__ float arrive_and_wait(int t, float part, bool sum, bool pushed_peer) const {
    __shared__ float warp_part[32];
    __shared__ float total;
    const int p = t & 1;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (sum) {
      for (int o = 16; o > 0; o >>= 1) part += __shfl_down_sync(0xFFFFFFFFu, part, o);
      if ((tid & 31u) == 0) warp_part[tid >> 5] = part;
    }
    __syncthreads();  // also orders every thread's stores before thread 0's fence (cumulative)
    if (tid == 0) {
      if (sum) {
        float s = 0;
        const unsigned warps = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
        for (unsigned w = 0; w < warps; ++w) s += warp_part[w];
        atomicAdd(&self->acc[p], s);
      }
      if (pushed_peer)
        __threadfence_system();
      else
        __threadfence();
      if (atomicAdd(&self->arrive[p], 1u) == blocks - 1) {
        __threadfence();  // every block's writes and partial happen before what follows
        const float mine = atomicExch(&self->acc[p], 0.0f);
        atomicExch(&self->arrive[p], 0u);
        const std::uint64_t word = (static_cast<std::uint64_t>(t + 1) << 32) | __float_as_uint(sum ? mine : 0.0f);
        // One system-scope fence, then plain strong stores: fence + relaxed store is a release
        // (PTX memory model), without the fence a st.release would repeat per destination.
        gps::fence_sys();
        for (int g = 0; g < ranks; ++g) gps::st_relaxed_sys(&all[g]->slot[p][rank], word);
      }
    }
    // Warp 0 waits, lane g on GPU g's word, all in parallel; the sum is taken in rank order.
    if (tid < 32) {
      const std::uint64_t tag = static_cast<std::uint64_t>(t + 1) << 32;
      std::uint64_t w = tag;
      if (static_cast<int>(tid) < ranks) w = gps::wait_geq_sys<std::uint64_t>(&self->slot[p][tid], tag, wait, "iteration word");
      __syncwarp();
      float s = 0;
      for (int g = 0; g < ranks; ++g)
        s += __uint_as_float(static_cast<unsigned>(__shfl_sync(0xFFFFFFFFu, w, g) & 0xFFFFFFFFu));
      if (tid == 0) total = s;
    }
    __syncthreads();  // the other threads read after thread 0's acquire
    return total;
  }
#endif
};

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
