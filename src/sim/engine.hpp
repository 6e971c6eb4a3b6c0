#pragma once
// The simulator: replays a trace on a System under a paradigm and returns what `gpsm bench`
// returns for a real run (time per iteration, link bytes), so both print the same table.
// Plain C++, deterministic (same trace, system and options: same result).
#include <algorithm>
#include <string>
#include <vector>

#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

// Paradigms the simulator models: the bench paradigms plus the hardware proposals.
enum class SimParadigm { memcpy, um, um_hints, rdl, p2p_inline, gps_hw, finepack, proact, infinite };
const char* sim_paradigm_name(SimParadigm p);
std::vector<SimParadigm> parse_sim_paradigms(const std::string& list);  // "all" or comma list

struct SimOptions {
  double gps_page_bytes = 64 << 10;      // GPS subscription granularity (4 KiB / 64 KiB / 2 MiB)
  double write_queue_entries = 64;       // GPS / FinePack remote write queue, 128 B entries per destination
  int finepack_subheader = 5;            // bytes per FinePack sub-transaction header (2..6)
  double proact_chunk_bytes = 1 << 20;   // PROACT chunk size
  double link_scale = 1;                 // multiply every link's bandwidth (sweeps)
  // Iterations of the run the result stands for (0: the trace's). When larger than the trace,
  // the trace's last iteration (the steady state: UM pages settled, queues warm) is taken for the
  // rest, so start-up costs weigh as they would in a run of that length (gpsm bench runs jacobi2d
  // 1000 iterations, the 3D apps 100, and traces hold 10).
  int run_iters = 0;
  // Host-driven iterations without a host read-back run as one CUDA graph of the whole loop, as
  // gpsm bench launches the 3D apps (GPSM_HOST_LOOP=graph): no host issue per iteration, and each
  // kernel starts graph_node_us after its dependencies instead of launch_us. Iterations with a
  // read-back (jacobi2d's norm) stay host-issued either way.
  bool graph_launch = false;
};

// One kernel's time in the model and what set it (gpsm sim --explain): the roofline terms, each
// bytes or flops at their rate, times the partial-wave factor; the serial (march) bound; the
// latency bound, chain (dependent loads) + issue (warp instructions at the issue rate); time_s,
// the largest; bound, its name.
struct KernelBound {
  int gpu = 0;
  std::string name;
  double dram_bytes = 0, l2_bytes = 0, flops = 0;
  double dram_s = 0, l2_s = 0, flops_s = 0;  // before the wave factor
  double wave_factor = 1;
  double serial_s = 0, chain_s = 0;
  double warp_insts = 0, issue_s = 0;  // the kernel's warp instructions (0: not given) and their issue time
  double compute_s = 0;  // the trace's measured compute (KernelTrace::compute_s), after its whole-wave factor
  // The hottest word's warp requests (stores and atomics to one sector) and the time they add on
  // top of the bound (GpuParams::hot_word_ns each)
  double hot_requests = 0, hot_s = 0;
  double time_s = 0;
  // "dram", "l2", "flops", "compute" (the trace's measured compute), "serial", "chain", "issue",
  // "chain+issue", or a rolled loop's
  // (KernelTrace::chain_adds) "dram+chain", "l2+chain", "flops+chain"
  std::string bound;
  // The roofline time: the largest roofline term times the wave factor.
  double roofline_s() const { return std::max(std::max({dram_s, l2_s, flops_s}) * wave_factor, compute_s); }
};

// The last traced iteration's loop (gpsm sim --explain): the slowest GPU (its launches
// included), the host's issue time, the cross-GPU event hop and the read-back charged, and which
// of them set the iteration's time (bound): "gpus", "host" (the host issues slower than the GPUs
// run), "host+gpus" (a read-back: issuing, running and reading back add up), "graph" (one CUDA
// graph: the GPUs alone) or "kernels" (infinite without a host loop).
struct LoopBound {
  std::string bound;
  bool named = false;      // the trace named the loop's calls and they are priced one by one
  double gpus_s = 0, host_s = 0, hop_s = 0, readback_s = 0;  // readback_s: read-backs and the sync
  double time_s = 0;
};

struct SimResult {
  std::vector<KernelBound> kernels;  // the trace's last iteration, in launch order
  LoopBound loop;                    // the trace's last iteration
  double sec_per_iter = 0;
  double link_bytes_per_iter = 0;    // wire bytes over all links (headers included)
  double useful_bytes_per_iter = 0;  // payload the app needed moved
  double compute_s = 0, transfer_s = 0, exposed_transfer_s = 0;  // per iteration, the slowest GPU
  std::string model;                 // one line: what the paradigm model assumed
};

SimResult simulate(const Trace& t, const System& s, SimParadigm p, const SimOptions& o);

// The trace layout a paradigm replays (TraceRequest::layout): "grid" for um and um_hints (one
// managed grid), "replicas" for gps_hw and finepack (GPS replicas), "remote" for rdl (halos loaded
// by the consumer), "slabs" for the others.
const char* sim_trace_layout(SimParadigm p);

// What the engine asks of the links, so that it can be tested with hand-made numbers. The
// default (default_link_model(), engine_link.cpp) calls link.hpp and System::copy_time_s.
struct LinkModel {
  virtual ~LinkModel() = default;
  virtual double write_wire(const LinkParams& l, double payload) const = 0;  // wire_bytes_write
  virtual double read_wire(const LinkParams& l, double payload) const = 0;   // wire_bytes_read
  virtual double finepack_wire(const LinkParams& l, double runs, double payload, int subheader) const = 0;
  virtual double wire_time(const LinkParams& l, double wire) const = 0;      // wire_time_s
  virtual double copy_time(const System& s, int a, int b, double bytes) const = 0;  // System::copy_time_s
};
const LinkModel& default_link_model();
// simulate() is simulate_with(..., default_link_model()).
SimResult simulate_with(const Trace& t, const System& s, SimParadigm p, const SimOptions& o, const LinkModel& lm);

}  // namespace gpsm::sim
