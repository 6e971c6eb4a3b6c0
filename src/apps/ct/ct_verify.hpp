#pragma once
// Verification of a multi-GPU PWLS-OS run against the one-GPU run of the same problem (plain
// C++, CPU-tested): the image within a tolerance in HU derived below, the cost within 1e-5
// relative of the reference's after every iteration and never rising.
//
// Why the images differ at all: every paradigm runs the one-GPU kernels on its share, and the
// back projection and update are the same arithmetic in the same order per voxel column (bit for
// bit the CPU's, docs/ct.md). Only the forward projector's per-cell double sums run in an order
// the shared-memory atomics choose, so a cell of A x may round to the neighbouring float: the
// residual r_i = w_i ([A x]_i - y_i) moves by at most w_i 2^-24 [A x]_i. Through the update step
// x_j -= M [A_m^T r]_j / (d_j + c_j), with [A x]_i <= x_max [A 1]_i and
// d_j = sum over all views of a_ij w_i [A 1]_i >= the subset's part, voxel j moves by at most
// M 2^-24 x_max; the image's own float rounding adds at most 2^-24 x_max. Assuming the OS-SQS
// step does not amplify a perturbation (its separable surrogate's curvature d + c bounds the
// cost's Hessian), the differences of `updates` subset updates add up to at most
// updates (M + 1) 2^-24 x_max, in HU 1000 / mu_water times that. A bound, not an estimate: the
// one-float differences have both signs and most voxels see hundreds of rays, so the measured
// difference is far below it (the GPU tests print both).
#include <string>
#include <vector>

#include "apps/ct/ct_pwls.hpp"

namespace gpsm::apps::ct {

// updates (subsets + 1) 2^-24 x_max, in HU. Throws std::invalid_argument for updates < 0 or
// subsets < 1.
double split_tolerance_hu(int updates, int subsets, double x_max);

// The largest voxel difference between two images of equal size, in HU (1000 / mu_water per 1/mm).
double max_difference_hu(const std::vector<float>& a, const std::vector<float>& b);

struct RunCheck {
  double difference_hu = 0;  // image against the reference
  double tolerance_hu = 0;
  std::string failure;       // empty: the run verifies
};

// got against ref (the one-GPU run from the same start, the same iterations and subsets): the
// same number of cost records, each within 1e-5 relative of the reference's and none above the
// one before it (1e-9 relative slack for the cost's own double sums); the final image within
// split_tolerance_hu(iterations * subsets, subsets, max of the reference image) (twice that: the
// reference is itself one such run).
RunCheck check_run(const PwlsRun& ref, const PwlsRun& got, int subsets);

}  // namespace gpsm::apps::ct
