#pragma once
// gpsm sim traces: what each thread block of each kernel of each GPU touched, per iteration, in
// a compact form a simulator can replay quickly. Plain C++ (no CUDA). Binary format: docs/sim.md.
//
// An access is recorded as a run: `count` operations of `bytes` each (4, 8 or 16: a float, a
// double, a float4), the i-th at addr + i * stride. A warp's 32 consecutive float loads are one
// run of 32 x 4 B at stride 4; a row of a 2D grid loaded by a block is one run. Addresses live in
// one global virtual space: every allocation (a GPU's slab, a replicated GPS array's replica, a
// managed grid) has a range, and an allocation names the GPU whose memory holds it, so a run on
// GPU g whose address falls in another GPU's allocation is a remote access (P2P load/store).
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::sim {

enum class Op : std::uint8_t { load = 0, store = 1, atomic = 2 };

struct AccessRun {
  Op op = Op::load;
  std::uint8_t bytes = 4;     // per operation: 4, 8 or 16
  std::uint32_t count = 1;    // operations
  std::uint64_t addr = 0;     // first operation's address
  std::int64_t stride = 4;    // bytes between consecutive operations (0: the same address)
};

// Where an address range lives. kind: plain device memory of `gpu`, managed (UM: `gpu` is where
// the pages start), or a GPS replicated array (`gpu` = this replica's GPU; `group` ties the
// replicas of one array together, all replicas have the same size and layout).
enum class MemKind : std::uint8_t { device = 0, managed = 1, replica = 2 };
struct Allocation {
  std::string name;
  MemKind kind = MemKind::device;
  int gpu = 0;
  int group = -1;
  std::uint64_t base = 0, bytes = 0;
};

struct BlockTrace {
  std::uint32_t block = 0;      // block index in its kernel
  double weight = 1;            // sampling: this block stands for `weight` blocks (1: not sampled)
  double flops = 0;             // arithmetic the block did (the compute cost)
  // Dependent memory steps the block takes one after another: a marching block's planes, the
  // register queue's priming included (each step's loads wait for the step before). 0: not given.
  std::uint32_t serial_steps = 0;
  // Dependent loads of the block's longest thread: loads each of which waits for the one before
  // (a gather kernel's row_ptr, then per edge iteration col[e] and the x[col] it names). The
  // kernel takes at least its blocks' chains x the GPU's load latency (docs/sim.md "Chain
  // bound"). 0: not given (the kernel is not latency-bound; traces before version 4).
  std::uint32_t chain_steps = 0;
  // Of those, the gathers (x[col], inv_deg[col]: a load at an address another load named, into
  // the kernel's gathered arrays, KernelTrace::gather_bytes): they hit the L2 as often as those
  // arrays fit it (docs/sim.md "Chain bound"); the other steps (row_ptr, col[e], the old value,
  // the partials: streamed or just written) take the HBM latency. <= chain_steps; 0: none
  // given (every step an HBM miss; traces before version 5).
  std::uint32_t gather_steps = 0;
  // Warp instructions the block's warps issue, together (docs/sim.md "Issue bound"): the kernel as
  // single, memcpy, infinite, um, rdl and gps_hw run it (warp_insts), and p2p_inline's variant,
  // which stores each result into every GPU's copy (push_insts). 0: not given (the kernel's time
  // has no issue term; traces before version 6, the stencils, scatter).
  std::uint32_t warp_insts = 0, push_insts = 0;
  std::vector<AccessRun> runs;
};

struct KernelTrace {
  std::string name;
  int gpu = 0;
  std::uint32_t grid_blocks = 0;       // blocks launched (blocks.size() may be fewer: sampled)
  std::uint32_t threads_per_block = 256;
  std::uint32_t blocks_per_sm = 0;     // blocks of this kernel an SM holds at once (its registers); 0: the GPU's default
  std::uint64_t gather_bytes = 0;      // distinct bytes of the arrays its gathers (BlockTrace::gather_steps)
                                       // read on this GPU (pagerank: x and inv_deg); 0: none given
  // 1: its blocks' chains (BlockTrace::chain_steps) are the rounds of a loop the compiler left
  // rolled (jacobi2d's scalar whole-grid sweep): each iteration's loads issue only after the
  // iteration before has its data, so every round's load latency adds to the time the kernel's
  // bytes take (docs/sim.md "Rolled loops"); 0: the chain bound competes with the roofline (max)
  std::uint8_t chain_adds = 0;
  // Seconds the kernel's arithmetic takes at full occupancy on the GPU its time was measured on,
  // for kernels whose time comes from a measurement rather than from counted flops (the CT
  // projectors, sim/trace_ct.hpp): a roofline term beside DRAM, L2 and flops, taken in whole
  // waves of blocks (docs/sim.md "Local time of a kernel", "Measured compute"). Not rescaled to
  // the simulated GPU. 0: none (every other trace; files before version 9).
  double compute_s = 0;
  std::vector<BlockTrace> blocks;
};

// One iteration: the kernels each GPU runs (in order), then a synchronization point.
// host_sync: a host-driven run reads a result of this iteration back (jacobi2d's norm, every
// nccheck iterations) and waits for it before it issues the next iteration, so issuing and
// executing do not overlap there.
struct IterationTrace {
  bool host_sync = false;
  // The app's host loop, named call by call (version 7; the graph apps, sim/trace_graph.cpp):
  // per GPU and iteration, a set device, `peer_waits` stream waits on other GPUs' events of the
  // last iteration (then one event record) and its kernels' launches, of which the first
  // `memsets` are small cudaMemsetAsync calls, traced as kernels for their bytes (sssp's
  // sssp_clear_changed). The engine prices them with GpuParams::host and charges
  // event_hop_us where peer_waits > 0 (docs/sim.md "Host loop"). Not named (host_named false: the
  // stencils, scatter, every file before version 7): the estimate issue_us per GPU applies.
  bool host_named = false;
  std::uint8_t peer_waits = 0;
  std::uint8_t memsets = 0;
  std::vector<KernelTrace> kernels;
};

struct Trace {
  std::string app;       // jacobi2d, heat3d, wave3d, scatter, pagerank, sssp, ct
  std::string problem;   // e.g. "4096x4096"
  int gpus = 1;
  std::string layout;    // "slabs" (per-GPU boxes with halos), "remote" (3D rdl: boxes, halos
                         // loaded from the neighbours), "grid" (one managed grid: um),
                         // "replicas" (a whole-grid GPS replica per GPU: gps_hw, finepack)
  std::vector<Allocation> allocations;
  std::vector<IterationTrace> iterations;
  std::uint64_t total_runs() const;
};

// Which allocation holds `addr` (index into t.allocations), or -1.
int allocation_of(const Trace& t, std::uint64_t addr);

// Binary file (magic "GPSMTRC", version 9; reads 2 to 9; docs/sim.md). Throws gpsm::Error naming the file and
// what is wrong on a malformed or truncated file.
void write_trace(const Trace& t, const std::string& path);
Trace read_trace(const std::string& path);

}  // namespace gpsm::sim
