#pragma once
// PWLS-OS reconstruction on the CPU: the reference the GPU paradigms are checked against, laid
// out in the phases they split over GPUs.
//
// Cost (the PROACT dissertation's eq. 3.1): Psi(x) = 1/2 ||A x - y||^2_W + R(x), x >= 0, R the
// Fair-potential penalty of ct_penalty.hpp.
//
// Update: the separable quadratic surrogate with ordered subsets (Erdogan and Fessler, "Ordered
// subsets algorithms for transmission tomography"; the form the PROACT case study's reference,
// Kim, Pal, Thibault and Fessler, "Improved ordered subsets algorithm for 3D X-ray CT image
// reconstruction", starts from). For subset m of M, views S_m:
//   r      = W_m (A_m x - y_m)                                     phase 1, split over views
//   x_j   <- max(0, x_j - (M [A_m^T r]_j + dR/dx_j) / (d_j + c_j))  phases 2-4, split over y-planes
// with d = A^T W A 1 (the data term's SQS curvature, precomputed once over all views) and
// dR/dx_j, c_j the penalty's gradient and surrogate curvature at the current x. The update reads
// the current image and writes a new one (Jacobi in voxels: every voxel's penalty sees the same
// x). With M = 1 each update minimizes a surrogate that lies above Psi and touches it at x, so
// Psi never increases; with M > 1 it is not guaranteed (the subset gradient is an approximation).
//
// beta: the cost's strength is set relative to the data term, beta = beta_scale * mean_j(d_j) /
// (26-neighbourhood weight sum): then at beta_scale 1 the penalty's curvature for a flat region
// equals the data term's mean curvature. delta = 10 HU of attenuation.
#include <cstdint>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_penalty.hpp"
#include "apps/ct/ct_scan.hpp"

namespace gpsm::apps {
class RefFields;  // apps/harness/reference_cache.hpp
}  // namespace gpsm::apps

namespace gpsm::apps::ct {

struct PwlsSettings {
  int subsets = 24;            // the seed's
  double beta_scale = 0.05;    // beta relative to the data term (above)
  double delta_hu = 10.0;      // the Fair potential's corner, HU
};

// d = A^T W A 1 over all views (layout [iy][ix][iz]).
std::vector<float> data_curvature(const Geometry& g, const std::vector<float>& w);

// beta and delta for these settings and this d.
Penalty make_penalty(const Geometry& g, const PwlsSettings& s, const std::vector<float>& d);

// Psi(x), in double.
double pwls_cost(const Geometry& g, const Scan& scan, const Penalty& pen, const std::vector<float>& x);

// Phase 1 for `count` views: r[k] = w (A x - y) at views[k], [k][row][channel].
void weighted_residual(const Geometry& g, const Scan& scan, const float* x, const std::int32_t* views, int count,
                       float* r);

// Phases 2-4 for y-planes [y0, y1): x_new = max(0, x - (M A^T r + grad R) / (d + c)) with r the
// residual of the listed views; columns in voxel-major order. x and x_new are whole volumes.
void update_planes(const Geometry& g, const Penalty& pen, const std::vector<float>& d, int subsets, const float* x,
                   const float* r, const std::int32_t* views, int count, int y0, int y1, float* x_new);

// The root mean square difference from the phantom over the whole image, in HU.
double rmse_hu(const std::vector<float>& x, const std::vector<float>& truth);

struct PwlsRun {
  std::vector<double> cost;     // Psi after 0, 1, ... iterations (cost[0]: the initial image)
  std::vector<double> rmse_hu;  // the same for the RMSE against the phantom (empty without one)
  std::vector<float> x;         // the final image
};
// The run as an entry of gpsm bench --isolate's shared references (reference_cache.hpp).
void ref_fields(RefFields& f, PwlsRun& run);

// `iterations` iterations of PWLS-OS from x0 (every subset once per iteration, subset_order's
// order), the cost and RMSE recorded after each. truth may be empty.
PwlsRun pwls_os(const Geometry& g, const Scan& scan, const PwlsSettings& s, std::vector<float> x0, int iterations,
                const std::vector<float>& truth);

}  // namespace gpsm::apps::ct
