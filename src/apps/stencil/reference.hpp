#pragma once
// CPU references of the stencil apps (OpenMP where available), using the same point updates as
// the GPU kernels (stencil_math.hpp).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpsm::apps {

class RefFields;  // apps/harness/reference_cache.hpp

struct JacobiProblem {
  std::int64_t nx = 4096, ny = 4096;
  int niter = 1000;     // iteration cap
  int nccheck = 1;      // norm every nccheck iterations (iteration 0 included)
  float tol = 1.0e-8f;  // stop when the norm is at or below tol
};
struct JacobiResult {
  std::vector<float> a;  // ny x nx: the grid after the last iteration (halo rows as in the single-GPU code)
  int iterations = 0;    // iterations run
  double norm = 1.0;     // last computed norm, sqrt(sum (a_new - a)^2) over interior cells
};
// Zero start, left/right columns jacobi_boundary(iy, ny), periodic top/bottom: after each update
// row 0 <- row ny-2 and row ny-1 <- row 1 (whole rows, as NVIDIA's single-GPU code copies them).
// Loop: while (norm > tol && iter < niter) { update; if (iter % nccheck == 0) norm = ...; ++iter }.
// Throws std::invalid_argument for nx < 3, ny < 3, niter < 0 or nccheck < 1.
JacobiResult jacobi_reference(const JacobiProblem& p);
// The result as an entry of gpsm bench --isolate's shared references (reference_cache.hpp).
void ref_fields(RefFields& f, JacobiResult& r);

struct Stencil3DProblem {
  std::int64_t n[3] = {256, 256, 256};  // x, y, z
  int iters = 10;
  std::uint32_t seed = 1;
};
// Cells are keyed by their global linear index (z * ny + y) * nx + x; interior cells are those
// with every coordinate in [radius, n - radius). Both throw std::invalid_argument for an extent
// < 2 * radius + 1 or iters < 0.
// heat3d: u starts as initial_value(global cell, seed) everywhere; the boundary layer (1 cell)
// keeps its initial values; each iteration updates every interior cell with heat_point.
std::vector<float> heat3d_reference(const Stencil3DProblem& p);
// wave3d: prev = initial_value(cell, seed), cur = initial_value(cell, seed + 1); the boundary
// layer (2 cells) is fixed in time at cur's initial values: next's boundary cells are cur's, and
// prev's are never read (an implementation that rotates buffers must give prev's buffer cur's
// boundary). Each iteration next = wave_point(...) on interior cells, then (prev, cur) <- (cur,
// next). Returns cur after the last iteration.
std::vector<float> wave3d_reference(const Stencil3DProblem& p);

// Largest |a - b| over all cells, divided by max(1, largest |b|); +infinity where a pair differs
// by NaN (a NaN must never read as agreement). Throws std::invalid_argument on a size mismatch.
double max_rel_error(const std::vector<float>& a, const std::vector<float>& b);
// The same over n cells from a and b (a part of two grids: Jacobi's interior rows).
double max_rel_error(const float* a, const float* b, std::size_t n);

}  // namespace gpsm::apps
