#pragma once
// The device-side fence of persistent GPS kernels: a fence and a cross-GPU barrier in one call,
// with an optional float sum over every thread of every GPU (a solver's residual norm).
//
//   auto fences = ctx.device_fences(blocks);            // host, before each launch: rank r's at [r]
//   kernel<<<blocks, threads, 0, ctx.stream(r)>>>(x.view(r), fences[r]);
//   ...device, every block of every GPU, once per round t = 0, 1, 2, ...:
//   const float total = f.arrive_and_wait(t, part, /*sum=*/true, published);
//
// Guarantee: every store a block of any GPU issued through an inline_store view before its call
// of round t is in every subscriber's replica, and visible to every thread of every GPU, when that
// thread's call of round t returns. `published` says whether the calling block stored to another
// GPU's memory since its last call (a view span tells: Span::others != 0); true is always correct,
// false lets a block that stored only locally end with a GPU-scope fence instead of a system-scope
// one. Combine and bulk stores wait in the dirty map for a host fence, so Context::device_fences
// refuses contexts holding such arrays.
//
// How (one message per GPU pair per round, no grid-wide barrier):
//   1. the block's partial sum goes into this GPU's acc[p] (p = t & 1), one atomic per block;
//   2. thread 0 fences (system scope when the block published) and counts itself in `arrived`,
//      which only grows over a launch: it reads blocks x (t + 1) once every block arrived at t, so
//      the block whose add returns blocks x (t + 1) - 1 knows it is the last, with nothing to reset;
//   3. the GPU's last block to arrive takes acc[p] back to zero and stores
//      {tag t + 1, partial} with a system-scope release into slot [p][rank] of EVERY GPU;
//   4. warp 0 of every block polls its own GPU's slots [p][0..ranks) until each carries tag
//      >= t + 1 (lane g on GPU g, acquire) and returns the partials summed in rank order, so every
//      block of every GPU gets the same float.
// Two parities suffice: a GPU publishes tag t + 3 into slot p only after its blocks passed round
// t + 2, which needs every GPU's tag t + 2, published only after all of that GPU's blocks finished
// waiting for tag t + 1. So a slot never moves on while somebody still waits on it, and acc[p] is
// reset by the publisher before its release and reused only after its acquire.
//
// arrive_and_reduce is the same fence carrying a reduction whose bits are the same on every run
// and every GPU (a solver's dot products checked against a CPU reference): instead of a float
// atomic per block, the GPU's last block to arrive computes the GPU's values in an order the
// caller fixes (from per-chunk partials its blocks stored before arriving), stores them into slot
// [p][rank] of every GPU's `values` before its tagged word, and every block adds the GPUs' values
// in rank order. Both calls share the round numbering and the two parities.
//
// The split phase (arrive, wait_local, wait_all): arrive_and_reduce cut where a persistent kernel has
// work that needs neither the reduction nor the peers' stores (Pipelined CG's SpMV over the rows
// this GPU wrote itself), so the exchange across GPUs overlaps that work:
//   f.arrive<N>(t, published, gpu_values);  // arrive_and_reduce's steps up to the tags (shared code)
//   f.wait_local(t);     // every block of THIS GPU arrived at round t: its stores are visible here
//   ...work on this GPU's own data...
//   f.wait_all<N>(t, result);  // arrive_and_reduce's return: every GPU's values and published stores
// arrive_and_reduce(t, ...) is exactly arrive(t, ...) then wait_all(t, ...). wait_local polls the
// arrival counter itself (GPU scope: only this GPU's blocks add to it) until it reads
// blocks x (t + 1): each block fenced, then added (a release), and the adds form one release
// sequence, so the block that reads that count (acquire) sees every store this GPU's blocks made
// before arriving at t. It says nothing about other GPUs. Why the counter and not a word the last
// block raises after it: that was a second hop on every round's critical path (the last block's
// add returning, then its fence and two more atomics, before any waiting block could see them),
// the hop CPU-free CG's own synchronization (cg_sync.hpp) never had: CG's gps_pipe, which waits
// there every iteration, ran 4-8 % faster without it on one and two H200s (poisson2d:512 on 2 GPUs
// 12.15 -> 11.59 us; experiments/device-fence).
// The parity argument above holds unchanged when other work separates arrive from wait: a GPU
// publishes round t + 2 into parity p only after every one of its blocks arrived at t + 2, which
// each did after its wait_all(t + 1), which needs every GPU's tag t + 2, which that GPU published only
// after all its blocks arrived at t + 1, i.e. after each finished wait_all(t). A block must call
// wait_all(t) before arrive(t + 1) (its values of parity p are reused at t + 2).
//
// Every block of a GPU must be co-resident (Context::check_coresident, then a cooperative or
// otherwise co-resident launch) and take part in every round, numbered 0, 1, 2, ... within a
// launch (the arrival count is blocks x rounds; the state is zeroed before each launch); waits are
// bounded (WaitPolicy, GPSM_WAIT_TIMEOUT_MS).
#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/sync.hpp"

namespace gpsm::gps {

// One per GPU, in that GPU's memory; zeroed by Context::device_fences before each launch.
// Doubles one arrive_and_reduce round carries per GPU.
constexpr int kFenceValues = 4;

struct DeviceFenceState {
  std::uint64_t slot[2][kMaxDevices];  // {tag (t + 1) << 32 | float bits of that rank's partial}
  unsigned long long arrived;          // block arrivals over the launch: blocks x (t + 1) once round t is in
  float acc[2];
  double values[2][kMaxDevices][kFenceValues];  // arrive_and_reduce: rank's values, stored before its tag
};

struct DeviceFence {
  DeviceFenceState* self = nullptr;
  DeviceFenceState* all[kMaxDevices] = {};  // all[g]: GPU g's state (peer pointers)
  int rank = 0, ranks = 1;
  unsigned int blocks = 1;  // blocks per GPU that arrive every round
  WaitPolicy wait;

#if defined(__CUDACC__)
  // Block-collective: every thread of every participating block calls it once per round `t`
  // (0, 1, 2, ... within one launch). `part`: this thread's contribution (ignored unless `sum`).
  // Returns the sum over every thread of every GPU (0 when !sum).
  __device__ float arrive_and_wait(int t, float part, bool sum, bool published) const {
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
      if (published)
        __threadfence_system();
      else
        __threadfence();
      if (atomicAdd(&self->arrived, 1ull) + 1ull == arrivals(t)) {
        __threadfence();  // every block's writes and partial happen before what follows
        const float mine = atomicExch(&self->acc[p], 0.0f);
        const std::uint64_t word = (static_cast<std::uint64_t>(t + 1) << 32) | __float_as_uint(sum ? mine : 0.0f);
        // One system-scope fence, then plain strong stores: fence + relaxed store is a release
        // (PTX memory model); a st.release per destination would repeat the fence.
        fence_sys();
        for (int g = 0; g < ranks; ++g) st_relaxed_sys(&all[g]->slot[p][rank], word);
      }
    }
    if (tid < 32) {
      const std::uint64_t tag = static_cast<std::uint64_t>(t + 1) << 32;
      std::uint64_t w = tag;
      if (static_cast<int>(tid) < ranks) w = wait_geq_sys<std::uint64_t>(&self->slot[p][tid], tag, wait, "device fence word");
      __syncwarp();
      float s = 0;
      for (int g = 0; g < ranks; ++g)
        s += __uint_as_float(static_cast<unsigned>(__shfl_sync(0xFFFFFFFFu, w, g) & 0xFFFFFFFFu));
      if (tid == 0) total = s;
    }
    __syncthreads();  // the other threads read after warp 0's acquire
    return total;
  }
  // The fence with a reduction of N doubles whose order the caller fixes. Block-collective, like
  // arrive_and_wait (same rounds t). The GPU's last block to arrive calls gpu_values(out)
  // (block-collective; every thread calls it; `out` is shared memory of N doubles, which the
  // function fills before it returns) after an acquire of every block's arrival, so it sees what
  // this GPU's blocks stored before their call: read such data with __ldcg or volatile loads (L1
  // is not coherent across SMs). Every thread of every GPU gets result[k] = the GPUs' out[k] added
  // in rank order: the same bits everywhere, whatever the arrival order.
  template <int N, class GpuValues>
  __device__ void arrive_and_reduce(int t, bool published, const GpuValues& gpu_values, double (&result)[N]) const {
    arrive<N>(t, published, gpu_values);
    wait_all<N>(t, result);
  }

  // The first half of arrive_and_reduce (block-collective, once per round t per block): counts the
  // block in after its stores (system-scope fence when `published`); the GPU's last block to
  // arrive calls gpu_values(out) as arrive_and_reduce says and stores the GPU's values and tag
  // into slot [p][rank] of every GPU. Returns without waiting for peers.
  template <int N, class GpuValues>
  __device__ void arrive(int t, bool published, const GpuValues& gpu_values) const {
    if (count_in(t, published)) publish_values<N>(t, gpu_values);  // block-uniform
  }

  // Block specialization: the split phase with the GPU's values computed and published by one
  // block the kernel chooses instead of the last to arrive. Where that block has no other work
  // (the communication block of Pipelined CG in the CPU-free execution thesis, Listing 3.1), the
  // reduction overlaps the other blocks' work after wait_local instead of delaying the last
  // block's own. Per round t:
  //   every block:         f.count_in(t, published);   // arrive without values
  //   one block per GPU:   f.wait_local(t); f.publish_values<N>(t, gpu_values);
  //   every block:         f.wait_local(t); ...; f.wait_all<N>(t, result);
  // Exactly one block of each GPU calls publish_values(t), every round; never mix it with
  // arrive<N> in one round. The two-parity argument holds unchanged: publish_values(t) runs
  // after every block of its GPU arrived at t, as the last block's did.
  //
  // count_in (block-collective): counts the block in after its stores (system-scope fence when
  // `published`: the add is then wait_local's release, and the peers' through publish_values).
  // Returns whether this block was the last (the same in every thread).
  __device__ bool count_in(int t, bool published) const {
    __shared__ int last;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    __syncthreads();  // every thread's stores before thread 0's fence (cumulative)
    if (tid == 0) {
      if (published)
        __threadfence_system();
      else
        __threadfence();
      last = atomicAdd(&self->arrived, 1ull) + 1ull == arrivals(t) ? 1 : 0;
      if (last) __threadfence();  // every block's stores happen before what follows
    }
    __syncthreads();
    // No barrier needed before `last` is written again: the next round's count_in starts with one.
    return last != 0;
  }

  // Block-collective, by one block per GPU per round, once every block of this GPU arrived at t
  // (the last to arrive, or a block after its wait_local(t)): calls gpu_values(out) as
  // arrive_and_reduce says and stores the GPU's values, then its tag, into slot [p][rank] of
  // every GPU.
  template <int N, class GpuValues>
  __device__ void publish_values(int t, const GpuValues& gpu_values) const {
    static_assert(N >= 1 && N <= kFenceValues, "arrive_and_reduce: 1 to kFenceValues doubles");
    __shared__ double mine[kFenceValues];
    const int p = t & 1;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    gpu_values(mine);
    __syncthreads();
    if (tid == 0) {
      for (int g = 0; g < ranks; ++g)
        for (int k = 0; k < N; ++k)
          st_relaxed_sys(reinterpret_cast<std::uint64_t*>(&all[g]->values[p][rank][k]),
                         static_cast<std::uint64_t>(__double_as_longlong(mine[k])));
      // The values and everything this GPU's blocks released to this block, before the tags.
      fence_sys();
      const std::uint64_t word = static_cast<std::uint64_t>(t + 1) << 32;
      for (int g = 0; g < ranks; ++g) st_relaxed_sys(&all[g]->slot[p][rank], word);
    }
    // No barrier needed before `mine` is written again: the next round's count_in starts with one.
  }

  // Block-collective: returns once every block of this GPU arrived at round t (called after this
  // block's arrive(t)); every store they made before arriving is then visible to this block.
  __device__ void wait_local(int t) const {
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (tid == 0)
      // GPU scope: only this GPU's blocks add to the counter, and what follows reads only their stores.
      wait_geq_scoped<false, std::uint64_t>(reinterpret_cast<const std::uint64_t*>(&self->arrived), arrivals(t), wait,
                                            "device fence local arrivals");
    __syncthreads();  // the other threads read after thread 0's acquire
  }

  // The second half of arrive_and_reduce (block-collective, after this block's arrive(t)):
  // result[k] = the GPUs' values of round t added in rank order, and every store any block of any
  // GPU made before its arrive(t) (published ones included) is visible to every thread of this block.
  template <int N>
  __device__ void wait_all(int t, double (&result)[N]) const {
    __shared__ double total[kFenceValues];
    const int p = t & 1;
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (tid < 32) {
      const std::uint64_t tag = static_cast<std::uint64_t>(t + 1) << 32;
      double v[N];
      for (int k = 0; k < N; ++k) v[k] = 0.0;
      if (static_cast<int>(tid) < ranks) {
        wait_geq_sys<std::uint64_t>(&self->slot[p][tid], tag, wait, "device fence word");
        for (int k = 0; k < N; ++k)
          v[k] = __longlong_as_double(static_cast<long long>(
              ld_relaxed_sys(reinterpret_cast<const std::uint64_t*>(&self->values[p][tid][k]))));
      }
      __syncwarp();
      for (int k = 0; k < N; ++k) {
        double s = 0.0;
        for (int g = 0; g < ranks; ++g) s = s + __shfl_sync(0xFFFFFFFFu, v[k], g);
        if (tid == 0) total[k] = s;
      }
    }
    __syncthreads();  // the other threads read after warp 0's acquire
    for (int k = 0; k < N; ++k) result[k] = total[k];  // rewritten only after the next arrive's barrier
  }
  // The arrival count once every block arrived at round t.
  __device__ unsigned long long arrivals(int t) const {
    return static_cast<unsigned long long>(blocks) * (static_cast<unsigned long long>(t) + 1ull);
  }
  // The fence alone.
  __device__ void sync(int t, bool published = true) const { (void)arrive_and_wait(t, 0.0f, false, published); }
#endif
};

}  // namespace gpsm::gps
