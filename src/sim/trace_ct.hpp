#pragma once
// The trace of the CT app (src/apps/ct, docs/ct.md: PWLS-OS with ordered subsets, the PROACT
// dissertation's case study) for the simulator, built from the app's partition
// (apps/ct/ct_partition.hpp) and geometry rather than by running the projector on the CPU (a
// seed-size iteration is some 10^12 footprint evaluations). docs/sim.md, "CT".
//
// One traced iteration is one PWLS-OS iteration: every subset m once, in the app's order
// (subset_order), and per subset on each GPU r, as apps/ct/ct_multi.hpp runs it:
//   ct_forward            the forward projection of r's views of m (its column splits and split
//                         sum folded in): no bytes traced, its time the calibrated compute below;
//   ct_weighted_residual  r = w (A x - y) over r's rows, in place, stored also into every peer's
//                         residual buffer (the exchange: memcpy copies it after the kernel, proact
//                         by chunks, infinite elides it); a grid-stride kernel of at most 4096
//                         blocks of 256 threads priced by its bytes;
//   ct_update             back projection, penalty and update of r's y-slab, a block per
//                         columns_per_block whole voxel columns in slab order, each block storing
//                         its columns into the new image and into every peer's copy of it (so
//                         proact's chunks become ready as the voxel-major update finishes them);
//                         its time the calibrated compute.
// Compute: a kernel's KernelTrace::compute_s = its voxel-view pairs x seconds per pair, the pairs
// from the geometry (ct_view_pairs), the seconds per pair calibrated so that the trace replayed on
// one H200 gives the measured one-GPU phase times (CtCompute). The simulator takes it in whole
// waves of blocks (kernel_cost.hpp whole_wave_factor), so the calibration divides that out at
// the measured launch shapes.
#include <string>
#include <vector>

#include "apps/ct/ct_bench_spec.hpp"
#include "sim/ct_measured.hpp"
#include "sim/trace.hpp"
#include "sim/trace_gen.hpp"

namespace gpsm::sim {

bool is_ct_app(const std::string& app);  // "ct"

// Voxels view v's cone reaches: nx x ny columns times the z range column_z_range gives at the
// isocenter's magnification (the projectors skip the rest; the helix's first and last views reach
// part of the image only). Forward projection and back projection both cost one footprint
// evaluation per (voxel, view) pair reached.
double ct_view_pairs(const apps::ct::Geometry& g, int v);

// Resident blocks per SM of the H200 build (docs/ct.md "The first 2xH200 run": the forward
// kernel's 48-kB tiles and 64 registers, the update's 80 registers).
inline constexpr int kCtForwardBlocksPerSm = 4;
inline constexpr int kCtUpdateBlocksPerSm = 3;
// The SMs the compute was measured on (one H200).
inline constexpr int kCtMeasuredSms = 132;

// Seconds per voxel-view pair at full occupancy, on one H200, and what they rest on.
struct CtCompute {
  double forward_s = 0, update_s = 0;
  std::string source;
};
// The compute for a geometry: medium's seconds per pair, from its measured one-GPU phase times
// (sim/ct_measured.hpp), for every geometry (the seed size's one-GPU iteration, measured whole,
// is a check of it, not an input).
CtCompute ct_compute_for(const apps::ct::Geometry& g);
// Seconds per pair that make one GPU of `sms` SMs take `one_gpu` (ms per iteration) on `spec`.
CtCompute calibrate_ct_compute(const apps::ct::CtBenchSpec& spec, const CtPhaseMs& one_gpu, int sms = kCtMeasuredSms);

// The trace of r.problem.graph (a gpsm bench --app ct size, with @subsets=M) on r.gpus GPUs,
// r.problem.iters iterations (all alike: the app's work does not depend on the data), launch
// shapes for r.sms SMs. Layout: slabs only (the app's buffers: a full image and residual per
// GPU). Sampling (r.sample <= 0: auto, at most kCtAutoBlocks a kernel; else the fraction) applies
// to the residual and update kernels' blocks (trace_addr.hpp's chunks, ends kept). Throws
// std::invalid_argument on a bad size, layout, or more GPUs than y-planes.
Trace ct_trace(const TraceRequest& r);
inline constexpr double kCtAutoBlocks = 256;

}  // namespace gpsm::sim
