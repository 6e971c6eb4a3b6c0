// The CG CPU reference and the check of a GPU run against it (reference.hpp).
#include "apps/cg/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "apps/cg/cg_math.hpp"
#include "apps/harness/reference_cache.hpp"
#include "common/omp.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

// Loops over fewer entries run on one thread: forking threads for them costs more than it saves.
constexpr std::int64_t kParallelFrom = 1 << 16;

// The reference's loops run as functions cloned for FMA hardware where the compiler can
// (target_clones: the loader picks the clone the CPU runs; flatten inlines fmad into it): on the
// host build (x86-64, no -mfma) std::fma is otherwise a libm call per use, and the clone's one
// instruction gives the same correctly rounded result, so the reference's bits do not change. The
// OpenMP loops call them on blocks (the regions GCC outlines are not cloned themselves).
// On the 2-core build machine, 50 Standard iterations of banded:63838:222 (crankseg_2's stand-in):
// 3.85 s before, 0.98 s with the clones and the SpMV's nonzero threshold, the same bits (six
// matrices, both variants, 2026-11-29).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__CUDACC__)
#define GPSM_FMA_CLONED __attribute__((target_clones("fma", "default"), flatten))
#else
#define GPSM_FMA_CLONED
#endif
constexpr std::int64_t kBlock = 4096;  // vector elements a thread takes at a time

// f(first, last) over [0, n) in blocks of `per`, taken by the threads as they come (a dense
// matrix row does not hold up one thread's static share) when `parallel`, else in order on this
// thread. Every block's work is its own, so the result does not depend on the threads.
template <class F>
void in_blocks(std::int64_t n, std::int64_t per, bool parallel, F f) {
  const std::int64_t blocks = (n + per - 1) / per;
  GPSM_OMP(parallel for schedule(dynamic) if(parallel))
  for (std::int64_t k = 0; k < blocks; ++k) f(k * per, std::min(n, (k + 1) * per));
}
// The vector loops: blocks of kBlock elements, forked from kParallelFrom elements.
template <class F>
void in_blocks(std::int64_t n, F f) {
  in_blocks(n, kBlock, n >= kParallelFrom, f);
}

const char* variant_name(Variant v) { return v == Variant::standard ? "standard" : "pipelined"; }

double chunk_partial(const Plan& plan, int r, std::int64_t c, const double* a, const double* b) {
  const std::int64_t rows = plan.rank[r].local_rows(), first = c * plan.chunk();
  double v[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    double s = 0.0;
    for (int e = 0; e < plan.rows_per_thread; ++e) {
      const std::int64_t i = first + t + static_cast<std::int64_t>(e) * kThreads;
      if (i < rows) s = fmad(a[i], b[i], s);
    }
    v[t] = s;
  }
  return block_tree(v);
}

namespace {
GPSM_FMA_CLONED void chunk_partials_of(const Plan& plan, int r, const double* a, const double* b, std::int64_t first,
                                       std::int64_t last, double* parts) {
  for (std::int64_t c = first; c < last; ++c) parts[c] = chunk_partial(plan, r, c, a, b);
}
}  // namespace

std::vector<double> chunk_partials(const Plan& plan, int r, const std::vector<double>& a, const std::vector<double>& b) {
  const std::int64_t off = plan.rank[r].rows.begin, chunks = plan.chunks(r);
  std::vector<double> parts(static_cast<std::size_t>(chunks));
  const std::int64_t per = std::max<std::int64_t>(1, kBlock / plan.chunk());  // about kBlock rows a block
  in_blocks(chunks, per, chunks * plan.chunk() >= kParallelFrom, [&](std::int64_t f, std::int64_t l) {
    chunk_partials_of(plan, r, a.data() + off, b.data() + off, f, l, parts.data());
  });
  return parts;
}

double rank_partial(const double* parts, std::int64_t chunks, int stride, int which) {
  double v[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    double s = 0.0;
    for (std::int64_t c = t; c < chunks; c += kThreads) s = s + parts[c * stride + which];
    v[t] = s;
  }
  return block_tree(v);
}

double global_sum(const std::vector<double>& rank_parts) {
  double g = 0.0;
  for (double p : rank_parts) g = g + p;
  return g;
}

double partitioned_dot(const Plan& plan, const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ranks(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    const auto parts = chunk_partials(plan, r, a, b);
    ranks[r] = rank_partial(parts.data(), static_cast<std::int64_t>(parts.size()));
  }
  return global_sum(ranks);
}

namespace {

// Rows [begin, end) of y = A x with the lanes' order (GPSM_FMA_CLONED).
GPSM_FMA_CLONED void spmv_rows(const Matrix& a, int lanes, const double* x, double* y, std::int64_t begin, std::int64_t end) {
  const auto at = [x](std::int64_t j) { return x[j]; };
  for (std::int64_t i = begin; i < end; ++i)
    y[i] = row_times(a.row_ptr[i], a.row_ptr[i + 1], a.col.data(), a.val.data(), lanes, at);
}

// y = A x with the lanes' order (x given as a global vector), 256 rows a block; the work decides
// whether to fork: the nonzeros, not the rows (Table 3.1's crankseg_2 stand-in, 63,838 rows of
// 222, ran serial under a row threshold: 60 s of the 4xH200 Table 3.1 call per variant at 1000
// iterations).
void spmv(const Matrix& a, int lanes, const std::vector<double>& x, std::vector<double>& y) {
  in_blocks(a.n, 256, a.nnz() >= kParallelFrom,
            [&](std::int64_t f, std::int64_t l) { spmv_rows(a, lanes, x.data(), y.data(), f, l); });
}

double norm2(const std::vector<double>& x) {
  double s = 0;
  GPSM_OMP(parallel for schedule(static) reduction(+ : s) if(static_cast<std::int64_t>(x.size()) >= kParallelFrom))
  for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * x[i];
  return std::sqrt(s);
}

// The solves' vector updates on elements [f, l) (GPSM_FMA_CLONED).
GPSM_FMA_CLONED void search_direction(double beta, const double* p, const double* r, double* pk, std::int64_t f,
                                      std::int64_t l) {
  for (std::int64_t j = f; j < l; ++j) pk[j] = fmad(beta, p[j], r[j]);
}
GPSM_FMA_CLONED void standard_update(double alpha, const double* pk, const double* q, double* x, double* r,
                                     std::int64_t f, std::int64_t l) {
  for (std::int64_t j = f; j < l; ++j) {
    x[j] = fmad(alpha, pk[j], x[j]);
    r[j] = fmad(-alpha, q[j], r[j]);
  }
}
struct PipeVectors {
  double *z, *s, *p, *x, *r, *w;
};
GPSM_FMA_CLONED void pipelined_update(double alpha, double beta, const double* nv, PipeVectors v, std::int64_t f,
                                      std::int64_t l) {
  for (std::int64_t j = f; j < l; ++j) {
    v.z[j] = fmad(beta, v.z[j], nv[j]);
    v.s[j] = fmad(beta, v.s[j], v.w[j]);
    v.p[j] = fmad(beta, v.p[j], v.r[j]);
    v.x[j] = fmad(alpha, v.p[j], v.x[j]);
    v.r[j] = fmad(-alpha, v.s[j], v.r[j]);
    v.w[j] = fmad(-alpha, v.z[j], v.w[j]);
  }
}

bool done(double rho, double threshold) { return rho == 0.0 || (threshold > 0 && std::sqrt(rho) <= threshold); }

Solve standard(const Matrix& a, const Plan& plan, const Start& st, int iters) {
  const std::int64_t n = a.n;
  Solve out;
  out.x.assign(static_cast<std::size_t>(n), 0.0);
  std::vector<double> r = st.b, p(static_cast<std::size_t>(n), 0.0), pk(static_cast<std::size_t>(n)), q(static_cast<std::size_t>(n));
  double rho = st.rho0, beta = 0.0;
  out.rho.push_back(rho);
  int k = 0;
  if (!done(rho, st.threshold)) {
    while (k < iters) {
      in_blocks(n, [&](std::int64_t f, std::int64_t l) { search_direction(beta, p.data(), r.data(), pk.data(), f, l); });
      spmv(a, plan.lanes, pk, q);
      const double pq = partitioned_dot(plan, pk, q);
      if (pq == 0.0) break;
      const double alpha = cg_ratio(rho, pq);
      in_blocks(n, [&](std::int64_t f, std::int64_t l) {
        standard_update(alpha, pk.data(), q.data(), out.x.data(), r.data(), f, l);
      });
      out.max_x_norm = std::max(out.max_x_norm, norm2(out.x));
      const double rr = partitioned_dot(plan, r, r);
      out.rho.push_back(rr);
      ++k;
      if (done(rr, st.threshold)) break;
      beta = cg_ratio(rr, rho);
      rho = rr;
      std::swap(p, pk);
    }
  }
  out.iterations = k;
  return out;
}

Solve pipelined(const Matrix& a, const Plan& plan, const Start& st, int iters) {
  const std::int64_t n = a.n;
  const auto sz = static_cast<std::size_t>(n);
  Solve out;
  out.x.assign(sz, 0.0);
  std::vector<double> r = st.b, w = st.w0, z(sz, 0.0), s(sz, 0.0), p(sz, 0.0), nv(sz);
  double gamma_prev = 0, alpha_prev = 0;
  int i = 0;
  for (;; ++i) {
    const double gamma = partitioned_dot(plan, r, r), delta = partitioned_dot(plan, w, r);
    out.rho.push_back(gamma);
    if (i == iters || done(gamma, st.threshold)) break;
    const double beta = i == 0 ? 0.0 : cg_ratio(gamma, gamma_prev);
    const double den = i == 0 ? delta : pipe_alpha_den(gamma, delta, beta, alpha_prev);
    if (den == 0.0) break;
    const double alpha = cg_ratio(gamma, den);
    spmv(a, plan.lanes, w, nv);
    in_blocks(n, [&](std::int64_t f, std::int64_t l) {
      pipelined_update(alpha, beta, nv.data(), {z.data(), s.data(), p.data(), out.x.data(), r.data(), w.data()}, f, l);
    });
    out.max_x_norm = std::max(out.max_x_norm, norm2(out.x));
    gamma_prev = gamma;
    alpha_prev = alpha;
  }
  out.iterations = i;
  return out;
}

}  // namespace

Start make_start(const Matrix& a, const Plan& plan, Variant v, double tol) {
  Start s;
  s.b = rhs_ones(a, plan.lanes);
  s.rho0 = partitioned_dot(plan, s.b, s.b);
  s.threshold = tol > 0 ? tol * std::sqrt(s.rho0) : 0.0;
  if (v == Variant::pipelined) {
    s.w0.resize(s.b.size());
    spmv(a, plan.lanes, s.b, s.w0);
  }
  return s;
}

Solve reference_solve(const Matrix& a, const Plan& plan, const Start& s, Variant v, int iters) {
  if (iters < 0) throw gpsm::Error("gpsm: cg: negative iteration count");
  return v == Variant::standard ? standard(a, plan, s, iters) : pipelined(a, plan, s, iters);
}

double residual_gap_bound(Variant v, int iterations, double norm_a, double max_x_norm, double norm_b, double ref_gap) {
  const double eps = std::numeric_limits<double>::epsilon();
  const double greenbaum = 10.0 * (iterations + 1) * eps * (norm_a * max_x_norm + norm_b);
  return v == Variant::standard ? greenbaum : greenbaum + 2.0 * ref_gap;
}

double true_residual(const Matrix& a, const std::vector<double>& b, const std::vector<double>& x) {
  long double sum = 0;
  GPSM_OMP(parallel for schedule(static) reduction(+ : sum) if(a.n >= kParallelFrom))
  for (std::int64_t i = 0; i < a.n; ++i) {
    long double ax = 0;
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k)
      ax += static_cast<long double>(a.val[k]) * static_cast<long double>(x[a.col[k]]);
    const long double d = static_cast<long double>(b[i]) - ax;
    sum += d * d;
  }
  return static_cast<double>(std::sqrt(sum));
}

Check check_solve(const Matrix& a, const Start& s, const Solve& ref, const Solve& got, Variant v) {
  Check c;
  const double inf = std::numeric_limits<double>::infinity();
  if (got.iterations != ref.iterations || got.rho.size() != ref.rho.size()) {
    c.history_error = c.x_error = inf;
    c.failure = fmt::format("ran {} iterations, the reference {}", got.iterations, ref.iterations);
    return c;
  }
  for (std::size_t k = 0; k < ref.rho.size(); ++k) {
    const double want = std::sqrt(ref.rho[k]), have = std::sqrt(got.rho[k]);
    const double d = want == have ? 0.0 : std::fabs(have - want) / (want > 0 ? want : 1.0);
    c.history_error = std::max(c.history_error, std::isnan(d) ? inf : d);
  }
  if (got.x.size() != ref.x.size()) throw gpsm::Error("gpsm: cg: gathered solution and reference differ in size");
  double scale = 0, diff = 0;
  for (std::size_t i = 0; i < ref.x.size(); ++i) {
    scale = std::max(scale, std::fabs(ref.x[i]));
    const double d = std::fabs(got.x[i] - ref.x[i]);
    diff = std::isnan(d) ? inf : std::max(diff, d);
  }
  c.x_error = diff == 0 ? 0.0 : diff / (scale > 0 ? scale : 1.0);
  c.true_residual = true_residual(a, s.b, got.x);
  c.solver_residual = std::sqrt(got.rho.back());
  const double ref_gap = std::fabs(true_residual(a, s.b, ref.x) - std::sqrt(ref.rho.back()));
  c.gap_bound = residual_gap_bound(v, ref.iterations, a.norm_inf(), std::max(ref.max_x_norm, got.max_x_norm),
                                   std::sqrt(s.rho0), ref_gap);
  const double gap = std::fabs(c.true_residual - c.solver_residual);
  if (!(c.history_error <= kAgreement))
    c.failure = fmt::format("residual history differs from the reference by {:.3e} (bound {:.0e})", c.history_error, kAgreement);
  else if (!(c.x_error <= kAgreement))
    c.failure = fmt::format("solution differs from the reference by {:.3e} (bound {:.0e})", c.x_error, kAgreement);
  else if (!(gap <= c.gap_bound))
    c.failure = fmt::format("||b - Ax|| recomputed on the host is {:.6e}, the solver's residual {:.6e}: gap {:.3e} over the "
                            "bound {:.3e}", c.true_residual, c.solver_residual, gap, c.gap_bound);
  return c;
}

void ref_fields(RefFields& f, Solve& s) {
  f.array(s.rho);
  f.value(s.iterations);
  f.array(s.x);
  f.value(s.max_x_norm);
}

}  // namespace gpsm::apps::cg
