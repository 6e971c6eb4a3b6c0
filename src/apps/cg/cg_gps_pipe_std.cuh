#pragma once
// CG's gps_pipe paradigm on the device (cg_gps_pipe_kernels.hpp), the kernels' code, included by
// the files that instantiate them (cg_gps_pipe.cu: the dispatch and the sole kernels;
// cg_gps_pipe_checked.cu: the checked ones, apart so that the build compiles them beside the rest).
// Pipelined CG in one persistent kernel per GPU on GPS memory, cpu_free_pipe's structure
// (cg_persistent.cu) with the hand-written pushes, halo lists and inbox replaced by the view's
// stores and the runtime's split-phase device fence with block specialization. Per iteration i
// (parity par = i & 1):
//   count_in(i): every block's (r, r), (w, r) chunk partials and w[par] rows are stored
//   wait_local(i): every block of this GPU arrived, so its own rows of w[par] are complete
//   block 0 (the communication block, no chunks): publish_values(i), the GPU's partials summed in
//              cg_math.hpp's order and published with its tag
//   the other blocks: SpMV on interior chunks (they read only pages no other GPU holds) while
//              block 0 reduces and the fence's words travel; staged in shared memory (pipe_slots chunks)
//   wait_all(i): gamma, delta summed over the GPUs in rank order, every GPU's w[par] stores visible;
//              then the boundary chunks' SpMV and the updates: z, s, p, x, r and w[1 - par]'s own
//              rows through the view (put: this replica and the page's subscribers, inline)
// Interior chunks run the plain variant's code (no span, no publish): their pages are this GPU's
// alone for as long as the subscriptions hold, which the host's classification follows. A block's
// boundary chunks ask the views once per launch, before the first iteration (ChunkSpans), not
// after each wait_all.
// Why a communication block rather than the fence's default (the GPU's last block to arrive
// reduces, then runs its own chunks): there the reduction delays that block's SpMV, and with it
// the iteration; here it runs beside every SpMV, as in cpu_free_pipe. Every block's warp 0 polls
// its own GPU's fence words, in local memory.
#include <algorithm>
#include <string>
#include <type_traits>

#include "apps/cg/cg_chunk_spans.cuh"
#include "apps/cg/cg_device.cuh"
#include "apps/cg/cg_gps_pipe_kernels.hpp"

namespace gpsm::apps::cg {
namespace {

using Span = gps::View<double>::Span;

// A block's boundary chunks ask the views w[0] and w[1] once per launch (cg_chunk_spans.cuh): at
// most one each on the 2D Poisson targets (fewer boundary chunks than blocks).
using PipeSpans = ChunkSpans<2>;

// n = A w for chunk c, through out(offset, value). kSole or cols_local: loads from this GPU's
// replica; else every gather is View::load (while tracking: the runtime records exactly the pages
// the SpMV reads).
template <int kL, class V, class Ix, bool kSole, class Out>
__device__ __forceinline__ void gps_pipe_spmv_at(const GpsPipe& g, const gps::View<double>& w, std::int64_t c, bool cols_local,
                                                 const Out& out) {
  const DevMatrix& a = g.a;
  if (kSole || cols_local) {  // block-uniform
    const double* wl = w.local();
    spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return wl[j]; }, out);
  } else {
    spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return w.load(static_cast<std::uint64_t>(j)); }, out);
  }
}

// n = A w for chunk c: one subscriber check per chunk (View::local_span over its column range),
// the loads then from this GPU's replica.
template <int kL, class V, class Ix, bool kSole, class Out>
__device__ __forceinline__ void gps_pipe_spmv(const GpsPipe& g, const gps::View<double>& w, std::int64_t c, const Out& out) {
  gps_pipe_spmv_at<kL, V, Ix, kSole>(g, w, c, !kSole && chunk_cols_local(g, w, c), out);
}

// pipe_update_step (cg_device.cuh) with w read from and the next w stored through the views: the
// same arithmetic in the same order. Returns whether a store may have reached another GPU.
// rs, ws: chunk_rows_span of w and wn (unused when kSole).
template <bool kSole, class N>
__device__ __forceinline__ bool gps_pipe_update(const GpsPipe& g, const gps::View<double>& w, const gps::View<double>& wn,
                                                const Span& rs, const Span& ws, double alpha, double beta, std::int64_t c,
                                                const N& n_at) {
  const DevMatrix& a = g.a;
  const double* wl = w.local();
  double* wnl = wn.local();
  double gs = 0.0, d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    const std::int64_t gi = g.first_row + i;
    const double wi = kSole ? wl[gi] : rs.from != nullptr ? rs.from[gi] : w.load(static_cast<std::uint64_t>(gi));
    const double z = fmad(beta, g.z[i], n_at(i));
    const double s = fmad(beta, g.s[i], wi);
    const double p = fmad(beta, g.p[i], g.r[i]);
    g.x[i] = fmad(alpha, p, g.x[i]);
    const double r = fmad(-alpha, s, g.r[i]);
    const double wnext = fmad(-alpha, z, wi);
    g.z[i] = z;
    g.s[i] = s;
    g.p[i] = p;
    g.r[i] = r;
    if constexpr (kSole) {
      wnl[gi] = wnext;
    } else {
      wn.store(ws, static_cast<std::uint64_t>(gi), wnext);
    }
    gs = fmad(r, r, gs);
    d = fmad(wnext, r, d);
  }
  const double tg = block_sum(gs);
  const double td = block_sum(d);
  if (threadIdx.x == 0) {
    g.part[2 * c] = tg;
    g.part[2 * c + 1] = td;
  }
  return !kSole && (!ws.uniform || ws.others != 0u);
}

template <int kL, class V, class Ix, bool kSole>
__device__ __forceinline__ void gps_pipe_iterate(const GpsPipe& g, double* slots) {
  const DevMatrix& a = g.a;
  const int nslots = pipe_slots(a.rows_per_thread);
  const std::int64_t chunk = chunk_rows(a.rows_per_thread);
  const std::int32_t first_boundary = a.chunks - g.boundary_chunks;
  const bool comm = blockIdx.x == 0;  // the communication block: reduces and publishes, no chunks
  const std::int32_t worker = static_cast<std::int32_t>(blockIdx.x) - 1, workers = static_cast<std::int32_t>(gridDim.x) - 1;
  double gamma_prev = 0.0, alpha_prev = 0.0;
  bool published = false;
  // This block's boundary chunks are its turns from first_boundary on (first_turn_from); the
  // first kCachedChunks of them ask the views here, once (cg_chunk_spans.cuh). Never while
  // tracking (every access through the views, which mark the pages).
  __shared__ alignas(PipeSpans) unsigned char cache_bytes[sizeof(PipeSpans) * kCachedChunks];
  PipeSpans* const cached = reinterpret_cast<PipeSpans*>(cache_bytes);
  if constexpr (!kSole) {
    clear_chunk_spans(cached);
    if (!comm && !g.tracking && worker < a.chunks) {  // block-uniform
      int n = 0;
      for (std::int32_t idx = first_turn_from(worker, workers, first_boundary); idx < a.chunks && n < kCachedChunks;
           idx += workers, ++n) {
        const std::int32_t c = __ldg(g.order + idx);
        for (int k = 0; k < 2; ++k) take_chunk_spans(cached[n], k, g, g.w[k], c);
      }
    }
    __syncthreads();  // the cache before any thread reads it
  }
  for (int i = 0;; ++i) {
    const int par = i & 1;
    const gps::View<double>& w = par == 0 ? g.w[0] : g.w[1];
    const gps::View<double>& wn = par == 0 ? g.w[1] : g.w[0];
    g.fence.count_in(i, published);
    g.fence.wait_local(i);
    if (comm)
      g.fence.publish_values<2>(i, [&g, &a](double* out) {  // the GPU's gamma, delta partials
        for (int k = 0; k < 2; ++k) {
          const double t = gpu_partial(g.part, a.chunks, 2, k);
          if (threadIdx.x == 0) out[k] = t;
        }
      });
    bool have = false, stop = false;
    double vals[2] = {0.0, 0.0};
    double alpha = 0.0, beta = 0.0;
    auto learn = [&]() {  // block-collective; every block decides alike from the same bits
      if (have) return;
      have = true;
      g.fence.wait_all<2>(i, vals);
      stop = i == g.iters || cg_done(vals[0], g.threshold);
      if (!stop) stop = !pipe_scalars(i, vals[0], vals[1], gamma_prev, alpha_prev, alpha, beta);
      if (comm && threadIdx.x == 0) {
        g.hist[i] = vals[0];
        if (stop) *g.iterations = i;
      }
    };
    published = false;
    for (std::int32_t idx = worker; !comm && idx < a.chunks;) {
      std::int32_t mine[4];
      bool inner[4];  // an interior chunk runs the plain variant's code: this GPU alone holds its pages
      int got = 0;
      for (; got < nslots && idx < a.chunks; ++got, idx += workers) {
        if (idx >= first_boundary) learn();  // other GPUs' rows of w have landed
        if (stop) break;
        const std::int32_t c = __ldg(g.order + idx);
        double* slot = slots + got * chunk;
        auto out = [&](std::int64_t off, double v) { slot[off] = v; };
        inner[got] = kSole || idx < first_boundary;
        const PipeSpans* hit = inner[got] ? nullptr : cached_chunk(cached, c);
        if (inner[got])
          gps_pipe_spmv<kL, V, Ix, true>(g, w, c, out);
        else if (hit != nullptr)
          gps_pipe_spmv_at<kL, V, Ix, kSole>(g, w, c, hit->cols_local[par], out);
        else
          gps_pipe_spmv<kL, V, Ix, kSole>(g, w, c, out);
        mine[got] = c;
      }
      learn();
      if (stop) break;
      __syncthreads();  // the lanes' n values in shared memory
      for (int k = 0; k < got; ++k) {
        const double* slot = slots + k * chunk;
        const std::int64_t first = static_cast<std::int64_t>(mine[k]) * chunk;
        auto n = [&](std::int64_t row) { return slot[row - first]; };
        if (inner[k]) {
          (void)gps_pipe_update<true>(g, w, wn, Span{}, Span{}, alpha, beta, mine[k], n);
        } else {
          const PipeSpans* hit = cached_chunk(cached, mine[k]);
          const Span rs = hit != nullptr ? hit->rows[par] : chunk_rows_span(g, w, mine[k]);
          const Span ws = hit != nullptr ? hit->rows[1 - par] : chunk_rows_span(g, wn, mine[k]);
          published = gps_pipe_update<kSole>(g, w, wn, rs, ws, alpha, beta, mine[k], n) || published;
        }
      }
      __syncthreads();  // before the slots are refilled
    }
    learn();  // the communication block, a block without chunks, or past its last
    if (stop) break;
    gamma_prev = vals[0];
    alpha_prev = alpha;
  }
}

// __grid_constant__: the views stay in parameter space; the steps take references to them.
// Three resident blocks per SM (at most 80 registers), cpu_free_pipe's occupancy (78 registers,
// sm_90): both variants launch with the GPS one's block count, and left alone ptxas gave the
// plain variant 64 registers with spills (kL = 4: 92 bytes stored, 240 loaded) for a fourth block
// it never gets; at 80 neither variant spills for kL = 2, and kL = 4 spills 44 bytes in the GPS one.
template <int kL, class V, class Ix, bool kSole>
__global__ void __launch_bounds__(kThreads, 3) gps_pipe_kernel_impl(const __grid_constant__ GpsPipe g) {
  extern __shared__ double slots[];
  gps_pipe_iterate<kL, V, Ix, kSole>(g, slots);
}

}  // namespace

// The checked (non-sole) kernel of a shape (cg_gps_pipe_checked.cu).
const void* gps_pipe_checked_kernel(int lanes, EntryKind kind);

}  // namespace gpsm::apps::cg
