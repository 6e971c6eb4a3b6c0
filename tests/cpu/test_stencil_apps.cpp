// Stencil apps on the CPU (apps/stencil): the decomposition arithmetic, the references against
// naive implementations written here, and decomposed runs emulated rank by rank (local arrays,
// halos copied from the neighbours' owned rows/planes) that must reproduce the global references
// bit for bit: the halo index math the GPU code uses, proven without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil/reference.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"

using namespace gpsm::apps;
using i64 = std::int64_t;

namespace {

// f() must throw std::invalid_argument with a one-line "gpsm: " message that contains `needle`.
template <class F>
void expect_invalid(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one naming '" << needle << "'";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("gpsm: ", 0), 0u) << m;
    EXPECT_NE(m.find(needle), std::string::npos) << "'" << needle << "' not in: " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

// Exact equality of two grids, reporting the first mismatch and how many there are.
::testing::AssertionResult same_cells(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i]) && bad++ == 0) first = i;
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " cells differ, first at " << first << ": got " << got[first]
                                       << ", want " << want[first];
}

void expect_rel_near(double got, double want, double rel) {
  EXPECT_NEAR(got, want, rel * std::max(1e-300, std::fabs(want))) << "got " << got << ", want " << want;
}

// ---- naive references: straightforward loops, the same point functions in the same order ----

struct NaiveJacobi {
  std::vector<float> a;
  int iterations = 0;
  double norm = 1.0;
};

NaiveJacobi naive_jacobi(int nx, int ny, int niter, int nccheck, float tol) {
  std::vector<std::vector<float>> a(ny, std::vector<float>(nx, 0.0f));
  for (int iy = 0; iy < ny; ++iy) a[iy][0] = a[iy][nx - 1] = jacobi_boundary(iy, ny);
  std::vector<std::vector<float>> a_new = a;
  NaiveJacobi out;
  double norm = 1.0;
  int iter = 0;
  while (norm > tol && iter < niter) {
    double sum = 0.0;
    for (int iy = 1; iy < ny - 1; ++iy)
      for (int ix = 1; ix < nx - 1; ++ix) {
        a_new[iy][ix] = jacobi_point(a[iy][ix + 1], a[iy][ix - 1], a[iy + 1][ix], a[iy - 1][ix]);
        const float r = a_new[iy][ix] - a[iy][ix];
        sum += double(r) * double(r);
      }
    a_new[0] = a_new[ny - 2];
    a_new[ny - 1] = a_new[1];
    std::swap(a, a_new);
    if (iter % nccheck == 0) norm = std::sqrt(sum);
    ++iter;
  }
  for (const auto& row : a) out.a.insert(out.a.end(), row.begin(), row.end());
  out.iterations = iter;
  out.norm = norm;
  return out;
}

struct Box3 {
  i64 n[3];
  i64 id(i64 x, i64 y, i64 z) const { return (z * n[1] + y) * n[0] + x; }
  i64 cells() const { return n[0] * n[1] * n[2]; }
  bool interior(i64 x, i64 y, i64 z, i64 r) const {
    return x >= r && x < n[0] - r && y >= r && y < n[1] - r && z >= r && z < n[2] - r;
  }
};

std::vector<float> naive_field(const Box3& b, std::uint32_t seed) {
  std::vector<float> u(b.cells());
  for (i64 i = 0; i < b.cells(); ++i) u[i] = initial_value(static_cast<std::uint64_t>(i), seed);
  return u;
}

std::vector<float> naive_heat(const Box3& b, int iters, std::uint32_t seed) {
  std::vector<float> u = naive_field(b, seed);
  for (int it = 0; it < iters; ++it) {
    std::vector<float> next = u;
    for (i64 z = 1; z < b.n[2] - 1; ++z)
      for (i64 y = 1; y < b.n[1] - 1; ++y)
        for (i64 x = 1; x < b.n[0] - 1; ++x)
          next[b.id(x, y, z)] = heat_point(u[b.id(x, y, z)], u[b.id(x - 1, y, z)], u[b.id(x + 1, y, z)],
                                           u[b.id(x, y - 1, z)], u[b.id(x, y + 1, z)], u[b.id(x, y, z - 1)],
                                           u[b.id(x, y, z + 1)]);
    u = std::move(next);
  }
  return u;
}

// The boundary stays at cur's initial values: next starts as a copy of cur every step.
std::vector<float> naive_wave(const Box3& b, int iters, std::uint32_t seed) {
  std::vector<float> prev = naive_field(b, seed), cur = naive_field(b, seed + 1);
  for (int it = 0; it < iters; ++it) {
    std::vector<float> next = cur;
    for (i64 z = 2; z < b.n[2] - 2; ++z)
      for (i64 y = 2; y < b.n[1] - 2; ++y)
        for (i64 x = 2; x < b.n[0] - 2; ++x) {
          const auto c = [&](i64 dx, i64 dy, i64 dz) { return cur[b.id(x + dx, y + dy, z + dz)]; };
          const float lx = wave_axis(c(-2, 0, 0), c(-1, 0, 0), c(0, 0, 0), c(1, 0, 0), c(2, 0, 0));
          const float ly = wave_axis(c(0, -2, 0), c(0, -1, 0), c(0, 0, 0), c(0, 1, 0), c(0, 2, 0));
          const float lz = wave_axis(c(0, 0, -2), c(0, 0, -1), c(0, 0, 0), c(0, 0, 1), c(0, 0, 2));
          next[b.id(x, y, z)] = wave_point(prev[b.id(x, y, z)], c(0, 0, 0), lx, ly, lz);
        }
    prev = std::move(cur);
    cur = std::move(next);
  }
  return cur;
}

Stencil3DProblem problem(const Box3& b, int iters, std::uint32_t seed) {
  Stencil3DProblem p;
  for (int d = 0; d < 3; ++d) p.n[d] = b.n[d];
  p.iters = iters;
  p.seed = seed;
  return p;
}

JacobiProblem jacobi_problem(i64 nx, i64 ny, int niter, int nccheck, float tol) {
  JacobiProblem p;
  p.nx = nx;
  p.ny = ny;
  p.niter = niter;
  p.nccheck = nccheck;
  p.tol = tol;
  return p;
}

}  // namespace

// ---- split_range ---------------------------------------------------------------------------

TEST(DecompSplitRange, BalancedContiguousSmallerFirst) {
  const std::pair<i64, int> cases[] = {{1, 1}, {5, 5}, {10, 3}, {7, 2}, {100, 7}, {4094, 4}, {17, 16}, {64, 8}};
  for (const auto& [n, p] : cases) {
    SCOPED_TRACE("n=" + std::to_string(n) + " p=" + std::to_string(p));
    i64 next = 0, smallest = n, largest = 0, prev_size = 0;
    int num_low = 0;
    for (int r = 0; r < p; ++r) {
      const Range g = split_range(n, p, r);
      EXPECT_EQ(g.begin, next);
      EXPECT_GE(g.size(), 1);
      EXPECT_GE(g.size(), prev_size);  // smaller parts first
      smallest = std::min(smallest, g.size());
      largest = std::max(largest, g.size());
      num_low += g.size() == n / p;
      prev_size = g.size();
      next = g.end;
    }
    EXPECT_EQ(next, n);
    EXPECT_LE(largest - smallest, 1);
    EXPECT_EQ(num_low, p * (n / p) + p - n);
  }
}

TEST(DecompSplitRange, ExplicitParts) {
  // n = 10, p = 3: low 3, high 4, num_low = 9 + 3 - 10 = 2.
  EXPECT_EQ(split_range(10, 3, 0).begin, 0);
  EXPECT_EQ(split_range(10, 3, 0).end, 3);
  EXPECT_EQ(split_range(10, 3, 1).begin, 3);
  EXPECT_EQ(split_range(10, 3, 1).end, 6);
  EXPECT_EQ(split_range(10, 3, 2).begin, 6);
  EXPECT_EQ(split_range(10, 3, 2).end, 10);
  // n == p: one item each.
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(split_range(5, 5, r).begin, r);
    EXPECT_EQ(split_range(5, 5, r).size(), 1);
  }
  EXPECT_EQ(split_range(1, 1, 0).size(), 1);
}

TEST(DecompSplitRange, Errors) {
  expect_invalid([] { split_range(10, 0, 0); }, "(got 0)");
  expect_invalid([] { split_range(10, -2, 0); }, "(got -2)");
  expect_invalid([] { split_range(10, 3, -1); }, "rank -1");
  expect_invalid([] { split_range(10, 3, 3); }, "rank 3");
  expect_invalid([] { split_range(3, 4, 0); }, "3 items");
  expect_invalid([] { split_range(0, 1, 0); }, "0 items");
}

// ---- jacobi_slab ---------------------------------------------------------------------------

TEST(DecompJacobiSlab, NvidiaChunks) {
  // ny = 4096: 4094 interior rows. 4 ranks: low 1023, num_low = 4092 + 4 - 4094 = 2.
  const i64 chunk4[] = {1023, 1023, 1024, 1024}, first4[] = {1, 1024, 2047, 3071};
  for (int r = 0; r < 4; ++r) {
    const JacobiSlab s = jacobi_slab(4096, 4096, 4, r);
    EXPECT_EQ(s.chunk, chunk4[r]) << r;
    EXPECT_EQ(s.first_row, first4[r]) << r;
    EXPECT_EQ(s.local_rows(), chunk4[r] + 2);
    EXPECT_EQ(s.nx, 4096);
    EXPECT_EQ(s.ny, 4096);
    EXPECT_EQ(s.rank, r);
    EXPECT_EQ(s.ranks, 4);
  }
  // 3 ranks: low 1364, num_low = 4092 + 3 - 4094 = 1.
  const i64 chunk3[] = {1364, 1365, 1365}, first3[] = {1, 1365, 2730};
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(jacobi_slab(4096, 4096, 3, r).chunk, chunk3[r]) << r;
    EXPECT_EQ(jacobi_slab(4096, 4096, 3, r).first_row, first3[r]) << r;
  }
  // 8 ranks: low 511, num_low = 4088 + 8 - 4094 = 2.
  const i64 chunk8[] = {511, 511, 512, 512, 512, 512, 512, 512};
  const i64 first8[] = {1, 512, 1023, 1535, 2047, 2559, 3071, 3583};
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(jacobi_slab(4096, 4096, 8, r).chunk, chunk8[r]) << r;
    EXPECT_EQ(jacobi_slab(4096, 4096, 8, r).first_row, first8[r]) << r;
  }
}

TEST(DecompJacobiSlab, HaloRowsWrapAndNeighbours) {
  const JacobiSlab r0 = jacobi_slab(4096, 4096, 4, 0), r3 = jacobi_slab(4096, 4096, 4, 3);
  EXPECT_EQ(r0.global_row(0), 4094);  // periodic: above row 1 is the last interior row
  EXPECT_EQ(r0.global_row(1), 1);
  EXPECT_EQ(r0.global_row(1023), 1023);
  EXPECT_EQ(r0.global_row(1024), 1024);  // rank 1's first row
  EXPECT_EQ(r3.global_row(0), 3070);     // rank 2's last row
  EXPECT_EQ(r3.global_row(1), 3071);
  EXPECT_EQ(r3.global_row(1024), 4094);
  EXPECT_EQ(r3.global_row(1025), 1);  // periodic: below ny-2 is row 1
  EXPECT_EQ(r0.top, 3);
  EXPECT_EQ(r0.bottom, 1);
  EXPECT_EQ(jacobi_slab(4096, 4096, 4, 1).top, 0);
  EXPECT_EQ(jacobi_slab(4096, 4096, 4, 1).bottom, 2);
  EXPECT_EQ(r3.top, 2);
  EXPECT_EQ(r3.bottom, 0);

  const JacobiSlab one = jacobi_slab(7, 10, 1, 0);
  EXPECT_EQ(one.first_row, 1);
  EXPECT_EQ(one.chunk, 8);
  EXPECT_EQ(one.top, 0);
  EXPECT_EQ(one.bottom, 0);
  EXPECT_EQ(one.global_row(0), 8);
  EXPECT_EQ(one.global_row(9), 1);
  expect_invalid([&] { one.global_row(10); }, "local row 10");
  expect_invalid([&] { one.global_row(-1); }, "local row -1");

  const JacobiSlab two = jacobi_slab(7, 10, 2, 0);
  EXPECT_EQ(two.top, 1);
  EXPECT_EQ(two.bottom, 1);

  // Every halo row is the neighbour's edge row, for any rank count.
  for (int ranks = 1; ranks <= 6; ++ranks)
    for (int r = 0; r < ranks; ++r) {
      const JacobiSlab s = jacobi_slab(9, 13, ranks, r);
      const JacobiSlab up = jacobi_slab(9, 13, ranks, s.top), down = jacobi_slab(9, 13, ranks, s.bottom);
      EXPECT_EQ(s.global_row(0), up.global_row(up.chunk)) << ranks << " ranks, rank " << r;
      EXPECT_EQ(s.global_row(s.chunk + 1), down.global_row(1)) << ranks << " ranks, rank " << r;
    }
}

TEST(DecompJacobiSlab, Errors) {
  expect_invalid([] { jacobi_slab(2, 10, 1, 0); }, "nx must be >= 3 (got 2)");
  expect_invalid([] { jacobi_slab(10, 2, 1, 0); }, "ny must be >= 3 (got 2)");
  expect_invalid([] { jacobi_slab(10, 5, 4, 0); }, "4 ranks");  // 3 interior rows
  expect_invalid([] { jacobi_slab(10, 10, 0, 0); }, "(got 0)");
  expect_invalid([] { jacobi_slab(10, 10, 4, 4); }, "rank 4");
  EXPECT_EQ(jacobi_slab(10, 5, 3, 2).chunk, 1);  // one row each is fine
}

// ---- slab3d --------------------------------------------------------------------------------

TEST(DecompSlab3D, ExtentsAlongEachAxis) {
  const i64 n[3] = {10, 9, 8};
  {  // z, radius 1, 3 ranks: 6 interior planes -> 2, 2, 2
    const i64 first[] = {1, 3, 5};
    for (int r = 0; r < 3; ++r) {
      const Slab3D s = slab3d(n, Axis::z, 1, 3, r);
      EXPECT_EQ(s.first, first[r]);
      EXPECT_EQ(s.count, 2);
      EXPECT_EQ(s.local[0], 10);
      EXPECT_EQ(s.local[1], 9);
      EXPECT_EQ(s.local[2], 4);
      EXPECT_EQ(s.local_cells(), 360);
      EXPECT_EQ(s.plane_cells(), 90);
      EXPECT_EQ(s.n[2], 8);
    }
  }
  {  // y, radius 1, 3 ranks: 7 interior planes -> 2, 2, 3
    const i64 first[] = {1, 3, 5}, count[] = {2, 2, 3};
    for (int r = 0; r < 3; ++r) {
      const Slab3D s = slab3d(n, Axis::y, 1, 3, r);
      EXPECT_EQ(s.first, first[r]);
      EXPECT_EQ(s.count, count[r]);
      EXPECT_EQ(s.local[0], 10);
      EXPECT_EQ(s.local[1], count[r] + 2);
      EXPECT_EQ(s.local[2], 8);
      EXPECT_EQ(s.plane_cells(), 80);
    }
  }
  {  // x, radius 2, 2 ranks: 6 interior planes -> 3, 3
    const i64 first[] = {2, 5};
    for (int r = 0; r < 2; ++r) {
      const Slab3D s = slab3d(n, Axis::x, 2, 2, r);
      EXPECT_EQ(s.first, first[r]);
      EXPECT_EQ(s.count, 3);
      EXPECT_EQ(s.local[0], 7);
      EXPECT_EQ(s.local[1], 9);
      EXPECT_EQ(s.local[2], 8);
      EXPECT_EQ(s.plane_cells(), 72);
      EXPECT_EQ(s.radius, 2);
      EXPECT_EQ(s.axis, Axis::x);
    }
  }
  {  // z, radius 2, 1 rank: the whole interior, halos = the boundary layers
    const Slab3D s = slab3d(n, Axis::z, 2, 1, 0);
    EXPECT_EQ(s.first, 2);
    EXPECT_EQ(s.count, 4);
    EXPECT_EQ(s.local[2], 8);
    EXPECT_FALSE(s.has_lower());
    EXPECT_FALSE(s.has_upper());
  }
}

TEST(DecompSlab3D, GlobalCoordinatesAndNeighbours) {
  const i64 n[3] = {10, 9, 8};
  const Slab3D s = slab3d(n, Axis::z, 1, 3, 1);  // owns z planes 3, 4
  EXPECT_EQ(s.global(2, 0), 2);                  // lower halo
  EXPECT_EQ(s.global(2, 1), 3);
  EXPECT_EQ(s.global(2, 2), 4);
  EXPECT_EQ(s.global(2, 3), 5);  // upper halo
  EXPECT_EQ(s.global(0, 7), 7);  // unsplit axes: local == global
  EXPECT_EQ(s.global(1, 0), 0);
  EXPECT_EQ(s.index(1, 2, 3), (3 * 9 + 2) * 10 + 1);
  EXPECT_TRUE(s.has_lower());
  EXPECT_TRUE(s.has_upper());
  EXPECT_FALSE(slab3d(n, Axis::z, 1, 3, 0).has_lower());
  EXPECT_TRUE(slab3d(n, Axis::z, 1, 3, 0).has_upper());
  EXPECT_TRUE(slab3d(n, Axis::z, 1, 3, 2).has_lower());
  EXPECT_FALSE(slab3d(n, Axis::z, 1, 3, 2).has_upper());

  const Slab3D x = slab3d(n, Axis::x, 2, 2, 1);  // owns x 5..7
  EXPECT_EQ(x.global(0, 0), 3);
  EXPECT_EQ(x.global(0, 2), 5);
  EXPECT_EQ(x.global(0, 6), 9);
  EXPECT_EQ(x.global(2, 5), 5);
  expect_invalid([&] { x.global(3, 0); }, "dim 3");
  expect_invalid([&] { x.global(-1, 0); }, "dim -1");
}

TEST(DecompSlab3D, Errors) {
  const i64 n[3] = {10, 9, 8};
  expect_invalid([&] { slab3d(n, Axis::z, 0, 1, 0); }, "(got 0)");
  expect_invalid([&] { slab3d(n, Axis::z, kMaxSlabRadius + 1, 1, 0); }, "(got 17)");  // fd3d's halos go to 16
  const i64 thin[3] = {4, 9, 8};
  expect_invalid([&] { slab3d(thin, Axis::z, 2, 1, 0); }, "extent x = 4");
  EXPECT_EQ(slab3d(thin, Axis::z, 1, 1, 0).local[0], 4);  // radius 1 leaves 2 interior cells
  expect_invalid([&] { slab3d(n, Axis::z, 1, 7, 0); }, "7 ranks");  // 6 interior planes
  EXPECT_EQ(slab3d(n, Axis::z, 1, 6, 5).count, 1);
  // radius 2 along z: 4 interior planes; 3 ranks would leave a rank one plane, less than a halo.
  expect_invalid([&] { slab3d(n, Axis::z, 2, 3, 0); }, "3 ranks");
  EXPECT_EQ(slab3d(n, Axis::z, 2, 2, 1).count, 2);
  expect_invalid([&] { slab3d(n, Axis::z, 1, 2, 2); }, "rank 2");
  expect_invalid([&] { slab3d(n, Axis::z, 1, 0, 0); }, "(got 0)");
}

TEST(DecompAxis, NamesRoundTrip) {
  for (Axis a : {Axis::x, Axis::y, Axis::z}) EXPECT_EQ(parse_axis(axis_name(a)), a);
  EXPECT_STREQ(axis_name(Axis::y), "y");
  expect_invalid([] { parse_axis("w"); }, "'w'");
  expect_invalid([] { parse_axis(""); }, "''");
  expect_invalid([] { parse_axis("xy"); }, "'xy'");
}

// ---- Jacobi reference ----------------------------------------------------------------------

TEST(JacobiReference, MatchesNaive) {
  const std::pair<int, int> grids[] = {{16, 12}, {33, 20}, {5, 3}};
  for (const auto& [nx, ny] : grids)
    for (int nccheck : {1, 3, 7})
      for (int niter : {0, 1, 5, 23}) {
        SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + " nccheck " + std::to_string(nccheck) +
                     " niter " + std::to_string(niter));
        const JacobiResult got = jacobi_reference(jacobi_problem(nx, ny, niter, nccheck, 0.0f));
        const NaiveJacobi want = naive_jacobi(nx, ny, niter, nccheck, 0.0f);
        EXPECT_TRUE(same_cells(got.a, want.a));
        EXPECT_EQ(got.iterations, niter);
        EXPECT_EQ(got.iterations, want.iterations);
        expect_rel_near(got.norm, want.norm, 1e-12);
      }
}

TEST(JacobiReference, LargeGridMatchesNaive) {
  // 64k cells: above the reference's parallel threshold, so the OpenMP path (and its reduction)
  // runs when built with OpenMP.
  const JacobiResult got = jacobi_reference(jacobi_problem(320, 205, 4, 3, 0.0f));
  const NaiveJacobi want = naive_jacobi(320, 205, 4, 3, 0.0f);
  EXPECT_TRUE(same_cells(got.a, want.a));
  EXPECT_EQ(got.iterations, 4);
  expect_rel_near(got.norm, want.norm, 1e-12);
}

TEST(JacobiReference, ToleranceStopsEarly) {
  for (int nccheck : {1, 7}) {
    SCOPED_TRACE("nccheck " + std::to_string(nccheck));
    const float tol = 1e-1f;
    const JacobiResult r = jacobi_reference(jacobi_problem(16, 12, 1000, nccheck, tol));
    ASSERT_GT(r.iterations, 1);
    EXPECT_LT(r.iterations, 1000);
    EXPECT_LE(r.norm, tol);
    // The norm that stopped the loop was computed in the last iteration run.
    EXPECT_EQ((r.iterations - 1) % nccheck, 0);
    // One iteration fewer: the loop ran out of iterations with the norm still above tol.
    const JacobiResult before = jacobi_reference(jacobi_problem(16, 12, r.iterations - 1, nccheck, tol));
    EXPECT_EQ(before.iterations, r.iterations - 1);
    EXPECT_GT(before.norm, tol);
    const NaiveJacobi want = naive_jacobi(16, 12, 1000, nccheck, tol);
    EXPECT_EQ(r.iterations, want.iterations);
    EXPECT_TRUE(same_cells(r.a, want.a));
  }
  // A tolerance at or above the starting norm (1.0) runs no iteration.
  const JacobiResult none = jacobi_reference(jacobi_problem(16, 12, 10, 1, 1.0f));
  EXPECT_EQ(none.iterations, 0);
  EXPECT_EQ(none.norm, 1.0);
}

TEST(JacobiReference, BoundaryColumnsAndPeriodicRows) {
  const i64 nx = 16, ny = 12;
  for (int niter : {0, 1, 6}) {
    const JacobiResult r = jacobi_reference(jacobi_problem(nx, ny, niter, 1, 0.0f));
    ASSERT_EQ(r.a.size(), static_cast<size_t>(nx * ny));
    const auto at = [&](i64 iy, i64 ix) { return r.a[iy * nx + ix]; };
    for (i64 iy = 1; iy < ny - 1; ++iy) {
      EXPECT_EQ(at(iy, 0), jacobi_boundary(iy, ny)) << "row " << iy;
      EXPECT_EQ(at(iy, nx - 1), jacobi_boundary(iy, ny)) << "row " << iy;
    }
    if (niter == 0) {  // the start: halo rows carry their own boundary values
      EXPECT_EQ(at(0, 0), jacobi_boundary(0, ny));
      EXPECT_EQ(at(ny - 1, nx - 1), jacobi_boundary(ny - 1, ny));
      continue;
    }
    for (i64 ix = 0; ix < nx; ++ix) {  // whole-row periodic copies
      EXPECT_EQ(at(0, ix), at(ny - 2, ix)) << "column " << ix;
      EXPECT_EQ(at(ny - 1, ix), at(1, ix)) << "column " << ix;
    }
  }
}

TEST(JacobiReference, InformationMovesOneCellPerIteration) {
  const i64 nx = 16, ny = 12;
  const JacobiResult one = jacobi_reference(jacobi_problem(nx, ny, 1, 1, 0.0f));
  for (i64 iy = 1; iy < ny - 1; ++iy) {
    const float b = jacobi_boundary(iy, ny);
    EXPECT_EQ(one.a[iy * nx + 1], 0.25f * b) << "row " << iy;  // only the west neighbour is non-zero
    EXPECT_EQ(one.a[iy * nx + nx - 2], 0.25f * b) << "row " << iy;
    for (i64 ix = 2; ix < nx - 2; ++ix) EXPECT_EQ(one.a[iy * nx + ix], 0.0f) << iy << "," << ix;
  }
  const JacobiResult two = jacobi_reference(jacobi_problem(nx, ny, 2, 1, 0.0f));
  bool second_column_reached = false;
  for (i64 iy = 1; iy < ny - 1; ++iy) {
    second_column_reached |= two.a[iy * nx + 2] != 0.0f;
    for (i64 ix = 3; ix < nx - 3; ++ix) EXPECT_EQ(two.a[iy * nx + ix], 0.0f) << iy << "," << ix;
  }
  EXPECT_TRUE(second_column_reached);
}

TEST(JacobiReference, Errors) {
  expect_invalid([] { jacobi_reference(jacobi_problem(2, 10, 1, 1, 0.0f)); }, "nx must be >= 3 (got 2)");
  expect_invalid([] { jacobi_reference(jacobi_problem(10, 1, 1, 1, 0.0f)); }, "ny must be >= 3 (got 1)");
  expect_invalid([] { jacobi_reference(jacobi_problem(10, 10, -1, 1, 0.0f)); }, "niter must be >= 0 (got -1)");
  expect_invalid([] { jacobi_reference(jacobi_problem(10, 10, 1, 0, 0.0f)); }, "nccheck must be >= 1 (got 0)");
}

// ---- heat3d / wave3d references ------------------------------------------------------------

TEST(StencilHeat3D, MatchesNaiveAndKeepsBoundary) {
  const Box3 boxes[] = {{{9, 7, 6}}, {{3, 4, 5}}, {{12, 5, 3}}, {{41, 33, 30}}};  // the last: parallel path
  for (const Box3& b : boxes)
    for (int iters : {0, 1, 4}) {
      SCOPED_TRACE(std::to_string(b.n[0]) + "x" + std::to_string(b.n[1]) + "x" + std::to_string(b.n[2]) +
                   " iters " + std::to_string(iters));
      const std::vector<float> got = heat3d_reference(problem(b, iters, 7));
      EXPECT_TRUE(same_cells(got, naive_heat(b, iters, 7)));
      bool interior_moved = false;
      for (i64 z = 0; z < b.n[2]; ++z)
        for (i64 y = 0; y < b.n[1]; ++y)
          for (i64 x = 0; x < b.n[0]; ++x) {
            const i64 i = b.id(x, y, z);
            const float start = initial_value(static_cast<std::uint64_t>(i), 7);
            if (b.interior(x, y, z, 1))
              interior_moved |= got[i] != start;
            else
              EXPECT_EQ(got[i], start) << "boundary cell " << x << "," << y << "," << z;
          }
      EXPECT_EQ(interior_moved, iters > 0);
    }
}

TEST(StencilWave3D, MatchesNaiveAndKeepsBoundary) {
  const Box3 boxes[] = {{{9, 7, 6}}, {{5, 5, 5}}, {{11, 6, 8}}, {{41, 33, 30}}};  // the last: parallel path
  for (const Box3& b : boxes)
    for (int iters : {0, 1, 2, 5}) {
      SCOPED_TRACE(std::to_string(b.n[0]) + "x" + std::to_string(b.n[1]) + "x" + std::to_string(b.n[2]) +
                   " iters " + std::to_string(iters));
      const std::vector<float> got = wave3d_reference(problem(b, iters, 3));
      EXPECT_TRUE(same_cells(got, naive_wave(b, iters, 3)));
      bool interior_moved = false;
      for (i64 z = 0; z < b.n[2]; ++z)
        for (i64 y = 0; y < b.n[1]; ++y)
          for (i64 x = 0; x < b.n[0]; ++x) {
            const i64 i = b.id(x, y, z);
            const float start = initial_value(static_cast<std::uint64_t>(i), 4);  // cur: seed + 1
            if (b.interior(x, y, z, 2))
              interior_moved |= got[i] != start;
            else
              EXPECT_EQ(got[i], start) << "boundary cell " << x << "," << y << "," << z;
          }
      EXPECT_EQ(interior_moved, iters > 0);
    }
}

TEST(StencilWave3D, RadiusTwoBoundaryIsRead) {
  // Cell (2, 3, 3) sits next to the boundary: its x star reaches x = 0, the outer boundary layer.
  const Box3 b{{7, 7, 7}};
  const std::vector<float> got = wave3d_reference(problem(b, 1, 3));
  const std::vector<float> prev = naive_field(b, 3), cur = naive_field(b, 4);
  const auto c = [&](i64 x, i64 y, i64 z) { return cur[b.id(x, y, z)]; };
  const float lx = wave_axis(c(0, 3, 3), c(1, 3, 3), c(2, 3, 3), c(3, 3, 3), c(4, 3, 3));
  const float ly = wave_axis(c(2, 1, 3), c(2, 2, 3), c(2, 3, 3), c(2, 4, 3), c(2, 5, 3));
  const float lz = wave_axis(c(2, 3, 1), c(2, 3, 2), c(2, 3, 3), c(2, 3, 4), c(2, 3, 5));
  EXPECT_EQ(got[b.id(2, 3, 3)], wave_point(prev[b.id(2, 3, 3)], c(2, 3, 3), lx, ly, lz));
  EXPECT_TRUE(same_cells(got, naive_wave(b, 1, 3)));
}

TEST(StencilReference, Errors) {
  expect_invalid([] { heat3d_reference(problem(Box3{{9, 2, 6}}, 1, 1)); }, "extent y = 2");
  expect_invalid([] { wave3d_reference(problem(Box3{{9, 7, 4}}, 1, 1)); }, "extent z = 4");
  expect_invalid([] { heat3d_reference(problem(Box3{{9, 7, 6}}, -1, 1)); }, "(got -1)");
  expect_invalid([] { wave3d_reference(problem(Box3{{9, 7, 6}}, -3, 1)); }, "(got -3)");
}

// ---- decomposed runs, emulated rank by rank ------------------------------------------------

namespace {

// One rank's slab with its local fields, indexed by slab3d's local coordinates.
struct Rank3D {
  Slab3D s;
  std::vector<float> u, prev;  // heat: u; wave: cur in u, prev in prev
};

i64 global_cell(const Slab3D& s, i64 lx, i64 ly, i64 lz) {
  return (s.global(2, lz) * s.n[1] + s.global(1, ly)) * s.n[0] + s.global(0, lx);
}

std::vector<float> local_field(const Slab3D& s, std::uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(s.local_cells()));
  for (i64 z = 0; z < s.local[2]; ++z)
    for (i64 y = 0; y < s.local[1]; ++y)
      for (i64 x = 0; x < s.local[0]; ++x)
        v[s.index(x, y, z)] = initial_value(static_cast<std::uint64_t>(global_cell(s, x, y, z)), seed);
  return v;
}

// Copies local plane `from` (along the split axis) of src into plane `to` of dst.
void copy_plane(const Rank3D& src, const std::vector<float>& sv, i64 from, const Rank3D& dst, std::vector<float>& dv,
                i64 to) {
  const int a = static_cast<int>(dst.s.axis), d1 = (a + 1) % 3, d2 = (a + 2) % 3;
  EXPECT_EQ(src.s.global(a, from), dst.s.global(a, to)) << "halo plane from the wrong global plane";
  i64 cells = 0;
  for (i64 j = 0; j < dst.s.local[d2]; ++j)
    for (i64 i = 0; i < dst.s.local[d1]; ++i, ++cells) {
      i64 cs[3], cd[3];
      cs[a] = from;
      cd[a] = to;
      cs[d1] = cd[d1] = i;
      cs[d2] = cd[d2] = j;
      dv[dst.s.index(cd[0], cd[1], cd[2])] = sv[src.s.index(cs[0], cs[1], cs[2])];
    }
  EXPECT_EQ(cells, dst.s.plane_cells());
}

// Fills every rank's halo planes of field `f` from its neighbours' owned planes only.
void exchange(std::vector<Rank3D>& ranks, std::vector<float> Rank3D::*f) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    Rank3D& me = ranks[r];
    const i64 rad = me.s.radius;
    if (me.s.has_lower()) {
      const Rank3D& lo = ranks[r - 1];  // its last `radius` owned planes: local [count, count + radius)
      for (i64 h = 0; h < rad; ++h) copy_plane(lo, lo.*f, lo.s.count + h, me, me.*f, h);
    }
    if (me.s.has_upper()) {
      const Rank3D& up = ranks[r + 1];  // its first owned planes: local [radius, 2 radius)
      for (i64 h = 0; h < rad; ++h) copy_plane(up, up.*f, rad + h, me, me.*f, rad + me.s.count + h);
    }
  }
}

// Calls fn(x, y, z) for every local cell this rank updates: owned along the split axis and
// globally interior along the two others.
template <class F>
void for_owned_interior(const Slab3D& s, F&& fn) {
  const int a = static_cast<int>(s.axis);
  for (i64 z = 0; z < s.local[2]; ++z)
    for (i64 y = 0; y < s.local[1]; ++y)
      for (i64 x = 0; x < s.local[0]; ++x) {
        const i64 l[3] = {x, y, z};
        bool in = l[a] >= s.radius && l[a] < s.radius + s.count;
        for (int d = 0; d < 3; ++d) {
          const i64 g = s.global(d, l[d]);
          in = in && g >= s.radius && g < s.n[d] - s.radius;
        }
        if (in) fn(x, y, z);
      }
}

void heat_rank_step(Rank3D& k) {
  const Slab3D& s = k.s;
  const i64 sy = s.local[0], sz = s.local[0] * s.local[1];
  std::vector<float> next = k.u;
  const std::vector<float>& u = k.u;
  for_owned_interior(s, [&](i64 x, i64 y, i64 z) {
    const i64 i = s.index(x, y, z);
    next[i] = heat_point(u[i], u[i - 1], u[i + 1], u[i - sy], u[i + sy], u[i - sz], u[i + sz]);
  });
  k.u = std::move(next);
}

void wave_rank_step(Rank3D& k) {
  const Slab3D& s = k.s;
  const i64 sy = s.local[0], sz = s.local[0] * s.local[1];
  std::vector<float> next = k.u;
  const std::vector<float>& c = k.u;
  for_owned_interior(s, [&](i64 x, i64 y, i64 z) {
    const i64 i = s.index(x, y, z);
    const float lx = wave_axis(c[i - 2], c[i - 1], c[i], c[i + 1], c[i + 2]);
    const float ly = wave_axis(c[i - 2 * sy], c[i - sy], c[i], c[i + sy], c[i + 2 * sy]);
    const float lz = wave_axis(c[i - 2 * sz], c[i - sz], c[i], c[i + sz], c[i + 2 * sz]);
    next[i] = wave_point(k.prev[i], c[i], lx, ly, lz);
  });
  k.prev = std::move(k.u);
  k.u = std::move(next);
}

// Owned planes of every rank, plus the global boundary planes along the axis that rank 0 and the
// last rank hold as their outer halos; every global cell must be written exactly once.
std::vector<float> gather(const std::vector<Rank3D>& ranks) {
  const Slab3D& s0 = ranks.front().s;
  const int a = static_cast<int>(s0.axis);
  std::vector<float> out(static_cast<size_t>(s0.n[0] * s0.n[1] * s0.n[2]), std::nanf(""));
  std::vector<int> writes(out.size(), 0);
  for (const Rank3D& k : ranks) {
    const Slab3D& s = k.s;
    const i64 lo = s.has_lower() ? s.radius : 0, hi = s.has_upper() ? s.radius + s.count : s.local[a];
    for (i64 z = 0; z < s.local[2]; ++z)
      for (i64 y = 0; y < s.local[1]; ++y)
        for (i64 x = 0; x < s.local[0]; ++x) {
          const i64 l[3] = {x, y, z};
          if (l[a] < lo || l[a] >= hi) continue;
          const i64 g = global_cell(s, x, y, z);
          if (g < 0 || g >= static_cast<i64>(out.size())) {
            ADD_FAILURE() << "rank " << s.rank << " local " << x << "," << y << "," << z << " outside the box";
            continue;
          }
          out[g] = k.u[s.index(x, y, z)];
          ++writes[g];
        }
  }
  for (size_t g = 0; g < writes.size(); ++g) EXPECT_EQ(writes[g], 1) << "global cell " << g;
  return out;
}

enum class App3D { heat, wave };

std::vector<float> run_decomposed(App3D app, const Box3& b, Axis axis, int nranks, int iters, std::uint32_t seed) {
  const int radius = app == App3D::heat ? 1 : 2;
  std::vector<Rank3D> ranks;
  for (int r = 0; r < nranks; ++r) {
    Rank3D k;
    k.s = slab3d(b.n, axis, radius, nranks, r);
    if (app == App3D::heat) {
      k.u = local_field(k.s, seed);
    } else {
      k.prev = local_field(k.s, seed);
      k.u = local_field(k.s, seed + 1);
    }
    ranks.push_back(std::move(k));
  }
  for (int it = 0; it < iters; ++it) {
    exchange(ranks, &Rank3D::u);  // prev is read only at owned cells: no halo needed
    for (Rank3D& k : ranks) {
      if (app == App3D::heat)
        heat_rank_step(k);
      else
        wave_rank_step(k);
    }
  }
  return gather(ranks);
}

// ---- the GPU sweeps' cell accessors (stencil3d_cells.hpp), run on the CPU ----

// Initial values of one rank's box as the GPU runs set them (stencil3d_slabs.hpp): buffer 0 is
// heat's u or wave's cur, buffer 1 heat's u or wave's prev with cur's boundary.
std::vector<float> local_buffer(const Slab3D& s, App3D app, int b, std::uint32_t seed) {
  const bool wave = app == App3D::wave;
  std::vector<float> v = local_field(s, wave && b == 0 ? seed + 1 : seed);
  if (!wave || b == 0) return v;
  const std::vector<float> cur = local_field(s, seed + 1);
  for (i64 z = 0; z < s.local[2]; ++z)
    for (i64 y = 0; y < s.local[1]; ++y)
      for (i64 x = 0; x < s.local[0]; ++x) {
        const i64 l[3] = {x, y, z};
        bool interior = true;
        for (int d = 0; d < 3; ++d) {
          const i64 g = s.global(d, l[d]);
          interior = interior && g >= s.radius && g < s.n[d] - s.radius;
        }
        if (!interior) v[s.index(x, y, z)] = cur[s.index(x, y, z)];
      }
  return v;
}

// gps: the whole grid in one array pair; each rank updates owned_region through GridCells.
std::vector<float> run_whole_grid(App3D app, const Box3& b, Axis axis, int nranks, int iters, std::uint32_t seed) {
  const int radius = app == App3D::heat ? 1 : 2;
  const Slab3D whole = slab3d(b.n, axis, radius, 1, 0);  // local box = global box
  std::array<std::vector<float>, 2> grid{local_buffer(whole, app, 0, seed), local_buffer(whole, app, 1, seed)};
  std::vector<Slab3D> slabs;
  i64 spanned = 0;
  for (int r = 0; r < nranks; ++r) {
    slabs.push_back(slab3d(b.n, axis, radius, nranks, r));
    const Range span = stencil3d::span_of(slabs.back());
    EXPECT_EQ(span.begin, spanned) << "spans must tile the split axis";
    spanned = span.end;
  }
  EXPECT_EQ(spanned, b.n[static_cast<int>(axis)]);
  for (int it = 0; it < iters; ++it) {
    const int c = it & 1;
    stencil3d::GridCells g;
    g.in = grid[c].data();
    g.out = grid[1 - c].data();
    g.sy = b.n[0];
    g.sz = b.n[0] * b.n[1];
    for (const Slab3D& s : slabs) {
      const stencil3d::Region reg = stencil3d::owned_region(s);
      for (i64 z = reg.lo[2]; z < reg.hi[2]; ++z)
        for (i64 y = reg.lo[1]; y < reg.hi[1]; ++y)
          for (i64 x = reg.lo[0]; x < reg.hi[0]; ++x) {
            if (app == App3D::heat)
              stencil3d::update_cell<false>(g, x, y, z);
            else
              stencil3d::update_cell<true>(g, x, y, z);
          }
    }
  }
  return grid[iters % 2];
}

// ---- the marching step's index math (stencil3d_plan.hpp, stencil3d_cells.hpp), on the CPU ----

// The loads of the marching step (stencil3d_kernels.cu run_item) as a cell accessor over a box in
// local coordinates: from `in` through the step's strides (row_stride, plane_stride), except the
// remote halo cells, picked through remote_planes as the kernel does: planes of the march axis by
// remote_index (plane()), x neighbours of a split along x by remote_x_index (xcell_at). The other
// axis is never split when the march reads remote cells. update_cell indexes with sy, sz: set to
// the step's strides.
struct MarchCells {
  const float* in = nullptr;
  float* out = nullptr;
  stencil3d::Box box;
  int radius = 1;
  i64 sy = 0, sz = 0;
  stencil3d::Remote lower, upper;
  float at(i64 i, const i64* c, int d, int k) const {
    const int m = stencil3d::march_axis(box);
    const stencil3d::RemotePlanes rp =
        stencil3d::remote_planes(box, d, radius, lower.src != nullptr, upper.src != nullptr);
    const i64 l = c[d] + k;
    if (d == m) {  // the march's planes
      if (l < rp.lo) return lower.src[stencil3d::remote_index(lower, m, c[0], c[3 - m], l)];
      if (l >= rp.hi) return upper.src[stencil3d::remote_index(upper, m, c[0], c[3 - m], l)];
    } else if (d == 0) {  // the x neighbours of the centre row
      if (l < rp.lo) return lower.src[stencil3d::remote_x_index(lower, l, c[1], c[2])];
      if (l >= rp.hi) return upper.src[stencil3d::remote_x_index(upper, l, c[1], c[2])];
    }
    return in[i + k * stencil3d::stride_of(sy, sz, d)];
  }
  float prev(i64 i) const { return out[i]; }
  void put(i64 i, float v) const { out[i] = v; }
};

// One step over g's box: its updated cells, local [radius, n - radius) on every axis.
void march_step(const MarchCells& g, App3D app) {
  const i64 r = g.radius;
  for (i64 z = r; z < g.box.n[2] - r; ++z)
    for (i64 y = r; y < g.box.n[1] - r; ++y)
      for (i64 x = r; x < g.box.n[0] - r; ++x) {
        if (app == App3D::heat)
          stencil3d::update_cell<false>(g, x, y, z);
        else
          stencil3d::update_cell<true>(g, x, y, z);
      }
}

// rdl on the marching step: every rank's box with NaN halo planes in both buffers, never
// exchanged; the halo cells come from the neighbours' boxes through remote_of.
std::vector<float> run_remote_march(App3D app, const Box3& b, Axis axis, int nranks, int iters, std::uint32_t seed) {
  const int radius = app == App3D::heat ? 1 : 2;
  const int a = static_cast<int>(axis);
  std::vector<Slab3D> slabs;
  std::vector<std::array<std::vector<float>, 2>> buf(nranks);
  for (int r = 0; r < nranks; ++r) {
    slabs.push_back(slab3d(b.n, axis, radius, nranks, r));
    const Slab3D& s = slabs.back();
    for (int k = 0; k < 2; ++k) {
      buf[r][k] = local_buffer(s, app, k, seed);
      for (i64 z = 0; z < s.local[2]; ++z)
        for (i64 y = 0; y < s.local[1]; ++y)
          for (i64 x = 0; x < s.local[0]; ++x) {
            const i64 l[3] = {x, y, z};
            if ((s.has_lower() && l[a] < radius) || (s.has_upper() && l[a] >= radius + s.count))
              buf[r][k][s.index(x, y, z)] = std::nanf("");
          }
    }
  }
  for (int it = 0; it < iters; ++it) {
    const int c = it & 1;
    for (int r = 0; r < nranks; ++r) {
      const Slab3D& s = slabs[r];
      MarchCells g;
      g.in = buf[r][c].data();
      g.out = buf[r][1 - c].data();
      for (int d = 0; d < 3; ++d) g.box.n[d] = s.local[d];
      g.box.axis = a;
      g.box.count = s.count;
      g.radius = radius;
      g.sy = stencil3d::row_stride(g.box, 0);  // the box's own extents (Step's default)
      g.sz = stencil3d::plane_stride(g.box, 0);
      if (s.has_lower()) g.lower = stencil3d::remote_of(s, slabs[r - 1], buf[r - 1][c].data());
      if (s.has_upper()) g.upper = stencil3d::remote_of(s, slabs[r + 1], buf[r + 1][c].data());
      march_step(g, app);
    }
  }
  std::vector<Rank3D> ranks(nranks);
  for (int r = 0; r < nranks; ++r) {
    ranks[r].s = slabs[r];
    ranks[r].u = buf[r][iters % 2];
  }
  return gather(ranks);
}

// um on the marching step: the whole grid in one array pair; each rank marches its sub_box (an
// offset into the grid, the grid's strides). heat's output buffer starts NaN in the interior, as
// on the GPU, so a cell read before its rank wrote it shows.
std::vector<float> run_sub_box_march(App3D app, const Box3& b, Axis axis, int nranks, int iters, std::uint32_t seed) {
  const int radius = app == App3D::heat ? 1 : 2;
  const Slab3D whole = slab3d(b.n, axis, radius, 1, 0);
  std::array<std::vector<float>, 2> grid{local_buffer(whole, app, 0, seed), local_buffer(whole, app, 1, seed)};
  if (app == App3D::heat)
    for_owned_interior(whole, [&](i64 x, i64 y, i64 z) { grid[1][whole.index(x, y, z)] = std::nanf(""); });
  for (int it = 0; it < iters; ++it) {
    const int c = it & 1;
    for (int r = 0; r < nranks; ++r) {
      const stencil3d::SubBox sb = stencil3d::sub_box(slab3d(b.n, axis, radius, nranks, r));
      MarchCells g;
      g.in = grid[c].data() + sb.offset;
      g.out = grid[1 - c].data() + sb.offset;
      g.box = sb.box;
      g.radius = radius;
      g.sy = stencil3d::row_stride(sb.box, sb.sy);
      g.sz = stencil3d::plane_stride(sb.box, sb.sz);
      march_step(g, app);
    }
  }
  return grid[iters % 2];
}

// Jacobi over jacobi_slab ranks: local rows 0..chunk+1, halos from top/bottom (periodic).
struct JacobiRank {
  JacobiSlab s;
  std::vector<float> a, a_new;
  float* row(i64 lr) { return a.data() + lr * s.nx; }
};

void jacobi_exchange(std::vector<JacobiRank>& ranks) {
  for (JacobiRank& k : ranks) {
    JacobiRank& up = ranks[k.s.top];
    JacobiRank& down = ranks[k.s.bottom];
    EXPECT_EQ(k.s.global_row(0), up.s.global_row(up.s.chunk));
    EXPECT_EQ(k.s.global_row(k.s.chunk + 1), down.s.global_row(1));
    std::copy(up.row(up.s.chunk), up.row(up.s.chunk) + k.s.nx, k.row(0));  // whole rows
    std::copy(down.row(1), down.row(1) + k.s.nx, k.row(k.s.chunk + 1));
  }
}

double jacobi_rank_step(JacobiRank& k) {
  const i64 nx = k.s.nx;
  double sum = 0.0;
  for (i64 ly = 1; ly <= k.s.chunk; ++ly)
    for (i64 ix = 1; ix < nx - 1; ++ix) {
      const i64 i = ly * nx + ix;
      k.a_new[i] = jacobi_point(k.a[i + 1], k.a[i - 1], k.a[i + nx], k.a[i - nx]);
      const float r = k.a_new[i] - k.a[i];
      sum += double(r) * double(r);
    }
  std::swap(k.a, k.a_new);
  return sum;
}

JacobiResult jacobi_decomposed(i64 nx, i64 ny, int nranks, int niter, int nccheck) {
  std::vector<JacobiRank> ranks;
  for (int r = 0; r < nranks; ++r) {
    JacobiRank k;
    k.s = jacobi_slab(nx, ny, nranks, r);
    k.a.assign(static_cast<size_t>(k.s.local_rows() * nx), 0.0f);
    for (i64 lr = 0; lr < k.s.local_rows(); ++lr)
      k.a[lr * nx] = k.a[lr * nx + nx - 1] = jacobi_boundary(k.s.global_row(lr), ny);
    k.a_new = k.a;
    ranks.push_back(std::move(k));
  }
  JacobiResult out;
  for (int iter = 0; iter < niter; ++iter) {
    jacobi_exchange(ranks);
    double sum = 0.0;
    for (JacobiRank& k : ranks) sum += jacobi_rank_step(k);
    if (iter % nccheck == 0) out.norm = std::sqrt(sum);
    out.iterations = iter + 1;
  }
  jacobi_exchange(ranks);  // halos then hold what the single-grid code keeps in rows 0 and ny-1
  out.a.assign(static_cast<size_t>(nx * ny), std::nanf(""));
  const auto put = [&](JacobiRank& k, i64 lr, i64 gy) {
    std::copy(k.row(lr), k.row(lr) + nx, out.a.begin() + gy * nx);
  };
  for (JacobiRank& k : ranks)
    for (i64 lr = 1; lr <= k.s.chunk; ++lr) put(k, lr, k.s.global_row(lr));
  put(ranks.front(), 0, 0);
  put(ranks.back(), ranks.back().s.chunk + 1, ny - 1);
  return out;
}

}  // namespace

TEST(DecompConsistency, Heat3DEmulatedRanksMatchReference) {
  const Box3 b{{11, 9, 8}};  // interior 9 x 7 x 6: uneven splits for 2..4 ranks
  const std::vector<float> want = heat3d_reference(problem(b, 5, 11));
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int nranks = 1; nranks <= 4; ++nranks) {
      SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", " + std::to_string(nranks) + " ranks");
      EXPECT_TRUE(same_cells(run_decomposed(App3D::heat, b, axis, nranks, 5, 11), want));
    }
}

TEST(DecompConsistency, Wave3DEmulatedRanksMatchReference) {
  const Box3 b{{13, 12, 14}};  // interior 9 x 8 x 10: every rank owns >= 2 planes with 4 ranks
  const std::vector<float> want = wave3d_reference(problem(b, 4, 5));
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int nranks = 1; nranks <= 4; ++nranks) {
      SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", " + std::to_string(nranks) + " ranks");
      EXPECT_TRUE(same_cells(run_decomposed(App3D::wave, b, axis, nranks, 4, 5), want));
    }
}

// The accessor of the gps whole-grid sweep, driven rank by rank, reproduces the references bit
// for bit on every axis.
TEST(DecompConsistency, CellAccessorsMatchReference) {
  const Box3 hb{{11, 9, 8}};
  const Box3 wb{{13, 12, 14}};
  const std::vector<float> heat = heat3d_reference(problem(hb, 5, 11));
  const std::vector<float> wave = wave3d_reference(problem(wb, 4, 5));
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int nranks = 1; nranks <= 4; ++nranks) {
      SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", " + std::to_string(nranks) + " ranks");
      EXPECT_TRUE(same_cells(run_whole_grid(App3D::heat, hb, axis, nranks, 5, 11), heat));
      EXPECT_TRUE(same_cells(run_whole_grid(App3D::wave, wb, axis, nranks, 4, 5), wave));
    }
}

// The marching step's index math on the CPU: um's sub-boxes of the global grid and rdl's remote
// halo cells (planes along y or z, columns along x) reproduce the references bit for bit.
TEST(DecompConsistency, MarchingStepSourcesMatchReference) {
  const Box3 hb{{11, 9, 8}};
  const Box3 wb{{13, 12, 14}};
  const std::vector<float> heat = heat3d_reference(problem(hb, 5, 11));
  const std::vector<float> wave = wave3d_reference(problem(wb, 4, 5));
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int nranks = 1; nranks <= 4; ++nranks) {
      SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", " + std::to_string(nranks) + " ranks");
      EXPECT_TRUE(same_cells(run_sub_box_march(App3D::heat, hb, axis, nranks, 5, 11), heat));
      EXPECT_TRUE(same_cells(run_sub_box_march(App3D::wave, wb, axis, nranks, 4, 5), wave));
      EXPECT_TRUE(same_cells(run_remote_march(App3D::heat, hb, axis, nranks, 5, 11), heat));
      EXPECT_TRUE(same_cells(run_remote_march(App3D::wave, wb, axis, nranks, 4, 5), wave));
    }
}

// um's sub-box of rank s: every cell of it is the grid cell at its local coordinates moved by
// first - radius along the split axis, and its updated cells are exactly owned_region(s).
TEST(Stencil3DMarch, SubBoxIsTheRanksPlanesOfTheGrid) {
  const i64 n[3] = {13, 11, 17};
  for (int radius : {1, 2})
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      for (int nranks = 1; nranks <= 3; ++nranks)
        for (int r = 0; r < nranks; ++r) {
          SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", rank " + std::to_string(r) + " of " +
                       std::to_string(nranks) + ", radius " + std::to_string(radius));
          const Slab3D s = slab3d(n, axis, radius, nranks, r);
          const stencil3d::SubBox g = stencil3d::sub_box(s);
          const int a = static_cast<int>(axis);
          EXPECT_EQ(g.box.axis, a);
          EXPECT_EQ(g.box.count, s.count);
          EXPECT_EQ(g.box.n[a], s.count + 2 * radius);
          EXPECT_EQ(g.sy, n[0]);
          EXPECT_EQ(g.sz, n[0] * n[1]);
          const stencil3d::Region own = stencil3d::owned_region(s);
          i64 updated = 0;
          for (i64 z = 0; z < g.box.n[2]; ++z)
            for (i64 y = 0; y < g.box.n[1]; ++y)
              for (i64 x = 0; x < g.box.n[0]; ++x) {
                i64 c[3] = {x, y, z};
                c[a] += s.first - radius;
                ASSERT_TRUE(c[0] < n[0] && c[1] < n[1] && c[2] < n[2] && c[a] >= 0);
                ASSERT_EQ(g.offset + x + y * g.sy + z * g.sz, (c[2] * n[1] + c[1]) * n[0] + c[0]);
                const i64 l[3] = {x, y, z};
                bool upd = true, owned = true;
                for (int d = 0; d < 3; ++d) {
                  upd = upd && l[d] >= radius && l[d] < g.box.n[d] - radius;
                  owned = owned && c[d] >= own.lo[d] && c[d] < own.hi[d];
                }
                EXPECT_EQ(upd, owned) << x << "," << y << "," << z;
                updated += upd ? 1 : 0;
              }
          EXPECT_EQ(updated, (own.hi[0] - own.lo[0]) * (own.hi[1] - own.lo[1]) * (own.hi[2] - own.lo[2]));
        }
}

// gps checks a work item with item_input_ranges: every cell the march reads for a thread's column
// (the column on planes [m0 - R, m1 + R), the rows co +- 1 .. R and the R cells west and east on
// planes [m0, m1)) lies in one of the ranges, and the ranges hold nothing of other ranks: along z
// only planes [m0 - R, m1 + R), along y only rows [m0 - R, m1 + R) of a z plane.
TEST(Stencil3DMarch, GpsItemRangesHoldEveryReadAndOnlyTheRanksPlanes) {
  const i64 n[3] = {16, 11, 13};
  for (int radius : {1, 2})
    for (Axis axis : {Axis::y, Axis::z})
      for (int v : {1, 4})
        for (int nranks = 1; nranks <= 2; ++nranks)
          for (int r = 0; r < nranks; ++r) {
            SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", rank " + std::to_string(r) + " of " +
                         std::to_string(nranks) + ", radius " + std::to_string(radius) + ", v " + std::to_string(v));
            const Slab3D s = slab3d(n, axis, radius, nranks, r);
            const stencil3d::SubBox g = stencil3d::sub_box(s);
            const int m = static_cast<int>(axis), o = 3 - m;
            const i64 sm = m == 1 ? g.sy : g.sz, so = m == 1 ? g.sz : g.sy;
            const auto at = [&](i64 xx, i64 oo, i64 mm) { return g.offset + xx + oo * so + mm * sm; };
            const i64 nx = g.box.n[0];
            for (i64 m0 = radius; m0 < radius + s.count; ++m0)
              for (i64 m1 = m0 + 1; m1 <= radius + s.count; ++m1)
                for (i64 x = v == 4 ? 0 : radius; v == 4 ? x < nx : x < nx - radius; x += v)
                  for (i64 co = radius; co < g.box.n[o] - radius; ++co) {
                    stencil3d::CellRange rg[stencil3d::kMaxItemRanges];
                    const int k = stencil3d::item_input_ranges(radius, v, m, g.offset, g.sy, g.sz, x, co, m0, m1, rg);
                    ASSERT_EQ(k, m == 2 ? 1 : 1 + 2 * radius);
                    for (int j = 0; j < k; ++j) {
                      ASSERT_LT(rg[j].lo, rg[j].hi);
                      if (m == 2) {  // planes [m0 - R, m1 + R) of the sub-box only
                        EXPECT_GE(rg[j].lo, g.offset + (m0 - radius) * g.sz);
                        EXPECT_LE(rg[j].hi, g.offset + (m1 + radius) * g.sz);
                      } else {  // one z plane, rows [m0 - R, m1 + R) of it only
                        const i64 z = (rg[j].lo - g.offset) / g.sz;
                        EXPECT_EQ((rg[j].hi - 1 - g.offset) / g.sz, z);
                        EXPECT_GE(rg[j].lo, g.offset + z * g.sz + (m0 - radius) * g.sy);
                        EXPECT_LE(rg[j].hi, g.offset + z * g.sz + (m1 + radius) * g.sy);
                      }
                    }
                    const auto held = [&](i64 i) {
                      for (int j = 0; j < k; ++j)
                        if (i >= rg[j].lo && i < rg[j].hi) return true;
                      return false;
                    };
                    for (int c = 0; c < v; ++c)
                      for (i64 mm = m0 - radius; mm < m1 + radius; ++mm) ASSERT_TRUE(held(at(x + c, co, mm)));
                    for (i64 mm = m0; mm < m1; ++mm)
                      for (int d = 1; d <= radius; ++d) {
                        for (int c = 0; c < v; ++c) {
                          ASSERT_TRUE(held(at(x + c, co - d, mm)));
                          ASSERT_TRUE(held(at(x + c, co + d, mm)));
                        }
                        ASSERT_TRUE(held(at(x - d, co, mm)));
                        ASSERT_TRUE(held(at(x + v - 1 + d, co, mm)));
                      }
                  }
          }
}

// The remote cells: only the halo of a split along the asked axis, only on a side with a source;
// a step's default strides are the box's extents.
TEST(Stencil3DMarch, RemotePlanesAndDefaultStrides) {
  using namespace gpsm::apps::stencil3d;
  Box b;
  b.n[0] = 12;
  b.n[1] = 9;
  b.n[2] = 10;
  b.axis = 2;
  b.count = 6;
  EXPECT_EQ(row_stride(b, 0), 12);
  EXPECT_EQ(plane_stride(b, 0), 108);
  EXPECT_EQ(row_stride(b, 40), 40);
  EXPECT_EQ(plane_stride(b, 400), 400);
  const RemotePlanes both = remote_planes(b, 2, 2, true, true);
  EXPECT_EQ(both.lo, 2);
  EXPECT_EQ(both.hi, 8);
  const RemotePlanes up = remote_planes(b, 2, 2, false, true);
  EXPECT_EQ(up.lo, 0);
  EXPECT_EQ(up.hi, 8);
  const RemotePlanes none = remote_planes(b, 2, 2, false, false);
  EXPECT_EQ(none.lo, 0);
  EXPECT_EQ(none.hi, INT64_MAX);
  b.axis = 0;  // split along x: the march (z) reads no remote planes, only remote columns
  const RemotePlanes z = remote_planes(b, 2, 2, true, true);
  EXPECT_EQ(z.lo, 0);
  EXPECT_EQ(z.hi, INT64_MAX);
  const RemotePlanes x = remote_planes(b, 0, 2, true, false);
  EXPECT_EQ(x.lo, 2);
  EXPECT_EQ(x.hi, INT64_MAX);
  // remote_index: march along y (other axis z) and along z (other axis y) in a 12 x 7 x 5 box.
  Remote r;
  r.sy = 12;
  r.sz = 84;
  r.shift = 3;
  EXPECT_EQ(remote_index(r, 1, 5, 2, 1), 5 + 2 * 84 + 4 * 12);
  EXPECT_EQ(remote_index(r, 2, 5, 2, -2), 5 + 2 * 12 + 1 * 84);
  EXPECT_EQ(remote_x_index(r, -1, 4, 3), 2 + 4 * 12 + 3 * 84);
}

TEST(DecompConsistency, JacobiEmulatedRanksMatchReference) {
  const std::pair<i64, i64> grids[] = {{17, 13}, {9, 6}};  // 11 and 4 interior rows
  for (const auto& [nx, ny] : grids) {
    const JacobiResult want = jacobi_reference(jacobi_problem(nx, ny, 9, 2, 0.0f));
    for (int nranks = 1; nranks <= std::min<i64>(4, ny - 2); ++nranks) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + ", " + std::to_string(nranks) + " ranks");
      const JacobiResult got = jacobi_decomposed(nx, ny, nranks, 9, 2);
      EXPECT_TRUE(same_cells(got.a, want.a));
      EXPECT_EQ(got.iterations, want.iterations);
      expect_rel_near(got.norm, want.norm, 1e-12);
    }
  }
}

// ---- max_rel_error -------------------------------------------------------------------------

TEST(StencilMaxRelError, Basics) {
  EXPECT_EQ(max_rel_error({}, {}), 0.0);
  EXPECT_EQ(max_rel_error({1.0f, -2.0f, 3.0f}, {1.0f, -2.0f, 3.0f}), 0.0);
  EXPECT_DOUBLE_EQ(max_rel_error({1.0f, 2.0f, 3.0f}, {1.0f, 2.0f, 3.5f}), 0.5 / 3.5);
  EXPECT_DOUBLE_EQ(max_rel_error({1.0f, 2.0f, -4.0f}, {1.5f, 2.0f, -4.0f}), 0.5 / 4.0);  // |b| max, sign ignored
  // Small references: the denominator is at least 1 (an absolute error).
  EXPECT_DOUBLE_EQ(max_rel_error({0.25f, 0.0f}, {0.5f, 0.0f}), 0.25);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(max_rel_error({1.0f, std::nanf("")}, {1.0f, 2.0f}), inf);
  EXPECT_EQ(max_rel_error({1.0f, 2.0f}, {1.0f, std::nanf("")}), inf);
  expect_invalid([] { max_rel_error({1.0f, 2.0f}, {1.0f}); }, "(2 vs 1)");
  // A grid above the parallel threshold: the largest error sits in the last cell.
  std::vector<float> ref(100000, 2.0f), got = ref;
  got[1] = 2.5f;
  got.back() = -1.0f;
  ref[5] = -8.0f;
  got[5] = -8.0f;
  EXPECT_DOUBLE_EQ(max_rel_error(got, ref), 3.0 / 8.0);
}

// heat3d / wave3d work plans: the items cover every updated plane of every tile exactly once,
// chunks keep the 4R floor, and thin edge chunks do not push the interior into one long chunk.
namespace {
std::vector<int> plane_hits(const gpsm::apps::stencil3d::Plan& p, const gpsm::apps::stencil3d::Box& b, int r) {
  using namespace gpsm::apps::stencil3d;
  const int m = march_axis(b);
  std::vector<int> hits(static_cast<std::size_t>(b.n[m]), 0);
  const std::int64_t edge_chunks = p.edges ? 2 : 0;
  for (std::int64_t w = 0; w < p.items; ++w) {
    std::int64_t xt = 0, ot = 0, ch = 0;
    item_tiles(p, w, xt, ot, ch);
    if (xt != 0 || ot != 0) continue;  // one tile's column of chunks
    std::int64_t a = 0, e = 0;
    if (ch < edge_chunks) {
      a = ch == 0 ? r : b.count;
      e = a + r;
    } else {
      a = p.mi0 + (ch - edge_chunks) * p.chunk;
      e = std::min(a + p.chunk, p.mi1);
    }
    for (std::int64_t i = a; i < e; ++i) ++hits[static_cast<std::size_t>(i)];
  }
  return hits;
}
}  // namespace

TEST(Stencil3DPlan, ItemsCoverEveryUpdatedPlaneOnce) {
  using namespace gpsm::apps::stencil3d;
  for (int r : {1, 2})
    for (std::int64_t count : {2LL, 5LL, 64LL, 128LL, 510LL})
      for (std::int64_t target : {1LL, 7LL, 396LL, 528LL})
        for (bool pushes : {false, true}) {
          Box b;
          b.n[0] = 512;
          b.n[1] = 64;
          b.n[2] = count + 2 * r;
          b.axis = 2;
          b.count = count;
          if (count < r) continue;
          const Plan p = make_plan(r, 4, b, pushes, target);
          SCOPED_TRACE("r " + std::to_string(r) + " count " + std::to_string(count) + " target " +
                       std::to_string(target) + (pushes ? " pushes" : ""));
          const auto hits = plane_hits(p, b, r);
          for (std::int64_t z = 0; z < b.n[2]; ++z) {
            const bool updated = z >= r && z < r + count;
            EXPECT_EQ(hits[static_cast<std::size_t>(z)], updated ? 1 : 0) << "plane " << z;
          }
          const std::int64_t planes = p.mi1 - p.mi0;
          if (planes > 0) EXPECT_GE(p.chunk, std::min<std::int64_t>(planes, 4 * r));
          EXPECT_EQ(p.items, p.tiles[0] * p.tiles[1] * p.tiles[2]);
        }
}

TEST(Stencil3DPlan, ThinEdgeChunksDoNotLeaveOneLongChunkPerTile) {
  using namespace gpsm::apps::stencil3d;
  // heat3d 512^3 on 4 GPUs: 128 owned planes, 4 x 64 float4 tiles, 528 resident blocks.
  Box b;
  b.n[0] = 512;
  b.n[1] = 512;
  b.n[2] = 130;
  b.axis = 2;
  b.count = 128;
  const Plan p = make_plan(1, 4, b, true, 528);
  EXPECT_TRUE(p.edges);
  EXPECT_EQ(p.tiles[0] * p.tiles[1], 256);
  EXPECT_EQ(p.chunk, 63);  // two interior chunks of the 126 planes, not one
  EXPECT_EQ(p.items, 256 * 4);
  // Without pushes the same box runs the same two chunks of its 128 planes (64 each).
  const Plan q = make_plan(1, 4, b, false, 528);
  EXPECT_EQ(q.chunk, 64);
  EXPECT_EQ(q.items, 512);
}
