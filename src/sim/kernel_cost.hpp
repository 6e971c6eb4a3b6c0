#pragma once
// A kernel's time in the simulator (docs/sim.md "Local time of a kernel"): what its blocks moved
// through the GPU's own memory system (LocalAcc, filled by the engine's driver and the paradigm
// models), and from it the roofline, serial, chain, issue and hot-word bounds (kernel_bound).
// The same for every paradigm: a paradigm changes only which accesses are local.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"  // KernelBound
#include "sim/engine_access.hpp"
#include "sim/march.hpp"
#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim::engine_detail {

// What one kernel moved through the GPU's own memory system.
struct LocalAcc {
  double load = 0, store = 0;   // bytes through L2 (weighted)
  double gather = 0;            // of `load`, the lone sectors (a warp's load that touched one 32-B sector)
  double dram_extra = 0;        // scattered loads: a 32-B sector each (no L2 reuse assumed)
  double store_dram = 0;
  double flops = 0;
  double weight = 0, recorded = 0;  // sum of block weights, blocks recorded
  double steps = 0;                 // weighted serial steps of the blocks (marching kernels)
  ByteRanges intervals;             // contiguous loads (recorded)
  // L1 reuse of a marching block (docs/sim.md "L2 hit model"): its loads after its L1, each distinct
  // byte of the block's loads once (l1_load, weighted); `block` collects the current block's.
  double l1_load = 0;
  ByteRanges block;

  void add_load(const Span& s, double w) {
    load += s.payload() * w;
    // A lone sector: a gather (the graph kernels' x[col] on rmat), which the L2 serves at its
    // random-sector rate (GpuParams::gather_GBps), not at the rate of line-sized requests.
    if (s.contiguous() && s.hi - s.lo == std::uint64_t(kSector) && s.lo % std::uint64_t(kSector) == 0)
      gather += s.payload() * w;
    // A run whose operations are at most a sector apart touches every sector of its span (a
    // float4 row's west/east scalars at stride 16 read the lines its centre loads read): it
    // joins the footprint. Only sparser runs pay a sector per operation.
    if (s.contiguous() || (s.stride > 0 && double(s.stride) <= kSector)) {
      add_range(intervals, s.lo, s.hi);
      add_range(block, s.lo, s.hi);
    } else {
      dram_extra += (s.stride == 0 ? double(s.bytes) : double(s.count) * std::max<double>(s.bytes, kSector)) * w;
      l1_load += s.payload() * w;  // scattered: no reuse assumed in L1 either
    }
  }
  void add_store(const Span& s, double w) {
    store += s.payload() * w;
    // a lone store narrower than a sector (a scattered store the recorder could not pair) moves a
    // sector, as each operation of a scattered run does
    const bool scattered = (!s.contiguous() && s.stride != 0) || (s.count == 1 && double(s.bytes) < kSector);
    store_dram += (scattered ? double(s.count) * std::max<double>(s.bytes, kSector) : s.payload()) * w;
  }
  void end_block(double w, std::uint32_t serial_steps) {
    l1_load += distinct_bytes(block) * w;
    block.clear();
    steps += double(serial_steps) * w;
  }
  // Distinct bytes of the contiguous loads: every re-read within the kernel hits L2.
  double footprint() { return distinct_bytes(intervals); }
};

// How a kernel's blocks run: its grid, the blocks resident at once (its wave) and whether they
// march (serial_steps).
struct KernelShape {
  double grid = 0, wave = 0;
  bool marching = false;
};

// A measured compute's waves (KernelTrace::compute_s): a block takes as long whether its SM holds
// it alone or a full complement, so a kernel takes whole waves of `wave` blocks, ceil(blocks /
// wave) x wave / blocks of its full-occupancy time (measured on the CT projectors: 114 forward
// blocks on an H200's 132 SMs took about as long as 228, docs/ct.md "The first 2xH200 run"). 1 for
// wave <= 0. The CT trace calibrates its compute through it (sim/trace_ct.cpp).
double whole_wave_factor(double blocks, double wave);

// The kernel's time and what set it (KernelBound::time_s, bound). requests: warp store and
// atomic requests per allocation of the kernel's GPU (the hot word); push_insts: p2p_inline, whose
// blocks issue their pushes' instructions too (BlockTrace::push_insts). Finishes `acc` (its
// footprint sorts the ranges it holds).
KernelBound kernel_bound(const KernelTrace& k, LocalAcc& acc, const std::vector<double>& requests,
                         const std::vector<Allocation>& allocs, const GpuParams& gp, const KernelShape& shape,
                         bool push_insts);

}  // namespace gpsm::sim::engine_detail
