// Simulated machines (see system.hpp and docs/sim.md "Systems"). Every number says where it
// comes from. "PROACT dissertation" is the 2022 dissertation in docs/references.md;
// "our H200 scope run" is results/nvidia-h200-x4/2026-11-21_bb9b15c_scope-full/machine_model.json.
#include "sim/system.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "sim/model_gpu.hpp"

namespace gpsm::sim {

namespace {

// A PCIe switch's port-to-port latency: ~100-150 ns cut-through for current PCIe switch silicon
// (vendor product briefs); an estimate, not measured here.
constexpr double kPcieSwitchNs = 150;

GpuParams v100() {
  GpuParams g;
  g.name = "V100";
  g.sms = 80;              // PROACT dissertation Table 4.1 / 5.3
  g.clock_GHz = 1.38;      // V100 PCIe boost clock (SXM2: 1.53; the presets use one V100)
  g.hbm_GBps = 830;        // achievable of 900 peak HBM2 (~92 %, STREAM-like copies on V100)
  g.l2_bytes = 6 << 20;    // PROACT dissertation Table 4.1
  g.l2_GBps = 2155;        // Jia et al., "Dissecting the NVIDIA Volta GPU Architecture via
                           // Microbenchmarking" (2018): measured L2 load throughput
  g.flops_G = 14000;       // 80 SMs x 64 FP32 lanes x 2 x 1.38 GHz = 14.1 TFLOP/s (peak)
  g.blocks_per_sm = 8;     // 2048 threads per SM (PROACT dissertation Table 4.1) / 256-thread blocks
  g.launch_us = 5;         // host launch to start; PROACT dissertation ch. II: "several microseconds"
  g.sync_us = 8;           // host sync / event round trip; estimate of the same order
  g.issue_us = 6;          // estimate: ~4 runtime calls per GPU and iteration (set device, launch,
                           // event record, stream wait) at ~1.5 us each
  g.readback_us = 3;       // estimate: a memset and a device-to-host copy of the result per GPU
  g.fault_us = 50;         // PROACT dissertation §4.6.2: 50 us per-SM stall per 64 KB UM page migration
  g.page_bytes = 64 << 10; // ibid.: 64 KB migration granularity
  return g;
}

GpuParams h200() {
  GpuParams g;
  g.name = "H200";
  g.sms = 132;             // our scope run's scope.log: "NVIDIA H200 (132 SMs, 140 GiB ...)"
  g.clock_GHz = 1.98;      // H200 SXM boost clock
  g.hbm_GBps = 3530;       // measured: jacobi2d 16384^2 single-GPU cpu_free 608.29 us moving
                           // 2 x 16384^2 x 4 B = 2.15 GB (results/nvidia-h200-x4/
                           // 2026-11-21_bc0ca068d12b_bench-all/bench.log; docs/bench.md)
  g.l2_bytes = 50.0 * (1 << 20);  // H100/H200 L2: 50 MiB (NVIDIA Hopper architecture documentation: the
                                  // H100 whitepaper / tuning guide give 50 MB of L2; the H200 keeps the GH100 die)
  g.l2_GBps = 7974;        // our scope run (results/nvidia-h200-x2/2026-11-22_3bcf51c_l2-rate): sm_l2_local,
                           // every SM re-reading an L2-resident buffer with 16-B ld.global.cg inside one
                           // kernel, best footprint (32 MiB) 7860 / 8088 GB/s on gpu0 / gpu1, median. Until
                           // then 7000, an estimate (~2x HBM) that made jacobi2d 16384^2's sweep L2-bound
                           // (4.83 GB through L2: 690 us) where the H200 ran it in 608 us
  g.flops_G = 66900;       // 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz (peak, as for V100)
  g.blocks_per_sm = 8;     // 2048 threads per SM / 256
  g.launch_us = 1.6;       // our scope run: lat_launch "gpu0 launch (back-to-back)" 1.60 us
  g.sync_us = 6.8;         // our scope run: "launch+sync" 8.41 us minus the launch
  g.issue_us = 6;          // estimate as for V100 (not measured: host API time per call)
  g.readback_us = 3;       // estimate as for V100 (the loops whose traces do not name their calls)
  // Our scope run (results/nvidia-h200-x4/2026-11-22_c9c3bf0eca72_scope-host-calls, 4 GPUs, medians
  // of 9): lat_host_calls host time per call; the 4-GPU phase (set, 3 waits, launch, record) took
  // 10.64 us per GPU against these calls' sum 9.59.
  g.host.set_device_us = 0.095;
  g.host.launch_us = 4.22;
  g.host.record_us = 0.27;
  g.host.wait_us = 1.67;
  g.host.copy_us = 2.68;
  g.host.memset_us = 0.93;  // lat_host_calls "memset 4 B" on 2xH200 (2026-11-22_0d6c3b78f73b_scope-gpu-tests)
  g.host.readback_us = 7.20; // lat_copy_small "gpu0->host 4 B" (2026-11-21_bb9b15c_scope-full)
  // lat_event_hop's phase loop issued by the host as the apps do (every GPU waits for the other's
  // previous step, then a 10-us kernel), less the same loop without the waits: 2.33-2.68 us in 6
  // runs on 2xH200 (results/nvidia-h200-x2/2026-11-22_ef00c90_event-hop), median 2.39. Until then
  // 5.36: the chain of single kernels alternating between GPUs (7.08 us a hop) less the same
  // chain between two streams of one GPU (1.72), which waits a whole signal every hop.
  g.event_hop_us = 2.39;
  g.serial_step_us = 0;    // derived from the residency (sim/march.hpp): 132 SMs x 4 blocks x 8 KiB per step
                           // / 3.53 TB/s = 1.22 us for heat3d's step at 4 blocks per SM, where 1.18 us was
                           // fitted before (4a1d8ee405f6); the fit missed the 5-block step by 19-24 %
  g.graph_node_us = 0.5;   // bound from our runs (4a1d8ee405f6): heat3d 256^3 on one H200 took 45.44 us per
                           // iteration as a graph of step kernels, the kernel alone 45.28 us (ncu)
  g.load_latency_ns = 260; // our scope run: um_fault_latency "gpuN resident" from the host (a one-thread
                           // pointer chase through the GPU's own memory, a new 2 MiB region per hop, after
                           // prefetching), medians 253-272 ns over the 4 GPUs, median 260 ns. A miss to HBM
                           // (perhaps with a TLB miss): the same run's L2-resident chase (lat_peer_load
                           // gpu0->gpu0, 16384 nodes 4 KiB apart) took 143 ns a hop
  g.l2_latency_ns = 143;   // that L2-resident chase: lat_peer_load gpu0->gpu0 median 0.1435 us a hop
                           // (results/nvidia-h200-x4/2026-11-21_bb9b15c_scope-full/machine_model.json)
  g.gather_GBps = 4614;    // our scope run (results/nvidia-h200-x2/2026-11-22_0d6c3b78f73b_scope-gpu-tests, gpu0):
                           // sm_gather_local, random 4-B loads over 16 MiB (in the L2) move 4614 GB/s of
                           // sectors; rmat:20's segment kernels (ncu, warm caches) ran their gathers at
                           // 4.6 TB/s too (docs/sim.md "Gathers in the L2")
  g.hot_word_ns = 0.71;    // our scope run (results/nvidia-h200/2026-11-22_b52410c42299_scope-hot-word, medians
                           // of 7): lat_hot_word "store, among streaming loads", every one of 2^19 warps
                           // storing: 0.71 ns a request (atomicAdd 0.68). sssp rmat:20's row kernel (ncu,
                           // warm caches) took 0.65-0.72 ns a storing warp where 309-383 K warps stored
  g.fault_us = 40;         // our scope run: um_fault_latency gpu->gpu "fault" medians, 35-45 us,
                           // median 40.0
  g.page_bytes = 64 << 10;
  return g;
}

// Payload rate of a long copy -> the link's raw (wire) rate: raw = payload rate x wire / payload.
double raw_from_payload_GBps(const LinkParams& l, double payload_GBps) {
  const double big = 256.0 * (1 << 20);
  return payload_GBps * wire_bytes_write(l, big) / big;
}

System v100_pcie(LinkKind k, const std::string& name) {
  System s;
  s.name = name;
  s.gpus = 4;  // PROACT dissertation §4.6.1 / §5.4: four V100-like GPUs on PCIe in a tree
  s.gpu = v100();
  s.topology = Topology::switch_tree;
  s.link = default_link(k);
  s.switch_ns = kPcieSwitchNs;
  s.description = std::to_string(s.gpus) + "x V100 behind one PCIe switch, " + link_name(k) +
                  " x16 per GPU (PROACT dissertation ch. IV/V setups)";
  return s;
}

System dgx1() {
  System s;
  s.name = "dgx1";
  s.gpus = 8;
  s.gpu = v100();
  // DGX-1V: 6 NVLink2 links per V100 in a hybrid cube mesh: 2 peers with 2 links (50 GB/s),
  // 2 with 1 link (25 GB/s), 3 peers not directly connected. Approximated as direct all-to-all
  // with 25 GB/s per pair (one link): right for single-link neighbours, pessimistic for the
  // double-link ones, optimistic for the three 2-hop peers.
  s.topology = Topology::direct;
  s.link = default_link(LinkKind::nvlink2);
  s.link.raw_GBps = 25;
  s.egress_GBps = 150;  // the GPU's 6 links x 25 GB/s
  s.description = "8x V100 SXM2, NVLink2 hybrid cube mesh approximated as direct, 25 GB/s/pair";
  return s;
}

System dgx2() {
  System s;
  s.name = "dgx2";
  s.gpus = 16;
  s.gpu = v100();
  s.topology = Topology::nvswitch;
  s.link = default_link(LinkKind::nvlink2);  // 6 links x 25 = 150 GB/s per GPU into NVSwitch
  s.description = "16x V100 SXM3, NVSwitch crossbar, 150 GB/s per GPU per direction";
  return s;
}

System h200x4() {
  System s;
  s.name = "h200x4";
  s.gpus = 4;
  s.gpu = h200();
  // nvidia-smi topo -m: NV18 between every pair, and one pair alone moves 395.75 GB/s, far above
  // what a third of a GPU's 18 links could carry: the GPUs meet in NVSwitches, and a GPU's
  // traffic to and from all its peers shares its port (its 18 links).
  s.topology = Topology::nvswitch;
  s.link = default_link(LinkKind::nvlink4);
  // Our scope run: ce_peer uni, every ordered pair 395.5-396.0 GB/s (median 395.75) at 512 MiB;
  // stored as the wire rate that delivers it: 395.75 x 272/256 = 420.5 GB/s.
  s.link.raw_GBps = raw_from_payload_GBps(s.link, 395.75);
  // Our scope run: lat_peer_load median 0.854 us round trip -> 427 ns one way.
  s.link.latency_ns = 427;
  // results/nvidia-h200-x4/2026-11-21_c74059f_all-to-all/scope.log: every GPU copying to every
  // other at once, per-GPU egress at 256 MiB 236.4 / 236.6 / 236.9 / 292.5 GB/s: median 236.7
  // of payload, as wire rate.
  s.egress_GBps = raw_from_payload_GBps(s.link, 236.7);
  // Our scope run's ce_peer fit (machine_model.json), every ordered pair: time = c + bytes / bw,
  // c of the large-copy segment 2.31-3.24 us, median 2.34 (a 4-B copy took 2.15-2.24 us). The
  // link latency alone (0.43 us) left the memcpy exchange of heat3d 256^3's 256-KiB halo planes
  // under-predicted by 24-33 % (docs/sim.md, 2026-11-22).
  s.copy_fixed_us = 2.34;
  // lat_graph_copy (2026-11-22_c9c3bf0eca72_scope-host-calls), gpu0->gpu1, medians of 9: a copy
  // between kernel nodes of a graph costs 5.5 us even at 4 B, and its bytes go slower than
  // back-to-back copies' (1 MiB: 11.76 us against the stream fit's 4.99).
  s.graph_copy_us = {{4, 5.53}, {65536, 5.69}, {262144, 9.02}, {1048576, 11.76}, {2097152, 16.99}, {4194304, 20.70}};
  // The same run's stream series: a copy right after a kernel on one stream, 4 B to 4 MiB (the
  // back-to-back fit gives 2.34 us + bytes at 395.75 GB/s: 7.6 us at 2 MiB against 14.88).
  s.stream_copy_us = {{4, 6.58}, {65536, 10.63}, {262144, 9.32}, {1048576, 12.80}, {2097152, 14.88}, {4194304, 20.32}};
  s.description = "4x H200 NVLink4 through NVSwitch (measured: 395.75 GB/s a pair alone, a GPU's port; 236.7 GB/s "
                  "per GPU all-to-all egress)";
  return s;
}

bool contains_ci(std::string hay, std::string needle) {
  for (auto& c : hay) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto& c : needle) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return hay.find(needle) != std::string::npos;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_gpu(const std::string& node) { return starts_with(node, "gpu") && node.size() > 3; }

}  // namespace

double System::copy_time_s(int a, int b, double bytes) const {
  if (a < 0 || a >= gpus || b < 0 || b >= gpus)
    throw std::invalid_argument("copy_time_s: GPU " + std::to_string(a < 0 || a >= gpus ? a : b) +
                                " out of range for " + std::to_string(gpus) + " GPUs");
  if (bytes <= 0) return 0;
  if (a == b) return 2 * bytes / (gpu.hbm_GBps * 1e9);
  double lat_ns = link.latency_ns;
  // switch_tree: GPU -> switch -> GPU, two x16 links of the same rate, pipelined (cut-through):
  // one extra hop of latency, the bandwidth of one link. nvswitch: the same shape.
  if (topology != Topology::direct) lat_ns += switch_ns;
  return std::max(lat_ns * 1e-9, copy_fixed_us * 1e-6) + wire_time_s(link, wire_bytes_write(link, bytes));
}

// A measured (bytes, us) copy curve at `bytes`, on the link it was measured on: linear between its
// points, its first point's time below it, and past its last point the extra bytes at the link's
// rate.
static double measured_curve_s(const std::vector<std::pair<double, double>>& t, const LinkParams& measured,
                               double bytes) {
  if (bytes <= t.front().first) return t.front().second * 1e-6;
  for (std::size_t i = 1; i < t.size(); ++i)
    if (bytes <= t[i].first) {
      const double f = (bytes - t[i - 1].first) / (t[i].first - t[i - 1].first);
      return (t[i - 1].second + f * (t[i].second - t[i - 1].second)) * 1e-6;
    }
  return t.back().second * 1e-6 + wire_time_s(measured, wire_bytes_write(measured, bytes - t.back().first));
}

// The curve on `link`, whose bandwidth is `scale` times the measured one: the measured time with
// its bytes' wire time at the measured rate replaced by their wire time at `link`'s, and never
// below the latter. Without this a 1 GB/s sweep point kept the 4xH200 curve's 31 us for a
// 1.65-MB exchange (only bytes past the last measured point scaled).
static double copy_curve_s(const std::vector<std::pair<double, double>>& t, const LinkParams& link, double scale,
                           double bytes, const char* what) {
  if (bytes <= 0) return 0;
  if (t.empty()) throw std::logic_error(std::string(what) + ": no measured copy times");
  if (!(scale > 0)) throw std::logic_error(std::string(what) + ": curve_link_scale must be > 0");
  LinkParams measured = link;
  measured.raw_GBps = link.raw_GBps / scale;
  const double at_measured = measured_curve_s(t, measured, bytes);
  if (scale == 1) return at_measured;
  const double wire = wire_bytes_write(link, bytes);
  const double on_link = wire_time_s(link, wire);
  return std::max(at_measured - wire_time_s(measured, wire) + on_link, on_link);
}

double System::graph_copy_s(double bytes) const {
  return copy_curve_s(graph_copy_us, link, curve_link_scale, bytes, "graph_copy_s");
}
double System::stream_copy_s(double bytes) const {
  return copy_curve_s(stream_copy_us, link, curve_link_scale, bytes, "stream_copy_s");
}

std::vector<std::string> preset_names() {
  return {"v100-pcie3", "v100-pcie4", "v100-pcie5", "v100-pcie6", "dgx1", "dgx2", "h200x4"};
}

System preset(const std::string& name, int gpus) {
  System s;
  if (name == "v100-pcie3") s = v100_pcie(LinkKind::pcie3, name);
  else if (name == "v100-pcie4") s = v100_pcie(LinkKind::pcie4, name);
  else if (name == "v100-pcie5") s = v100_pcie(LinkKind::pcie5, name);
  else if (name == "v100-pcie6") s = v100_pcie(LinkKind::pcie6, name);
  else if (name == "dgx1") s = dgx1();
  else if (name == "dgx2") s = dgx2();
  else if (name == "h200x4") s = h200x4();
  else {
    std::string list;
    for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown system preset '" + name + "' (valid: " + list + ")");
  }
  if (gpus != 0) {
    // 1: the single-GPU baseline every speedup is measured against (no link used).
    if (gpus < 1 || gpus > 16)
      throw std::invalid_argument("system preset " + name + ": gpus must be 1..16, got " +
                                  std::to_string(gpus));
    s.gpus = gpus;
  }
  return s;
}

System from_machine_model(const std::string& path) {
  model::MachineModel m;
  try {
    m = model::load_model(path);
  } catch (const std::exception& e) {
    throw Error("machine model " + path + ": " + e.what());
  }
  std::set<std::string> gpus;
  std::vector<double> peer, copy_c_us;
  for (const auto& p : m.paths) {
    if (is_gpu(p.src)) gpus.insert(p.src);
    if (is_gpu(p.dst)) gpus.insert(p.dst);
    if (p.mechanism == "ce_peer" && p.direction == "uni" && is_gpu(p.src) && is_gpu(p.dst) &&
        p.src != p.dst && p.peak_GBps > 0) {
      peer.push_back(p.peak_GBps);
      if (!p.fit.segments.empty() && p.fit.segments.back().c_s > 0) copy_c_us.push_back(p.fit.segments.back().c_s * 1e6);
    }
  }
  std::vector<double> peer_load_us, fault_us, launch_us, launch_sync_us, resident_us, l2_load_us;
  std::vector<double> hop_peer_us, hop_same_us, phase_wait_us, graph_copy_us, stream_copy_us, hot_word_us;
  HostCallCosts host;  // lat_host_calls, one series per call kind
  for (const auto& l : m.latencies) {
    if (is_gpu(l.src)) gpus.insert(l.src);
    if (is_gpu(l.dst)) gpus.insert(l.dst);
    if (l.name == "lat_peer_load" && l.src != l.dst && is_gpu(l.src) && is_gpu(l.dst))
      peer_load_us.push_back(l.median_us);
    if (l.name == "lat_peer_load" && l.src == l.dst && is_gpu(l.src))
      l2_load_us.push_back(l.median_us);  // a chase through the GPU's own memory that stays in its L2
    if (starts_with(l.name, "um_fault_latency:gpu") && ends_with(l.name, "fault"))
      fault_us.push_back(l.median_us);
    if (starts_with(l.name, "um_fault_latency:gpu") && ends_with(l.name, " resident") && l.src == "host")
      resident_us.push_back(l.median_us);  // a chase through the GPU's own memory: its load latency
    if (starts_with(l.name, "lat_host_calls:")) {
      const std::string k = l.name.substr(15);
      if (starts_with(k, "set device")) host.set_device_us = l.median_us;
      else if (starts_with(k, "launch")) host.launch_us = l.median_us;
      else if (starts_with(k, "event record")) host.record_us = l.median_us;
      else if (starts_with(k, "wait peer event")) host.wait_us = l.median_us;
      else if (starts_with(k, "copy 4 B")) host.copy_us = l.median_us;
      else if (starts_with(k, "memset")) host.memset_us = l.median_us;
    }
    if (starts_with(l.name, "lat_event_hop") && is_gpu(l.src) && is_gpu(l.dst))
      (l.src == l.dst ? hop_same_us : hop_peer_us).push_back(l.median_us);
    if (l.name == "lat_event_hop:host-issued phase wait") phase_wait_us.push_back(l.median_us);
    if (starts_with(l.name, "lat_graph_copy") && contains_ci(l.name, "copy node in a graph"))
      graph_copy_us.push_back(l.median_us);  // its first point: a 4-B copy, the node's fixed time
    if (starts_with(l.name, "lat_graph_copy") && contains_ci(l.name, "copy after a kernel on a stream"))
      stream_copy_us.push_back(l.median_us);  // its 4-B point, as the graph's
    if (starts_with(l.name, "lat_hot_word") && contains_ci(l.name, "store, among streaming loads"))
      hot_word_us.push_back(l.median_us);  // its first point: every warp of the kernel stores
    if (starts_with(l.name, "lat_copy_small") && is_gpu(l.src) && l.dst == "host") host.readback_us = l.median_us;
    if (starts_with(l.name, "lat_launch:") && contains_ci(l.name, "back-to-back"))
      launch_us.push_back(l.median_us);
    if (starts_with(l.name, "lat_launch:") && contains_ci(l.name, "launch+sync"))
      launch_sync_us.push_back(l.median_us);
  }
  if (gpus.size() < 2)
    throw Error("machine model " + path + ": " + std::to_string(gpus.size()) +
                " GPU(s) found; the simulator needs at least 2");
  if (peer.empty())
    throw Error("machine model " + path +
                ": no ce_peer uni path between GPUs (run gpsm scope with -t ce_peer)");
  const double peer_GBps = median(peer);

  // The closest preset by interconnect class: NVLink-class peer bandwidth (>= 100 GB/s) ->
  // h200x4 (direct all-to-all, H200 GPU); else the PCIe generation whose x16 rate covers it.
  System s;
  if (peer_GBps >= 100) {
    s = h200x4();
    s.link.kind = peer_GBps > 250 ? LinkKind::nvlink4
                  : peer_GBps > 120 ? LinkKind::nvlink3 : LinkKind::nvlink2;
    s.egress_GBps = 0;  // the all-to-all egress is not in a machine model: no cap
    // A pair alone above 250 GB/s takes more than 10 of an NVLink4 GPU's 18 links (25 GB/s
    // each), so a second peer could not have direct links as wide: the GPUs meet in NVSwitches
    // and share their port (h200x4's topology). Slower NVLink pairs: one link set per pair.
    if (s.link.kind != LinkKind::nvlink4) s.topology = Topology::direct;
  } else {
    s = v100_pcie(peer_GBps > 40 ? LinkKind::pcie5
                  : peer_GBps > 20 ? LinkKind::pcie4 : LinkKind::pcie3, "v100-pcie");
  }
  if (contains_ci(m.machine, "v100")) s.gpu = v100();
  if (contains_ci(m.machine, "h100") || contains_ci(m.machine, "h200")) s.gpu = h200();
  // The model's own description of its GPUs (models from 2026-11-22 on) overrides the name: the
  // closest preset GPU by generation (Volta: v100, later: h200) for what a model does not measure,
  // then SMs, clock, L2, HBM and gather rates from the model (sim/model_gpu.hpp).
  std::string gpu_what;
  for (const std::string& node : gpus)
    if (const model::GpuInfo* g = m.gpu(node)) {
      s.gpu = g->cc_major <= 7 ? v100() : h200();
      break;
    }
  s.gpu = gpu_from_model(m, gpus, s.gpu, &gpu_what);

  s.gpus = static_cast<int>(gpus.size());
  s.link.raw_GBps = raw_from_payload_GBps(s.link, peer_GBps);
  if (!peer_load_us.empty()) s.link.latency_ns = median(peer_load_us) * 1e3 / 2;  // one way
  s.copy_fixed_us = copy_c_us.empty() ? 0 : median(copy_c_us);  // else the preset's, another machine's
  if (!fault_us.empty()) s.gpu.fault_us = median(fault_us);
  if (!resident_us.empty()) s.gpu.load_latency_ns = median(resident_us) * 1e3;
  if (!l2_load_us.empty()) s.gpu.l2_latency_ns = median(l2_load_us) * 1e3;
  if (!launch_us.empty()) s.gpu.launch_us = median(launch_us);
  if (!launch_sync_us.empty() && !launch_us.empty())
    s.gpu.sync_us = std::max(0.0, median(launch_sync_us) - median(launch_us));
  // The host loop's call costs: all from this model or none (a mix of machines would mislead);
  // without them the preset's estimate per GPU and iteration (issue_us) applies.
  if (host.measured() && host.wait_us > 0 && host.record_us > 0 && host.set_device_us > 0) {
    if (host.readback_us <= 0) host.readback_us = s.gpu.host.readback_us;
    if (host.memset_us <= 0) host.memset_us = host.launch_us;
    s.gpu.host = host;
  } else {
    s.gpu.host = HostCallCosts{};
  }
  // The phase loop's wait as the apps issue it where measured; else the chain's cross-GPU hop
  // over its same-GPU one (an upper bound: every hop of that chain waits a whole signal).
  s.gpu.event_hop_us = !phase_wait_us.empty() ? median(phase_wait_us)
                       : !hop_peer_us.empty() && !hop_same_us.empty()
                           ? std::max(0.0, median(hop_peer_us) - median(hop_same_us)) : 0;
  s.gpu.hot_word_ns = hot_word_us.empty() ? 0 : median(hot_word_us) * 1e3;
  if (!graph_copy_us.empty()) s.graph_copy_us = {{4, median(graph_copy_us)}};
  else s.graph_copy_us.clear();
  if (!stream_copy_us.empty()) s.stream_copy_us = {{4, median(stream_copy_us)}};
  else s.stream_copy_us.clear();
  s.name = "model:" + (m.machine.empty() ? path : m.machine);
  s.description = std::to_string(s.gpus) + " GPUs from " + path + " (" + link_name(s.link.kind) +
                  " class, " + std::to_string(peer_GBps) + " GB/s per pair measured; " +
                  (gpu_what.empty() ? "GPU " + s.gpu.name + " from the closest preset" : "GPU " + gpu_what) +
                  "; the rest from the closest preset)";
  return s;
}

}  // namespace gpsm::sim
