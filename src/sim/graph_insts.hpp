#pragma once
// Warp instructions of the graph apps' row kernels (graph_kernels.cu: pagerank_kernel and
// sssp_kernel, kGather 1, not proact's kReady), for the sim's issue bound (docs/sim.md "Issue
// bound"). Counted from the kernels' SASS basic blocks (sm_90, nvcc 13.0, at e50db42: cuobjdump
// -sass of graph_kernels.cu built as the project builds it). A warp runs a block when any of its
// lanes does, and a loop as often as its busiest lane. Checked against Nsight Compute on one H200
// (results/nvidia-h200-x4/2026-11-22_f9b3fcd5b21b_graph-lanes-shift): road:5120, where every warp
// takes one path, 124.0 (pagerank) and 135.0 (sssp) warp instructions per warp measured, 124 and
// 135 here; p2p_inline 141.0 and 153.0, here 141 and 153. Plain C++.
#include <cstdint>

namespace gpsm::sim {

// One kernel's basic-block sizes (instructions).
struct RowKernelInsts {
  int always;                  // every warp: the prologue's first block, the joins after the loop
  int row;                     // a lane with a row (row < rows): the row offsets
  int unsplit;                 // a lane whose row is not split into segments
  int edges;                   // a lane with edges: the trip count, the loop's exit
  int rem_setup, rem_iter;     // the remainder loop (trips % 4): once, then per trip
  int quad_setup, quad_iter;   // the loop unrolled by 4 (trips / 4): once, then per 4 trips
  int shfl_setup, shfl_step;   // lanes > 1: the shuffle reduction, once and per halving
  int store;                   // a lane 0 with its row: the local kernel's result store
  int changed;                 // sssp: a lane 0 whose distance fell raises `changed`
  // p2p_inline's variant: lane 0 stores into every GPU's copy, G stores: head, then for G >= 4
  // push_mid + push_quad per 4 GPUs, push_join, then for G % 4 push_tail_setup + push_tail per GPU,
  // push_end (G >= 16 takes an unrolled-by-16 path this does not follow)
  int push_head, push_mid, push_quad, push_join, push_tail_setup, push_tail, push_end;
};
const RowKernelInsts& row_kernel_insts(bool pagerank);

// What one warp's lanes did in a row kernel.
struct WarpLanes {
  bool any_row = false, any_unsplit = false, any_edges = false, lane0 = false, changed = false;
  std::int64_t max_rem = 0, max_quad = 0;  // the busiest lanes' trips % 4 and trips / 4
  // Adds one lane with a row: split (its row is written by segments), its edge-loop trips, lane 0?,
  // raised `changed`? (Lanes past the last row are not added.)
  void add(bool split, std::int64_t trips, bool is_lane0, bool raised);
};

// The warp's instructions: lanes threads per row (a power of two), push_gpus 0 for the local
// kernel, else p2p_inline's variant storing into that many GPUs' copies.
std::uint32_t warp_insts(const RowKernelInsts& c, const WarpLanes& w, int lanes, int push_gpus);

}  // namespace gpsm::sim
