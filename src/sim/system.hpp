#pragma once
// Simulated machines: GPUs and the links between them. Built-in presets (the papers' systems and
// the 4xH200 node measured here) or a `gpsm scope` machine model (JSON). Plain C++.
#include <string>
#include <utility>
#include <vector>

#include "sim/link.hpp"

namespace gpsm::sim {

// Host time of the runtime calls a host-driven loop makes, one call each (gpsm scope
// lat_host_calls: host clock over back-to-back calls). All 0: not measured; the engine then
// charges GpuParams::issue_us per GPU and iteration instead (docs/sim.md "Host loop").
struct HostCallCosts {
  double set_device_us = 0;  // cudaSetDevice between GPUs
  double launch_us = 0;      // a kernel launch's enqueue (the host's share; GpuParams::launch_us is the GPU's)
  double record_us = 0;      // cudaEventRecord
  double wait_us = 0;        // cudaStreamWaitEvent on another GPU's event
  double copy_us = 0;        // a peer cudaMemcpyAsync's enqueue
  double memset_us = 0;      // a 4-B cudaMemsetAsync's enqueue
  double readback_us = 0;    // a 4-B device-to-host cudaMemcpy of a result, synchronous (lat_copy_small)
  bool measured() const { return launch_us > 0; }
};

struct GpuParams {
  std::string name = "V100";
  int sms = 80;
  double clock_GHz = 1.38;
  double hbm_GBps = 900;       // achievable, not peak
  double l2_bytes = 6 << 20;
  double l2_GBps = 2500;       // L2 hit bandwidth
  double flops_G = 14000;      // fp32 GFLOP/s
  int issue_per_clock = 4;     // warp instructions an SM issues a clock: its warp schedulers (4 since
                               // Volta: V100, H100/H200). The issue bound (docs/sim.md "Issue bound")
  int blocks_per_sm = 8;       // resident 256-thread blocks (wave size = sms * blocks_per_sm)
  double launch_us = 5;        // kernel launch to start, host-driven
  double sync_us = 8;          // host synchronization / event round trip per iteration
  double issue_us = 6;         // host time to issue one GPU's work of an iteration (host-driven:
                               // a launch, event record and waits), one host thread for all GPUs
  double readback_us = 3;      // extra host time per GPU when the iteration's result is read back
  HostCallCosts host;          // per-call host costs; measured() selects the named-call host loop
  double event_hop_us = 0;     // GPU time a stream's wait for another GPU's event adds over one on its own
                               // stream (lat_event_hop: the cross-GPU hop less the stream->stream hop);
                               // charged once per iteration whose loop orders GPUs by events. 0: not modelled
  double graph_node_us = 0.5;  // a kernel node's start after its dependencies, inside a CUDA graph
  double serial_step_us = 0;   // one dependent memory step of a block (a march plane): a kernel takes at
                               // least its busiest block slot's steps x this. 0: derived per kernel from
                               // its residency (Engine: resident blocks x bytes per block-step / HBM);
                               // > 0: this fixed time; < 0: the serial bound is not modelled
  double load_latency_ns = 0;  // one dependent load from the GPU's own memory (a pointer chase's
                               // hop): a kernel whose threads load in chains (BlockTrace::chain_steps)
                               // takes at least its chains x this (Engine). 0: not modelled
  double l2_latency_ns = 0;    // one dependent load that hits the L2: a chain's gathers
                               // (BlockTrace::gather_steps) take it as often as the kernel's gathered
                               // arrays fit l2_bytes (Engine). 0: not modelled (every step load_latency_ns)
  double gather_GBps = 0;      // the L2's rate for lone 32-B sectors (random gathers that stay in the L2:
                               // sm_gather_local at its smallest footprint), below l2_GBps, the rate of
                               // line-sized requests. 0: l2_GBps
  double hot_word_ns = 0;      // what one warp's store or atomic to a word every warp of a kernel targets
                               // (sssp's `changed` flag) adds to the kernel, among its other loads
                               // (lat_hot_word: kernel time less the same kernel without them, per
                               // request). 0: not modelled
  double fault_us = 20;        // UM page fault service (fault + migrate one page)
  double page_bytes = 64 << 10;// UM migration granularity
  // The UM driver's thrashing detection (sim/um.hpp UmThrashing: nvidia-uvm's defaults, read on
  // the 4xH200 node): migrations of a page within this lapse of each other are thrashing events,
  // and `um_thrash_threshold` of them pin it
  double um_thrash_lapse_us = 500;
  int um_thrash_threshold = 3;
};

// How GPUs connect. direct: a link between every pair (NVLink all-to-all, per-pair bandwidth =
// the GPU's aggregate / (gpus - 1) unless set); switch_tree: every GPU one link to a PCIe switch
// (shared uplinks); nvswitch: every GPU one aggregate link to a crossbar (dgx2, h200x4).
enum class Topology { direct, switch_tree, nvswitch };

struct System {
  std::string name;
  std::string description;
  int gpus = 4;
  GpuParams gpu;
  Topology topology = Topology::switch_tree;
  LinkParams link;             // per GPU port (direct: per pair)
  double switch_ns = 0;        // extra one-way latency of the switch a transfer crosses
                               // (switch_tree: the PCIe switch; nvswitch: folded into link)
  double egress_GBps = 0;      // per-GPU cap on the wire bytes/s its copy engines send over all
                               // its links at once (0: no cap beyond the links themselves); the
                               // engine applies it to memcpy's copies. Same units as
                               // link.raw_GBps. h200x4: the measured all-to-all copy egress. A
                               // link sweep scales it with the link (RunCtx).
  double copy_fixed_us = 0;    // a copy-engine copy's fixed time (from its start in the stream to
                               // done, less its bytes' time): the intercept of gpsm scope's ce_peer
                               // fit over large copies, median over GPU pairs. 0: not measured
                               // (the link latency alone, as the V100 presets).
  // A peer copy as a node of a CUDA graph between kernel nodes (gpsm scope lat_graph_copy: the
  // chain kernel -> copy -> kernel less kernel -> kernel), (bytes, us) ascending. Empty: not
  // measured (copy_time_s applies). graph_copy_s interpolates it linearly; past the last point it
  // adds the extra bytes at the link's rate; below the first it is the first point's time.
  std::vector<std::pair<double, double>> graph_copy_us;
  double graph_copy_s(double bytes) const;
  // A peer copy right after a kernel on one stream (lat_graph_copy's stream series: the chain
  // kernel -> copy -> kernel on a stream less the kernels alone), (bytes, us) ascending, read as
  // graph_copy_us. The host-issued loops' first copy after their kernel takes it (a copy behind
  // another copy takes copy_time_s). Empty: not measured.
  std::vector<std::pair<double, double>> stream_copy_us;
  double stream_copy_s(double bytes) const;
  // The link's bandwidth over the one graph_copy_us and stream_copy_us were measured on (a
  // --sweep link_bw sets it with link.raw_GBps, RunCtx). A measured curve is a fixed part plus its
  // bytes at the measured link: away from 1 the bytes' part takes the link's rate instead, at
  // every size, so the curves scale with the link below and above their last point, as
  // copy_time_s does.
  double curve_link_scale = 1;
  // Time for `bytes` moved by copy engine from GPU a to GPU b alone on the fabric: the larger of
  // the latency (+ switch hop) and copy_fixed_us, + wire_bytes_write(bytes) / link bandwidth.
  // a == b: a local copy, read + write through HBM (2 * bytes / hbm). Throws
  // std::invalid_argument for a GPU out of range.
  double copy_time_s(int a, int b, double bytes) const;
};

// Presets: v100-pcie3 (4x V100, PCIe 3 switch tree), v100-pcie4, v100-pcie5, v100-pcie6, dgx1
// (8x V100, NVLink2 hybrid cube mesh approximated as direct), dgx2 (16x V100, NVSwitch), h200x4
// (4x H200, NVLink4 through NVSwitch, NV18 between every pair, numbers from gpsm scope on
// nvidia-h200-x4). gpus overrides the preset's count (1..16; 1 = the single-GPU baseline).
// Throws std::invalid_argument on an unknown name.
System preset(const std::string& name, int gpus = 0);
std::vector<std::string> preset_names();
// From a gpsm scope machine model (docs/machine-model.md): GPU count, HBM and peer bandwidths
// and latencies; the rest from the closest preset. Throws gpsm::Error naming the file on errors.
System from_machine_model(const std::string& path);

}  // namespace gpsm::sim
