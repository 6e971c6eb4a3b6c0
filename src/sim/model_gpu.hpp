#pragma once
// The simulated GPU from a `gpsm scope` machine model's own description of its GPUs (the model's
// `gpus` and `local` sections, docs/machine-model.md): SMs, clock, L2 size, FP32 rate and resident
// blocks from what CUDA reported; the HBM rate from sm_stream_local's copy loop beyond the L2;
// the L2's rate from sm_l2_local's reads (their best footprint); the L2's gather rate from
// sm_gather_local inside it. Plain C++ (docs/sim.md "Systems").
#include <set>
#include <string>

#include "gpsm/machine_model.hpp"
#include "sim/system.hpp"

namespace gpsm::sim {

// The apps' kernels reach this share of a plain copy loop's HBM rate: jacobi2d 16384^2 on one
// H200 moved 2 x 16384^2 x 4 B in 608.29 us, 3530 GB/s (the h200 preset's hbm_GBps), where
// sm_stream_local's copy loop at 1 GiB moved 3905 and 3898 GB/s on an H200 (results/nvidia-h200-x2/
// 2026-11-22_2f1cefa_l2-loop and 2026-11-22_b97abdb_scope-tests): 3530 / 3901.5. Measured on the
// H200 only; applied to every GPU a model describes.
inline constexpr double kAppShareOfCopy = 3530.0 / 3901.5;

// FP32 lanes an SM has, by compute capability (NVIDIA's CUDA C++ Programming Guide, "Arithmetic
// Instructions" throughput table: 64 on 6.0, 7.x and 8.0; 128 on 6.1, 8.6-8.9, 9.0, 10.x, 12.x);
// 0 for a capability it does not list.
int fp32_lanes_per_sm(int cc_major, int cc_minor);
// Resident threads an SM holds, by compute capability (the same guide's "Technical
// Specifications": 2048 on 6.x, 7.0, 8.0, 9.0, 10.x; 1024 on 7.5; 1536 on 8.6-8.9 and 12.x); 0 when
// unknown.
int max_threads_per_sm(int cc_major, int cc_minor);

// `base` (the closest preset's GPU) with what the model says of the GPUs named in `used` ("gpu0",
// ...). Those the model's `gpus` section describes must be alike (name, SMs, L2): the simulator
// models identical GPUs; otherwise throws gpsm::Error naming two that differ. A model without a
// `gpus` entry for them returns `base` with `what` empty. `what` (may be null) receives a phrase
// naming where each number came from, for the system's description.
GpuParams gpu_from_model(const model::MachineModel& m, const std::set<std::string>& used, GpuParams base,
                         std::string* what);

}  // namespace gpsm::sim
