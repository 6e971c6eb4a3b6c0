#pragma once
// The arithmetic of gpsm's conjugate gradient, in one fixed order, shared by every GPU kernel (all
// paradigms) and the CPU reference, so a GPU run reproduces the reference bit for bit and the
// verification bound (1e-10) measures communication mistakes, never rounding differences:
//   - every product feeds an explicit fused multiply-add: fma() is correctly rounded on both sides
//     (std::fma on the host, DFMA on the GPU), so no compiler contraction can change a result;
//   - row i of A times a vector is summed by a group of `lanes` threads: lane l takes the row's
//     entries l, l + lanes, ... in storage order (fma, from +0), then the lanes are added pairwise,
//     lane l += lane l + off for off = lanes/2, ..., 1 (a warp shuffle-down tree); lane 0 holds it;
//   - a dot product over one GPU's rows is cut into chunks of chunk_rows(E) = kThreads * E
//     rank-local rows; thread t of a chunk takes rows t, t + kThreads, ... (E of them, fma in
//     order, from +0, rows past the GPU's end add nothing); the 256 thread values are added as a
//     block does: a shuffle-down tree per warp of 32, then the 8 warp sums in warp order;
//   - a GPU's partial is its chunk partials summed the same way: thread t adds chunks t,
//     t + kThreads, ... in order (from +0), then the block tree;
//   - the global value is the GPU partials added in rank order (from +0).
// Host functions here emulate the GPU's trees; the device side is cg_device.cuh.
#include <cmath>
#include <cstdint>

#include "gpsm/gps/config.hpp"  // GPSM_HD

namespace gpsm::apps::cg {

constexpr int kThreads = 256;        // threads per block of every CG kernel
constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;
constexpr int kMaxRanks = 8;         // GPUs per run (the device-side reduction's inbox)

GPSM_HD double fmad(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// Rows per chunk for E rows per thread.
GPSM_HD std::int64_t chunk_rows(int rows_per_thread) { return static_cast<std::int64_t>(kThreads) * rows_per_thread; }

// The persistent kernels deal a GPU's chunk order round robin: block `worker` of `workers` takes
// positions worker, worker + workers, ... The first of them at or after position `from` (a
// Pipelined kernel's first boundary chunk, which it asks its views about once per launch).
GPSM_HD std::int32_t first_turn_from(std::int32_t worker, std::int32_t workers, std::int32_t from) {
  return worker >= from ? worker : worker + (from - worker + workers - 1) / workers * workers;
}

// Lanes per row for a matrix with `avg` nonzeros per row: the largest power of two <= avg, in
// [2, 32] (a row group never spans two warps). A property of the matrix, not of the split.
inline int lanes_for(double avg) {
  int l = 2;
  while (l < kWarp && 2.0 * l <= avg) l *= 2;
  return l;
}

// ---- host emulation of the GPU's reduction trees (the reference and the tests) --------------

// v[0..width) reduced in place as a shuffle-down tree of `width` (a power of two <= 32) lanes;
// returns lane 0's value.
inline double lane_tree(double* v, int width) {
  for (int off = width / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) v[l] = v[l] + v[l + off];
  return v[0];
}

// v[0..kThreads) reduced as a block of kThreads threads does (warp trees, then warp sums in order).
inline double block_tree(double* v) {
  double total = 0.0;
  for (int w = 0; w < kWarps; ++w) {
    const double s = lane_tree(v + w * kWarp, kWarp);
    total = w == 0 ? s : total + s;
  }
  return total;
}

// Entries [begin, end) of a CSR row times x (x(j): the vector at column j), as `lanes` lanes sum it.
template <class Index, class X>
double row_times(std::int64_t begin, std::int64_t end, const Index* col, const double* val, int lanes, const X& x) {
  double v[kWarp];
  for (int l = 0; l < lanes; ++l) {
    double s = 0.0;
    for (std::int64_t k = begin + l; k < end; k += lanes) s = fmad(val[k], x(col[k]), s);
    v[l] = s;
  }
  return lane_tree(v, lanes);
}

// The recurrence scalars, one function each so the reference and every kernel divide the same way.
// Standard CG: alpha = rho / (p.q), beta = rho_new / rho.
GPSM_HD double cg_ratio(double num, double den) { return num / den; }
// Pipelined CG (Ghysels and Vanroose, unpreconditioned): alpha = gamma / (delta - beta * gamma / alpha_prev).
GPSM_HD double pipe_alpha_den(double gamma, double delta, double beta, double alpha_prev) {
  return fmad(-beta, gamma / alpha_prev, delta);
}

}  // namespace gpsm::apps::cg
