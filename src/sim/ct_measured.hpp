#pragma once
// The CT app's runs on 2x H200 that the CT scalability model (sim/ct_scaling.hpp) and the CT
// trace (sim/trace_ct.hpp) are calibrated and checked on: measured numbers only, each with the
// results folder it comes from (docs/ct.md, "The first 2xH200 run" and "At the seed's size").
// Plain C++.

namespace gpsm::sim {

// Per iteration, per GPU (ms): forward projection and update (phases 2-4).
struct CtPhaseMs {
  double forward = 0, update = 0;
};

// medium (256^3, 1814 x 32 x 444 helical, 24 subsets), 3 iterations, median of 3 reps:
// results/nvidia-h200-x2/2026-11-27_f188d90_ct-round2-cg-gps-plain/ct.json.
struct CtMeasured {
  CtPhaseMs one_gpu;        // `single`, GPU 0, per iteration
  CtPhaseMs two_gpus;       // `infinite` at 2 GPUs, mean of the two GPUs
  double one_gpu_ms;        // `single` wall clock per iteration (median of 3 reps)
  double memcpy2_ms, proact2_ms, infinite2_ms;  // 2-GPU wall clock per iteration
};
CtMeasured ct_measured_h200x2_medium();

// seed (512^3, 7256 x 64 x 888 helical, 24 subsets), one iteration, one rep, no phase times:
// results/nvidia-h200-x2/2026-11-28_e3990ed_fd3d-remote-study-ct-seed/call7/ct-seed-{1,2}.json.
struct CtMeasuredTotals {
  double one_gpu_ms;                            // `single`
  double memcpy2_ms, proact2_ms, infinite2_ms;  // 2 GPUs
};
CtMeasuredTotals ct_measured_h200x2_seed();

}  // namespace gpsm::sim
