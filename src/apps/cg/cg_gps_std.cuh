#pragma once
// CG's gps paradigm on the device (cg_gps_kernels.hpp), the kernels' code, included by the files
// that instantiate them (cg_gps.cu: the dispatch and the sole kernels; cg_gps_checked.cu,
// cg_gps_checked_q.cu: the checked ones, apart because they are most of the compile: 115 of 147 s
// for the one file this was, on one core of the 2-core build machine).
// Standard CG in one persistent kernel per GPU, written against the public GPS API only. Per
// iteration k:
//   SpMV:   q = A p_k with p_k = r + beta p_{k-1} formed on the fly from r's replica (one subscriber
//           check per chunk: View::local_span over the columns it reads), p_k stored for the own
//           rows and, from the published r, for the subscribed pages beyond them; x += alpha_{k-1}
//           p_{k-1} for the own rows (read here anyway; after the last iteration, its own pass); (p_k, q) partials
//           -> device fence round 2k (arrive_and_reduce: the GPU's partial in cg_math.hpp's order,
//           the GPUs' in rank order) -> alpha
//   update: r -= alpha q stored through the view (View::put: this replica and each
//           subscriber of the page, inline), (r, r) partials -> round 2k + 1, which also makes
//           every GPU's stores of r visible before the next SpMV reads them -> beta
// The structure is cpu_free_std's (cg_persistent.cu) with the hand-written pushes, halo lists and
// inbox replaced by the view's stores and the runtime's fence. Chunks that read and store only
// pages this GPU alone holds (GpsStd::plain, from Array::reach on the host) run the plain
// variant's code: on 2xH200 at 2048^2 the checked code cost gps 1.14x cpu_free_std, about what the
// same code costs on one GPU (226.65 against the plain variant's 197.66 us).
// The checked chunks ask the view (column range local? own rows' span?) once per launch, not
// after each fence round (cg_chunk_spans.cuh): 2xH200, 512^2 on 2 GPUs 15.2 -> 13.7 us.
#include <algorithm>
#include <type_traits>

#include "apps/cg/cg_chunk_spans.cuh"
#include "apps/cg/cg_device.cuh"
#include "apps/cg/cg_gps_kernels.hpp"

namespace gpsm::apps::cg {
namespace {

// The block's checked chunks (the ones not GpsStd::plain: they read or store pages other GPUs
// hold) ask the view once per launch (cg_chunk_spans.cuh); StdSpans is that cache for r.
using StdSpans = ChunkSpans<1>;

// SpMV step of chunk c at iteration parity par. While tracking, every gather goes through
// View::load, so the runtime records exactly the pages the SpMV reads (a span over the chunk's
// column range would mark the pages between them too).
// kSole (GpsStd::sole): r is read straight from this GPU's replica.
// x_step: x += alpha_prev p_{k-1} for the own rows, where p_{k-1} is read anyway (as cpu_free_std).
// keep_q: q stays in sq (the block's slot for chunk c) for the update phase instead of g.q
// (GPSM_CG_Q=shared, q_storage.hpp). hit: the chunk's answers taken at launch, or nullptr.
template <int kL, class V, class Ix, bool kSole>
__device__ __forceinline__ void gps_spmv_step(const GpsStd& g, int par, double beta, std::int64_t c, double* sq,
                                              bool x_step, double alpha_prev, bool keep_q, const StdSpans* hit) {
  const DevMatrix& a = g.a;
  const double* pold = pick(g.p, par);
  auto out = [&](std::int64_t off, double s) { sq[off] = s; };
  if constexpr (kSole) {
    const double* r = g.r.local();
    spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return fmad(beta, pold[j], r[j]); }, out);
  } else {
    if (hit != nullptr ? hit->cols_local[0] : chunk_cols_local(g, g.r, c)) {  // block-uniform: every thread checked the same pages
      const double* r = g.r.local();
      spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return fmad(beta, pold[j], r[j]); }, out);
    } else {
      spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return fmad(beta, pold[j], g.r.load(static_cast<std::uint64_t>(j))); }, out);
    }
  }
  __syncthreads();
  double* pnew = pick(g.p, 1 - par);
  const std::int64_t first = c * chunk_rows(a.rows_per_thread);
  const auto own = kSole ? gps::View<double>::Span{} : hit != nullptr ? hit->rows[0] : chunk_rows_span(g, g.r, c);
  const double* rl = g.r.local();
  double d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    const std::int64_t gi = g.first_row + i;
    const double ri = kSole ? rl[gi] : own.from != nullptr ? own.from[gi] : g.r.load(static_cast<std::uint64_t>(gi));
    const double po = pold[gi];
    if (x_step) g.x[i] = fmad(alpha_prev, po, g.x[i]);
    const double pk = fmad(beta, po, ri), qi = sq[i - first];
    pnew[gi] = pk;
    if (!keep_q) g.q[i] = qi;
    d = fmad(pk, qi, d);
  }
  const double t = block_sum(d);  // its barriers also end the reads of sq
  if (threadIdx.x == 0) g.part[0][c] = t;
}

// p_k at the entries of piece h: pages of r this GPU subscribes to beyond its rows (published to
// it by their owners), formed from its replica exactly as the owner forms them. Read without a
// view: these loads are not the SpMV's, and tracking must not see them.
__device__ __forceinline__ void gps_remote_step(const GpsStd& g, int par, double beta, std::int64_t h) {
  const std::int64_t b = __ldg(g.piece_begin + h), e = __ldg(g.piece_end + h);
  const double* r = g.r.local();
  const double* pold = pick(g.p, par);
  double* pnew = pick(g.p, 1 - par);
  for (std::int64_t j = b + threadIdx.x; j < e; j += kThreads) pnew[j] = fmad(beta, pold[j], r[j]);
}

// Update step of chunk c: r -= alpha q through the view, the (r, r) partial (x moved to the SpMV).
// Returns whether a store may have gone to another GPU (the fence then releases at system scope).
// kSole: r's rows read and written in this GPU's replica, nothing published. qs: chunk c's q where
// the SpMV phase kept it (its shared-memory slot), else nullptr: g.q.
template <bool kSole>
__device__ __forceinline__ bool gps_update_step(const GpsStd& g, double alpha, std::int64_t c, const double* qs,
                                                const StdSpans* hit) {
  const DevMatrix& a = g.a;
  const auto s = kSole ? gps::View<double>::Span{} : hit != nullptr ? hit->rows[0] : chunk_rows_span(g, g.r, c);
  const std::int64_t first = c * chunk_rows(a.rows_per_thread);
  double* rl = g.r.local();
  double d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    const std::int64_t gi = g.first_row + i;
    const double qi = qs != nullptr ? qs[i - first] : g.q[i];
    if constexpr (kSole) {
      const double rn = fmad(-alpha, qi, rl[gi]);
      rl[gi] = rn;
      d = fmad(rn, rn, d);
    } else {
      const double ri = s.from != nullptr ? s.from[gi] : g.r.load(static_cast<std::uint64_t>(gi));
      const double rn = fmad(-alpha, qi, ri);
      g.r.store(s, static_cast<std::uint64_t>(gi), rn);
      d = fmad(rn, rn, d);
    }
  }
  const double t = block_sum(d);
  if (threadIdx.x == 0) g.part[1][c] = t;
  return !kSole && (!s.uniform || s.others != 0u);
}

// kKeepQ (GpsStd::q_slots > 0): q kept in the block's shared memory between the phases, a
// template argument as in cpu_free_std's kernel (cg_persistent.cu says why).
template <int kL, class V, class Ix, bool kSole, bool kKeepQ>
__device__ __forceinline__ void gps_std_solve(const GpsStd& g) {
  extern __shared__ double sq[];
  const std::int64_t chunks = g.a.chunks, items = chunks + g.pieces;
  const bool lead = blockIdx.x == 0 && threadIdx.x == 0;
  double rho = g.rho0, beta = 0.0, alpha = 0.0;
  int round = 0, par = 0;
  auto gpu_sum = [&](int which) {  // the GPU's partial from its chunk partials, for the fence
    return [&g, &chunks, which](double* out) {
      const double t = gpu_partial(g.part[which], chunks, 1, 0);
      if (threadIdx.x == 0) out[0] = t;
    };
  };
  // GpsStd::plain; block-uniform (one chunk per block at a time)
  auto plain = [&g](std::int64_t c) { return kSole || (g.plain != nullptr && __ldg(g.plain + c) != 0); };
  // q kept in shared memory (kKeepQ): the block's j-th chunk in slot j, in both phases.
  const std::int64_t chunk = chunk_rows(g.a.rows_per_thread);
  constexpr bool keep = kKeepQ;
  // The block's first kCachedChunks checked chunks ask the view here, once (cg_chunk_spans.cuh).
  __shared__ alignas(StdSpans) unsigned char cache_bytes[sizeof(StdSpans) * kCachedChunks];
  StdSpans* const cached = reinterpret_cast<StdSpans*>(cache_bytes);
  if constexpr (!kSole) {
    clear_chunk_spans(cached);
    if (!g.tracking) {
      int n = 0;
      for (std::int64_t c = blockIdx.x; c < chunks && n < kCachedChunks; c += gridDim.x) {
        if (plain(c)) continue;
        take_chunk_spans(cached[n], 0, g, g.r, c);
        ++n;
      }
    }
    __syncthreads();  // the cache before any thread reads it
  }
  for (int k = 0;; ++k) {
    par = k & 1;
    for (std::int64_t it = blockIdx.x, j = 0; it < items; it += gridDim.x, ++j) {
      double* s = keep ? sq + j * chunk : sq;
      if (it >= chunks)
        gps_remote_step(g, par, beta, it - chunks);
      else if (plain(it))
        gps_spmv_step<kL, V, Ix, true>(g, par, beta, it, s, k > 0, alpha, keep, nullptr);
      else
        gps_spmv_step<kL, V, Ix, kSole>(g, par, beta, it, s, k > 0, alpha, keep, kSole ? nullptr : cached_chunk(cached, it));
    }
    double pq[1];
    g.fence.arrive_and_reduce<1>(round++, false, gpu_sum(0), pq);
    if (pq[0] == 0.0) {  // x already holds x_k
      if (lead) *g.iterations = k;
      return;
    }
    alpha = cg_ratio(rho, pq[0]);
    bool published = false;
    for (std::int64_t c = blockIdx.x, j = 0; c < chunks; c += gridDim.x, ++j) {
      const double* qs = keep ? sq + j * chunk : nullptr;
      published = (plain(c) ? gps_update_step<true>(g, alpha, c, qs, nullptr)
                            : gps_update_step<kSole>(g, alpha, c, qs, kSole ? nullptr : cached_chunk(cached, c))) ||
                  published;
    }
    double rr[1];
    g.fence.arrive_and_reduce<1>(round++, published, gpu_sum(1), rr);
    const bool stop = cg_done(rr[0], g.threshold) || k + 1 == g.iters;
    if (lead) {
      g.hist[k + 1] = rr[0];
      if (stop) *g.iterations = k + 1;
    }
    if (stop) break;
    beta = cg_ratio(rr[0], rho);
    rho = rr[0];
  }
  // The last x update: x_{k+1} = x_k + alpha_k p_k (this block's chunks).
  const double* pk = pick(g.p, 1 - par);
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    CG_FOR_MY_ROWS(g.a, c, e, i) g.x[i] = fmad(alpha, pk[g.first_row + i], g.x[i]);
  }
}

// __grid_constant__: the views stay in parameter space; the steps take references to them.
// The GPS variant, which also holds the plain code for its plain chunks, is held to the
// occupancy it had without them (ptxas, sm_90: 80 registers for kL = 8, 64 for the others);
// left alone, kL = 8 took 102 registers (2 blocks per SM instead of 3). The plain variant is
// left to ptxas, as before.
template <int kL, class V, class Ix, bool kKeepQ>
__global__ void __launch_bounds__(kThreads, kL == 8 ? 3 : 4) gps_std_kernel_gps(const __grid_constant__ GpsStd g) {
  gps_std_solve<kL, V, Ix, false, kKeepQ>(g);
}
template <int kL, class V, class Ix, bool kKeepQ>
__global__ void __launch_bounds__(kThreads) gps_std_kernel_sole(const __grid_constant__ GpsStd g) {
  gps_std_solve<kL, V, Ix, true, kKeepQ>(g);
}

}  // namespace

// The checked (non-sole) kernel of a shape, keep_q false / true (cg_gps_checked.cu, cg_gps_checked_q.cu).
const void* gps_std_checked_kernel(int lanes, EntryKind kind);
const void* gps_std_checked_q_kernel(int lanes, EntryKind kind);

}  // namespace gpsm::apps::cg
