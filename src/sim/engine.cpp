// The simulator's engine: replays a trace on a System under one paradigm (docs/sim.md "Engine").
// This file is the driver: iterations, kernels, blocks and access runs in trace order, the link
// and host-loop time every paradigm shares; what a paradigm does differently is its model's
// (sim/paradigm.hpp), a kernel's local time the cost model's (sim/kernel_cost.hpp).
// Plain C++, deterministic (no randomness, no unordered iteration), arithmetic per access run:
// only the remote write queue (gps_hw, finepack) and the UM page table work per 128-B line or
// per page, never per operation of a contiguous run.
#include "sim/engine.hpp"

#include <algorithm>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/paradigm.hpp"

namespace gpsm::sim {

const char* sim_paradigm_name(SimParadigm p) {
  switch (p) {
    case SimParadigm::memcpy: return "memcpy";
    case SimParadigm::um: return "um";
    case SimParadigm::um_hints: return "um_hints";
    case SimParadigm::rdl: return "rdl";
    case SimParadigm::p2p_inline: return "p2p_inline";
    case SimParadigm::gps_hw: return "gps_hw";
    case SimParadigm::finepack: return "finepack";
    case SimParadigm::proact: return "proact";
    case SimParadigm::infinite: return "infinite";
  }
  return "?";
}

namespace {
constexpr SimParadigm kAll[] = {SimParadigm::memcpy,     SimParadigm::um,     SimParadigm::um_hints,
                                SimParadigm::rdl,        SimParadigm::p2p_inline, SimParadigm::gps_hw,
                                SimParadigm::finepack,   SimParadigm::proact, SimParadigm::infinite};
}  // namespace

std::vector<SimParadigm> parse_sim_paradigms(const std::string& list) {
  std::vector<bool> on(std::size(kAll), false);
  std::stringstream ss(list);
  bool any = false;
  for (std::string x; std::getline(ss, x, ',');) {
    if (x.empty()) continue;
    any = true;
    if (x == "all") {
      std::fill(on.begin(), on.end(), true);
      continue;
    }
    bool found = false;
    for (std::size_t i = 0; i < std::size(kAll); ++i)
      if (x == sim_paradigm_name(kAll[i])) on[i] = found = true;
    if (!found) {
      std::string names;
      for (SimParadigm p : kAll) names += std::string(names.empty() ? "" : ", ") + sim_paradigm_name(p);
      throw std::invalid_argument("unknown paradigm '" + x + "' (gpsm sim knows: all, " + names + ")");
    }
  }
  if (!any) throw std::invalid_argument("--paradigm is empty");
  std::vector<SimParadigm> out;
  for (std::size_t i = 0; i < std::size(kAll); ++i)
    if (on[i]) out.push_back(kAll[i]);
  return out;
}

const char* sim_trace_layout(SimParadigm p) {
  switch (p) {
    case SimParadigm::um:
    case SimParadigm::um_hints: return "grid";
    case SimParadigm::gps_hw:
    case SimParadigm::finepack: return "replicas";
    case SimParadigm::rdl: return "remote";
    default: return "slabs";
  }
}

namespace {

using namespace engine_detail;

// The run's sums over the traced iterations, and the last iteration's (run_iters extrapolates it).
struct Totals {
  double time = 0, wire = 0, useful = 0;
  double last_time = 0, last_wire = 0, last_useful = 0;
  double compute = 0, transfer = 0, exposed = 0;  // the slowest GPU's, per iteration
  std::vector<KernelBound> kernels;               // the last iteration's, in launch order
  LoopBound loop;                                 // the last iteration's
};

class Engine {
 public:
  Engine(const Trace& t, const System& s, SimParadigm p, const SimOptions& o, const LinkModel& lm)
      : c_(t, s, o, lm), model_(make_paradigm_model(p, c_)) {}
  SimResult run();

 private:
  IterPass begin_iteration(const IterationTrace& it, double start_s);
  void run_kernel(const KernelTrace& k, IterPass& ip, std::vector<KernelBound>& kernels);
  void end_iteration(const IterationTrace& it, IterPass& ip, Totals& tot);
  void link_times(IterPass& ip) const;
  LoopBound host_loop(const IterationTrace& it, const IterPass& ip, int slow) const;
  SimResult result(Totals tot) const;

  RunCtx c_;
  std::unique_ptr<ParadigmModel> model_;
};

SimResult Engine::run() {
  const Trace& t = c_.t;
  if (t.gpus < 1) throw std::invalid_argument("trace has no GPUs");
  if (t.iterations.empty()) throw std::invalid_argument("trace has no iterations");
  model_->setup();
  Totals tot;
  for (const IterationTrace& it : t.iterations) {
    IterPass ip = begin_iteration(it, tot.time);
    tot.kernels.clear();
    for (const KernelTrace& k : it.kernels) run_kernel(k, ip, tot.kernels);
    end_iteration(it, ip, tot);
  }
  return result(std::move(tot));
}

IterPass Engine::begin_iteration(const IterationTrace& it, double start_s) {
  const GpuParams& gp = c_.sys.gpu;
  IterPass ip(c_.G);
  ip.start_s = start_s;
  // The loop's calls are named (trace version 7) and priced (GpuParams::host measured).
  ip.named = it.host_named && gp.host.measured();
  // A named loop is the app's own, host-issued (the graph apps' bench loop has no graph mode):
  // --host-loop graph does not apply to it.
  ip.graph = c_.o.graph_launch && !it.host_sync && !ip.named;
  // The transfers-elided bound has no host in the loop unless the trace names its loop's calls:
  // the bench's graph apps run infinite in the same host loop as every other paradigm.
  const bool hosted = !model_->transfers_elided() || ip.named;
  const double launch = hosted ? gp.launch_us * 1e-6 : 0, graph_node = hosted ? gp.graph_node_us * 1e-6 : 0;
  ip.launch_s = ip.graph ? graph_node : launch;
  model_->on_iteration_begin();
  return ip;
}

void Engine::run_kernel(const KernelTrace& k, IterPass& ip, std::vector<KernelBound>& kernels) {
  const int g = k.gpu;
  if (g < 0 || g >= c_.G) throw std::invalid_argument("trace kernel '" + k.name + "' names GPU " + std::to_string(g));
  KernelPass kp(c_, ip, k);
  for (const BlockTrace& b : k.blocks) {
    kp.begin_block(b);
    for (const AccessRun& r : b.runs) {
      const Access x = kp.access_of(r);
      kp.count_request(x);
      model_->on_access(kp, x);
    }
    kp.end_block();
  }
  // The kernel's end: its launch is counted before the model's hook and its time after, so the
  // hook sees when the kernel started (um: launches + kern, where its faults happen).
  KernelBound bound = kp.bound(model_->push_insts());
  const double tk = bound.time_s;
  kernels.push_back(std::move(bound));
  kp.march_read_wait();
  ip.launches[g] += ip.launch_s;
  ++ip.kernels_on[g];
  model_->on_kernel_end(kp, tk);
  ip.kern[g] += tk;
}

void Engine::end_iteration(const IterationTrace& it, IterPass& ip, Totals& tot) {
  model_->on_iteration_transfers(ip);
  link_times(ip);
  model_->iteration_times(ip);
  int slow = 0;
  for (int g = 1; g < c_.G; ++g)
    if (ip.gpu_t[g] > ip.gpu_t[slow]) slow = g;
  tot.loop = host_loop(it, ip, slow);
  tot.last_time = tot.loop.time_s;
  tot.time += tot.last_time;
  tot.last_wire = ip.wire;
  tot.last_useful = ip.useful;
  tot.wire += ip.wire;
  tot.useful += ip.useful;
  tot.compute += ip.kern[slow];
  tot.transfer += ip.xfer[slow];
  tot.exposed += std::max(0.0, ip.gpu_t[slow] - ip.launches[slow] - ip.kern[slow]);
}

// Each GPU's link time of the iteration (IterPass::link_t) and the wire bytes so far (the links'
// and the copies' outside them).
void Engine::link_times(IterPass& ip) const {
  const LinkParams& L = c_.sys.link;
  const LinkModel& lm = c_.lm;
  const int G = c_.G;
  for (int g = 0; g < G; ++g) {
    double out = 0, in = 0, pair = 0;
    for (int d = 0; d < G; ++d) {
      out += ip.W[g][d];
      in += ip.W[d][g];
      pair = std::max({pair, lm.wire_time(L, ip.W[g][d]), lm.wire_time(L, ip.W[d][g])});
    }
    // A direct-topology GPU's SM stores into its peers also share its egress: their payload,
    // packed as the copies' large packets, at the measured all-to-all egress (egress_GBps: wire
    // bytes of large packets). Stores to consecutive addresses from consecutive warps reach the
    // fabric combined: 4xH200, road:5120 pagerank p2p_inline put 78.6 MB per GPU on the links in
    // 319.6 us, >= 246 GB/s of payload, which 32-B packets at their wire overhead could not
    // carry (that cap gave 469 us), while the payload at the copies' egress gives 332 us.
    // A switched GPU (switch_tree, nvswitch) sends and receives everything through its one
    // port: on 4xH200 (NV18 between every pair: NVSwitch), pagerank and sssp rmat:20's remote
    // loads on 4 GPUs (193 MB of wire into each GPU from its 3 peers) took 527.5 / 580.5 us,
    // near the 4-GPU bytes at one port's rate (492.4 / 583.2 us), not at three pairs' (a
    // per-pair bound gave 183.7 / 274.5 us); on 2 GPUs both bounds agree (646.3 / 686.5 us
    // against 639.3 / 655.8).
    double t = c_.sys.topology == Topology::direct ? pair : lm.wire_time(L, std::max(out, in));
    if (ip.stored[g] > 0) t = std::max(t, c_.egress_seconds(lm.write_wire(L, ip.stored[g])));
    ip.link_t[g] = t;
  }
  ip.wire = ip.copy_wire;
  for (int a = 0; a < G; ++a)
    for (int b = 0; b < G; ++b) ip.wire += ip.W[a][b];
}

// One host thread issues every GPU's work of the iteration. Where the host reads a result back
// (host_sync: jacobi2d's norm, sssp's flag) it waits for it, so issuing, executing and the
// read-back add up; otherwise it issues ahead and the slower of the two bounds the loop.
// The host's issue: a named loop's calls priced one by one (docs/sim.md "Host loop"), its GPUs
// lengthened by the wait for the other GPUs' events (event_hop_us), and its multi-GPU infinite run
// is the bench's elided bound (the reference's iterations, each with its read-back); else issue_us
// per GPU. A CUDA
// graph without a read-back issues itself; infinite without a named loop has no host.
LoopBound Engine::host_loop(const IterationTrace& it, const IterPass& ip, int slow) const {
  const GpuParams& gp = c_.sys.gpu;
  const int G = c_.G;
  const double sync = gp.sync_us * 1e-6;
  const bool elided = model_->transfers_elided();
  LoopBound loop;
  loop.named = ip.named;
  loop.gpus_s = ip.gpu_t[slow];
  bool issued = false, reads_back = false;
  if (ip.named) {
    const HostCallCosts& hc = gp.host;
    const int waits = G > 1 ? it.peer_waits : 0;
    double issue_us = 0;
    for (int g = 0; g < G; ++g) {
      const int copies = model_->host_copies(g);
      // the memsets are among the GPU's traced kernels (their bytes), but the host enqueues them as memsets
      const int memsets = std::min<int>(it.memsets, ip.kernels_on[g]);
      issue_us += hc.set_device_us + (ip.kernels_on[g] - memsets) * hc.launch_us + memsets * hc.memset_us +
                  waits * hc.wait_us + (waits > 0 ? hc.record_us : 0) + copies * hc.copy_us;
    }
    issued = true;
    // The elided bound reads back too: the bench's graph apps run it for the reference's
    // iterations with the same per-iteration change read-back (its answer ignored), so the bound
    // does each iteration's work, host sync included.
    reads_back = it.host_sync;
    loop.host_s = issue_us * 1e-6;
    if (reads_back) loop.readback_s = sync + G * hc.readback_us * 1e-6;
    else if (waits > 0) loop.hop_s = gp.event_hop_us * 1e-6;
  } else if (!elided && (it.host_sync || !c_.o.graph_launch)) {
    issued = true;
    reads_back = it.host_sync;
    loop.host_s = G * gp.issue_us * 1e-6;
    if (reads_back) loop.readback_s = G * gp.readback_us * 1e-6 + sync;
  }
  if (reads_back) {
    loop.time_s = loop.host_s + loop.gpus_s + loop.readback_s;
    loop.bound = "host+gpus";
  } else if (issued) {
    loop.time_s = std::max(loop.gpus_s + loop.hop_s, loop.host_s);
    loop.bound = loop.gpus_s + loop.hop_s >= loop.host_s ? "gpus" : "host";
  } else {
    loop.time_s = loop.gpus_s;
    loop.bound = !elided ? "graph" : "kernels";
  }
  return loop;
}

SimResult Engine::result(Totals tot) const {
  const double n = double(c_.t.iterations.size());
  const double runs = std::max(n, double(c_.o.run_iters));
  SimResult r;
  r.kernels = std::move(tot.kernels);
  r.loop = tot.loop;
  r.sec_per_iter = (tot.time + (runs - n) * tot.last_time) / runs;
  r.link_bytes_per_iter = (tot.wire + (runs - n) * tot.last_wire) / runs;
  r.useful_bytes_per_iter = (tot.useful + (runs - n) * tot.last_useful) / runs;
  r.compute_s = tot.compute / n;
  r.transfer_s = tot.transfer / n;
  r.exposed_transfer_s = tot.exposed / n;
  r.model = model_->describe();
  return r;
}

}  // namespace

SimResult simulate_with(const Trace& t, const System& s, SimParadigm p, const SimOptions& o, const LinkModel& lm) {
  Engine e(t, s, p, o, lm);
  return e.run();
}

}  // namespace gpsm::sim
