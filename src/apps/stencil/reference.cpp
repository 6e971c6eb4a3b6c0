#include "apps/stencil/reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "apps/stencil/stencil_math.hpp"
#include "apps/harness/reference_cache.hpp"
#include "common/omp.hpp"

namespace gpsm::apps {

namespace {

using i64 = std::int64_t;

// Below this many cells a loop runs serially: a parallel region costs microseconds (far more on a
// loaded machine), more than a small grid's whole update.
constexpr i64 kMinParallelCells = i64{1} << 15;

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("gpsm: " + what); }

// ---- Jacobi 2D -----------------------------------------------------------------------------

void check_jacobi(const JacobiProblem& p) {
  if (p.nx < 3) bad("jacobi_reference: nx must be >= 3 (got " + std::to_string(p.nx) + ")");
  if (p.ny < 3) bad("jacobi_reference: ny must be >= 3 (got " + std::to_string(p.ny) + ")");
  if (p.niter < 0) bad("jacobi_reference: niter must be >= 0 (got " + std::to_string(p.niter) + ")");
  if (p.nccheck < 1) bad("jacobi_reference: nccheck must be >= 1 (got " + std::to_string(p.nccheck) + ")");
}

// Zero grid with the fixed left/right columns of every row.
std::vector<float> jacobi_initial(i64 nx, i64 ny) {
  std::vector<float> a(static_cast<size_t>(nx * ny), 0.0f);
  for (i64 iy = 0; iy < ny; ++iy) {
    const float v = jacobi_boundary(iy, ny);
    a[static_cast<size_t>(iy * nx)] = v;
    a[static_cast<size_t>(iy * nx + nx - 1)] = v;
  }
  return a;
}

// One update of rows [1, ny-1), columns [1, nx-1) from a into a_new; returns the sum of squared
// changes when want_norm (else 0). The residue is taken in float, as the GPU kernels take it, so
// only the order of the double sum differs between the two.
double jacobi_sweep(const std::vector<float>& a, std::vector<float>& a_new, i64 nx, i64 ny, bool want_norm) {
  double sum = 0.0;
  [[maybe_unused]] const bool par = nx * ny >= kMinParallelCells;
  GPSM_OMP(parallel for reduction(+ : sum) schedule(static) if (par))
  for (i64 iy = 1; iy < ny - 1; ++iy) {
    for (i64 ix = 1; ix < nx - 1; ++ix) {
      const size_t i = static_cast<size_t>(iy * nx + ix);
      const size_t sx = static_cast<size_t>(nx);
      const float v = jacobi_point(a[i + 1], a[i - 1], a[i + sx], a[i - sx]);
      a_new[i] = v;
      if (want_norm) {
        const float r = v - a[i];
        sum += static_cast<double>(r) * static_cast<double>(r);
      }
    }
  }
  return sum;
}

// Periodic top/bottom: whole rows, boundary columns included, as the single-GPU code copies them.
void jacobi_wrap(std::vector<float>& g, i64 nx, i64 ny) {
  const auto row = [&](i64 iy) { return g.begin() + static_cast<std::ptrdiff_t>(iy * nx); };
  std::copy(row(ny - 2), row(ny - 1), row(0));
  std::copy(row(1), row(2), row(ny - 1));
}

// ---- 3D apps -------------------------------------------------------------------------------

struct Box {
  i64 nx, ny, nz;
  size_t cells() const { return static_cast<size_t>(nx * ny * nz); }
  size_t index(i64 x, i64 y, i64 z) const { return static_cast<size_t>((z * ny + y) * nx + x); }
  bool interior(i64 x, i64 y, i64 z, i64 r) const {
    return x >= r && x < nx - r && y >= r && y < ny - r && z >= r && z < nz - r;
  }
};

Box checked_box(const Stencil3DProblem& p, int radius, const char* fn) {
  for (int d = 0; d < 3; ++d)
    if (p.n[d] < 2 * radius + 1)
      bad(std::string(fn) + ": extent " + "xyz"[d] + " = " + std::to_string(p.n[d]) +
          " leaves no interior with radius " + std::to_string(radius));
  if (p.iters < 0) bad(std::string(fn) + ": iters must be >= 0 (got " + std::to_string(p.iters) + ")");
  return Box{p.n[0], p.n[1], p.n[2]};
}

// initial_value of every cell, keyed by its global linear index (x fastest).
std::vector<float> initial_field(const Box& b, std::uint32_t seed) {
  std::vector<float> u(b.cells());
  [[maybe_unused]] const bool par = static_cast<i64>(u.size()) >= kMinParallelCells;
  GPSM_OMP(parallel for schedule(static) if (par))
  for (i64 i = 0; i < static_cast<i64>(u.size()); ++i)
    u[static_cast<size_t>(i)] = initial_value(static_cast<std::uint64_t>(i), seed);
  return u;
}

void heat_step(const Box& b, const std::vector<float>& u, std::vector<float>& out) {
  const size_t sy = static_cast<size_t>(b.nx), sz = static_cast<size_t>(b.nx * b.ny);
  [[maybe_unused]] const bool par = static_cast<i64>(b.cells()) >= kMinParallelCells;
  GPSM_OMP(parallel for collapse(2) schedule(static) if (par))
  for (i64 z = 1; z < b.nz - 1; ++z) {
    for (i64 y = 1; y < b.ny - 1; ++y) {
      for (i64 x = 1; x < b.nx - 1; ++x) {
        const size_t i = b.index(x, y, z);
        out[i] = heat_point(u[i], u[i - 1], u[i + 1], u[i - sy], u[i + sy], u[i - sz], u[i + sz]);
      }
    }
  }
}

// next = wave_point(...) on the interior, written over prev: each cell reads prev only at itself.
void wave_step(const Box& b, std::vector<float>& prev_to_next, const std::vector<float>& c) {
  const size_t sy = static_cast<size_t>(b.nx), sz = static_cast<size_t>(b.nx * b.ny);
  [[maybe_unused]] const bool par = static_cast<i64>(b.cells()) >= kMinParallelCells;
  GPSM_OMP(parallel for collapse(2) schedule(static) if (par))
  for (i64 z = 2; z < b.nz - 2; ++z) {
    for (i64 y = 2; y < b.ny - 2; ++y) {
      for (i64 x = 2; x < b.nx - 2; ++x) {
        const size_t i = b.index(x, y, z);
        const float lx = wave_axis(c[i - 2], c[i - 1], c[i], c[i + 1], c[i + 2]);
        const float ly = wave_axis(c[i - 2 * sy], c[i - sy], c[i], c[i + sy], c[i + 2 * sy]);
        const float lz = wave_axis(c[i - 2 * sz], c[i - sz], c[i], c[i + sz], c[i + 2 * sz]);
        prev_to_next[i] = wave_point(prev_to_next[i], c[i], lx, ly, lz);
      }
    }
  }
}

// Copies the boundary layer (cells outside [r, n-r) on some axis) of src into dst.
void copy_boundary(const Box& b, int r, const std::vector<float>& src, std::vector<float>& dst) {
  for (i64 z = 0; z < b.nz; ++z)
    for (i64 y = 0; y < b.ny; ++y)
      for (i64 x = 0; x < b.nx; ++x)
        if (!b.interior(x, y, z, r)) dst[b.index(x, y, z)] = src[b.index(x, y, z)];
}

}  // namespace

JacobiResult jacobi_reference(const JacobiProblem& p) {
  check_jacobi(p);
  std::vector<float> a = jacobi_initial(p.nx, p.ny);
  std::vector<float> a_new = a;
  double norm = 1.0;
  int iter = 0;
  while (norm > static_cast<double>(p.tol) && iter < p.niter) {
    const bool check = iter % p.nccheck == 0;
    const double sum = jacobi_sweep(a, a_new, p.nx, p.ny, check);
    jacobi_wrap(a_new, p.nx, p.ny);
    std::swap(a, a_new);
    if (check) norm = std::sqrt(sum);
    ++iter;
  }
  JacobiResult out;
  out.a = std::move(a);
  out.iterations = iter;
  out.norm = norm;
  return out;
}

std::vector<float> heat3d_reference(const Stencil3DProblem& p) {
  const Box b = checked_box(p, 1, "heat3d_reference");
  std::vector<float> u = initial_field(b, p.seed);
  std::vector<float> next = u;  // shares u's boundary layer, which no step writes
  for (int it = 0; it < p.iters; ++it) {
    heat_step(b, u, next);
    std::swap(u, next);
  }
  return u;
}

std::vector<float> wave3d_reference(const Stencil3DProblem& p) {
  const Box b = checked_box(p, 2, "wave3d_reference");
  std::vector<float> prev = initial_field(b, p.seed);
  std::vector<float> cur = initial_field(b, p.seed + 1);
  // prev's boundary is never read, but its buffer becomes cur after the first step: giving it
  // cur's boundary keeps the boundary of every time level at the seed + 1 values.
  copy_boundary(b, 2, cur, prev);
  for (int it = 0; it < p.iters; ++it) {
    wave_step(b, prev, cur);
    std::swap(prev, cur);
  }
  return cur;
}

double max_rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    bad("max_rel_error: sizes differ (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")");
  return max_rel_error(a.data(), b.data(), a.size());
}

double max_rel_error(const float* a, const float* b, std::size_t n) {
  const double inf = std::numeric_limits<double>::infinity();
  double max_diff = 0.0, max_ref = 0.0;
  [[maybe_unused]] const bool par = static_cast<i64>(n) >= kMinParallelCells;
  GPSM_OMP(parallel for reduction(max : max_diff, max_ref) schedule(static) if (par))
  for (i64 k = 0; k < static_cast<i64>(n); ++k) {
    const size_t i = static_cast<size_t>(k);
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(b[i])));
    if (a[i] == b[i]) continue;  // equal infinities too, whose difference would be NaN
    double d = std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i]));
    if (std::isnan(d)) d = inf;  // a NaN would slip through max() and pass as agreement
    max_diff = std::max(max_diff, d);
  }
  if (std::isinf(max_diff)) return inf;
  return max_diff / std::max(1.0, max_ref);
}

void ref_fields(RefFields& f, JacobiResult& r) {
  f.array(r.a);
  f.value(r.iterations);
  f.value(r.norm);
}

}  // namespace gpsm::apps
