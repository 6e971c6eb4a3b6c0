#pragma once
// GPU-SM's remote-access study (docs/remote-study.md) on a simulated machine: the kernels of
// `gpsm scope`'s remote.h3_intensity and remote.h4_occupancy, and H1's rates, priced with the
// system's rates, as the machine model's RemoteStudy, so a preset (the PCIe ones, GPU-SM's own
// PCIe 3.0 setting) gives the curves a measured run gives on NVLink. Plain C++.
//
// One kernel: n elements, one thread each, a 4-B load, `flops` FLOPs, a 4-B store; a share `remote`
// of the loads and of the stores go to the other GPU (whole 128-B lines of a warp). Its time is
// the largest of four demands, each the time its resource needs alone:
//   HBM:     the local bytes (8 per local element) at GpuParams::hbm_GBps;
//   link:    per direction, the remote lines' wire bytes (sim/link.hpp: completions of the loads one
//            way, the stores and the load requests the other) at LinkParams::raw_GBps;
//   FLOPs:   n * flops at GpuParams::flops_G;
//   latency: every thread waits for its load (Little's law): n * the mean load latency / the
//            resident threads (blocks_per_sm x 256 per SM), a remote load a round trip over the
//            link (2 x (latency_ns + switch_ns)), a local one GpuParams::load_latency_ns (600 ns
//            where the preset has none).
// spread (remote columns): the demands overlap through the whole kernel: the largest of them.
// batch (remote rows): the remote blocks run first, then the local ones: remote x the all-remote
// kernel + (1 - remote) x the all-local kernel.
#include <string>
#include <vector>

#include "gpsm/remote_study.hpp"
#include "scope/results.hpp"
#include "sim/system.hpp"

namespace gpsm::sim {

struct RemoteKernelCost {
  double hbm_s = 0, link_s = 0, flops_s = 0, latency_s = 0;
  double total_s = 0;
};

// Throws std::invalid_argument for remote outside [0, 1], n <= 0, flops < 0 or blocks_per_sm < 1.
RemoteKernelCost remote_kernel_cost(const System& s, double n, double remote, int flops, int blocks_per_sm,
                                    bool batch);

// The study's H1 rates and H3 / H4 curves over `gpsm scope`'s sweeps (quick or full), summarised
// as derive_study does (hidden shares, the occupancy that hides them). H2 and H5 need a block
// schedule and a cache the model does not have: their fields stay 0.
model::RemoteStudy predict_remote_study(const System& s, bool quick = false);

// The same H3 and H4 kernels as `gpsm scope`'s results (tests remote.h3_intensity and
// remote.h4_occupancy, their series, x and params), one sample per point, the predicted time;
// points unverified (nothing ran), so `gpsm report` overlays a preset's curves on a measured run's.
std::vector<scope::TestResult> predict_remote_study_tests(const System& s, bool quick = false);

// The terminal table: the rates, then each curve's slowdowns and hidden share.
std::string render_remote_study(const model::RemoteStudy& st, const std::string& system_name);

}  // namespace gpsm::sim
