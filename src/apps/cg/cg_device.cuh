#pragma once
// Device building blocks of every CG kernel (cg_discrete.cu, cg_persistent.cu): the row-group
// SpMV, the chunk steps of both variants and the block reductions, each in cg_math.hpp's order.
// Vectors are plain loads: the persistent kernels read data other blocks and GPUs wrote during
// the launch, after an acquire (cg_sync.hpp); the matrix is read-only for the whole run.
#include <cstdint>
#include <string>
#include <type_traits>

#include "apps/cg/cg_kernels.hpp"
#include "apps/cg/cg_math.hpp"
#include "apps/cg/cg_sync.hpp"
#include "apps/cg/sell.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

constexpr unsigned kFull = 0xFFFFFFFFu;

// Host: f(std::integral_constant<int, L>) for the plan's lanes per row (the kernels' template
// argument), for the discrete and the persistent launches alike.
template <class F>
void with_lanes(int lanes, const F& f) {
  switch (lanes) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    default: throw gpsm::Error("gpsm: cg: unsupported lanes per row " + std::to_string(lanes));
  }
}

// The value type of a matrix whose values are 1-byte indices into a table of doubles
// (value_storage.hpp; DevMatrix::val8, val_table): a kernel template argument like double and float.
struct Table8 {};

// Host: f(std::integral_constant<int, L>, V{}, Ix{}) for the lanes per row, the value type the
// matrix is stored in (V = double, float or Table8: stored_values) and its column type (Ix =
// std::int32_t, or std::uint16_t for deltas: sell_chunk), the kernels' template arguments.
// Every combination is one more instantiation of every CG kernel: the table and the deltas exist
// for the sliced layout only, so the 3 sliced lanes (kL <= kSellMaxLanes) take 3 value x 2 column
// types and the 2 CSR lanes (16, 32) keep double and float with 32-bit columns: 22 per kernel
// instead of 10 (sm_90, cg_persistent.cu: 21.6 s of nvcc instead of 11.8 on a 2-core machine),
// where every value x column type for all 5 lanes would make 30. A sliced-only choice on wider
// rows is a plan bug: refused here.
template <class F>
void with_shape(int lanes, EntryKind kind, const F& f) {
  with_lanes(lanes, [&](auto l) {
    if constexpr (decltype(l)::value <= kSellMaxLanes) {
      auto with_index = [&](auto v) {
        if (kind.index == IndexStorage::i16)
          f(l, v, std::uint16_t{});
        else
          f(l, v, std::int32_t{});
      };
      if (kind.values == ValueStorage::table)
        with_index(Table8{});
      else if (kind.values == ValueStorage::f32)
        with_index(float{});
      else
        with_index(double{});
    } else {
      if (kind.values == ValueStorage::table || kind.index == IndexStorage::i16)
        throw gpsm::Error("gpsm: cg: a value table or 16-bit column deltas on rows of " + std::to_string(lanes) +
                          " lanes (the sliced layout's only)");
      if (kind.values == ValueStorage::f32)
        f(l, float{}, std::int32_t{});
      else
        f(l, double{}, std::int32_t{});
    }
  });
}

// Buffer `par` of a pair, by selection: an index computed at run time into a struct's array would
// put the whole struct in local memory.
template <class T>
__device__ __forceinline__ T pick(const T (&pair)[2], int par) {
  return par == 0 ? pair[0] : pair[1];
}

// Sum of v over the block (kThreads threads) in cg_math.hpp's order; thread 0 gets it.
__device__ __forceinline__ double block_sum(double v) {
  __shared__ double wp[kWarps];
  for (int off = kWarp / 2; off > 0; off /= 2) v = v + __shfl_down_sync(kFull, v, off);
  if ((threadIdx.x & (kWarp - 1)) == 0) wp[threadIdx.x / kWarp] = v;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0) {
    t = wp[0];
    for (int w = 1; w < kWarps; ++w) t = t + wp[w];
  }
  __syncthreads();  // wp is reused by the next call
  return t;
}

// The matrix values as stored: V = double, float where every value is exactly one, or (Table8)
// 1-byte indices into a table of doubles (value_storage.hpp). V is a kernel template argument, not
// a run-time choice: chosen per entry (a predicated float or double load), ptxas converted each
// float right after its load, so every batched load of sell_chunk waited for the one before it,
// and the floats' 15 % fewer bytes ran 3-9 % slower than doubles on one H200 (2026-11-29, shares
// of poisson2d:2048; docs/cg.md, "Matrix values"). With V known, the floats stay raw until the
// fmas.
template <class V>
using Stored = std::conditional_t<std::is_same_v<V, Table8>, std::uint8_t, V>;
template <class V>
__device__ __forceinline__ const Stored<V>* stored_values(const DevMatrix& a) {
  if constexpr (std::is_same_v<V, Table8>)
    return a.val8;
  else if constexpr (std::is_same_v<V, float>)
    return a.val32;
  else
    return a.val;
}

// The columns as stored: Ix = std::int32_t, the columns; std::uint16_t, deltas from slot bases.
template <class Ix>
__device__ __forceinline__ const Ix* stored_columns(const DevMatrix& a) {
  if constexpr (std::is_same_v<Ix, std::uint16_t>)
    return a.col16;
  else
    return a.col;
}

// Rows of chunk c times x: row group g (kL lanes) takes local rows first + g, first + g + G, ...;
// out(offset in chunk, value) is called by lane 0 of each group for rows that exist. Block-uniform
// control flow (the shuffles need every lane).
template <int kL, class V, class X, class Out>
__device__ __forceinline__ void spmv_chunk(const DevMatrix& a, std::int64_t c, const X& x, const Out& out) {
  static_assert(!std::is_same_v<V, Table8>, "the value table is the sliced layout's only");
  const V* val = stored_values<V>(a);
  const std::int64_t chunk = chunk_rows(a.rows_per_thread), first = c * chunk;
  const int lane = threadIdx.x % kL, group = threadIdx.x / kL;
  constexpr int kGroups = kThreads / kL;
  for (std::int64_t off = group; off < chunk; off += kGroups) {
    const std::int64_t row = first + off;
    double s = 0.0;
    if (row < a.rows) {
      const std::int32_t end = __ldg(a.row_ptr + row + 1);
      for (std::int32_t k = __ldg(a.row_ptr + row) + lane; k < end; k += kL) s = fmad(static_cast<double>(__ldg(val + k)), x(__ldg(a.col + k)), s);
    }
    for (int o = kL / 2; o > 0; o /= 2) s = s + __shfl_down_sync(kFull, s, o, kL);
    if (lane == 0 && row < a.rows) out(off, s);
  }
}

// The same rows in the sliced-ELL layout (sell.hpp), one thread per row: thread t takes rows
// first + t + e * kThreads, so a warp reads one slice of 32 rows, each k-th entry of its rows at
// consecutive addresses.
// Entry k of a row goes into accumulator k % kL in k order, then the accumulators are reduced as
// the lanes' shuffle-down tree (cg_math.hpp): the CSR path's bits (sell.hpp says when a zero's
// sign may differ). out(offset in chunk, value) is called by every thread whose row exists. Every
// lane of a warp must call it (it holds warp barriers): the kernels call it block-uniformly.
// Ix = std::int32_t: the columns as stored (col); std::uint16_t: 16-bit deltas (col16) from the
// slot's base (col_base: one address for the whole warp, a broadcast), column = base + delta
// (sell_deltas.hpp), loaded in the batch's first step beside the deltas. (Lane t holding slot
// k0 + t's base and the batch taking each by a shuffle, one register instead of kL, made ptxas
// spill more in the Standard kernel at its 64 registers, not less: 88 bytes stored at kL = 4
// with floats against 8.)
// V = Table8: each value is table[index], the table read through the read-only cache beside the
// gathers (a few distinct addresses per warp: L1 hits), the same double bit for bit.
template <int kL, class V, class Ix, class X, class Out>
__device__ __forceinline__ void sell_chunk(const DevMatrix& a, std::int64_t c, const X& x, const Out& out) {
  constexpr bool kDeltas = std::is_same_v<Ix, std::uint16_t>;
  constexpr bool kTable = std::is_same_v<V, Table8>;
  const Stored<V>* val = stored_values<V>(a);
  const std::int64_t first = c * chunk_rows(a.rows_per_thread);
  const int t = static_cast<int>(threadIdx.x % kWarp);
  for (int e = 0; e < a.rows_per_thread; ++e) {
    const std::int64_t off = threadIdx.x + static_cast<std::int64_t>(e) * kThreads, row = first + off;
    const std::int64_t s = row / kWarp;  // warp-uniform: first and e * kThreads are multiples of 32
    if (s * kWarp >= a.rows) break;      // the whole warp: later slices are further out
    // A short last slice stores its missing rows (padding): the whole warp computes, so the warp
    // barriers below see every lane; only existing rows are written.
    const std::int32_t b = __ldg(a.slice_ptr + s), w = (__ldg(a.slice_ptr + s + 1) - b) / kWarp;
    const std::int64_t at0 = static_cast<std::int64_t>(b) + t;
    const Ix* cl = stored_columns<Ix>(a) + at0;
    const std::int32_t* bases = a.col_base + b / kWarp;  // slot k's base at bases[k] (deltas only)
    double acc[kL];
#pragma unroll
    for (int l = 0; l < kL; ++l) acc[l] = 0.0;
    // Batches of kL entries in three steps: columns and values, gathers, fmas. Each step's loads
    // issue back to back: the warp barrier between the steps keeps the compiler from sinking a
    // load to just before its use (one memory latency per entry, which ptxas chose for the
    // persistent kernels to save registers). An entry past the width re-reads the last one (an
    // L1 hit) and is not added.
    for (std::int32_t k = 0; k < w; k += kL) {
      std::int32_t j[kL], base[kL];
      Stored<V> m[kL];
      double xv[kL], mv[kL];
#pragma unroll
      for (int l = 0; l < kL; ++l) {
        const std::int32_t slot = min(k + l, w - 1), at = slot * kWarp;
        j[l] = __ldg(cl + at);
        if constexpr (kDeltas) base[l] = __ldg(bases + slot);
        m[l] = __ldg(val + at0 + at);
      }
      __syncwarp();
#pragma unroll
      for (int l = 0; l < kL; ++l) {
        xv[l] = x(kDeltas ? base[l] + j[l] : j[l]);
        if constexpr (kTable) mv[l] = __ldg(a.val_table + m[l]);
      }
      __syncwarp();
#pragma unroll
      for (int l = 0; l < kL; ++l)
        if (k + l < w) acc[l] = fmad(kTable ? mv[l] : static_cast<double>(m[l]), xv[l], acc[l]);
    }
#pragma unroll
    for (int o = kL / 2; o > 0; o /= 2)
#pragma unroll
      for (int l = 0; l < o; ++l) acc[l] = acc[l] + acc[l + o];
    if (row < a.rows) out(off, acc[0]);
  }
}

// Chunk c's rows times x in the matrix's layout: the one SpMV call of every CG kernel. Sliced
// only for kL <= kSellMaxLanes (the plan never slices wider rows), so the wide kernels keep their
// registers; always sliced for a value table or deltas (the sliced layout's only: no CSR path
// compiled into those kernels). Block-uniform control flow.
template <int kL, class V, class Ix, class X, class Out>
__device__ __forceinline__ void spmv_rows(const DevMatrix& a, std::int64_t c, const X& x, const Out& out) {
  if constexpr (std::is_same_v<V, Table8> || std::is_same_v<Ix, std::uint16_t>) {
    static_assert(kL <= kSellMaxLanes, "a value table and column deltas are the sliced layout's only");
    sell_chunk<kL, V, Ix>(a, c, x, out);
  } else {
    if constexpr (kL <= kSellMaxLanes) {
      if (a.slice_ptr != nullptr) {
        sell_chunk<kL, V, Ix>(a, c, x, out);
        return;
      }
    }
    spmv_chunk<kL, V>(a, c, x, out);
  }
}

// The local rows of chunk c thread t owns in the dot-product order: first + t + e * kThreads.
#define CG_FOR_MY_ROWS(a, c, e, i)                                                                 \
  for (int e = 0; e < (a).rows_per_thread; ++e)                                                    \
    if (const std::int64_t i = (c) * chunk_rows((a).rows_per_thread) + threadIdx.x + static_cast<std::int64_t>(e) * kThreads; \
        i < (a).rows)

// Stores chunk c's sent entries of `vec` (local rows the peers read) to their destinations.
// Returns whether the chunk sends anything (block-uniform). The caller synchronized the block
// after writing vec's rows.
__device__ __forceinline__ bool push_chunk(const Pushes& p, int parity, std::int64_t c, const double* vec) {
  const std::int32_t b = __ldg(p.chunk_off + c), e = __ldg(p.chunk_off + c + 1);
  for (std::int32_t k = b + static_cast<std::int32_t>(threadIdx.x); k < e; k += kThreads)
    p.base[parity * kMaxRanks + __ldg(p.peer + k)][__ldg(p.dst + k)] = vec[__ldg(p.row + k)];
  return e > b;
}

// ---- Standard CG ---------------------------------------------------------------------------
// SpMV step of chunk c at iteration parity par: p_k = r + beta p_{k-1} formed on the fly, q = A p_k;
// own rows of p_k and q stored; the chunk's (p_k, q) partial to part[c]. sq: chunk_rows doubles.
// x_step: also x += alpha_prev p_{k-1} for the own rows (the persistent kernels move the last
// iteration's x update here, where p_{k-1} is read anyway: 8 bytes a row less per iteration than
// in the update step, which then reads neither x nor p).
// keep_q: q stays in sq for the update phase (the persistent kernels' GPSM_CG_Q=shared: sq is the
// block's slot for chunk c, q_storage.hpp) instead of being stored to v.q.
template <int kL, class V, class Ix>
__device__ __forceinline__ void std_spmv_step(const DevMatrix& a, const StdVectors& v, int par, double beta,
                                              std::int64_t c, double* part, double* sq, bool x_step = false,
                                              double alpha_prev = 0.0, bool keep_q = false) {
  const double* pold = pick(v.p, par);
  const double* r = v.r;
  spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return fmad(beta, pold[j], r[j]); },
                   [&](std::int64_t off, double s) { sq[off] = s; });
  __syncthreads();
  double* pnew = pick(v.p, 1 - par);
  const std::int64_t first = c * chunk_rows(a.rows_per_thread);
  double d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    const double po = pold[i];
    if (x_step) v.x[i] = fmad(alpha_prev, po, v.x[i]);
    const double pk = fmad(beta, po, r[i]), qi = sq[i - first];
    pnew[i] = pk;
    if (!keep_q) v.q[i] = qi;
    d = fmad(pk, qi, d);
  }
  const double t = block_sum(d);  // its barriers also end the reads of sq
  if (threadIdx.x == 0) part[c] = t;
}

// The halo slots' p_k (piece h: slots h * kThreads ...), formed from the received r like the owner's.
__device__ __forceinline__ void std_halo_step(const DevMatrix& a, const StdVectors& v, int par, double beta, std::int64_t h) {
  const std::int64_t slot = h * kThreads + threadIdx.x;
  if (slot < a.halo) {
    const std::int64_t i = a.rows + slot;
    pick(v.p, 1 - par)[i] = fmad(beta, pick(v.p, par)[i], v.r[i]);
  }
}

// Update step of chunk c: x += alpha p_k (when x_step: the discrete kernels), r -= alpha q, the
// (r, r) partial to part[c], r's sent entries pushed. Returns whether it pushed. qs: chunk c's q
// where the SpMV phase kept it (its shared-memory slot, std_spmv_step's keep_q), else nullptr: v.q.
__device__ __forceinline__ bool std_update_step(const DevMatrix& a, const StdVectors& v, int par, double alpha,
                                                std::int64_t c, double* part, const Pushes& push, bool x_step = true,
                                                const double* qs = nullptr) {
  const double* pk = pick(v.p, 1 - par);
  const std::int64_t first = c * chunk_rows(a.rows_per_thread);
  double d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    if (x_step) v.x[i] = fmad(alpha, pk[i], v.x[i]);
    const double rn = fmad(-alpha, qs != nullptr ? qs[i - first] : v.q[i], v.r[i]);
    v.r[i] = rn;
    d = fmad(rn, rn, d);
  }
  const double t = block_sum(d);  // its barriers make the block's r stores visible to the pushes
  if (threadIdx.x == 0) part[c] = t;
  return push_chunk(push, 0, c, v.r);
}

// x += alpha p (p: the buffer of parity pp) for chunk c's own rows: the persistent kernels' last
// x update, after their last iteration.
__device__ __forceinline__ void std_x_step(const DevMatrix& a, const StdVectors& v, int pp, double alpha, std::int64_t c) {
  const double* p = pick(v.p, pp);
  CG_FOR_MY_ROWS(a, c, e, i) v.x[i] = fmad(alpha, p[i], v.x[i]);
}

// ---- Pipelined CG --------------------------------------------------------------------------
// Chunks the Pipelined persistent kernels (cpu_free_pipe, gps_pipe) stage (A w in shared memory)
// before they need the reduction's scalars.
__host__ __device__ constexpr int pipe_slots(int rows_per_thread) { return rows_per_thread >= 4 ? 1 : 4 / rows_per_thread; }

// n = A w (w: w[par] of iteration i) for chunk c, through out(offset, value).
template <int kL, class V, class Ix, class Out>
__device__ __forceinline__ void pipe_spmv_step(const DevMatrix& a, const double* w, std::int64_t c, const Out& out) {
  spmv_rows<kL, V, Ix>(a, c, [&](std::int32_t j) { return w[j]; }, out);
}

// Update step of chunk c at iteration parity par, n_at(i) giving (A w)_i: z, s, p, x, r and the
// next w; the (r, r) and (w, r) partials to part[2c], part[2c + 1]; w's sent entries pushed into
// the peers' w[1 - par]. Returns whether it pushed.
template <class N>
__device__ __forceinline__ bool pipe_update_step(const DevMatrix& a, const PipeVectors& v, int par, double alpha,
                                                 double beta, std::int64_t c, const N& n_at, double* part,
                                                 const Pushes& push) {
  const double* w = pick(v.w, par);
  double* wn = pick(v.w, 1 - par);
  double g = 0.0, d = 0.0;
  CG_FOR_MY_ROWS(a, c, e, i) {
    const double wi = w[i];
    const double z = fmad(beta, v.z[i], n_at(i));
    const double s = fmad(beta, v.s[i], wi);
    const double p = fmad(beta, v.p[i], v.r[i]);
    v.x[i] = fmad(alpha, p, v.x[i]);
    const double r = fmad(-alpha, s, v.r[i]);
    const double wnext = fmad(-alpha, z, wi);
    v.z[i] = z;
    v.s[i] = s;
    v.p[i] = p;
    v.r[i] = r;
    wn[i] = wnext;
    g = fmad(r, r, g);
    d = fmad(wnext, r, d);
  }
  const double tg = block_sum(g);
  const double td = block_sum(d);
  if (threadIdx.x == 0) {
    part[2 * c] = tg;
    part[2 * c + 1] = td;
  }
  return push_chunk(push, 1 - par, c, wn);
}

// Pipelined scalars of iteration i from gamma, delta and the previous iteration's; false when the
// denominator is exactly zero (the run stops there).
__device__ __forceinline__ bool pipe_scalars(int i, double gamma, double delta, double gamma_prev, double alpha_prev,
                                             double& alpha, double& beta) {
  beta = i == 0 ? 0.0 : cg_ratio(gamma, gamma_prev);
  const double den = i == 0 ? delta : pipe_alpha_den(gamma, delta, beta, alpha_prev);
  alpha = cg_ratio(gamma, den);
  return den != 0.0;
}

__device__ __forceinline__ bool cg_done(double rho, double threshold) {
  return rho == 0.0 || (threshold > 0 && sqrt(rho) <= threshold);
}

// A GPU's partial of value k from its chunk partials (parts[c * count + k]) in cg_math.hpp's order
// (thread t adds chunks t, t + kThreads, ..., then the block tree); thread 0 gets it. Block-collective.
// The partials were stored by other blocks during the launch: loaded around L1 (__ldcg). (Batching
// a thread's loads into a 16-entry array before its adds, tried for the reduction's latency, made
// gps and gps_pipe 0.3-1.1 us an iteration slower at 256^2 and 512^2 on one H200: kept as it was.)
__device__ __forceinline__ double gpu_partial(const double* parts, std::int64_t chunks, int count, int k) {
  double acc = 0.0;
  for (std::int64_t c = threadIdx.x; c < chunks; c += kThreads) acc = acc + __ldcg(parts + c * count + k);
  return block_sum(acc);
}

// ---- the communication block's send and every block's receive (cg_sync.hpp) -------------------
__device__ inline void CgSync::send(std::uint64_t s, const double* parts, std::int64_t chunks, int count) const {
  __shared__ double mine[3];
  for (int k = 0; k < count; ++k) {
    const double t = gpu_partial(parts, chunks, count, k);
    if (threadIdx.x == 0) mine[k] = t;
  }
  const int p = static_cast<int>(s & 1);
  if (threadIdx.x == 0) {  // unrolled over kMaxRanks: the stores' addresses stay in registers
#pragma unroll
    for (int g = 0; g < kMaxRanks; ++g)
      if (g < ranks)
        for (int k = 0; k < count; ++k)
          gps::st_relaxed_sys(reinterpret_cast<std::uint64_t*>(&all[g]->inbox[p][rank].v[k]), __double_as_longlong(mine[k]));
    // The values, and everything this GPU's blocks released to this block, before the tags.
    gps::fence(ranks > 1);
#pragma unroll
    for (int g = 0; g < kMaxRanks; ++g)
      if (g < ranks) gps::st_relaxed_sys(&all[g]->inbox[p][rank].tag, s + 1);
  }
}

__device__ inline void CgSync::receive(std::uint64_t s, int count, double* out) const {
  const int p = static_cast<int>(s & 1);
  if (threadIdx.x < kWarp) {
    const int g = static_cast<int>(threadIdx.x);
    double val[3] = {0.0, 0.0, 0.0};
    if (g < ranks) {
      gps::wait_geq<std::uint64_t>(ranks > 1, &self->inbox[p][g].tag, s + 1, wait, "cg reduction word");
      for (int k = 0; k < count; ++k)
        val[k] = __longlong_as_double(static_cast<long long>(gps::ld_relaxed_sys(reinterpret_cast<const std::uint64_t*>(&self->inbox[p][g].v[k]))));
    }
    for (int k = 0; k < count; ++k) {
      double sum = 0.0;
      for (int h = 0; h < ranks; ++h) sum = sum + __shfl_sync(kFull, val[k], h);
      if (threadIdx.x == 0) out[k] = sum;
    }
  }
  __syncthreads();  // the other threads read out[] after warp 0's acquire
}

}  // namespace gpsm::apps::cg
