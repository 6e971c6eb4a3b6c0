#pragma once
// Synchronization of the CPU-free CG kernels: one persistent kernel per GPU, whose blocks meet at
// every reduction of the iteration (two for Standard CG, one for Pipelined) without the host and
// without a grid-wide barrier. Built on the runtime's ordering-named operations and bounded waits
// (gpsm/gps/sync.hpp).
//
// A reduction with sequence number s (0, 1, 2, ... over the launch):
//   1. every block that computes finishes its chunks (their partial sums in the GPU's partial
//      array, their halo pushes in the peers' memory), fences (system scope when it pushed to a
//      peer) and counts itself in the GPU's arrival counter;
//   2. one block per GPU is the communication block (thread-block specialization): it sums the
//      chunk partials in cg_math.hpp's order and stores {tag s + 1, its sums} into its slot of
//      EVERY GPU's inbox (one fence, then strong stores: a release). Standard CG: the block whose
//      arrival completes the count (it knows at once; the others have nothing to do but wait).
//      Pipelined CG: block 0, which computes nothing (the thesis' Listing 3.1): it waits for the
//      count while the other blocks wait for it too, then sends while they run SpMV on chunks
//      that read no halo entry;
//   3. every block (the communication block too) waits, one lane per GPU, until its own GPU's
//      inbox holds tag s + 1 from every GPU (acquire: the peers' halo pushes are visible after
//      it) and adds the GPUs' sums in rank order, before anything that needs the sums or the
//      peers' entries. No local broadcast: a second hop (the communication block's wait, then its
//      release to the GPU's blocks) cost 1.3 us more per reduction on one H200 (experiments/cg-sync).
// Every GPU computes the same sums in the same order, so all decide alike (to stop, to divide).
// On one GPU the fences and polls are GPU-scoped: nothing leaves the GPU (0.7 us per reduction).
//
// Why two inbox parities are enough: a GPU stores tag s + 2 into parity s & 1 only after all its
// computing blocks arrived at s + 2, i.e. after each received s + 1, which needs every GPU's tag
// s + 1, which that GPU sent only after all its blocks arrived at s + 1, i.e. after each of them
// had read its inbox s. The arrival counter only grows.
#include <cstdint>
#include <vector>

#include "apps/cg/cg_math.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::apps::cg {

struct alignas(32) CgSlot {
  std::uint64_t tag;  // reduction s + 1 once the values are there
  double v[3];
};

// One per GPU, in its memory, zeroed before each launch.
struct CgSyncState {
  CgSlot inbox[2][kMaxRanks];  // [parity][sender]
  std::uint64_t arrive;        // block arrivals over the launch
};

struct CgSync {
  CgSyncState* self = nullptr;
  CgSyncState* all[kMaxRanks] = {};  // all[g]: GPU g's state (peer pointers)
  int rank = 0, ranks = 1;
  unsigned blocks = 1;  // blocks of this GPU's kernel that arrive at each reduction
  gps::WaitPolicy wait;

#if defined(__CUDACC__)
  // Block-collective. Counts the block in (after its stores: system-scope fence when pushed_peer)
  // and returns whether it completed reduction s's count.
  __device__ bool arrive(std::uint64_t s, bool pushed_peer) const {
    __shared__ int last;
    const bool pushed = __syncthreads_or(pushed_peer) != 0;  // also orders the block's stores before the fence
    if (threadIdx.x == 0) {
      if (pushed)
        __threadfence_system();
      else
        __threadfence();
      const auto old = atomicAdd(reinterpret_cast<unsigned long long*>(&self->arrive), 1ull);
      last = old + 1 == static_cast<std::uint64_t>(blocks) * (s + 1) ? 1 : 0;
      if (last) __threadfence();  // acquire side: every block's stores happen before what follows
    }
    __syncthreads();
    return last != 0;
  }

  // Block-collective: returns when every block of this GPU arrived at reduction s.
  __device__ void wait_local(std::uint64_t s) const {
    if (threadIdx.x == 0)
      // GPU scope: only this GPU's blocks count here, and what follows reads only their stores.
      gps::wait_geq_scoped<false, std::uint64_t>(&self->arrive, static_cast<std::uint64_t>(blocks) * (s + 1), wait, "cg local arrivals");
    __syncthreads();
  }

  // Communication block only (block-collective): the GPU's sums of `count` values over `chunks`
  // chunk partials (parts[c * count + v]), sent to every GPU's inbox. Does not wait: receive does.
  __device__ void send(std::uint64_t s, const double* parts, std::int64_t chunks, int count) const;

  // Block-collective, every block after its arrive(s) (the communication block after its send):
  // out[v] (shared memory) = the GPUs' sums of reduction s added in rank order; every store a
  // block of any GPU released before arriving at s is visible to this block afterwards.
  __device__ void receive(std::uint64_t s, int count, double* out) const;

#endif
};

// The host side (CgSyncStates) is in cg_sync_states.hpp: it needs the context, and the kernel
// files that include this header should not (their rebuild follows every runtime header then).

}  // namespace gpsm::apps::cg
