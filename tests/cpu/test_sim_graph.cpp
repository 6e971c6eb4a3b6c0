// gpsm sim traces of the graph apps (sim/trace_graph.hpp): on tiny hand-made graphs, the exact
// loads and stores per layout (p2p_inline's stores into every copy, rdl's remote sectors, GPS
// publishes only to the page's subscribers, memcpy's copies of each GPU's rows), the hub-row
// segments, the values against the CPU references, and determinism.
#include <cmath>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "apps/graph_io/graph.hpp"
#include "apps/graph/graph_refs.hpp"
#include "sim/engine.hpp"
#include "sim/graph_insts.hpp"
#include "sim/system.hpp"
#include "sim/trace_graph.hpp"

using namespace gpsm;
using namespace gpsm::sim;

namespace {

// An in-edge CSR from (row, col) pairs with weight 1 + (row + col) % 7.
graph_io::Csr csr(std::int64_t n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<graph_io::Entry> e;
  for (auto [r, c] : edges) e.push_back({r, c, float(1 + (r + c) % 7)});
  return graph_io::csr_from_entries(n, n, std::move(e), true);
}

// 32 vertices on 2 GPUs (rows 0-15, 16-31; slot = vertex): row v pulls from v ^ 1, except
// row 0 <- 16, row 1 <- 31 (GPU 1's sectors 2 and 3 of x), row 16 <- 0, row 17 <- 8 (GPU 0's
// sectors 0 and 1): two remote edges per GPU, each in a sector of its own (32 B of remote load). One edge per row:
// 1 lane per row, one block of 16 active threads (one warp) per GPU.
graph_io::Csr two_gpu_graph() {
  std::vector<std::pair<int, int>> e;
  for (int v = 0; v < 32; ++v) {
    int c = v ^ 1;
    if (v == 0) c = 16;
    if (v == 1) c = 31;
    if (v == 16) c = 0;
    if (v == 17) c = 8;
    e.push_back({v, c});
  }
  return csr(32, e);
}

TraceRequest req(const std::string& app, const std::string& layout, int gpus, int iters = 3) {
  TraceRequest r;
  r.app = app;
  r.layout = layout;
  r.gpus = gpus;
  r.problem.iters = iters;
  return r;
}

std::vector<float> inv_deg_of(const graph_io::Csr& in) { return apps::graph::inverse_out_degree(graph_io::transpose(in)); }

struct Bytes {
  double local_load = 0, local_store = 0;
  std::map<std::pair<int, int>, double> remote_load, remote_store;  // (gpu, owner) -> bytes
  std::map<std::pair<int, int>, int> remote_load_runs;
};
Bytes count(const Trace& t, std::size_t iteration) {
  Bytes b;
  for (const KernelTrace& k : t.iterations.at(iteration).kernels)
    for (const BlockTrace& bl : k.blocks)
      for (const AccessRun& r : bl.runs) {
        const int a = allocation_of(t, r.addr);
        EXPECT_GE(a, 0) << k.name;
        const int owner = a >= 0 ? t.allocations[a].gpu : k.gpu;
        const double bytes = double(r.count) * r.bytes;
        if (owner == k.gpu) (r.op == Op::load ? b.local_load : b.local_store) += bytes;
        else if (r.op == Op::load) b.remote_load[{k.gpu, owner}] += bytes, b.remote_load_runs[{k.gpu, owner}] += 1;
        else b.remote_store[{k.gpu, owner}] += bytes;
      }
  return b;
}

TEST(SimGraph, SlabsStoreEveryRowIntoEveryCopyOnce) {
  const graph_io::Csr in = two_gpu_graph();
  for (const char* app : {"pagerank", "sssp"}) {
    const Trace t = graph_trace_csr(req(app, "slabs", 2), in, inv_deg_of(in), 5, nullptr);
    // sssp from 5: row 4 falls in the first iteration, nothing in the second (the trace stops)
    ASSERT_EQ(t.iterations.size(), std::string(app) == "pagerank" ? 3u : 2u);
    for (std::size_t it = 0; it < t.iterations.size(); ++it) {
      const Bytes b = count(t, it);
      EXPECT_TRUE(b.remote_load.empty()) << app;  // every load from the own copy
      // 16 rows x 4 B to the other GPU's copy, as one 64-B run (one warp's consecutive rows)
      EXPECT_EQ(b.remote_store.at({0, 1}), 64.0) << app;
      EXPECT_EQ(b.remote_store.at({1, 0}), 64.0) << app;
      EXPECT_EQ(b.remote_store.size(), 2u);
    }
    // the row kernel of GPU 0: one block; its y stores: one run per copy, 16 x 4 B
    const KernelTrace& k = t.iterations[0].kernels.back();
    EXPECT_EQ(k.grid_blocks, 1u);
    int store_runs = 0;
    for (const AccessRun& r : k.blocks.at(0).runs)
      if (r.op == Op::store && r.count == 16 && r.bytes == 4 && r.stride == 4) ++store_runs;
    EXPECT_EQ(store_runs, 2) << app;  // one per GPU copy
  }
}

TEST(SimGraph, RdlLoadsOneRemoteSectorPerRemoteEdge) {
  const graph_io::Csr in = two_gpu_graph();
  const Trace t = graph_trace_csr(req("pagerank", "remote", 2), in, inv_deg_of(in), 0, nullptr);
  const Bytes b = count(t, 1);
  EXPECT_TRUE(b.remote_store.empty());
  // the edges whose column the other GPU owns: 2 per GPU, each in its own 32-B sector of x
  // (sectors 2 and 3 of GPU 1's copy are adjacent: one run of 64 B; GPU 0's 0 and 1 alike)
  EXPECT_EQ(b.remote_load_runs.at({0, 1}), 1);
  EXPECT_EQ(b.remote_load_runs.at({1, 0}), 1);
  EXPECT_EQ(b.remote_load.at({0, 1}), 64.0);
  EXPECT_EQ(b.remote_load.at({1, 0}), 64.0);
  // the engine's rdl reads exactly those bytes
  const System s = preset("h200x4", 2);
  const SimResult r = simulate(t, s, SimParadigm::rdl, SimOptions{});
  EXPECT_DOUBLE_EQ(r.useful_bytes_per_iter, 128.0);
  EXPECT_GT(r.link_bytes_per_iter, 128.0);
}

// 4096 vertices on 4 GPUs: 1024 rows (4 KiB of x, one 4-KiB page) each; row v <- v except row 1
// (no edge), row 0 <- 1500 and rows 3001-3004 <- v - 1: only GPU 0 reads another GPU's page (GPU
// 1's, page 1). From source 3000 sssp's distances fall along the chain for 4 iterations, so the
// trace (it stops where none falls) outlasts the GPS profiling phase.
graph_io::Csr four_gpu_graph() {
  std::vector<std::pair<int, int>> e;
  for (int v = 0; v < 4096; ++v)
    if (v == 0) e.push_back({0, 1500});
    else if (v > 3000 && v <= 3004) e.push_back({v, v - 1});
    else if (v != 1) e.push_back({v, v});
  return csr(4096, e);
}

TEST(SimGraph, GpsPublishesOnlyToSubscribersMemcpyToEveryGpu) {
  const graph_io::Csr in = four_gpu_graph();
  const System s = preset("h200x4", 4);
  SimOptions o;
  o.gps_page_bytes = 4096;
  for (const char* app : {"pagerank", "sssp"}) {
    const Trace rep = graph_trace_csr(req(app, "replicas", 4), in, inv_deg_of(in), 3000, nullptr);
    const Bytes b = count(rep, 0);
    EXPECT_TRUE(b.remote_load.empty() && b.remote_store.empty()) << app;  // own replica only
    // GPU 1's 1024 rows go to GPU 0, its only other subscriber; nothing else is published
    EXPECT_DOUBLE_EQ(simulate(rep, s, SimParadigm::gps_hw, o).useful_bytes_per_iter, 4096.0) << app;
    EXPECT_DOUBLE_EQ(simulate(rep, s, SimParadigm::finepack, o).useful_bytes_per_iter, 4096.0) << app;
    // memcpy: every GPU's 1024 rows once to each of the 3 others
    const Trace slabs = graph_trace_csr(req(app, "slabs", 4), in, inv_deg_of(in), 3000, nullptr);
    EXPECT_DOUBLE_EQ(simulate(slabs, s, SimParadigm::memcpy, o).useful_bytes_per_iter, 4.0 * 3 * 4096) << app;
    EXPECT_DOUBLE_EQ(simulate(slabs, s, SimParadigm::p2p_inline, o).useful_bytes_per_iter, 4.0 * 3 * 4096) << app;
    EXPECT_DOUBLE_EQ(simulate(slabs, s, SimParadigm::infinite, o).link_bytes_per_iter, 0.0) << app;
  }
}

TEST(SimGraph, ValuesAreTheCpuReferences) {
  const graph_io::Csr in = two_gpu_graph();
  const std::vector<float> inv = inv_deg_of(in);
  for (const char* layout : {"slabs", "remote", "grid", "replicas"}) {
    std::vector<float> got;
    graph_trace_csr(req("pagerank", layout, 2, 4), in, inv, 0, &got);
    EXPECT_EQ(got, apps::graph::pagerank_reference(in, inv, 4, 0).rank) << layout;
    graph_trace_csr(req("sssp", layout, 2, 4), in, inv, 3, &got);
    EXPECT_EQ(got, apps::graph::sssp_reference(in, 3, 4).dist) << layout;
  }
}

TEST(SimGraph, HubRowsRunAsSegmentBlocks) {
  // row 0 pulls from 1999 vertices: 1 lane per row (mean degree < 1), longer than 64 edges, so
  // it is cut into 1024 + 975-edge segments; the row kernel does not store it
  std::vector<std::pair<int, int>> e;
  for (int c = 1; c < 2000; ++c) e.push_back({0, c});
  const graph_io::Csr in = csr(2000, e);
  const std::vector<float> inv = inv_deg_of(in);
  std::vector<float> got;
  const Trace t = graph_trace_csr(req("pagerank", "slabs", 1, 2), in, inv, 0, &got);
  EXPECT_EQ(got, apps::graph::pagerank_reference(in, inv, 2, 0).rank);
  const auto& ks = t.iterations[0].kernels;
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "pagerank_segments");
  EXPECT_EQ(ks[0].grid_blocks, 2u);
  EXPECT_EQ(ks[1].name, "pagerank_rows");
  const std::uint64_t y0 = t.allocations[allocation_of(t, (std::uint64_t{1} << 37))].base;  // gpu0.x1
  auto stores_of_row0 = [&](const KernelTrace& k) {
    int n = 0;
    for (const BlockTrace& b : k.blocks)
      for (const AccessRun& r : b.runs)
        if (r.op == Op::store && r.addr == y0) ++n;
    return n;
  };
  EXPECT_EQ(stores_of_row0(ks[0]), 1);  // the last segment finishes the row
  EXPECT_EQ(stores_of_row0(ks[1]), 0);
  // the col loads of the segments: every edge once (4 B each, as whole sectors: 1999 x 4 B from 0)
  double col = 0;
  const int col_alloc = [&] {
    for (std::size_t i = 0; i < t.allocations.size(); ++i)
      if (t.allocations[i].name == "gpu0.col") return int(i);
    return -1;
  }();
  ASSERT_GE(col_alloc, 0);
  for (const BlockTrace& b : ks[0].blocks)
    for (const AccessRun& r : b.runs)
      if (allocation_of(t, r.addr) == col_alloc) col += double(r.count) * r.bytes;
  EXPECT_EQ(col, 8000.0);  // 1999 x 4 B = 7996 B, in 250 sectors of 32 B
}

// Dependent-load chains (docs/sim.md "Chain bound"): a row thread loads row_ptr, then per edge
// iteration col and the gather (pagerank: 1 + 2 = 3 with one edge per row; sssp's finishing lane
// then the old value: 4). Hub segments: the record, then per group of four edges and per edge of
// the rest col and the gather; thread 0 waits for the finish counter, the last segment's for the
// partials (and sssp's old value).
TEST(SimGraph, ChainStepsPerBlock) {
  const graph_io::Csr in = two_gpu_graph();
  for (const char* app : {"pagerank", "sssp"}) {
    const Trace t = graph_trace_csr(req(app, "slabs", 2, 1), in, inv_deg_of(in), 5, nullptr);
    for (const KernelTrace& k : t.iterations[0].kernels) {
      if (k.name == "sssp_clear_changed") {
        EXPECT_EQ(k.blocks.at(0).chain_steps, 0u);
        continue;
      }
      ASSERT_EQ(k.blocks.size(), 1u) << k.name;
      EXPECT_EQ(k.blocks[0].chain_steps, std::string(app) == "pagerank" ? 3u : 4u) << k.name;
      EXPECT_EQ(k.blocks[0].gather_steps, 1u) << k.name;  // the one edge's gather
      // the gathered arrays: x (and pagerank's inv_deg), whole
      EXPECT_EQ(k.gather_bytes, (std::string(app) == "pagerank" ? 2u : 1u) * t.allocations.back().bytes) << k.name;
    }
  }
  std::vector<std::pair<int, int>> e;  // row 0 <- 1999 vertices: segments of 1024 and 975 edges
  for (int c = 1; c < 2000; ++c) e.push_back({0, c});
  const graph_io::Csr hub = csr(2000, e);
  for (const char* app : {"pagerank", "sssp"}) {
    const Trace t = graph_trace_csr(req(app, "slabs", 1, 1), hub, inv_deg_of(hub), 0, nullptr);
    const KernelTrace& seg = t.iterations[0].kernels.at(std::string(app) == "pagerank" ? 0 : 1);
    ASSERT_EQ(seg.blocks.size(), 2u) << app;
    // segment 0: 4 edges a thread (one Gather4 group): 1 + 2; thread 0 + the counter: 4
    EXPECT_EQ(seg.blocks[0].chain_steps, 4u) << app;
    EXPECT_EQ(seg.blocks[0].gather_steps, 1u) << app;  // one Gather4 group
    // segment 1: threads 207.. have 3 edges (no group, 3 single edges): 1 + 2 x 3 = 7 (thread 0:
    // 4 edges, 1 + 2 + the counter + the partials (+ sssp's old value) = 5 or 6)
    EXPECT_EQ(seg.blocks[1].chain_steps, 7u) << app;
    EXPECT_EQ(seg.blocks[1].gather_steps, 3u) << app;
    const KernelTrace& rows = t.iterations[0].kernels.back();
    for (const BlockTrace& b : rows.blocks) {
      EXPECT_EQ(b.chain_steps, std::string(app) == "pagerank" ? 1u : 2u) << app;
      EXPECT_EQ(b.gather_steps, 0u) << app;
    }
  }
}

// The row kernel's edge loop as the compiler unrolled it: per 4 trips 3 dependent steps (2 of them
// gathers), per remaining trip 2 (1 a gather). One row of 9 edges among 16 (mean 0.56: one lane a
// row): 2 quads and 1 trip: 1 (row_ptr) + 3 x 2 + 2 = 9 steps, 5 gathers; sssp's old value: 10.
TEST(SimGraph, RowChainFollowsTheUnrolledEdgeLoop) {
  std::vector<std::pair<int, int>> e;
  for (int c = 1; c <= 9; ++c) e.push_back({0, c});
  const graph_io::Csr in = csr(16, e);
  for (const char* app : {"pagerank", "sssp"}) {
    const Trace t = graph_trace_csr(req(app, "slabs", 1, 1), in, inv_deg_of(in), 1, nullptr);
    const KernelTrace& rows = t.iterations[0].kernels.back();
    ASSERT_EQ(rows.blocks.size(), 1u) << app;
    EXPECT_EQ(rows.blocks[0].chain_steps, std::string(app) == "pagerank" ? 9u : 10u) << app;
    EXPECT_EQ(rows.blocks[0].gather_steps, 5u) << app;
  }
}

// sssp's trace stops after the first iteration in which no distance fell (it counts), as the
// bench's loop; pagerank runs the iterations asked. A chain 1 <- 2 <- 3 from source 1 (in-edges:
// row v lists its predecessors): distances settle in 2 iterations, the 3rd changes nothing.
TEST(SimGraph, SsspTraceStopsWhereNoDistanceFalls) {
  const graph_io::Csr in = csr(4, {{2, 1}, {3, 2}});
  std::vector<float> dist;
  const Trace t = graph_trace_csr(req("sssp", "slabs", 1, 10), in, inv_deg_of(in), 1, &dist);
  EXPECT_EQ(t.iterations.size(), 3u);
  EXPECT_EQ(dist.at(2), 4.0f);   // weight 1 + (2 + 1) % 7
  EXPECT_EQ(dist.at(3), 10.0f);  // + 1 + (3 + 2) % 7
  EXPECT_FALSE(std::isfinite(dist.at(0)));  // no path from the source
  const Trace p = graph_trace_csr(req("pagerank", "slabs", 1, 10), in, inv_deg_of(in), 1, nullptr);
  EXPECT_EQ(p.iterations.size(), 10u);
}

TEST(SimGraph, DeterministicTraceAndSimulation) {
  TraceRequest r = req("sssp", "replicas", 2);
  r.problem.graph = "road:64";
  const Trace a = make_trace(r), b = make_trace(r);
  ASSERT_EQ(a.total_runs(), b.total_runs());
  const System s = preset("h200x4", 2);
  for (SimParadigm p : {SimParadigm::gps_hw, SimParadigm::finepack}) {
    const SimResult x = simulate(a, s, p, SimOptions{}), y = simulate(b, s, p, SimOptions{});
    EXPECT_EQ(x.sec_per_iter, y.sec_per_iter);
    EXPECT_EQ(x.link_bytes_per_iter, y.link_bytes_per_iter);
    EXPECT_GT(x.link_bytes_per_iter, 0);  // the boundary rows' pages are published
  }
  r.problem.graph = "nonsense:1";
  EXPECT_THROW(make_trace(r), std::invalid_argument);
}

}  // namespace

namespace {
TEST(SimGraph, SampledBoundaryChunksStandForThemselves) {
  // road:256 on 2 GPUs sampled: the boundary rows' pages are published at their real size (the
  // full trace's payload), not multiplied by the sampling weight; block weights sum to the grid
  TraceRequest r = req("pagerank", "replicas", 2);
  r.problem.graph = "road:256";
  const System s = preset("h200x4", 2);
  const Trace full = make_trace(r);
  r.sample = 0.05;
  const Trace part = make_trace(r);
  for (const KernelTrace& k : part.iterations[0].kernels) {
    double w = 0;
    for (const BlockTrace& b : k.blocks) w += b.weight;
    EXPECT_NEAR(w, double(k.grid_blocks), 1e-6) << k.name;
    EXPECT_LT(k.blocks.size(), k.grid_blocks) << k.name;
  }
  EXPECT_DOUBLE_EQ(simulate(part, s, SimParadigm::gps_hw, SimOptions{}).useful_bytes_per_iter,
                   simulate(full, s, SimParadigm::gps_hw, SimOptions{}).useful_bytes_per_iter);
}
}  // namespace

// The row kernels' warp instructions (sim/graph_insts.hpp) against what Nsight Compute counted
// on one H200 for road:5120, where every warp takes one path (4 lanes per row, one trip each):
// 124.0 pagerank, 135.0 sssp, p2p_inline's variant 141.0 and 153.0 warp instructions per warp.
TEST(SimGraph, RowKernelWarpInstructionsMatchTheMeasuredCounts) {
  WarpLanes road;
  for (int t = 0; t < 32; ++t) road.add(false, 1, t % 4 == 0, false);
  EXPECT_EQ(warp_insts(row_kernel_insts(true), road, 4, 0), 124u);
  EXPECT_EQ(warp_insts(row_kernel_insts(false), road, 4, 0), 135u);
  EXPECT_EQ(warp_insts(row_kernel_insts(true), road, 4, 1), 141u);
  EXPECT_EQ(warp_insts(row_kernel_insts(false), road, 4, 1), 153u);
  // four GPUs' copies: the stores' unrolled-by-4 block (21) instead of the single store (8)
  EXPECT_EQ(warp_insts(row_kernel_insts(true), road, 4, 4), 124u - 15u + 14u + 2u + 4u + 14u + 21u);
  // a lane of 6 trips: the remainder loop twice (6 % 4), the unrolled one once (6 / 4)
  WarpLanes one;
  one.add(false, 6, true, false);
  const RowKernelInsts& pr = row_kernel_insts(true);
  EXPECT_EQ(warp_insts(pr, one, 1, 0),
            std::uint32_t(pr.always + pr.row + pr.unsplit + pr.edges + pr.rem_setup + 2 * pr.rem_iter + pr.quad_setup +
                          pr.quad_iter + pr.store));
  // a split row: no edges and no store (its segments write it); no row: the first block only
  WarpLanes split;
  split.add(true, 0, true, false);
  EXPECT_EQ(warp_insts(pr, split, 1, 0), std::uint32_t(pr.always + pr.row));
  EXPECT_EQ(warp_insts(pr, WarpLanes{}, 1, 0), std::uint32_t(pr.always));
  // sssp's raised flag costs its store of `changed`
  WarpLanes fell = road;
  fell.add(false, 1, true, true);
  EXPECT_EQ(warp_insts(row_kernel_insts(false), fell, 4, 0), 138u);
}

// The traces carry those counts: 64 rows of 4 edges (4 lanes a row, one block of 8 warps).
TEST(SimGraph, TracesCarryTheRowKernelsWarpInstructions) {
  std::vector<std::pair<int, int>> e;
  for (int v = 0; v < 64; ++v)
    for (int d = 1; d <= 4; ++d) e.push_back({v, (v + d) % 64});
  const graph_io::Csr in = csr(64, e);
  const Trace t = graph_trace_csr(req("pagerank", "slabs", 1, 2), in, inv_deg_of(in), 0, nullptr);
  const KernelTrace& k = t.iterations.at(1).kernels.back();
  ASSERT_EQ(k.name, "pagerank_rows");
  ASSERT_EQ(k.blocks.size(), 1u);
  EXPECT_EQ(k.blocks[0].warp_insts, 8u * 124u);
  EXPECT_EQ(k.blocks[0].push_insts, 8u * 141u);
}
