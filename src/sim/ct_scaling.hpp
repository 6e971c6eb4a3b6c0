#pragma once
// The CT case study's scalability model (PROACT dissertation ch. III, §3.4 "Scalability
// Analysis" and Fig 3.6, "Effect of GPU scaling on speedup for different interconnect
// generations"), calibrated on measured phase times instead of assumed ones. Plain C++.
//
// One PWLS-OS iteration on G GPUs is, per subset m (apps/ct/ct_partition.hpp):
//   forward projection over the subset's views, split over GPUs, then the residual exchange
//   (each GPU sends its views to the G - 1 others); the update (back projection, penalty,
//   update) over y-slabs, then the image exchange (each GPU its slab to the G - 1 others).
// Compute: a phase takes split / G + fixed per iteration (§3.4 assumes linear scaling, fixed = 0;
// CtComputeFit fits the part that does not split from the 1- and 2-GPU measurements), shared
// over the subsets by their view counts (forward) or evenly (update: every subset updates the
// whole image).
// Exchange: the bytes CtPartition says GPU r sends, over the GPU's egress (per_gpu_egress: a
// non-blocking switch, every GPU sending at once at its own port's rate) or over one link for
// all GPUs (shared: §3.4.1's Copytime = (n_gpu - 1) x Size x t_perbyte, the total bytes at one
// rate). The slowest GPU (most views / planes) sets the time.
// Paradigms, as the CT app runs them (apps/ct/ct_multi.hpp):
//   memcpy    forward + residual copy + update + image copy;
//   proact    forward + residual copy + the image pipelined by chunks: max(update + the last
//             chunk's copy, the first chunk's update + the whole image copy) (the app overlaps
//             the image by readiness chunks; its residual goes after the phase);
//   infinite  forward + update.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "sim/ct_measured.hpp"  // the measurements it is calibrated and checked on
#include "sim/system.hpp"

namespace gpsm::sim {

struct CtComputeFit {
  CtPhaseMs split;  // the part that divides over GPUs
  CtPhaseMs fixed;  // the part every GPU pays whatever G
  double forward_ms(int gpus) const { return split.forward / gpus + fixed.forward; }
  double update_ms(int gpus) const { return split.update / gpus + fixed.update; }
};

// From one GPU's phase times and G = 2's: fixed = 2 T(2) - T(1) (>= 0), split = T(1) - fixed,
// so the fit gives back both inputs exactly. Throws std::invalid_argument on a time <= 0.
CtComputeFit fit_ct_compute(const CtPhaseMs& one_gpu, const CtPhaseMs& two_gpus);
// Both parts times `factor` (another problem size: the work scales by voxels x views).
CtComputeFit scale_ct_compute(const CtComputeFit& fit, double factor);

enum class CtParadigm { memcpy, proact, infinite };
enum class CtFabric { per_gpu_egress, shared };
const char* ct_paradigm_name(CtParadigm p);

// Time (s) for one GPU to send `bytes` in total, split evenly over `peers` peers, all copies at
// once: the copy's fixed time (the larger of the link latency (+ switch) and the system's
// copy_fixed_us) + the wire bytes at the rate. Rate: one peer, the link's; more, the link's
// capped by the system's all-to-all egress (egress_GBps, where measured). shared: `senders` GPUs'
// bytes all at that one rate. 0 for no bytes or no peers.
double ct_exchange_s(const System& sys, double bytes, int peers, CtFabric fabric, int senders);

struct CtIteration {
  double compute_ms = 0;   // forward + update, the slowest GPU
  double exchange_ms = 0;  // what the exchanges add beyond the compute
  double total_ms = 0;
};

// One iteration of `subsets` ordered subsets on `gpus` GPUs of `sys` (its link and egress; its
// GPU count is not used). chunk_bytes: proact's image chunk (apps/ct/ct_multi.hpp's default).
CtIteration model_ct_iteration(const apps::ct::Geometry& g, int subsets, const CtComputeFit& fit, const System& sys,
                               int gpus, CtParadigm p, CtFabric fabric = CtFabric::per_gpu_egress,
                               std::int64_t chunk_bytes = std::int64_t{1} << 20);

// The scalability table (text): the 2-GPU check against the measurements, then speedup over one
// GPU for gpu_counts at medium and at the seed size, on the measured NVLink node (h200x4's link
// and egress) and the PCIe presets, for memcpy, proact and infinite.
std::string ct_scaling_report(const std::vector<int>& gpu_counts = {1, 2, 4, 8, 16});

}  // namespace gpsm::sim
