#include "apps/graph/graph_kernels.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "apps/graph/graph_proact_plan.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/sync.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::graph {
namespace {

template <Access A>
struct Acc;
// span(v, e, n): the n elements from e as one readable run (they never cross a rank's chunk), or
// nullptr where they must be loaded one by one (a GPS page this device does not subscribe to).
template <>
struct Acc<Access::local> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.local[e]; }
  static __device__ __forceinline__ const float* span(const VecArg& v, std::int64_t e, int) { return v.local + e; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.local[e] = x; }
};
template <>
struct Acc<Access::owner> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.rep[e / v.chunk_elems][e]; }
  static __device__ __forceinline__ const float* span(const VecArg& v, std::int64_t e, int) {
    return v.rep[e / v.chunk_elems] + e;
  }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.local[e] = x; }
};
template <>
struct Acc<Access::push> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.local[e]; }
  static __device__ __forceinline__ const float* span(const VecArg& v, std::int64_t e, int) { return v.local + e; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) {
    for (int d = 0; d < v.ranks; ++d) v.rep[d][e] = x;
  }
};
template <>
struct Acc<Access::held> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.local[e]; }
  static __device__ __forceinline__ const float* span(const VecArg& v, std::int64_t e, int) { return v.local + e; }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.view.store(e, x); }
};
template <>
struct Acc<Access::gps> {
  static __device__ __forceinline__ float load(const VecArg& v, std::int64_t e) { return v.view.load(e); }
  static __device__ __forceinline__ const float* span(const VecArg& v, std::int64_t e, int n) {
    return v.view.local_span(e, n);
  }
  static __device__ __forceinline__ void store(const VecArg& v, std::int64_t e, float x) { v.view.store(e, x); }
};

// Four gathers at once: every kind's loads issue before any is used; GPS starts the four loads
// (value and page mask each) before it branches on any mask (View::start_load).
template <Access A>
struct Gather4 {
  static __device__ __forceinline__ void run(const VecArg& v, const std::int32_t (&j)[4], float (&x)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = Acc<A>::load(v, j[k]);
  }
};
template <>
struct Gather4<Access::gps> {
  static __device__ __forceinline__ void run(const VecArg& v, const std::int32_t (&j)[4], float (&x)[4]) {
    typename gps::View<float>::Started s[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) s[k] = v.view.start_load(j[k]);
#pragma unroll
    for (int k = 0; k < 4; ++k) x[k] = v.view.finish_load(s[k], j[k]);
  }
};

constexpr int kThreads = kGraphThreads;
constexpr int kDefaultGather = 1;  // measured beside 4 on 2xH200 (docs/graphs.md, "The GPS load path")

// proact, after the block's rows (PROACT dissertation Algorithm 1, lines 3-8, counting up): every
// thread of the block reaches it; the barrier makes the block's stores cumulative for thread 0,
// whose system-scope fence orders them before the counter add that the copy stream's wait
// observes.
__device__ __forceinline__ void block_rows_done(const ReadyArg& rd) {
  __syncthreads();
  if (threadIdx.x == 0) {
    gps::fence_sys();
    atomicAdd(&rd.counters[blockIdx.x / rd.blocks_per_chunk], 1u);
  }
}

// Edges e, e + lanes, ... < end: use(vector value at col[e], weight(e, j)). The end and each
// edge's weight are read before the vector: a GPS load branches on its page's mask, and what the
// source orders after that branch waits for the mask (the end would be re-read every edge: the
// tracking atomics may alias it). kGather 4: four edges at once (Gather4). GPS: a device whose bit
// is set in `whole` (whole_word_of(x), read at the kernel's start) runs the local loop, with no
// mask per gather.
template <Access A, int kGather, class Weight, class Use>
__device__ __forceinline__ void for_edges(const CsrArg& a, const VecArg& x, std::uint32_t whole, std::int64_t e,
                                          const std::int64_t end, std::int64_t lanes, Weight weight, Use use) {
  if constexpr (A == Access::gps) {
    if (const float* all = x.view.whole_local(whole)) {
      VecArg mine = x;
      mine.local = const_cast<float*>(all);
      for_edges<Access::local, kGather>(a, mine, 0u, e, end, lanes, weight, use);
      return;
    }
  }
  for (; kGather == 4 && e + 3 * lanes < end; e += 4 * lanes) {
    std::int32_t j[4];
    float w[4], v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) j[k] = a.col[e + k * lanes];
#pragma unroll
    for (int k = 0; k < 4; ++k) w[k] = weight(e + k * lanes, j[k]);
    Gather4<A>::run(x, j, v);
#pragma unroll
    for (int k = 0; k < 4; ++k) use(v[k], w[k]);
  }
  for (; e < end; e += lanes) {
    const std::int32_t j = a.col[e];
    const float w = weight(e, j);
    use(Acc<A>::load(x, j), w);
  }
}

// A row's edges, lane `lane` of `lanes`; false (nothing read) when the row is split into block
// segments (row_segments.hpp), which write it instead.
template <Access A, int kGather, class Weight, class Use>
__device__ __forceinline__ bool for_row_edges(const CsrArg& a, const VecArg& x, std::uint32_t whole, std::int64_t row,
                                              int lane, std::int64_t lanes, Weight weight, Use use) {
  const std::int64_t begin = a.row_ptr[row], end = a.row_ptr[row + 1];
  if (a.long_row > 0 && end - begin > a.long_row) return false;
  for_edges<A, kGather>(a, x, whole, begin + lane, end, lanes, weight, use);
  return true;
}

// GPS: View::whole_word (the devices that may load without masks); every other kind 0. Kernels
// issue it first and test it in for_edges, so its load overlaps the row offsets' instead of
// preceding or following them (2xH200, 432b122: tested after them, gps on one GPU trailed single
// by ~100-250 µs per iteration on every graph, road:5120 pagerank 918.28 against 798.00).
template <Access A>
__device__ __forceinline__ std::uint32_t whole_word_of(const VecArg& x) {
  if constexpr (A == Access::gps) return x.view.whole_word();
  return 0u;
}

// Every thread of the block calls it; thread 0 gets op over the block's values.
template <class Op>
__device__ __forceinline__ float block_reduce(float v, Op op) {
  __shared__ float warps[kThreads / 32];
  for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, off));
  if ((threadIdx.x & 31u) == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int w = 1; w < kThreads / 32; ++w) v = op(v, warps[w]);
  return v;
}

// Thread 0 of segment k's block leaves the block's partial; in the row's last block to finish it
// returns true with the row's partials combined in segment order (the same value every run) and
// resets the row's counter for the next launch (threadFenceReduction's pattern).
template <class Op>
__device__ __forceinline__ bool segment_finish(const CsrArg& a, std::int64_t k, float part, Op op, float* row_value) {
  const RowSegment& s = a.segs[k];
  a.partial[k] = part;
  __threadfence();
  if (atomicAdd(&a.done[s.split], 1u) != static_cast<unsigned>(s.count - 1)) return false;
  __threadfence();
  const volatile float* p = a.partial + s.first;
  float v = p[0];
  for (int i = 1; i < s.count; ++i) v = op(v, p[i]);
  a.done[s.split] = 0u;
  *row_value = v;
  return true;
}

struct Plus {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct Min {
  __device__ float operator()(float a, float b) const { return fminf(a, b); }
};

// A row's result stored through the paradigm's store, as the CPU references compute it; pagerank
// adds |y - x| to `change` (tolerance mode), sssp keeps min(old, d) and raises `changed`. The row
// kernels' lane 0 and the segments' finishing thread share them.
template <Access A>
__device__ __forceinline__ void store_rank(const VecArg& x, const VecArg& y, std::int64_t slot, float sum, float base,
                                           float damping, double* change) {
  const float v = base + damping * sum;
  Acc<A>::store(y, slot, v);
  if (change != nullptr) atomicAdd(change, static_cast<double>(fabsf(v - Acc<A>::load(x, slot))));
}
template <Access A>
__device__ __forceinline__ void store_distance(const VecArg& x, const VecArg& y, std::int64_t slot, float d,
                                               int* changed) {
  const float old = Acc<A>::load(x, slot);
  const float v = fminf(old, d);
  Acc<A>::store(y, slot, v);
  if (v < old) *changed = 1;
}

// The GPS kinds (gps, held) store a block's rows as one run instead of one store per row thread:
// a block's rows are contiguous in y (rows_per_block(lanes) from the block's first), so each
// row's lane 0 leaves (value, whether it is this kernel's row) in shared memory and, after the
// block's barrier, thread t finishes row t: one span (View::span: the run's subscriber check,
// once per block), consecutive threads on consecutive words (whole lines on the link), and the
// row loop holds neither a mask nor the publishing code. finish(slot, value, before, span)
// stores, where before = early(slot), the finishing thread's loads (sssp: the old distance).
// Measured (Nsight Compute, 2xH200, sssp rmat:20, 2 GPUs, clocks locked): with one View::store per
// row thread, bounded to push's 32 registers, the row kernel spilled inside its gather loop and
// took 430-449 us against push's 349-361; staged, 258-274. sssp only: pagerank's is not staged.
// The span's mask read and early()'s loads are issued before the barrier, not after it: after it
// they were two dependent round trips to L2 on every block's tail, which the whole block waits
// out (the local kernel's tail is one). Nsight Compute, one H200, sssp rmat:23, 16 lanes a row,
// the held kind with nothing to publish against single's kernel: 2.56 against 2.35 ms, 91 % of
// the warps resident against 74 % (waiting at the tail), 802 M warp instructions against 635 M.
// Moving them gained 2.4 % (bench, one GPU: 2584 -> 2521-2523 us, single 2267-2274); the rest of
// the held kernel's gap is not explained yet (docs/graphs.md).
template <Access A>
constexpr bool kStagedRows = A == Access::gps || A == Access::held;
template <class Early, class Finish>
__device__ __forceinline__ void staged_rows(const CsrArg& a, const VecArg& y, int lane_shift, int lane, bool mine,
                                            float value, Early early, Finish finish) {
  __shared__ float vals[kThreads];
  __shared__ bool keep[kThreads];
  const int local = static_cast<int>(threadIdx.x) >> lane_shift;
  if (lane == 0) {
    vals[local] = value;
    keep[local] = mine;
  }
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.x) * kThreads) >> lane_shift;
  const std::int64_t left = a.rows - first;  // >= 1: the grid has a block per rows_per_block rows
  const int rows = static_cast<int>(left < (kThreads >> lane_shift) ? left : (kThreads >> lane_shift));
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t slot = a.first_slot + first + t;
  typename gps::View<float>::Span s;
  decltype(early(slot)) before{};
  if (t < rows) {  // only the finishing threads: their loads' latency hides in the barrier's wait
    s = y.view.span(static_cast<std::uint64_t>(a.first_slot + first), static_cast<std::uint64_t>(rows));
    before = early(slot);
  }
  __syncthreads();
  if (t < rows && keep[t]) finish(slot, vals[t], before, s);
}
// One block per segment of a split row, four gathers in flight per thread (a segment is 4 edges
// a thread). Rows as pagerank_kernel's.
template <Access A>
__global__ void pagerank_segments(CsrArg a, VecArg x, VecArg y, const float* __restrict__ inv_deg, float base,
                                  float damping, double* change) {
  const std::uint32_t whole = whole_word_of<A>(x);
  const RowSegment s = a.segs[blockIdx.x];
  float sum = 0;
  for_edges<A, 4>(
      a, x, whole, s.begin + threadIdx.x, s.end, kThreads, [&](std::int64_t, std::int32_t j) { return inv_deg[j]; },
      [&](float v, float w) { sum += v * w; });
  sum = block_reduce(sum, Plus{});
  float total;
  if (threadIdx.x == 0 && segment_finish(a, blockIdx.x, sum, Plus{}, &total))
    store_rank<A>(x, y, a.first_slot + s.row, total, base, damping, change);
}

template <Access A>
__global__ void sssp_segments(CsrArg a, VecArg x, VecArg y, int* changed) {
  const std::uint32_t whole = whole_word_of<A>(x);
  const RowSegment s = a.segs[blockIdx.x];
  float d = __int_as_float(0x7f800000);  // +inf
  for_edges<A, 4>(
      a, x, whole, s.begin + threadIdx.x, s.end, kThreads, [&](std::int64_t e, std::int32_t) { return a.val[e]; },
      [&](float v, float w) { d = fminf(d, v + w); });
  d = block_reduce(d, Min{});
  float best;
  if (threadIdx.x == 0 && segment_finish(a, blockIdx.x, d, Min{}, &best))
    store_distance<A>(x, y, a.first_slot + s.row, best, changed);
}

// A thread's row and lane. lanes is a power of two (lanes_for; the launches check it), passed as
// its shift: a runtime divisor made `t / lanes`, `t % lanes` and the edge loop's trip count 64-bit
// divisions (a call of ~20-70 instructions each in the PTX), and road graphs (4 lanes, about 4
// edges a row) are issue-bound: Nsight Compute on 1 H200, pagerank road:5120: 550.5 M warp
// instructions, 20 cycles per issued instruction, 20 % of the DRAM bandwidth.
struct RowLane {
  std::int64_t row;
  int lane;
  std::int64_t lanes;  // 64-bit 1 << shift: the edge loop's trip count then divides by a shift
};
__device__ __forceinline__ RowLane row_lane(int shift) {
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  return RowLane{t >> shift, static_cast<int>(t & ((1 << shift) - 1)), std::int64_t{1} << shift};
}

// pagerank's gather is latency-bound: its GPS kind is held to full occupancy (8 blocks of 256
// threads, 32 registers), which the local and push kinds reach by themselves (ptxas, sm_90).
// Unbounded it took 40 registers (6 blocks per SM) for its mask path, though a vector every GPU
// holds whole (rmat) never takes it; bounded, 8 bytes spill there. 2xH200, rmat:20, 2 GPUs, one
// invocation: gps 141.12 us against p2p_inline's 141.68 (unbounded: 152.0-152.6, 1.13x p2p_inline
// in another). Not sssp: bounded, its GPS kind spills 26 bytes and ran 266.5 against 245-253.
template <Access A>
constexpr int kRowBlocksPerSm = A == Access::gps ? 2048 / kThreads : 1;

// `lanes` consecutive threads per row, block b rows [b kThreads / lanes, (b + 1) kThreads / lanes)
// (rows_per_block: the proact chunk split relies on it); every thread of a warp reaches the
// shuffles. kReady: proact's counting (block_rows_done), compiled out of the other paradigms.
template <Access A, bool kReady, int kGather>
__global__ void __launch_bounds__(kThreads, kRowBlocksPerSm<A>) pagerank_kernel(CsrArg a, VecArg x, VecArg y, const float* __restrict__ inv_deg, float base,
                                float damping, double* change, int lane_shift, ReadyArg rd) {
  const std::uint32_t whole = whole_word_of<A>(x);
  const auto [row, lane, lanes] = row_lane(lane_shift);
  float sum = 0;
  const bool mine =
      row < a.rows && for_row_edges<A, kGather>(
                          a, x, whole, row, lane, lanes, [&](std::int64_t, std::int32_t j) { return inv_deg[j]; },
                          [&](float v, float w) { sum += v * w; });
  for (int off = static_cast<int>(lanes) / 2; off > 0; off /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, off, static_cast<int>(lanes));
  // Not staged (staged_rows): on 2xH200 that made pagerank's gps 1.14-1.24x p2p_inline (rmat:20,
  // rmat:23, 2 GPUs, one invocation beside the unstaged 1.01-1.02x), where it made sssp's faster.
  if (mine && lane == 0) store_rank<A>(x, y, a.first_slot + row, sum, base, damping, change);
  if constexpr (kReady) block_rows_done(rd);
}

// Rows mapped to blocks as pagerank_kernel's.
template <Access A, bool kReady, int kGather>
__device__ __forceinline__ void sssp_rows(const CsrArg& a, const VecArg& x, const VecArg& y, int* changed,
                                          int lane_shift, const ReadyArg& rd) {
  const std::uint32_t whole = whole_word_of<A>(x);
  const auto [row, lane, lanes] = row_lane(lane_shift);
  float d = __int_as_float(0x7f800000);  // +inf
  const bool mine =
      row < a.rows && for_row_edges<A, kGather>(
                          a, x, whole, row, lane, lanes, [&](std::int64_t e, std::int32_t) { return a.val[e]; },
                          [&](float v, float w) { d = fminf(d, v + w); });
  for (int off = static_cast<int>(lanes) / 2; off > 0; off /= 2)
    d = fminf(d, __shfl_down_sync(0xffffffffu, d, off, static_cast<int>(lanes)));
  if constexpr (kStagedRows<A>) {
    staged_rows(
        a, y, lane_shift, lane, mine, d, [&](std::int64_t slot) { return Acc<A>::load(x, slot); },
        [&](std::int64_t slot, float best, float old, const auto& s) {
      const float v = fminf(old, best);
      y.view.store(s, static_cast<std::uint64_t>(slot), v);
      if (v < old) *changed = 1;
    });
  } else if (mine && lane == 0) {
    store_distance<A>(x, y, a.first_slot + row, d, changed);
  }
  if constexpr (kReady) block_rows_done(rd);
}
template <Access A, bool kReady, int kGather>
__global__ void sssp_kernel(CsrArg a, VecArg x, VecArg y, int* changed, int lane_shift, ReadyArg rd) {
  sssp_rows<A, kReady, kGather>(a, x, y, changed, lane_shift, rd);
}
// held, at full occupancy as pagerank's gps kind: unbounded, its publishing code took 40 registers
// (6 blocks per SM, where push's 32 run 8); bounded and staged (ptxas, sm_90) it holds 32 with 8
// bytes spilled outside the gather loop. A kernel of its own: bounds on the others would change
// their allocation (push's went from 32 to 40 registers under (256, 1)).
template <int kGather>
__global__ void __launch_bounds__(kThreads, 2048 / kThreads)
    sssp_held_kernel(CsrArg a, VecArg x, VecArg y, int* changed, int lane_shift, ReadyArg rd) {
  sssp_rows<Access::held, false, kGather>(a, x, y, changed, lane_shift, rd);
}

// One row's factor, updated in place: no other thread reads or writes it (als's rows are final
// once their thread stored them, so proact can ship them while other blocks still run).
template <Access A>
__device__ __forceinline__ void sgd_row(const CsrArg& a, const VecArg& own, const VecArg& other, float lr, float lambda,
                                        std::int64_t row, float (&p)[kSgdRank]) {
  const std::int64_t at = (a.first_slot + row) * kSgdRank;
  float q[kSgdRank];
#pragma unroll
  for (int f = 0; f < kSgdRank; ++f) p[f] = Acc<A>::load(own, at + f);
  for (std::int64_t e = a.row_ptr[row], end = a.row_ptr[row + 1]; e < end; ++e) {
    const std::int64_t c = static_cast<std::int64_t>(a.col[e]) * kSgdRank;
    const float rating = a.val[e];
    // One page check per factor row (GPS), not one per element; a row on a page this GPU does not
    // subscribe to is loaded element by element from its home.
    const float* qs = Acc<A>::span(other, c, kSgdRank);
    if (qs != nullptr) {
#pragma unroll
      for (int f = 0; f < kSgdRank; ++f) q[f] = qs[f];
    } else {
#pragma unroll
      for (int f = 0; f < kSgdRank; ++f) q[f] = Acc<A>::load(other, c + f);
    }
    float pred = 0;
#pragma unroll
    for (int f = 0; f < kSgdRank; ++f) pred += p[f] * q[f];
    const float err = rating - pred;
#pragma unroll
    for (int f = 0; f < kSgdRank; ++f) p[f] += lr * (err * q[f] - lambda * p[f]);
  }
}

// Paradigms whose stores cross the links (p2p_inline, gps) publish a block's rows from shared
// memory, consecutive threads on consecutive words: a thread storing its own 64-B row would put
// one 4-B write per thread and word on the link, the staged rows go as whole 128-B lines.
template <Access A>
constexpr bool kStageRows = A == Access::push || A == Access::gps || A == Access::held;
constexpr int kTileStride = kSgdRank + 1;  // padded: the row-wise writes do not share banks

// A thread per row: block b rows [b kThreads, (b + 1) kThreads), contiguous in `own`.
template <Access A, bool kReady>
__global__ void sgd_kernel(CsrArg a, VecArg own, VecArg other, float lr, float lambda, ReadyArg rd) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float p[kSgdRank];
  if constexpr (kStageRows<A>) {
    __shared__ float tile[kThreads * kTileStride];
    if (row < a.rows) {
      sgd_row<A>(a, own, other, lr, lambda, row, p);
#pragma unroll
      for (int f = 0; f < kSgdRank; ++f) tile[threadIdx.x * kTileStride + f] = p[f];
    }
    __syncthreads();
    const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x;
    const std::int64_t left = a.rows - first;
    const int words = static_cast<int>(left < blockDim.x ? left : blockDim.x) * kSgdRank;
    const std::int64_t base = (a.first_slot + first) * kSgdRank;
    for (int k = threadIdx.x; k < words; k += blockDim.x)
      Acc<A>::store(own, base + k, tile[(k / kSgdRank) * kTileStride + k % kSgdRank]);
    if constexpr (kReady) block_rows_done(rd);
  } else {
    if (row < a.rows) {
      sgd_row<A>(a, own, other, lr, lambda, row, p);
      const std::int64_t at = (a.first_slot + row) * kSgdRank;
#pragma unroll
      for (int f = 0; f < kSgdRank; ++f) Acc<A>::store(own, at + f, p[f]);
    }
    if constexpr (kReady) block_rows_done(rd);  // every thread of the block, those past the last row included
  }
}

// GPSM_GRAPH_GATHER: gathers each thread keeps in flight in pagerank and sssp, 1 (the plain edge
// loop) or 4 (Gather4); every paradigm runs the same loop. Read once per process, not per launch;
// anything else is an error naming the variable.
int parse_gather_width() {
  const char* v = std::getenv("GPSM_GRAPH_GATHER");
  if (v == nullptr || *v == '\0') return kDefaultGather;
  if (std::string(v) == "1") return 1;
  if (std::string(v) == "4") return 4;
  throw Error(fmt::format("gpsm: GPSM_GRAPH_GATHER='{}': expected 1 or 4", v));
}
int gather_width() {
  static const int width = parse_gather_width();  // a throw leaves it unset: the next launch throws again
  return width;
}

unsigned blocks_for(std::int64_t threads) { return static_cast<unsigned>((threads + kThreads - 1) / kThreads); }

// Calls f.template operator()<A, kReady>() for the run-time kind (C++17: a generic lambda taking
// a tag). Counting (proact) runs on the local kind only: its replicas are read like memcpy's.
template <Access A, bool R>
struct Tag {
  static constexpr Access value = A;
  static constexpr bool ready = R;
};
template <class F>
void dispatch(Access k, const ReadyArg& rd, std::int64_t rows_per_block, const char* kernel, F&& f) {
  if (rd.counters != nullptr) {
    if (k != Access::local) throw Error(fmt::format("gpsm: {}: ready counters with a non-local vector", kernel));
    if (rd.rows_per_block != rows_per_block || rd.blocks_per_chunk < 1)
      throw Error(fmt::format("gpsm: {}: the proact chunks assume {} rows per block, the kernel maps {}", kernel,
                              rd.rows_per_block, rows_per_block));
    f(Tag<Access::local, true>{});
    return;
  }
  switch (k) {
    case Access::local: f(Tag<Access::local, false>{}); break;
    case Access::owner: f(Tag<Access::owner, false>{}); break;
    case Access::push: f(Tag<Access::push, false>{}); break;
    case Access::gps: f(Tag<Access::gps, false>{}); break;
    case Access::held: f(Tag<Access::held, false>{}); break;
  }
}

// The kind a kernel reading x and writing y runs: theirs when they agree. A GPS vector comes as
// local where this rank alone holds it (Array::sole) and as held where it holds every page
// (Array::holds_every_page), both with the view kept, so that a mixed pair runs the kind that
// serves both: gps if either needs the checked loads, else held if either's stores are
// published (a sole vector's view stores locally), else local.
Access common_kind(const VecArg& x, const VecArg& y, const char* kernel) {
  if (x.kind == y.kind) return x.kind;
  const auto is_gps = [](const VecArg& v) {
    return v.kind == Access::gps || v.kind == Access::held || (v.kind == Access::local && v.view.local() != nullptr);
  };
  if (!is_gps(x) || !is_gps(y))
    throw Error(fmt::format("gpsm: {}: the read and written vectors are of different paradigms", kernel));
  if (x.kind == Access::gps || y.kind == Access::gps) return Access::gps;
  return Access::held;  // one held, the other sole
}

}  // namespace

void launch_pagerank(const CsrArg& a, const VecArg& x, const VecArg& y, const float* inv_deg, float base,
                     float damping, double* change, int lanes, cudaStream_t s, const ReadyArg& ready) {
  if (a.rows == 0) return;
  const bool four = gather_width() == 4;
  const int shift = lane_shift(lanes);
  // held runs as gps here: pagerank's gps kind reads a held vector without masks too (whole_local),
  // and on 2xH200 (rmat:23, 2 GPUs, two invocations each) the held kind ran 1.031-1.032x p2p_inline
  // where the gps kind ran 1.008-1.009x; sssp and sgd gain from it (graph_exchange_cuda.cpp).
  Access kind = common_kind(x, y, "pagerank");
  if (kind == Access::held) kind = Access::gps;
  dispatch(kind, ready, rows_per_block(lanes), "pagerank", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (T::value != Access::held) {  // held runs as gps (no instance compiled)
      if (a.nsegs > 0)  // before the row kernel: its blocks' proact counts then cover the split rows too
        pagerank_segments<T::value>
            <<<static_cast<unsigned>(a.nsegs), kThreads, 0, s>>>(a, x, y, inv_deg, base, damping, change);
      if (four) {
        pagerank_kernel<T::value, T::ready, 4>
            <<<blocks_for(a.rows * lanes), kThreads, 0, s>>>(a, x, y, inv_deg, base, damping, change, shift, ready);
      } else {
        pagerank_kernel<T::value, T::ready, 1>
            <<<blocks_for(a.rows * lanes), kThreads, 0, s>>>(a, x, y, inv_deg, base, damping, change, shift, ready);
      }
    }
  });
  GPSM_CUDA(cudaGetLastError());
}

void launch_sssp(const CsrArg& a, const VecArg& x, const VecArg& y, int* changed, int lanes, cudaStream_t s,
                 const ReadyArg& ready) {
  if (a.rows == 0) return;
  const bool four = gather_width() == 4;
  const int shift = lane_shift(lanes);
  dispatch(common_kind(x, y, "sssp"), ready, rows_per_block(lanes), "sssp", [&](auto tag) {
    using T = decltype(tag);
    if (a.nsegs > 0) sssp_segments<T::value><<<static_cast<unsigned>(a.nsegs), kThreads, 0, s>>>(a, x, y, changed);
    const unsigned blocks = blocks_for(a.rows * lanes);
    if constexpr (T::value == Access::held) {
      if (four) sssp_held_kernel<4><<<blocks, kThreads, 0, s>>>(a, x, y, changed, shift, ready);
      else sssp_held_kernel<1><<<blocks, kThreads, 0, s>>>(a, x, y, changed, shift, ready);
    } else if (four) {
      sssp_kernel<T::value, T::ready, 4><<<blocks, kThreads, 0, s>>>(a, x, y, changed, shift, ready);
    } else {
      sssp_kernel<T::value, T::ready, 1><<<blocks, kThreads, 0, s>>>(a, x, y, changed, shift, ready);
    }
  });
  GPSM_CUDA(cudaGetLastError());
}

void launch_sgd(const CsrArg& a, const VecArg& own, const VecArg& other, float lr, float lambda, cudaStream_t s,
                const ReadyArg& ready) {
  if (a.rows == 0) return;
  dispatch(common_kind(own, other, "sgd"), ready, rows_per_block(1), "sgd", [&](auto tag) {
    using T = decltype(tag);
    sgd_kernel<T::value, T::ready><<<blocks_for(a.rows), kThreads, 0, s>>>(a, own, other, lr, lambda, ready);
  });
  GPSM_CUDA(cudaGetLastError());
}

}  // namespace gpsm::apps::graph
