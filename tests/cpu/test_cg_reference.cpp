// The CG CPU reference: the fixed summation order (trees, chunks, ranks) it shares with the GPU
// kernels, convergence of Standard and Pipelined CG on the generated matrices, the documented
// drift of Pipelined from Standard, the residual gap bound, and the check that judges a GPU run
// (shown to fail on a wrong history, a wrong solution or a wrong iteration count).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"

using namespace gpsm::apps::cg;

namespace {

Plan plan_of(const Matrix& a, int ranks) { return make_plan(a, split_rows(a.n, ranks)); }

double rel_norm(const Solve& s) { return std::sqrt(s.rho.back() / s.rho.front()); }

double max_abs_diff_from_one(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m = std::max(m, std::fabs(v - 1.0));
  return m;
}

}  // namespace

TEST(CgReference, TreesAddInTheGpuOrder) {
  // Width 4: (v0 + v2) + (v1 + v3), which differs from the sequential sum here.
  double v[4] = {1e16, 1.0, -1e16, 1.0};
  EXPECT_EQ(lane_tree(v, 4), 2.0);
  EXPECT_EQ(((1e16 + 1.0) + -1e16) + 1.0, 1.0);
  // A block: warp trees, then the warp sums in order; exact on small integers.
  double b[kThreads];
  for (int t = 0; t < kThreads; ++t) b[t] = t;
  EXPECT_EQ(block_tree(b), kThreads * (kThreads - 1) / 2.0);
  // Warp 0's tree is lanes 0..31 only: a huge value in lane 32 cancels only at the warp level.
  for (int t = 0; t < kThreads; ++t) b[t] = 0;
  b[0] = 1.0, b[32] = 1e16, b[64] = -1e16;
  EXPECT_EQ(block_tree(b), 0.0);  // ((1 + 1e16) + -1e16): the 1 is lost, as on the GPU
}

TEST(CgReference, ChunkedDotsAreExactOnIntegers) {
  const Matrix a = poisson2d(70, 41);  // 2870 rows: several chunks, a ragged last one
  for (int ranks : {1, 2, 3, 7}) {
    const Plan plan = plan_of(a, ranks);
    std::vector<double> x(static_cast<std::size_t>(a.n)), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 13), y[i] = static_cast<double>(i % 7) - 3;
    double exact = 0;
    for (std::size_t i = 0; i < x.size(); ++i) exact += x[i] * y[i];
    EXPECT_EQ(partitioned_dot(plan, x, y), exact) << ranks;
    // Every chunk's partial covers exactly its rows.
    const auto parts = chunk_partials(plan, 0, x, y);
    EXPECT_EQ(static_cast<std::int64_t>(parts.size()), plan.chunks(0));
    EXPECT_EQ(rank_partial(parts.data(), static_cast<std::int64_t>(parts.size())),
              std::accumulate(parts.begin(), parts.end(), 0.0));
  }
}

TEST(CgReference, StandardAndPipelinedConverge) {
  for (const Matrix& a : {poisson2d(24, 21), poisson3d27(8, 7, 6), banded(700, 7, 5), arrow(500, 5, 9), elastic3d(4, 4, 3)}) {
    for (Variant v : {Variant::standard, Variant::pipelined}) {
      for (int ranks : {1, 3}) {
        SCOPED_TRACE(std::to_string(a.n) + " rows, " + variant_name(v) + ", " + std::to_string(ranks) + " GPUs");
        const Plan plan = plan_of(a, ranks);
        const Start st = make_start(a, plan, v, 1e-10);
        const Solve s = reference_solve(a, plan, st, v, 2000);
        EXPECT_LT(s.iterations, 2000);
        EXPECT_EQ(static_cast<int>(s.rho.size()), s.iterations + 1);
        EXPECT_LE(std::sqrt(s.rho.back()), st.threshold);
        EXPECT_GT(std::sqrt(s.rho[s.rho.size() - 2]), st.threshold);  // it stops at the first iteration below
        EXPECT_LT(max_abs_diff_from_one(s.x), 1e-6);                 // b = A * 1
        EXPECT_LT(true_residual(a, st.b, s.x), 1e-8 * std::sqrt(st.rho0));
      }
    }
  }
}

TEST(CgReference, FixedIterationsRunThemAll) {
  const Matrix a = poisson2d(64, 64);
  const Plan plan = plan_of(a, 2);
  for (Variant v : {Variant::standard, Variant::pipelined}) {
    const Start st = make_start(a, plan, v, 0);
    EXPECT_EQ(st.threshold, 0.0);
    const Solve s = reference_solve(a, plan, st, v, 50);
    EXPECT_EQ(s.iterations, 50);
    ASSERT_EQ(s.rho.size(), 51u);
    EXPECT_EQ(s.rho[0], st.rho0);
    EXPECT_LT(rel_norm(s), 0.5);
    const Solve none = reference_solve(a, plan, st, v, 0);
    EXPECT_EQ(none.iterations, 0);
    EXPECT_EQ(none.rho.size(), 1u);
  }
}

TEST(CgReference, PipelinedDriftsFromStandardWithinTheStatedBound) {
  // docs/cg.md: in exact arithmetic both variants produce the same residuals; in double the
  // Pipelined recurrences drift (Ghysels and Vanroose; Cools et al.): on these smoothly converging
  // operators by less than 1e-6 relative while the residual is above 1e-8 of ||b||. Below that,
  // Pipelined stalls at its attainable accuracy while Standard's recurrence keeps shrinking.
  for (const Matrix& a : {poisson2d(96, 80), poisson3d7(24, 20, 16)}) {
    const Plan plan = plan_of(a, 2);
    const Start ss = make_start(a, plan, Variant::standard, 0), sp = make_start(a, plan, Variant::pipelined, 0);
    const Solve s = reference_solve(a, plan, ss, Variant::standard, 300);
    const Solve p = reference_solve(a, plan, sp, Variant::pipelined, 300);
    double drift = 0;
    int compared = 0;
    for (int k = 0; k <= 300 && std::sqrt(s.rho[k]) >= 1e-8 * std::sqrt(ss.rho0); ++k, ++compared)
      drift = std::max(drift, std::fabs(std::sqrt(p.rho[k]) - std::sqrt(s.rho[k])) / std::sqrt(s.rho[k]));
    EXPECT_GT(compared, 50) << a.n;
    EXPECT_LT(drift, 1e-6) << a.n;
    EXPECT_GT(drift, 0.0) << a.n;  // different recurrences, different rounding: they do differ
    EXPECT_GT(std::sqrt(p.rho.back()), 100 * std::sqrt(s.rho.back())) << a.n;  // the stall
  }
}

TEST(CgReference, WhyEveryRunIsCheckedAgainstItsOwnSplit) {
  // On an operator where CG loses orthogonality early (the banded generator, a 1D-like PDE
  // operator), one rounding difference grows to O(0.1) in the residual within a hundred
  // iterations: Standard CG with its dots split over 2 or 3 GPUs, same matrix, same algorithm.
  // A tolerance cannot tell such a run from a wrong one, so every paradigm reproduces the
  // reference of its own split and variant bit for bit, and the check demands 1e-10.
  const Matrix a = banded(4000, 9, 2);
  const Plan p2 = plan_of(a, 2), p3 = plan_of(a, 3);
  const Solve x = reference_solve(a, p2, make_start(a, p2, Variant::standard, 0), Variant::standard, 300);
  const Solve y = reference_solve(a, p3, make_start(a, p3, Variant::standard, 0), Variant::standard, 300);
  EXPECT_EQ(x.rho[0], y.rho[0]);
  double drift = 0;
  for (int k = 0; k <= 300; ++k) drift = std::max(drift, std::fabs(std::sqrt(x.rho[k]) - std::sqrt(y.rho[k])) / std::sqrt(x.rho[k]));
  EXPECT_GT(drift, 1e-3);
}

TEST(CgReference, ResidualGapWithinTheBound) {
  for (const Matrix& a : {poisson2d(64, 50), banded(2000, 21, 4)}) {
    const Plan plan = plan_of(a, 2);
    for (Variant v : {Variant::standard, Variant::pipelined}) {
      const Start st = make_start(a, plan, v, 0);
      const Solve s = reference_solve(a, plan, st, v, 300);
      const double gap = std::fabs(true_residual(a, st.b, s.x) - std::sqrt(s.rho.back()));
      const double bound = residual_gap_bound(Variant::standard, s.iterations, a.norm_inf(), s.max_x_norm, std::sqrt(st.rho0), 0);
      if (v == Variant::standard) EXPECT_LE(gap, bound) << a.n;
      EXPECT_GT(bound, 0.0);
    }
  }
  EXPECT_EQ(residual_gap_bound(Variant::pipelined, 10, 8, 1, 1, 0.5),
            residual_gap_bound(Variant::standard, 10, 8, 1, 1, 0.0) + 1.0);
}

TEST(CgReference, CheckFailsWrongRuns) {
  const Matrix a = poisson2d(40, 30);
  const Plan plan = plan_of(a, 2);
  for (Variant v : {Variant::standard, Variant::pipelined}) {
    const Start st = make_start(a, plan, v, 0);
    const Solve ref = reference_solve(a, plan, st, v, 60);
    const Check same = check_solve(a, st, ref, ref, v);
    EXPECT_TRUE(same.failure.empty()) << same.failure;
    EXPECT_EQ(same.error(), 0.0);
    EXPECT_GT(same.true_residual, 0.0);

    Solve h = ref;
    h.rho[30] *= 1 + 1e-8;
    EXPECT_NE(check_solve(a, st, ref, h, v).failure.find("residual history"), std::string::npos);
    h = ref;
    h.rho[10] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(check_solve(a, st, ref, h, v).history_error, std::numeric_limits<double>::infinity());
    Solve x = ref;
    x.x[123] += 1e-7;
    EXPECT_NE(check_solve(a, st, ref, x, v).failure.find("solution"), std::string::npos);
    Solve it = reference_solve(a, plan, st, v, 59);
    EXPECT_NE(check_solve(a, st, ref, it, v).failure.find("iterations"), std::string::npos);
  }
}

TEST(CgReference, StartHoldsWhatTheGpusUpload) {
  const Matrix a = banded(3000, 9, 1);
  const Plan plan = plan_of(a, 2);
  const Start s = make_start(a, plan, Variant::pipelined, 1e-6);
  EXPECT_EQ(s.b, rhs_ones(a, plan.lanes));
  EXPECT_EQ(s.rho0, partitioned_dot(plan, s.b, s.b));
  EXPECT_DOUBLE_EQ(s.threshold, 1e-6 * std::sqrt(s.rho0));
  ASSERT_EQ(s.w0.size(), s.b.size());
  const auto at = [&](std::int64_t j) { return s.b[j]; };
  EXPECT_EQ(s.w0[17], row_times(a.row_ptr[17], a.row_ptr[18], a.col.data(), a.val.data(), plan.lanes, at));
  EXPECT_TRUE(make_start(a, plan, Variant::standard, 0).w0.empty());
}

// The reference's loops run as FMA clones on threads (reference.cpp): every SpMV row, every dot
// and every update must still be the bits of the plain serial arithmetic (std::fma, rows in order),
// on a matrix past every parallel threshold: 70,000 rows (vector loops) of 9 (630 k nonzeros).
TEST(CgReference, ClonedThreadedLoopsComputeTheSerialBits) {
  const Matrix a = banded(70000, 9, 3);
  const Plan plan = plan_of(a, 3);
  const Start st = make_start(a, plan, Variant::pipelined, 0);
  // w0 = A b, row by row in this file's serial code
  ASSERT_EQ(st.w0.size(), st.b.size());
  const auto at = [&](std::int64_t j) { return st.b[j]; };
  for (std::int64_t i = 0; i < a.n; ++i)
    ASSERT_EQ(st.w0[i], row_times(a.row_ptr[i], a.row_ptr[i + 1], a.col.data(), a.val.data(), plan.lanes, at)) << i;
  // one Standard iteration by hand: p0 = r0 = b, q = A p0, alpha = rho0 / (p0, q), x1 = alpha p0,
  // r1 = r0 - alpha q, rho1 = (r1, r1), each dot in the plan's order
  const Solve s = reference_solve(a, plan, make_start(a, plan, Variant::standard, 0), Variant::standard, 1);
  std::vector<double> q(st.b.size()), x(st.b.size()), r(st.b.size());
  for (std::int64_t i = 0; i < a.n; ++i)
    q[i] = row_times(a.row_ptr[i], a.row_ptr[i + 1], a.col.data(), a.val.data(), plan.lanes, at);
  const auto serial_dot = [&](const std::vector<double>& u, const std::vector<double>& v) {
    std::vector<double> ranks;
    for (int k = 0; k < plan.ranks; ++k) {
      std::vector<double> parts;
      const std::int64_t off = plan.rank[k].rows.begin;
      for (std::int64_t c = 0; c < plan.chunks(k); ++c) parts.push_back(chunk_partial(plan, k, c, u.data() + off, v.data() + off));
      ranks.push_back(rank_partial(parts.data(), static_cast<std::int64_t>(parts.size())));
    }
    return global_sum(ranks);
  };
  EXPECT_EQ(st.rho0, serial_dot(st.b, st.b));
  const double alpha = cg_ratio(st.rho0, serial_dot(st.b, q));
  for (std::int64_t i = 0; i < a.n; ++i) {
    x[i] = fmad(alpha, st.b[i], 0.0);
    r[i] = fmad(-alpha, q[i], st.b[i]);
  }
  ASSERT_EQ(s.iterations, 1);
  EXPECT_EQ(s.x, x);
  EXPECT_EQ(s.rho[1], serial_dot(r, r));
}
