// heat3d / wave3d kernels: the host-driven step (single, memcpy, p2p_inline, um, um_hints, rdl,
// proact, infinite's host loop), the initialiser, the halo pack/unpack copy (memcpy on the
// x and y axes) and the CPU-free persistent kernel (cpu_free, and infinite's persistent run with
// its pushes kept local). Point updates: apps/stencil/stencil_math.hpp (shared with the CPU
// reference, same operands in the same order, no fused multiply-add, so results match it bit for
// bit).
//
// Design of the step (both the launched step and the persistent kernel run it):
//   * Bandwidth bound: at 256^3 one heat3d iteration must read `in` (67.1 MB) and write the
//     updated cells (254^3 * 4 B = 65.5 MB): 132.6 MB, about 33 us at the ~4 TB/s an H200 reaches
//     (4.8 TB/s peak). wave3d also reads prev where it writes next: 67.1 + 2 * 64.0 = 195 MB,
//     about 49 us. The kernel before this one moved the same bytes in 135 / 162 us: a thread per
//     cell loads all 7 (13) neighbours, and the z neighbours are planes other blocks load, so the
//     L2 delivered every cell about three (five) times.
//   * Column march: a block is kTx x kTy threads; thread (tx, ty) owns the cells x0 .. x0 + V - 1
//     of one row (V = 4, a float4, when nx % 4 == 0; else V = 1, x0 = R + column) at one
//     coordinate of the "other" axis, and walks a chunk of the march axis M (the split axis when
//     that is y or z, else z). The 2R + 1 planes of its column along M sit in a register queue;
//     each step loads one new plane (prefetched one step ahead, and for wave3d prev too), the
//     R rows on each side along the other axis (other warps of the block load those rows as their
//     own centres, so they mostly hit L1) and R cells west and east of its vector (scalars, or a
//     float2 for R = 2, in the same cache lines as the neighbouring threads' vectors). So per
//     cell: one read of `in` from DRAM, one write, plus 2R / chunk planes of re-read at each
//     chunk's ends (from L2: the neighbouring chunk reads them at the same time).
//   * Work items = (x tile, other-axis tile, chunk of M). The host picks the chunk length so that
//     items about equal the blocks the GPU holds at once (one wave, no tail), but at least 4R
//     planes, so the chunk-end re-reads stay under 50 % of the L2 (not DRAM) traffic.
//   * Cells written: exactly the updated ones (the float4 path stores the first and last vector
//     of a row lane by lane, so boundary and halo cells along x are never written), and pushes
//     move exactly the interior cells of the pushed planes (float4 packets inside the row).
//   * Pushed planes first: when the split is along M, the first and last R owned planes are work
//     items of their own, ordered before the interior; along x, the x tiles that hold the pushed
//     columns come first (order 0, last, 1, last - 1, ...). The persistent kernel runs the items
//     of a block in that order, so the peer stores travel while the interior is computed.
//   * Ready counters (proact, Step::ready): the same edge chunks, items [0, T) for the lower
//     edge and [T, 2T) for the upper one (T = x tiles * other tiles: item_tiles orders the items
//     chunk by chunk). The launch has a block per item, and blocks are dispatched by ascending
//     index in practice (not guaranteed; only the overlap depends on it, never correctness), so
//     they run in the first wave and each side's counter reaches its target (T per iteration)
//     early; the copy engines waiting on it ship the edge planes while the interior is computed.
//   * Strides and sources (Step): the row and plane strides may differ from the box's extents
//     (um: a GPU's sub-box of the managed grid, marched in place), and the planes of the march
//     axis outside the owned ones may come from a neighbour's box per side (rdl along y or z:
//     plane() redirects those loads through peer pointers; the centre row and its rows along
//     the other axis are owned planes; only the float4 edge loads of a row's first or last
//     vector may touch cells of the previous or next row in memory, a halo row when the split is
//     along y, and those are never used). Split along x (rdl), the x neighbours of the centre
//     row in the halo columns are loaded from the neighbours' boxes instead (xcell_at: the halo
//     lanes of a float4 row's first and last vector, or the scalar path's west / east cells);
//     the box's own halo columns are loaded only into lanes whose results are not stored. Each
//     in a kernel variant of its own. The float4 path needs every row of in, out, the pushes
//     and the remote planes 16-byte aligned (step_vec checks pointers and strides).
//   * Loads are plain (coherent, L1-cached) global loads, never the read-only path: in the
//     persistent kernel the buffers change between iterations (IterSync's acquire invalidates L1).
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/sync.hpp"
#include "common/cuda_check.hpp"
#include "common/resident_blocks.hpp"

namespace gpsm::apps::stencil3d {
namespace {

using i64 = std::int64_t;
constexpr int kTx = kStepTx, kTy = kStepTy;  // stencil3d_plan.hpp
static_assert(kTx * kTy == kCpuFreeThreads, "the persistent kernel's blocks are step blocks");
constexpr int kFlatThreads = 256;       // init and box copy: one cell per thread, grid-stride


template <int V>
__device__ __forceinline__ void load(float (&d)[V], const float* p) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    d[0] = t.x;
    d[1] = t.y;
    d[2] = t.z;
    d[3] = t.w;
  } else {
    d[0] = *p;
  }
}

template <int V>
__device__ __forceinline__ void store(float* p, const float (&v)[V]) {
  if constexpr (V == 4)
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  else
    *p = v[0];
}

// The R cells west (w[0] = x0 - 1, w[1] = x0 - 2) and east (e[0] = x0 + V, e[1] = x0 + V + 1) of
// a thread's V cells starting at `c`. For V = 4, R = 2 they are one float2 each (c is 16-byte
// aligned, so c - 2 is 8-byte and c + 4 16-byte aligned). In the first (last) column of a row
// they are the previous (next) row's cells, read but never used for a stored cell.
template <int R, int V>
__device__ __forceinline__ void load_edges(const float* c, float (&w)[R], float (&e)[R]) {
  if constexpr (V == 4 && R == 2) {
    const float2 a = *reinterpret_cast<const float2*>(c - 2);
    const float2 b = *reinterpret_cast<const float2*>(c + 4);
    w[0] = a.y;
    w[1] = a.x;
    e[0] = b.x;
    e[1] = b.y;
  } else {
#pragma unroll
    for (int d = 0; d < R; ++d) {
      w[d] = c[-1 - d];
      e[d] = c[V + d];
    }
  }
}

// The cell at lane k + d of the row (d in [-R, R]): in the thread's vector, or a west/east edge.
template <int R, int V>
__device__ __forceinline__ float xcell(const float (&c)[V], const float (&w)[R], const float (&e)[R], int m) {
  return m < 0 ? w[-m - 1] : m >= V ? e[m - V] : c[m];
}


// Updates the cells of work item w (every thread of the block calls it; threads without a column
// in the item return at once). Returns whether this thread pushed a cell. kRemote: the step has
// remote sources (s.from_lower / from_upper): kPlanes, split along M, plane() picks the remote
// halo planes; kColumns, split along x, xcell_at patches the remote x neighbours. Variants of
// their own, so the other steps keep their plain pointer walk and registers (ptxas, sm_90, the
// wave3d float4 step along z: 60 registers plain, 72 with kPlanes, 87 with kColumns; with the
// plane branches compiled into every variant the plain one needed 97). The strides come
// resolved from the launchers (Step's 0 = the box's extents): a select on them in the kernel
// took the plain wave3d float4 step from 60 to 74 registers.
enum Rem : int { kNone = 0, kPlanes = 1, kColumns = 2 };
// Where a step's updated cells go: plain stores into s.out (every hand-written paradigm), or
// (GpsOut, gps) through a GPS view, whose local replica s.out points into: one span per stored
// vector (one mask read: the vector lies in one page), the vector stored with View::put, which
// also publishes it to the page's other subscribers. The arithmetic and the march are the same.
struct PlainOut {};
struct GpsOut {
  gps::View<float> view;
  const float* base = nullptr;  // view.local(): element 0 of the grid in this device's replica
};
// An item whose stored runs the host found uniform (classify_gps_items' published items): every
// vector put through the span View::span_with made from the host's mask, no mask read per store.
// The view is the kernel's __grid_constant__ parameter, referenced, not copied (a copy of its
// device tables goes to the stack).
struct SpanOut {
  const gps::View<float>& view;
  const float* base;  // view.local()
  gps::View<float>::Span span;
};
template <int V>
__device__ __forceinline__ gps::View<float>::Span stored_span(const GpsOut& o, std::uint64_t i) {
  return o.view.span(i, V);
}
template <int V>
__device__ __forceinline__ const gps::View<float>::Span& stored_span(const SpanOut& o, std::uint64_t) {
  return o.span;
}
// A thread's cells of work item w: column col (V cells from x = p.x0 + col * V), coordinate co
// along the other axis, march coordinates [m0, m1). Computed once per item (item_tiles and
// chunk_range divide 64-bit integers, about a hundred instructions each time); `valid` is false
// for threads without a column in the item.
struct ItemCells {
  i64 col = 0, co = 0, m0 = 0, m1 = 0;
  bool valid = false;
};
template <int R, int M>
__device__ __forceinline__ ItemCells item_cells(const Step& s, const Plan& p, i64 w) {
  constexpr int O = 3 - M;
  i64 xt, ot, ch;
  item_tiles(p, w, xt, ot, ch);
  ItemCells c;
  c.col = xt * kTx + threadIdx.x;
  c.co = R + ot * kTy + threadIdx.y;
  c.valid = c.col < p.cols && c.co < s.box.n[O] - R;
  if (c.valid) chunk_range(p, s.box.count, R, ch, c.m0, c.m1);
  return c;
}

template <Kind K, int V, int M, int kRemote = kNone, class Out = PlainOut>
__device__ __forceinline__ bool run_cells(const Step& s, const Plan& p, const ItemCells& ic, const Out& out = Out{});

template <Kind K, int V, int M, int kRemote = kNone, class Out = PlainOut>
__device__ __forceinline__ bool run_item(const Step& s, const Plan& p, i64 w, const Out& out = Out{}) {
  const ItemCells ic = item_cells<radius_of(K), M>(s, p, w);
  if (!ic.valid) return false;
  return run_cells<K, V, M, kRemote, Out>(s, p, ic, out);
}

template <Kind K, int V, int M, int kRemote, class Out>
__device__ __forceinline__ bool run_cells(const Step& s, const Plan& p, const ItemCells& ic, const Out& out) {
  constexpr bool kSpan = std::is_same_v<Out, SpanOut>;
  constexpr bool kGps = std::is_same_v<Out, GpsOut>;
  constexpr int R = radius_of(K);
  constexpr int O = 3 - M;  // the other axis that is not x (M = 2 -> y, M = 1 -> z)
  const i64 col = ic.col, co = ic.co, m0 = ic.m0, m1 = ic.m1;
  const i64 nx = s.box.n[0];
  const i64 stride[3] = {1, s.sy, s.sz};  // explicit: the launchers resolve the defaults
  const i64 sm = stride[M], so = stride[O];
  const i64 x = p.x0 + col * V;
  const float* cp = s.in + (x + co * so + m0 * sm);  // the centre of the current step
  float* op = s.out + (x + co * so + m0 * sm);
  // The column's cell of plane mm = m + d along M (cp is at m): from `in`, or for kRemote a
  // neighbour's box where mm is a remote halo plane.
  const bool has_lo = s.from_lower.src != nullptr, has_up = s.from_upper.src != nullptr;
  const RemotePlanes rp = kRemote == kPlanes ? remote_planes(s.box, M, R, has_lo, has_up) : RemotePlanes{};
  // kRemote split along x: the halo columns x < rx.lo, x >= rx.hi come from the neighbours (the
  // march reads them only as x neighbours of the centre row: lanes of a float4 row's first and
  // last vector, or the scalar path's west / east cells).
  const RemotePlanes rx = kRemote == kColumns ? remote_planes(s.box, 0, R, has_lo, has_up) : RemotePlanes{};
  auto xcell_at = [&](i64 xx, i64 m, float own) -> float {
    const i64 cy = M == 1 ? m : co, cz = M == 2 ? m : co;
    if (xx < rx.lo) return s.from_lower.src[remote_x_index(s.from_lower, xx, cy, cz)];
    if (xx >= rx.hi) return s.from_upper.src[remote_x_index(s.from_upper, xx, cy, cz)];
    return own;
  };
  auto plane = [&](const float* c, i64 mm, int d) -> const float* {
    if constexpr (kRemote == kPlanes) {
      if (mm < rp.lo) return s.from_lower.src + remote_index(s.from_lower, M, x, co, mm);
      if (mm >= rp.hi) return s.from_upper.src + remote_index(s.from_upper, M, x, co, mm);
    }
    return c + d * sm;
  };
  // Lanes of this vector that are updated cells (all but in a float4 row's first and last vector).
  const bool edge = V == 4 && (col == 0 || col == p.cols - 1);
  auto lane_ok = [&](int k) { return x + k >= R && x + k < nx - R; };
  // Split along x: whether this thread's cells meet the pushed columns [R, 2R) or [count, count + R).
  const bool x_push = s.box.axis == 0 && (x < 2 * R || x + V > s.box.count);

  float q[2 * R + 1][V];  // planes m - R .. m + R of the column
  float qn[V];            // plane m + R + 1 (prefetched)
#pragma unroll
  for (int d = 0; d < 2 * R; ++d) load<V>(q[d + 1], plane(cp, m0 + d - R, d - R));
  load<V>(qn, plane(cp, m0 + R, R));
  float pn[V];  // wave: prev at the next step's cell (prefetched)
  if constexpr (K == Kind::wave) load<V>(pn, op);

  bool pushed = false;
  for (i64 m = m0; m < m1; ++m, cp += sm, op += sm) {
#pragma unroll
    for (int d = 0; d < 2 * R; ++d)
#pragma unroll
      for (int k = 0; k < V; ++k) q[d][k] = q[d + 1][k];
#pragma unroll
    for (int k = 0; k < V; ++k) q[2 * R][k] = qn[k];
    const bool more = m + 1 < m1;
    if (more) load<V>(qn, plane(cp, m + R + 1, R + 1));
    float pv[V];
    if constexpr (K == Kind::wave) {
#pragma unroll
      for (int k = 0; k < V; ++k) pv[k] = pn[k];
      if (more) load<V>(pn, op + sm);
    }
    float lo[R][V], hi[R][V];  // rows at -1 - d and +1 + d along O
#pragma unroll
    for (int d = 0; d < R; ++d) {
      load<V>(lo[d], cp - (d + 1) * so);
      load<V>(hi[d], cp + (d + 1) * so);
    }
    float we[R], ea[R];
    load_edges<R, V>(cp, we, ea);
    if constexpr (kRemote == kColumns) {
      if constexpr (V == 4) {
        if (edge) {
#pragma unroll
          for (int k = 0; k < V; ++k) q[R][k] = xcell_at(x + k, m, q[R][k]);
        }
      } else {
#pragma unroll
        for (int d = 0; d < R; ++d) {
          we[d] = xcell_at(x - 1 - d, m, we[d]);
          ea[d] = xcell_at(x + 1 + d, m, ea[d]);
        }
      }
    }

    float v[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float c = q[R][k];
      if constexpr (K == Kind::heat) {
        const float xm = xcell<R, V>(q[R], we, ea, k - 1), xp = xcell<R, V>(q[R], we, ea, k + 1);
        // heat_point(c, x-1, x+1, y-1, y+1, z-1, z+1): M holds one axis, O the other.
        if constexpr (M == 2)
          v[k] = heat_point(c, xm, xp, lo[0][k], hi[0][k], q[0][k], q[2][k]);
        else
          v[k] = heat_point(c, xm, xp, q[0][k], q[2][k], lo[0][k], hi[0][k]);
      } else {
        const float lx = wave_axis(xcell<R, V>(q[R], we, ea, k - 2), xcell<R, V>(q[R], we, ea, k - 1), c,
                                   xcell<R, V>(q[R], we, ea, k + 1), xcell<R, V>(q[R], we, ea, k + 2));
        const float lm = wave_axis(q[0][k], q[1][k], c, q[3][k], q[4][k]);
        const float lo_ = wave_axis(lo[1][k], lo[0][k], c, hi[0][k], hi[1][k]);
        v[k] = M == 2 ? wave_point(pv[k], c, lx, lo_, lm) : wave_point(pv[k], c, lx, lm, lo_);
      }
    }
    if constexpr (kGps || kSpan) {
      const auto i = static_cast<std::uint64_t>(op - out.base);
      // GpsOut: a span per stored vector (one mask read: it lies in one page); SpanOut: the item's.
      const gps::View<float>::Span sp = stored_span<V>(out, i);
      if (!edge) {
        if constexpr (V == 4)
          out.view.put(sp, i, make_float4(v[0], v[1], v[2], v[3]));
        else
          out.view.put(sp, i, v[0]);
      } else {
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (lane_ok(k)) out.view.put(sp, i + k, v[k]);
      }
    } else if (!edge) {
      store<V>(op, v);
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (lane_ok(k)) op[k] = v[k];
    }

    // Pushes: the split axis is M or x (the launcher picks M so). A plane is pushed to both
    // sides only when count < 2R (one neighbour's halo needs all of this rank's planes).
    if (s.box.axis == M) {
#pragma unroll
      for (int side = 0; side < 2; ++side) {
        const Push& ps = side == 0 ? s.lower : s.upper;
        if (ps.dst == nullptr || (side == 0 ? m >= 2 * R : m < s.box.count)) continue;
        const i64 psm = M == 1 ? ps.sy : ps.sz, pso = O == 1 ? ps.sy : ps.sz;
        float* d = ps.dst + (x + co * pso + (m + ps.shift) * psm);
        if (!edge) {
          store<V>(d, v);
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k)
            if (lane_ok(k)) d[k] = v[k];
        }
        pushed = true;
      }
    } else if (x_push) {
      const i64 cy = M == 1 ? m : co, cz = M == 2 ? m : co;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const i64 xk = x + k;
        if (!lane_ok(k)) continue;
        if (s.lower.dst != nullptr && xk < 2 * R) {
          s.lower.dst[(xk + s.lower.shift) + cy * s.lower.sy + cz * s.lower.sz] = v[k];
          pushed = true;
        }
        if (s.upper.dst != nullptr && xk >= s.box.count) {
          s.upper.dst[(xk + s.upper.shift) + cy * s.upper.sy + cz * s.upper.sz] = v[k];
          pushed = true;
        }
      }
    }
  }
  return pushed;
}

// proact: after item w, whether it wrote planes a neighbour reads (uniform over the block: it
// depends on w only); if so the block's stores are published before the count: barrier, then one
// thread fences at system scope (cumulative over the barrier: the copy engines read what the whole
// block wrote) and adds 1 to each such side's counter.
template <int R>
__device__ __forceinline__ void mark_ready(const Step& s, const Plan& p, i64 w) {
  i64 xt, ot, ch;
  item_tiles(p, w, xt, ot, ch);
  const bool lo = s.ready[0] != nullptr && chunk_touches_edge(p, s.box.count, R, ch, 0);
  const bool hi = s.ready[1] != nullptr && chunk_touches_edge(p, s.box.count, R, ch, 1);
  if (!lo && !hi) return;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    gps::fence_sys();
    if (lo) atomicAdd_system(s.ready[0], 1u);
    if (hi) atomicAdd_system(s.ready[1], 1u);
  }
}

// kReady (proact): a variant of its own, so the other paradigms' steps keep their registers.
template <Kind K, int V, int M, int kRemote, bool kReady = false>
__global__ void __launch_bounds__(kTx* kTy) step_kernel(Step s, Plan p) {
  for (i64 w = blockIdx.x; w < p.items; w += gridDim.x) {
    run_item<K, V, M, kRemote>(s, p, w);
    if constexpr (kReady) mark_ready<radius_of(K)>(s, p, w);
  }
}

// The persistent kernel: every iteration runs the block's items (pushed planes first, see Plan),
// then every block arrives once at the iteration sync. pushed_peer (a system-scope fence before
// arriving) only for blocks that stored into another GPU this iteration.
// The steps of both parities are built on the host; the kernel reads the one of the iteration's
// parity from parameter space as it needs it instead of holding both in registers.
struct CpuFreeArgs {
  Step step[2];  // [b]: the step of the iterations that read buf[b]
  Plan p;
  IterSync sync;
  bool peer;
  int iters;
  int* done;
};

template <Kind K, int V, int M>
__global__ void __launch_bounds__(kCpuFreeThreads) cpu_free_kernel_impl(CpuFreeArgs a) {
  int iter = 0;
  for (; iter < a.iters; ++iter) {
    bool pushed = false;
    // Two copies of the loop, each with a constant index, so the step stays in parameter space.
    if (iter & 1)
      for (i64 w = blockIdx.x; w < a.p.items; w += gridDim.x) pushed = run_item<K, V, M>(a.step[1], a.p, w) || pushed;
    else
      for (i64 w = blockIdx.x; w < a.p.items; w += gridDim.x) pushed = run_item<K, V, M>(a.step[0], a.p, w) || pushed;
    const bool peer = __syncthreads_or(pushed ? 1 : 0) != 0 && a.peer;
    a.sync.arrive_and_wait(iter, 0.0f, false, peer);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) *a.done = iter;
}

// ---- gps: the marching step on GPS arrays ----------------------------------------------------
// A rank's cells of the global grid (its sub-box, as um marches it: sub_box), the input read from
// this device's replica and the output stored through the view (GpsOut). Whether the replica holds
// what a thread reads is checked once per work item, not per load: one View::local_span over the
// contiguous range of the grid from the item's lowest to its highest input cell (marching along z,
// the planes in between, all of them the rank's own or halo planes; along y, one range per plane
// of the other axis, so a y split does not cover other ranks' rows; along x, split along x, the
// range holds other ranks' columns, whose pages are then shared). Learned subscriptions (tracking) cover those ranges exactly, since
// local_span marks their pages touched, so after tracking every item takes the march; an item
// whose replica lacks a page (subscriptions changed by hand) updates its cells one by one through
// View::load / View::store instead, which read the page's home copy: correct, slower.
struct GpsStepArgs {
  Step s;                // in / out: this device's replicas at the sub-box's origin; the grid's strides
  GpsOut out;
  gps::View<float> in;
  i64 lift[3] = {0, 0, 0};  // global coordinate of the sub-box's local (0, 0, 0)
};

// The per-cell path's accessor: global indices through the views (update_cell's interface).
struct GpsCells {
  gps::View<float> in, out;
  i64 sy, sz;
  __device__ __forceinline__ float at(i64 i, const i64* /*c*/, int d, int k) const {
    return in.load(static_cast<std::uint64_t>(i + k * stride_of(sy, sz, d)));
  }
  __device__ __forceinline__ float prev(i64 i) const { return out.load(static_cast<std::uint64_t>(i)); }
  __device__ __forceinline__ void put(i64 i, float v) const { out.store(static_cast<std::uint64_t>(i), v); }
};

// The per-cell path of one thread's cells of an item (x .. x + V - 1 at co, march coordinates
// [m0, m1)), out of line so that the march keeps its registers.
template <Kind K, int V, int M>
__device__ __noinline__ void gps_cells(const GpsStepArgs& a, i64 x, i64 co, i64 m0, i64 m1) {
  constexpr int R = radius_of(K);
  const GpsCells g{a.in, a.out.view, a.s.sy, a.s.sz};
  const i64 nx = a.s.box.n[0];
  for (i64 m = m0; m < m1; ++m)
    for (int k = 0; k < V; ++k) {
      const i64 l[3] = {x + k, M == 1 ? m : co, M == 2 ? m : co};
      if (l[0] < R || l[0] >= nx - R) continue;
      update_cell<K == Kind::wave>(g, l[0] + a.lift[0], l[1] + a.lift[1], l[2] + a.lift[2]);
    }
}

// An item whose stores reach other subscribers (the slab's boundary planes): out of line, so that
// its registers (View::span / put per stored vector) do not count against the interior items'.
template <Kind K, int V, int M>
__device__ __noinline__ void gps_publishing_item(const GpsStepArgs& a, const Plan& p, ItemCells ic) {
  run_cells<K, V, M, kNone>(a.s, p, ic, a.out);
}

// Whether item ic runs the hand-written step as it is (true), or (false) it was updated here
// through the views: cell by cell where the replica lacks an input page, or publishing its stores.
template <Kind K, int V, int M>
__device__ __forceinline__ bool gps_item_plain(const GpsStepArgs& a, const Plan& p, const ItemCells& ic) {
  constexpr int R = radius_of(K);
  const Step& s = a.s;
  const i64 co = ic.co, m0 = ic.m0, m1 = ic.m1;
  const i64 x = p.x0 + ic.col * V;
  const i64 origin = s.in - a.in.local();  // global index of the sub-box's local (0, 0, 0)
  const auto size = static_cast<i64>(a.in.size());
  // [lo, hi) of the grid in this device's replica? (clamped to the grid, for safety's sake)
  const auto local_range = [&](const gps::View<float>& v, i64 lo, i64 hi) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > size ? size : hi;
    return v.local_span(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo)) != nullptr;
  };
  // What run_item reads (item_input_ranges, stencil3d_cells.hpp: one range along z, 1 + 2R along y).
  CellRange rg[kMaxItemRanges];
  const int nr = item_input_ranges(R, V, M, origin, s.sy, s.sz, x, co, m0, m1, rg);
  bool local = true;
#pragma unroll
  for (int k = 0; k < kMaxItemRanges; ++k)
    if (k < nr) local = local_range(a.in, rg[k].lo, rg[k].hi) && local;
  // What it stores (and wave3d's previous time level, read from the same cells): one span over the
  // column's cells of the item. Where this device alone holds those pages (the slab's interior, and
  // every page on one GPU), nothing is published, so the item runs the hand-written step itself,
  // storing straight into the replica; else every stored vector goes through View::span / put.
  const i64 sm = M == 1 ? s.sy : s.sz, so = M == 1 ? s.sz : s.sy;
  const i64 out_lo = origin + x + co * so + m0 * sm;
  const auto out = a.out.view.span(static_cast<std::uint64_t>(out_lo),
                                   static_cast<std::uint64_t>((m1 - 1 - m0) * sm + V));
  if constexpr (K == Kind::wave) local = local && out.here != nullptr;
  if (!local) {
    gps_cells<K, V, M>(a, x, co, m0, m1);
    return false;
  }
  if (out.here != nullptr && out.uniform && out.others == 0u) return true;
  gps_publishing_item<K, V, M>(a, p, ic);
  return false;
}

// Where this GPU alone holds both arrays (one GPU) the launch is the hand-written step itself
// (launch_gps_step, GpsStep::sole); here the checks pick each item's path.
template <Kind K, int V, int M>
__device__ __forceinline__ void gps_item(const GpsStepArgs& a, const Plan& p, i64 w) {
  const ItemCells ic = item_cells<radius_of(K), M>(a.s, p, w);
  if (!ic.valid) return;
  if (gps_item_plain<K, V, M>(a, p, ic)) run_cells<K, V, M, kNone>(a.s, p, ic);
}

// __grid_constant__: the views stay in parameter space (their replica tables are indexed by
// device at run time, which would otherwise copy the whole argument to the stack).
// The blocks per SM of the hand-written step (ptxas, sm_90: heat3d 40 / 48 registers scalar /
// float4, 5 blocks; wave3d 48 / 60, 5 / 4 blocks), kept by the gps step, whose publishing path
// (boundary items only) would otherwise raise the whole kernel's registers (94 for heat3d float4:
// 2 blocks per SM) and so slow every interior item too.
constexpr int step_blocks_per_sm(Kind k, int v) { return k == Kind::wave && v == 4 ? 4 : 5; }

template <Kind K, int V, int M>
__global__ void __launch_bounds__(kTx* kTy, step_blocks_per_sm(K, V)) gps_step_kernel(const __grid_constant__ GpsStepArgs a, const Plan p) {
  for (i64 w = blockIdx.x; w < p.items; w += gridDim.x) gps_item<K, V, M>(a, p, w);
}

// The host's split of the items (GpsStep::split_items, stencil3d_gps_items.hpp): the gps items
// through the checks above; the published and plain ones in the two kernels below.
template <Kind K, int V, int M>
__global__ void __launch_bounds__(kTx* kTy, step_blocks_per_sm(K, V))
    gps_listed_kernel(const __grid_constant__ GpsStepArgs a, const Plan p, const std::int32_t* items, int n) {
  for (int i = blockIdx.x; i < n; i += gridDim.x) gps_item<K, V, M>(a, p, items[i]);
}
// The host's split (GpsStep::split_items): the published items, each vector put through the span
// View::span_with makes of the item's host-asked mask (no mask read per item or store), launched
// on the side stream before the plain ones so that their stores, which travel, start in the first wave as the
// hand-written steps' pushed planes do; the plain items beside them on the launch's stream,
// with nothing of the GPS path compiled in (step_kernel's registers and blocks per SM).
// Measured on 4xH200 (Nsight Compute, serialized, 512^3 heat3d; results/nvidia-h200-x4/
// 2026-11-28_d855a96_issue28-published): with both paths in one kernel bounded to the plain
// step's blocks per SM, ptxas (sm_90) spilled 140 bytes and the plain items ran 86.6 us instead of
// 75.5. The published kernel is bounded to the plain step's blocks per SM too (ptxas: heat3d
// float4 48 registers and 124 bytes spilled, wave3d 64 and 112, against 69 / 82 unbounded), so
// that each of its blocks takes one plain block's place while they run side by side: across the
// 2- and 4-GPU 3D cells the bounded kernel's geometric mean over the best hand-written paradigm
// was 1.042 against 1.054 unbounded (same call). Programmatic dependent launch on one stream,
// instead of the side stream, was no faster (4xH200: 1-2 % slower at 256^3, within 1 % at 512^3).
template <Kind K, int V, int M>
__global__ void __launch_bounds__(kTx* kTy, step_blocks_per_sm(K, V))
    published_listed_kernel(const __grid_constant__ GpsStepArgs a, const Plan p, const std::int32_t* items,
                            const std::uint32_t* masks, int n) {
  for (int i = blockIdx.x; i < n; i += gridDim.x)
    run_item<K, V, M, kNone, SpanOut>(a.s, p, items[i], SpanOut{a.out.view, a.out.base, a.out.view.span_with(masks[i])});
}
template <Kind K, int V, int M>
__global__ void __launch_bounds__(kTx* kTy) plain_listed_kernel(Step s, Plan p, const std::int32_t* items, int n) {
  for (int i = blockIdx.x; i < n; i += gridDim.x) run_item<K, V, M>(s, p, items[i]);
}

__global__ void __launch_bounds__(kFlatThreads) init_kernel(Init s) {
  const i64 nx = s.box.n[0], ny = s.box.n[1], cells = nx * ny * s.box.n[2];
  const i64 r = s.radius;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 l[3] = {i % nx, (i / nx) % ny, i / (nx * ny)};
    i64 g[3] = {l[0], l[1], l[2]};
    g[s.box.axis] += s.offset;
    bool interior = true;
    for (int d = 0; d < 3; ++d) interior = interior && g[d] >= r && g[d] < s.global[d] - r;
    const auto cell = static_cast<std::uint64_t>((g[2] * s.global[1] + g[1]) * s.global[0] + g[0]);
    float v = initial_value(cell, interior ? s.seed_interior : s.seed_boundary);
    // A neighbour's halo cell is global interior along the split axis; those of the other axes'
    // boundary layer are fixed values that no neighbour sends, so they stay valid.
    const i64 la = l[s.box.axis];
    if (interior && ((s.poison_lower && la < r) || (s.poison_upper && la >= r + s.box.count)))
      v = __int_as_float(0x7fc00000);  // quiet NaN
    s.buf[i] = v;
  }
}

__global__ void __launch_bounds__(kFlatThreads) box_copy_kernel(BoxCopy c) {
  const i64 ex = c.e[0], ey = c.e[1], cells = ex * ey * c.e[2];
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < cells;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const i64 x = i % ex, y = (i / ex) % ey, z = i / (ex * ey);
    c.dst[x + y * c.dst_sy + z * c.dst_sz] = c.src[x + y * c.src_sy + z * c.src_sz];
  }
}

unsigned flat_blocks(i64 cells) {
  return static_cast<unsigned>(std::clamp<i64>((cells + kFlatThreads - 1) / kFlatThreads, 1, 4096));
}

// ---- host side -------------------------------------------------------------------------------


bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

// Whether a push target takes float4 rows: its base and row strides keep 16-byte alignment (only
// pushes along y or z store vectors; along x they are single cells).
bool push_vec_ok(const Push& p, const Box& b) {
  if (p.dst == nullptr || b.axis == 0) return true;
  return aligned16(p.dst) && p.sy % 4 == 0 && p.sz % 4 == 0;
}

// Whether a remote source takes float4 rows: its planes are loaded as rows along y or z; along x
// its columns are single cells.
bool remote_vec_ok(const Remote& r, const Box& b) {
  return r.src == nullptr || b.axis == 0 || (aligned16(r.src) && r.sy % 4 == 0 && r.sz % 4 == 0);
}

bool step_vec(const Step& s) {
  return rows_vectorized(s.box) && row_stride(s.box, s.sy) % 4 == 0 && plane_stride(s.box, s.sz) % 4 == 0 &&
         aligned16(s.in) && aligned16(s.out) && push_vec_ok(s.lower, s.box) && push_vec_ok(s.upper, s.box) &&
         remote_vec_ok(s.from_lower, s.box) && remote_vec_ok(s.from_upper, s.box);
}

bool cpu_free_vec(const CpuFree& c) {
  bool ok = rows_vectorized(c.box);
  for (int b = 0; b < 2; ++b)
    ok = ok && aligned16(c.buf[b]) && push_vec_ok(c.lower[b], c.box) && push_vec_ok(c.upper[b], c.box);
  return ok;
}

// Blocks of `kernel` (kTx * kTy threads) the current device holds at once; cached per device (common/resident_blocks.hpp).
i64 resident_blocks(const void* kernel) { return gpsm::resident_blocks(kernel, kTx * kTy); }



// make_plan searches chunk lengths by modelled load (stencil3d_plan.hpp): about 7-12 us of host
// time per call on our 2-core host, which a stream-launched loop would pay per GPU and
// iteration. The plan depends only on the launch's shape, so it is made once per shape.
Plan cached_plan(int r, int v, const Box& b, bool pushes, i64 target) {
  static std::mutex mu;
  static std::map<std::array<i64, 9>, Plan> cache;
  const std::array<i64, 9> key{r, v, b.n[0], b.n[1], b.n[2], b.axis, b.count, pushes ? 1 : 0, target};
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_plan(r, v, b, pushes, target)).first;
  return it->second;
}

using StepFn = void (*)(Step, Plan);
template <Kind K, int kRemote>
StepFn step_fn(bool vec, int m) {
  if (vec) return m == 1 ? step_kernel<K, 4, 1, kRemote> : step_kernel<K, 4, 2, kRemote>;
  return m == 1 ? step_kernel<K, 1, 1, kRemote> : step_kernel<K, 1, 2, kRemote>;
}
// Split along x the march axis is z (march_axis), so the column variants exist for M = 2 only.
// proact's ready variants exist without remote sources only (launch_step checks).
template <Kind K>
StepFn step_fn(bool vec, int m, int remote, bool ready) {
  if (ready) {
    if (vec) return m == 1 ? step_kernel<K, 4, 1, kNone, true> : step_kernel<K, 4, 2, kNone, true>;
    return m == 1 ? step_kernel<K, 1, 1, kNone, true> : step_kernel<K, 1, 2, kNone, true>;
  }
  if (remote == kColumns) return vec ? step_kernel<K, 4, 2, kColumns> : step_kernel<K, 1, 2, kColumns>;
  return remote == kPlanes ? step_fn<K, kPlanes>(vec, m) : step_fn<K, kNone>(vec, m);
}

using CpuFreeFn = void (*)(CpuFreeArgs);
template <Kind K>
CpuFreeFn cpu_free_fn(bool vec, int m) {
  if (vec) return m == 1 ? cpu_free_kernel_impl<K, 4, 1> : cpu_free_kernel_impl<K, 4, 2>;
  return m == 1 ? cpu_free_kernel_impl<K, 1, 1> : cpu_free_kernel_impl<K, 1, 2>;
}
CpuFreeFn cpu_free_fn(Kind k, bool vec, int m) {
  return k == Kind::heat ? cpu_free_fn<Kind::heat>(vec, m) : cpu_free_fn<Kind::wave>(vec, m);
}

using GpsStepFn = void (*)(GpsStepArgs, Plan);
template <Kind K>
GpsStepFn gps_step_fn(bool vec, int m) {
  if (vec) return m == 1 ? gps_step_kernel<K, 4, 1> : gps_step_kernel<K, 4, 2>;
  return m == 1 ? gps_step_kernel<K, 1, 1> : gps_step_kernel<K, 1, 2>;
}
using ListedFn = void (*)(GpsStepArgs, Plan, const std::int32_t*, int);
template <Kind K>
ListedFn gps_listed_fn(bool vec, int m) {
  if (vec) return m == 1 ? gps_listed_kernel<K, 4, 1> : gps_listed_kernel<K, 4, 2>;
  return m == 1 ? gps_listed_kernel<K, 1, 1> : gps_listed_kernel<K, 1, 2>;
}
using PublishedListedFn = void (*)(GpsStepArgs, Plan, const std::int32_t*, const std::uint32_t*, int);
template <Kind K>
PublishedListedFn published_listed_fn(bool vec, int m) {
  if (vec) return m == 1 ? published_listed_kernel<K, 4, 1> : published_listed_kernel<K, 4, 2>;
  return m == 1 ? published_listed_kernel<K, 1, 1> : published_listed_kernel<K, 1, 2>;
}
using PlainListedFn = void (*)(Step, Plan, const std::int32_t*, int);
template <Kind K>
PlainListedFn plain_listed_fn(bool vec, int m) {
  if (vec) return m == 1 ? plain_listed_kernel<K, 4, 1> : plain_listed_kernel<K, 4, 2>;
  return m == 1 ? plain_listed_kernel<K, 1, 1> : plain_listed_kernel<K, 1, 2>;
}

// The kernel and plan of a step (launch_step, step_plan).
std::pair<StepFn, Plan> step_launch(Kind k, const Step& s) {
  const bool vec = step_vec(s);
  // A remote variant only where the march reads remote cells (split along the march axis or x).
  const int m = march_axis(s.box);
  const bool sources = s.from_lower.src != nullptr || s.from_upper.src != nullptr;
  const int remote = !sources ? kNone : s.box.axis == m ? kPlanes : s.box.axis == 0 ? kColumns : kNone;
  const bool ready = s.ready[0] != nullptr || s.ready[1] != nullptr;
  if (ready && (sources || s.box.axis != m))
    throw gpsm::Error("gpsm: a step with ready counters marches along its split axis (y or z) without remote sources");
  const StepFn fn =
      k == Kind::heat ? step_fn<Kind::heat>(vec, m, remote, ready) : step_fn<Kind::wave>(vec, m, remote, ready);
  // slab3d guarantees at least one updated cell per axis (else the plan has no items). Ready
  // counters want the edge chunks pushes get: the edge planes first.
  const bool edges = s.lower.dst != nullptr || s.upper.dst != nullptr || ready;
  return {fn, cached_plan(radius_of(k), vec ? 4 : 1, s.box, edges, resident_blocks(reinterpret_cast<const void*>(fn)))};
}

}  // namespace

Plan step_plan(Kind k, const Step& s) { return step_launch(k, s).second; }

void launch_step(Kind k, const Step& s, cudaStream_t st) {
  const auto [fn, p] = step_launch(k, s);
  const auto grid = static_cast<unsigned>(std::clamp<i64>(p.items, 1, INT_MAX));
  Step e = s;  // the strides made explicit
  e.sy = row_stride(s.box, s.sy);
  e.sz = plane_stride(s.box, s.sz);
  fn<<<grid, dim3(kTx, kTy), 0, st>>>(e, p);
  GPSM_CUDA_LAUNCH();
}

bool step_float4(const Step& s) { return step_vec(s); }

namespace {
// The arguments, kernel and plan of a gps step (launch_gps_step, gps_step_plan). The plan is the
// unlisted GPS kernel's, whichever kernels run its items.
struct GpsLaunch {
  GpsStepArgs a;
  bool vec = false;
  int m = 2;
  GpsStepFn fn = nullptr;
  Plan p;
};
// The kernel arguments alone: what the sole path (the hand-written step) needs.
GpsStepArgs gps_args(const GpsStep& g) {
  const SubBox sb = sub_box(g.slab);
  GpsStepArgs a;
  a.in = g.in;
  a.out.view = g.out;
  a.out.base = g.out.local();
  a.s.in = g.in.local() + sb.offset;
  a.s.out = g.out.local() + sb.offset;
  a.s.box = sb.box;
  a.s.sy = sb.sy;
  a.s.sz = sb.sz;
  a.lift[static_cast<int>(g.slab.axis)] = g.slab.first - g.slab.radius;
  return a;
}
GpsLaunch gps_launch(Kind k, const GpsStep& g) {
  GpsLaunch l;
  l.a = gps_args(g);
  l.vec = step_vec(l.a.s);
  l.m = march_axis(l.a.s.box);
  l.fn = k == Kind::heat ? gps_step_fn<Kind::heat>(l.vec, l.m) : gps_step_fn<Kind::wave>(l.vec, l.m);
  l.p = cached_plan(radius_of(k), l.vec ? 4 : 1, l.a.s.box, g.edges_first,
                    resident_blocks(reinterpret_cast<const void*>(l.fn)));
  return l;
}
}  // namespace

GpsStepShape gps_step_shape(Kind k, const GpsStep& g) {
  const GpsLaunch l = gps_launch(k, g);
  return {l.p, l.vec ? 4 : 1};
}

void launch_gps_step(Kind k, const GpsStep& g, cudaStream_t st) {
  if (g.sole) {  // the hand-written step on the replicas (GpsStep::sole): no GPS kernel, no plan of its own
    launch_step(k, gps_args(g).s, st);
    return;
  }
  const GpsLaunch l = gps_launch(k, g);
  if (g.split_items == nullptr) {
    const auto grid = static_cast<unsigned>(std::clamp<i64>(l.p.items, 1, INT_MAX));
    l.fn<<<grid, dim3(kTx, kTy), 0, st>>>(l.a, l.p);
    GPSM_CUDA_LAUNCH();
    return;
  }
  // The host's split: the checked (gps) items, rare after tracking, and the published ones on the
  // side stream, launched first (their stores travel); the plain ones beside them on st; joined.
  const bool side = (g.n_gps > 0 || g.n_published > 0) && g.side != nullptr;
  const cudaStream_t gs = side ? g.side->fork(st) : st;
  if (g.n_gps > 0) {
    const ListedFn fn = k == Kind::heat ? gps_listed_fn<Kind::heat>(l.vec, l.m) : gps_listed_fn<Kind::wave>(l.vec, l.m);
    fn<<<static_cast<unsigned>(g.n_gps), dim3(kTx, kTy), 0, gs>>>(l.a, l.p, g.gps_items, g.n_gps);
    GPSM_CUDA_LAUNCH();
  }
  GpsStepArgs e = l.a;  // the strides made explicit, as launch_step does
  e.s.sy = row_stride(e.s.box, e.s.sy);
  e.s.sz = plane_stride(e.s.box, e.s.sz);
  if (g.n_published > 0) {
    const PublishedListedFn fn = k == Kind::heat ? published_listed_fn<Kind::heat>(l.vec, l.m)
                                                 : published_listed_fn<Kind::wave>(l.vec, l.m);
    fn<<<static_cast<unsigned>(g.n_published), dim3(kTx, kTy), 0, gs>>>(e, l.p, g.split_items, g.published_masks,
                                                                        g.n_published);
    GPSM_CUDA_LAUNCH();
  }
  if (g.n_plain > 0) {
    const PlainListedFn fn =
        k == Kind::heat ? plain_listed_fn<Kind::heat>(l.vec, l.m) : plain_listed_fn<Kind::wave>(l.vec, l.m);
    fn<<<static_cast<unsigned>(g.n_plain), dim3(kTx, kTy), 0, st>>>(e.s, l.p, g.split_items + g.n_published, g.n_plain);
    GPSM_CUDA_LAUNCH();
  }
  if (side) g.side->join(st);
}

void launch_init(const Init& s, cudaStream_t st) {
  init_kernel<<<flat_blocks(s.box.n[0] * s.box.n[1] * s.box.n[2]), kFlatThreads, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

void launch_box_copy(const BoxCopy& c, cudaStream_t st) {
  box_copy_kernel<<<flat_blocks(c.e[0] * c.e[1] * c.e[2]), kFlatThreads, 0, st>>>(c);
  GPSM_CUDA_LAUNCH();
}

const void* cpu_free_kernel(Kind k, const CpuFree& c) {
  return reinterpret_cast<const void*>(cpu_free_fn(k, cpu_free_vec(c), march_axis(c.box)));
}

int cpu_free_blocks(Kind k, int device) {
  (void)device;  // resident_blocks asks the current device (the caller's cudaSetDevice)
  i64 least = INT_MAX;
  for (bool vec : {false, true})
    for (int m : {1, 2}) least = std::min(least, resident_blocks(reinterpret_cast<const void*>(cpu_free_fn(k, vec, m))));
  return static_cast<int>(least);
}

void launch_cpu_free(Kind k, const CpuFree& c, int blocks, cudaStream_t st) {
  const bool vec = cpu_free_vec(c);
  bool pushes = false;
  CpuFreeArgs arg{};
  for (int b = 0; b < 2; ++b) {
    pushes = pushes || c.lower[b].dst != nullptr || c.upper[b].dst != nullptr;
    Step& s = arg.step[1 - b];  // the iterations that write buf[b] (and push into the neighbours' buf[b])
    s.in = c.buf[1 - b];
    s.out = c.buf[b];
    s.sy = row_stride(c.box, 0);
    s.sz = plane_stride(c.box, 0);
    s.box = c.box;
    s.lower = c.lower[b];
    s.upper = c.upper[b];
  }
  arg.p = cached_plan(radius_of(k), vec ? 4 : 1, c.box, pushes, blocks);
  arg.sync = c.sync;
  arg.peer = c.peer;
  arg.iters = c.iters;
  arg.done = c.done;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(cpu_free_fn(k, vec, march_axis(c.box))),
                                        dim3(static_cast<unsigned>(blocks)), dim3(kTx, kTy), args, 0, st));
}

}  // namespace gpsm::apps::stencil3d
