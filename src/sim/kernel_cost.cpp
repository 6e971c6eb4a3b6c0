// The kernel cost model of the simulator (sim/kernel_cost.hpp): the roofline, its partial-wave
// factor, the serial (march), chain, issue and hot-word bounds, and which of them sets the time.
#include "sim/kernel_cost.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace gpsm::sim::engine_detail {

double whole_wave_factor(double blocks, double wave) {
  if (blocks <= 0 || wave <= 0) return 1;
  return std::ceil(blocks / wave) * wave / blocks;
}

namespace {

constexpr double kSaturatingOccupancy = 0.5;  // fraction of a full wave that saturates HBM

// Waves of thread blocks: the fraction of the roofline time a kernel of `blocks` blocks takes
// per block, relative to full waves (a last or only wave of fewer than kSaturatingOccupancy of
// a wave's blocks runs at that fraction of the bandwidth).
double wave_factor(double blocks, double wave) {
  if (blocks <= 0 || wave <= 0) return 1;  // wave 0: no partial-wave factor (marching kernels)
  const double full = std::floor(blocks / wave), rem = blocks - full * wave;
  return (full * wave + (rem > 0 ? std::max(rem, kSaturatingOccupancy * wave) : 0)) / blocks;
}

// A kernel's bytes: `dram` through HBM, `l2` through L2 (after L1 for a marching kernel).
struct KernelBytes {
  double dram = 0, l2 = 0;
  double l2_gather = 0;  // of l2, the lone sectors (not for marching kernels: their L2 bytes are their L1's misses)
};
KernelBytes kernel_bytes(LocalAcc& a, bool marching) {
  const double scale = a.recorded > 0 ? a.weight / a.recorded : 1;  // sampled blocks' footprint
  KernelBytes b;
  b.dram = a.footprint() * scale + a.dram_extra + a.store_dram;
  // A marching block's neighbour rows along the other axis and its x edges are other warps' and
  // lanes' centres of the same plane, loaded by the block a step before: they come from L1, so
  // its L2 traffic is its distinct bytes (wave3d 256^3: 537 MB through L2 at 7 TB/s, 76 us, where
  // the step ran at its DRAM bound, 55 us; docs/sim.md 2026-11-22). Other kernels: every load.
  b.l2 = (marching ? a.l1_load : a.load) + a.store;
  b.l2_gather = marching ? 0 : a.gather;
  return b;
}

// The roofline terms of a kernel, each before the wave factor; seconds() is the kernel's roofline time.
// compute_s: the kernel's measured arithmetic (KernelTrace::compute_s) after its whole-wave
// factor (whole_wave_factor), beside the other terms after theirs.
struct Roofline {
  double dram_s = 0, l2_s = 0, flops_s = 0, factor = 1, compute_s = 0;
  double seconds() const { return std::max(std::max({dram_s, l2_s, flops_s}) * factor, compute_s); }
};
Roofline roofline(const LocalAcc& a, const KernelBytes& b, const GpuParams& gp, double grid_blocks, double wave,
                  double compute_s) {
  // The L2 term: line-sized requests at l2_GBps, lone sectors at gather_GBps (0: l2_GBps)
  const double gather_GBps = gp.gather_GBps > 0 ? gp.gather_GBps : gp.l2_GBps;
  const double l2_s = (b.l2 - b.l2_gather) / (gp.l2_GBps * 1e9) + b.l2_gather / (gather_GBps * 1e9);
  return Roofline{b.dram / (gp.hbm_GBps * 1e9), l2_s, a.flops / (gp.flops_G * 1e9), wave_factor(grid_blocks, wave),
                  compute_s * whole_wave_factor(grid_blocks, wave)};
}

// The requests a kernel's hottest word takes (docs/sim.md "Hot words"): per allocation, its warp
// store and atomic requests over its 32-B sectors (a one-word flag takes them all; a large array's
// requests spread over its sectors and come to a few each).
double hot_word_requests(const std::vector<Allocation>& allocs, const std::vector<double>& requests) {
  double hot = 0;
  for (std::size_t i = 0; i < allocs.size(); ++i)
    if (requests[i] > 0)
      hot = std::max(hot, requests[i] / std::max<double>(1, std::ceil(double(allocs[i].bytes) / kSector)));
  return hot;
}

// One march step (docs/sim.md "Serial bound"): serial_step_us when the GPU gives one (> 0), else
// derived from the residency (march_step_seconds), so that it follows the plan's blocks per SM
// without a fit: the blocks resident at once (the kernel's wave, or its grid if smaller) share
// the HBM, each moving per step the bytes a block asks of the memory system beyond its L1 (its
// distinct loads and its stores, over its steps, priming included). heat3d's step: 8.0-8.8 KB
// per step from the trace, the estimate's 8 KiB (a plane loaded, one stored) that replaced the
// 1.18 us fitted on the 4-blocks-per-SM step. The kernel's DRAM bytes per step instead (its L2
// footprint: a chunk's priming planes, which the chunk below also loads, count once) gave heat3d
// 6.3-7.6 KB and missed its 2- and 4-GPU runs by 19-33 %.
double step_seconds(const LocalAcc& a, const KernelBytes& b, const GpuParams& gp, double grid_blocks, double wave) {
  if (gp.serial_step_us > 0) return gp.serial_step_us * 1e-6;
  if (!(a.steps > 0)) return 0;
  // What the march asks beyond L1 (b.l2) comes from HBM for the kernel's DRAM bytes and from the
  // L2 for the rest (a chunk's priming planes, which the chunk below loaded): each at its rate.
  const double resident = std::min(grid_blocks, wave), dram = std::min(b.dram, b.l2);
  return march_step_seconds(resident, dram / a.steps, gp.hbm_GBps) +
         march_step_seconds(resident, (b.l2 - dram) / a.steps, gp.l2_GBps);
}

// The latency bound of a kernel whose blocks march (serial_steps): block b runs in slot
// b % wave after the blocks before it in that slot, so a slot's time is the sum of its blocks'
// steps x the step time, and the kernel takes at least its busiest slot. A sampled kernel (not
// every block recorded) takes the mean recorded block's steps times the blocks per slot, or its
// longest recorded block if that is more (thin edge items and long interior items share slots).
double serial_seconds(const KernelTrace& k, double step_s, double wave) {
  if (!(step_s > 0) || k.blocks.empty() || wave < 1) return 0;
  const auto slots = static_cast<std::size_t>(wave);
  double worst = 0;
  if (k.blocks.size() >= k.grid_blocks) {
    std::vector<double> slot(slots, 0.0);
    for (const BlockTrace& b : k.blocks) slot[b.block % slots] += b.serial_steps;
    for (double v : slot) worst = std::max(worst, v);
  } else {  // sampled: the mean block's steps times the blocks per slot, at least the longest block
    double longest = 0, sum = 0, weight = 0;
    for (const BlockTrace& b : k.blocks) {
      longest = std::max(longest, double(b.serial_steps));
      sum += double(b.serial_steps) * b.weight;
      weight += b.weight;
    }
    worst = std::max(longest, weight > 0 ? sum / weight * double(k.grid_blocks) / wave : 0.0);
  }
  return worst * step_s;
}

// The chain bound of a kernel whose threads load in dependent chains (chain_steps: a gather
// kernel's row_ptr, col[e], x[col], ...; docs/sim.md "Chain bound"): a block holds its slot until
// its longest thread has waited its chain load latencies one after another, and the block
// scheduler hands a free slot the next block, so the kernel takes at least the longest block's
// chain and at least its blocks' chains spread evenly over the `wave` slots (the list-scheduling
// lower bound: sum of chains / slots). Sampled kernels: the recorded blocks stand for `weight`
// blocks each. 0 when no block gives a chain or the HBM latency is 0.
// A step's latency: the gathers (gather_steps) hit the L2 with probability
// hit = min(1, l2_bytes / gather_bytes) and take hit x l2 + (1 - hit) x hbm; the other steps
// (row_ptr, col[e]: streamed, each line read once; the old value, the partials) take the HBM
// latency. The hit fraction is what an L2 of C bytes gives references spread uniformly over F
// bytes (it holds C / F of them at any time; LRU under independent uniform references hits C / F
// exactly), so it is 1 where the gathered arrays fit and falls continuously past it; skewed
// (power-law) gathers hit more than that, so beyond the L2 this leans to the HBM latency. The
// streamed col lines pass through the L2 too, but each once: between two gathers of one x line
// far fewer of them arrive than the L2 holds, so they are left out of the footprint.
// l2_latency_s <= 0 or l2_bytes <= 0 or gather_bytes 0: every step the HBM latency.
double chain_seconds(const KernelTrace& k, double latency_s, double wave, double l2_latency_s, double l2_bytes) {
  if (!(latency_s > 0) || k.blocks.empty() || wave < 1) return 0;
  double gather_s = latency_s;
  if (l2_latency_s > 0 && l2_bytes > 0 && k.gather_bytes > 0) {
    const double hit = std::min(1.0, l2_bytes / double(k.gather_bytes));
    gather_s = hit * l2_latency_s + (1 - hit) * latency_s;
  }
  double longest = 0, sum = 0;
  for (const BlockTrace& b : k.blocks) {
    const std::uint32_t g = std::min(b.gather_steps, b.chain_steps);
    const double c = double(b.chain_steps - g) * latency_s + double(g) * gather_s;
    longest = std::max(longest, c);
    sum += c * b.weight;
  }
  return std::max(longest, sum / wave);
}

// The issue bound (docs/sim.md "Issue bound"): a kernel's warp instructions (the blocks'
// warp_insts, or push_insts for p2p_inline where a block gives them; sampled blocks count weight
// times) at the GPU's issue rate, SMs x issue_per_clock x clock. {0, 0} when no block gives them.
struct Issue {
  double insts = 0, seconds = 0;
};
Issue issue_bound(const KernelTrace& k, bool push, const GpuParams& gp) {
  Issue r;
  for (const BlockTrace& b : k.blocks) r.insts += double(push && b.push_insts > 0 ? b.push_insts : b.warp_insts) * b.weight;
  const double rate = double(gp.sms) * gp.issue_per_clock * gp.clock_GHz * 1e9;
  if (r.insts > 0 && rate > 0) r.seconds = r.insts / rate;
  return r;
}

}  // namespace

KernelBound kernel_bound(const KernelTrace& k, LocalAcc& acc, const std::vector<double>& requests,
                         const std::vector<Allocation>& allocs, const GpuParams& gp, const KernelShape& shape,
                         bool push_insts) {
  const double grid = shape.grid, kwave = shape.wave;
  const bool marching = shape.marching;
  // A marching kernel's tail is its serial bound's business: its plan balances the slots by
  // marched planes (a block beyond the first wave starts when a slot frees up), so its
  // roofline takes no partial-wave factor. With it, wave3d 256^3 on 2 GPUs (576 items on
  // 528 slots) was charged 1.375x the roofline on top of a balanced plan.
  const bool serial = marching && gp.serial_step_us >= 0;  // < 0: the serial bound is not modelled
  const KernelBytes kb = kernel_bytes(acc, marching);
  const double step_s = serial ? step_seconds(acc, kb, gp, grid, kwave) : 0;
  const Roofline roof = roofline(acc, kb, gp, grid, serial ? 0.0 : kwave, k.compute_s);
  // KernelBound's fields in order: gpu, name, bytes and flops, the roofline terms, the wave
  // factor, the serial and chain bounds (the issue term, time and bound below)
  KernelBound kbound{k.gpu,       k.name,     kb.dram,    kb.l2,
                     acc.flops,   roof.dram_s, roof.l2_s, roof.flops_s,
                     roof.factor, serial_seconds(k, step_s, kwave),
                     chain_seconds(k, gp.load_latency_ns * 1e-9, kwave, gp.l2_latency_ns * 1e-9, gp.l2_bytes)};
  kbound.compute_s = roof.compute_s;
  kbound.hot_requests = hot_word_requests(allocs, requests);
  kbound.hot_s = kbound.hot_requests * gp.hot_word_ns * 1e-9;
  const Issue issue = issue_bound(k, push_insts, gp);
  kbound.warp_insts = issue.insts;
  kbound.issue_s = issue.seconds;
  // The latency bound adds the chain and the issue time: a launch's warps start together and
  // run the same code, so they issue their address arithmetic, wait on the same dependent
  // load, issue again: the waits do not hide behind other warps' issue (docs/sim.md "Issue
  // bound": road:5120 pagerank on one H200, chain 291 + issue 389 us against 684 measured).
  const double latency = kbound.chain_s + kbound.issue_s;
  // A rolled loop's rounds wait their load latency on top of the time its bytes take
  // (docs/sim.md "Rolled loops": jacobi2d's scalar grid sweep on one H200, 1.18 ms measured,
  // its L2 bytes 827 us at the L2's rate and 344 us of rounds)
  const bool adds = k.chain_adds != 0 && kbound.chain_s > 0;
  const double roof_t = roof.seconds() + (adds ? kbound.chain_s : 0.0);
  const double tb = std::max({roof_t, kbound.serial_s, latency});
  const double tk = tb + kbound.hot_s;  // the hot word's requests add (docs/sim.md "Hot words")
  kbound.time_s = tk;
  const char* roof_bound = roof.compute_s > std::max({roof.dram_s, roof.l2_s, roof.flops_s}) * roof.factor ? "compute"
                           : roof.dram_s >= roof.l2_s && roof.dram_s >= roof.flops_s       ? "dram"
                           : roof.l2_s >= roof.flops_s                                     ? "l2"
                                                                                           : "flops";
  kbound.bound = tb == kbound.serial_s && tb > roof_t ? "serial"
                 : tb == latency && tb > roof_t
                     ? (kbound.issue_s > 0 && kbound.chain_s > 0 ? "chain+issue" : kbound.issue_s > 0 ? "issue" : "chain")
                 : adds ? std::string(roof_bound) + "+chain"
                        : roof_bound;
  return kbound;
}

}  // namespace gpsm::sim::engine_detail
