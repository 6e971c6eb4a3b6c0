#include "apps/fd3d/fd3d_reference.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_math.hpp"
#include "apps/stencil/decomp.hpp"
#include "common/omp.hpp"

namespace gpsm::apps::fd3d {

namespace {

using i64 = std::int64_t;

void check(const FdProblem& p) {
  if (p.radius < 1 || p.radius > kMaxSlabRadius)
    throw std::invalid_argument(fmt::format("gpsm: fd3d reference: halo {} outside [1, {}]", p.radius, kMaxSlabRadius));
  for (int d = 0; d < 3; ++d)
    if (p.n[d] < 2 * p.radius + 1)
      throw std::invalid_argument(
          fmt::format("gpsm: fd3d reference: extent {} has no interior for halo {}", p.n[d], p.radius));
  if (p.iters < 0) throw std::invalid_argument("gpsm: fd3d reference: iters < 0");
}

// One row's updated cells (x in [R, nx - R)) of row (y, z): fd_cell's order, term by term over the
// whole row (the loops over x vectorise; each cell's operations stay in fd_cell's order).
void step_row(const FdProblem& p, const FdWeights& w, const float* in, float* out, i64 y, i64 z, float* acc) {
  const i64 nx = p.n[0], sy = nx, sz = nx * p.n[1], r = p.radius, len = nx - 2 * r;
  const float* c = in + r + y * sy + z * sz;
  for (i64 i = 0; i < len; ++i) acc[i] = mul(w.w0, c[i]);
  for (i64 s = 1; s <= r; ++s)
    for (i64 i = 0; i < len; ++i)
      acc[i] = fd_term(w, acc[i], c[i - s], c[i + s], c[i - s * sy], c[i + s * sy], c[i - s * sz], c[i + s * sz]);
  std::copy(acc, acc + len, out + r + y * sy + z * sz);
}

}  // namespace

std::vector<float> fd3d_initial(const FdProblem& p) {
  check(p);
  const i64 cells = p.n[0] * p.n[1] * p.n[2];
  std::vector<float> u(static_cast<std::size_t>(cells));
  GPSM_OMP(parallel for schedule(static))
  for (i64 i = 0; i < cells; ++i) u[static_cast<std::size_t>(i)] = initial_value(static_cast<std::uint64_t>(i), p.seed);
  return u;
}

void fd3d_step(const FdProblem& p, const float* in, float* out, i64 z0, i64 z1) {
  check(p);
  const i64 r = p.radius;
  z0 = std::max(z0, r);
  z1 = std::min(z1, p.n[2] - r);
  const i64 rows = p.n[1] - 2 * r;
  const FdWeights w = fd_weights(p.radius);
  if (z1 <= z0) return;
  GPSM_OMP(parallel)
  {
    std::vector<float> acc(static_cast<std::size_t>(p.n[0]));
    GPSM_OMP(for schedule(static))
    for (i64 k = 0; k < (z1 - z0) * rows; ++k) step_row(p, w, in, out, r + k % rows, z0 + k / rows, acc.data());
  }
}

std::vector<float> fd3d_reference(const FdProblem& p) {
  std::vector<float> a = fd3d_initial(p), b = a;
  for (int it = 0; it < p.iters; ++it) {
    fd3d_step(p, a.data(), b.data(), 0, p.n[2]);
    a.swap(b);
  }
  return a;
}

std::vector<i64> sampled_planes(const FdProblem& p, int spread) {
  std::vector<i64> z;
  const i64 nz = p.n[2], edge = std::min<i64>(p.radius + 2, nz);
  for (i64 k = 0; k < edge; ++k) {
    z.push_back(k);
    z.push_back(nz - 1 - k);
  }
  for (int k = 1; k <= spread; ++k) z.push_back(nz * k / (spread + 1));
  std::sort(z.begin(), z.end());
  z.erase(std::unique(z.begin(), z.end()), z.end());
  return z;
}

std::string check_step(const FdProblem& p, const std::vector<float>& prev, const std::vector<float>& next,
                       const std::vector<i64>& planes) {
  check(p);
  const i64 nx = p.n[0], ny = p.n[1], plane = nx * ny;
  if (prev.size() != next.size() || static_cast<i64>(prev.size()) != plane * p.n[2])
    throw std::invalid_argument("gpsm: fd3d check_step: buffers are not the volume's size");
  std::vector<float> want(next.size());
  for (i64 z : planes) {
    if (z < 0 || z >= p.n[2]) throw std::invalid_argument("gpsm: fd3d check_step: plane outside the volume");
    const auto first = static_cast<std::size_t>(z * plane);
    std::copy(prev.begin() + first, prev.begin() + first + plane, want.begin() + first);
    fd3d_step(p, prev.data(), want.data(), z, z + 1);
    for (i64 i = 0; i < plane; ++i) {
      const auto k = first + static_cast<std::size_t>(i);
      if (!(next[k] == want[k]))  // a NaN never passes
        return fmt::format("plane {}: cell ({}, {}) is {}, the step gives {}", z, i % nx, i / nx, next[k], want[k]);
    }
  }
  return "";
}

double reference_flops(const FdProblem& p) {
  double cells = static_cast<double>(p.iters);
  for (int d = 0; d < 3; ++d) cells *= static_cast<double>(std::max<i64>(0, p.n[d] - 2 * p.radius));
  return cells * fd_flops_per_cell(p.radius);
}

}  // namespace gpsm::apps::fd3d
