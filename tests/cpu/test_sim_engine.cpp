// gpsm sim's engine (src/sim/engine.cpp) on hand-made traces and systems, with a hand-made link
// model (so the expectations are computed here, independent of link.cpp's packet accounting).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/engine.hpp"
#include "sim/explain.hpp"
#include "sim/system.hpp"
#include "sim/trace_gen.hpp"
#include "sim/um.hpp"

using namespace gpsm::sim;

namespace {

// Every packet carries at most 256 B and costs 24 B of header; a read adds a 16-B request.
struct TestLink final : LinkModel {
  static double packets(double b) { return std::ceil(b / 256.0); }
  double write_wire(const LinkParams&, double payload) const override { return payload + 24 * packets(payload); }
  double read_wire(const LinkParams&, double payload) const override { return 16 + payload + 24 * packets(payload); }
  double finepack_wire(const LinkParams&, double runs, double payload, int sub) const override {
    const double inner = payload + runs * sub;
    return inner + 24 * packets(inner);
  }
  double wire_time(const LinkParams& l, double wire) const override { return wire / (l.raw_GBps * 1e9); }
  double copy_time(const System& s, int, int, double bytes) const override {
    copies.push_back(bytes);
    return s.link.latency_ns * 1e-9 + bytes / (s.link.raw_GBps * 1e9);
  }
  mutable std::vector<double> copies;
};

System two_gpus() {
  System s;
  s.name = "test";
  s.gpus = 2;
  s.gpu.sms = 4;
  s.gpu.blocks_per_sm = 2;  // a wave: 8 blocks
  s.gpu.hbm_GBps = 100;
  s.gpu.l2_GBps = 1000;
  s.gpu.flops_G = 1000;
  s.gpu.launch_us = 5;
  s.gpu.sync_us = 8;
  s.gpu.issue_us = 0;     // the host's issue cost is left out of these hand models
  s.gpu.readback_us = 0;
  s.gpu.fault_us = 20;
  s.gpu.page_bytes = 4096;
  s.topology = Topology::direct;
  s.link.raw_GBps = 10;
  s.link.latency_ns = 1000;
  s.link.max_payload = 256;
  return s;
}

constexpr std::uint64_t kSlab = 1 << 20;

AccessRun run(Op op, std::uint64_t addr, std::uint32_t count, std::int64_t stride = 4, std::uint8_t bytes = 4) {
  AccessRun r;
  r.op = op;
  r.bytes = bytes;
  r.count = count;
  r.addr = addr;
  r.stride = stride;
  return r;
}

// Two GPUs, one slab each; every GPU runs `blocks` blocks per iteration, each loading and storing
// 4 KiB of its slab; `remote` (runs of GPU 0's block 0) store into GPU 1's slab, and the mirror
// image (GPU 1's last block into GPU 0's slab; its first block with early_mirror).
Trace slabs(const std::vector<AccessRun>& remote0, int iters = 2, std::uint32_t blocks = 16, bool early_mirror = false) {
  Trace t;
  t.app = "hand";
  t.gpus = 2;
  t.layout = "slabs";
  t.allocations = {{"slab0", MemKind::device, 0, -1, 0, kSlab}, {"slab1", MemKind::device, 1, -1, kSlab, kSlab}};
  for (int i = 0; i < iters; ++i) {
    IterationTrace it;
    it.host_sync = true;  // the host waits each iteration (as jacobi2d's norm)
    for (int g = 0; g < 2; ++g) {
      KernelTrace k;
      k.name = "step";
      k.gpu = g;
      k.grid_blocks = blocks;
      for (std::uint32_t b = 0; b < blocks; ++b) {
        BlockTrace bt;
        bt.block = b;
        bt.flops = 1000;
        const std::uint64_t mine = g * kSlab + 8192 + b * 4096;
        bt.runs.push_back(run(Op::load, mine, 1024));
        bt.runs.push_back(run(Op::store, mine, 1024));
        const bool pusher = (g == 0 && b == 0) || (g == 1 && b == (early_mirror ? 0 : blocks - 1));
        if (pusher)
          for (AccessRun r : remote0) {
            // GPU 1 mirrors GPU 0: into slab 0 at the same offset
            if (g == 1) r.addr -= kSlab;
            bt.runs.push_back(r);
          }
        k.blocks.push_back(bt);
      }
      it.kernels.push_back(k);
    }
    t.iterations.push_back(it);
  }
  return t;
}

SimResult sim(const Trace& t, SimParadigm p, const TestLink& l, SimOptions o = {}, System s = two_gpus()) {
  return simulate_with(t, s, p, o, l);
}

}  // namespace

TEST(SimEngine, ParadigmNamesAndLayouts) {
  EXPECT_EQ(parse_sim_paradigms("all").size(), 9u);
  const auto two = parse_sim_paradigms("finepack,memcpy");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], SimParadigm::memcpy);  // canonical order
  EXPECT_STREQ(sim_paradigm_name(two[1]), "finepack");
  EXPECT_THROW(parse_sim_paradigms("gps,nope"), std::invalid_argument);
  EXPECT_STREQ(sim_trace_layout(SimParadigm::gps_hw), "replicas");
  EXPECT_STREQ(sim_trace_layout(SimParadigm::finepack), "replicas");
  EXPECT_STREQ(sim_trace_layout(SimParadigm::um), "grid");
  EXPECT_STREQ(sim_trace_layout(SimParadigm::p2p_inline), "slabs");
  EXPECT_STREQ(sim_trace_layout(SimParadigm::rdl), "remote");  // 3D: halos loaded by the consumer
}

// 1 KiB of 4-B stores at a line-aligned address: 8 lines, one 128-B write each, both directions.
TEST(SimEngine, P2pInlineWireBytesFollowTheLineRule) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab + 0, 256)});
  const SimResult r = sim(t, SimParadigm::p2p_inline, l);
  EXPECT_DOUBLE_EQ(r.link_bytes_per_iter, 2 * 8 * (128 + 24));
  EXPECT_DOUBLE_EQ(r.useful_bytes_per_iter, 2 * 1024);
  // unaligned: 64 B, one full line, 64 B
  const SimResult u = sim(slabs({run(Op::store, kSlab + 64, 64)}), SimParadigm::p2p_inline, l);
  EXPECT_DOUBLE_EQ(u.link_bytes_per_iter, 2 * ((64 + 24) + (128 + 24) + (64 + 24)));
  // scattered: stride 256, every store its own 4-B write
  const SimResult sc = sim(slabs({run(Op::store, kSlab, 64, 256)}), SimParadigm::p2p_inline, l);
  EXPECT_DOUBLE_EQ(sc.link_bytes_per_iter, 2 * 64 * (4 + 24));
}

TEST(SimEngine, MemcpyCopiesExactlyTheHaloBytes) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256)}, 3);
  const SimResult r = sim(t, SimParadigm::memcpy, l);
  ASSERT_EQ(l.copies.size(), 6u);  // one copy per GPU per iteration
  for (double c : l.copies) EXPECT_DOUBLE_EQ(c, 1024);
  EXPECT_DOUBLE_EQ(r.useful_bytes_per_iter, 2048);
  EXPECT_DOUBLE_EQ(r.link_bytes_per_iter, 2 * (1024 + 4 * 24));
  // not overlapped: at least launch + copy + sync over the kernel
  EXPECT_GE(r.sec_per_iter, r.compute_s + 5e-6 + 8e-6 + 1e-6);
}

// Direct topology: a GPU's copies (memcpy) take at least the wire bytes it copies out at
// System::egress_GBps (the measured all-to-all copy egress on h200x4); its SM stores (p2p) do
// not (they go past it on 4xH200). Each GPU copies 1 KiB = 1120 wire bytes a phase: one after
// another 1 us + 1024 B / 10 GB/s = 1.1024 us; at a 0.5 GB/s egress 2.24 us, so each iteration
// takes 1.1376 us more.
TEST(SimEngine, EgressCapsWhatAGpuCopies) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256)}, 3);
  System capped = two_gpus();
  capped.egress_GBps = 0.5;
  const SimResult free_copy = sim(t, SimParadigm::memcpy, l);
  const SimResult slow_copy = sim(t, SimParadigm::memcpy, l, {}, capped);
  EXPECT_NEAR(slow_copy.sec_per_iter - free_copy.sec_per_iter, 2.24e-6 - 1.1024e-6, 1e-12);
  System loose = two_gpus();
  loose.egress_GBps = 1000;  // above the link: nothing changes
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::memcpy, l, {}, loose).sec_per_iter, free_copy.sec_per_iter);
  // SM stores share the egress too, their payload packed as large packets: 1024 B of stores,
  // 1120 wire bytes at 0.001 GB/s = 1.12 ms of link time; above the link's own time only then.
  capped.egress_GBps = 0.001;
  EXPECT_NEAR(sim(t, SimParadigm::p2p_inline, l, {}, capped).transfer_s, 1120 / 1e6, 1e-12);
  // the same cap on a switched GPU (h200x4 is one since 2026-11-22)
  System switched = capped;
  switched.topology = Topology::nvswitch;
  EXPECT_NEAR(sim(t, SimParadigm::p2p_inline, l, {}, switched).transfer_s, 1120 / 1e6, 1e-12);
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::p2p_inline, l, {}, loose).sec_per_iter,
                   sim(t, SimParadigm::p2p_inline, l).sec_per_iter);
}

TEST(SimEngine, InfiniteMovesNothingAndBoundsEveryParadigm) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256), run(Op::store, kSlab + 4096, 64, 256)});
  const SimResult inf = sim(t, SimParadigm::infinite, l);
  EXPECT_EQ(inf.link_bytes_per_iter, 0);
  EXPECT_EQ(inf.useful_bytes_per_iter, 0);
  for (SimParadigm p : parse_sim_paradigms("all")) {
    const SimResult r = sim(t, p, l);
    EXPECT_LE(inf.sec_per_iter, r.sec_per_iter) << sim_paradigm_name(p);
    EXPECT_GT(r.sec_per_iter, 0) << sim_paradigm_name(p);
  }
  // Still a bound with no host in the loop and a link far faster than HBM: scatter's random 4-B
  // remote stores cost the bound nothing, not local HBM sectors (they once did, and p2p_inline
  // beat the bound on the v100-pcie4 preset at 256 GB/s links).
  TraceRequest r;
  r.app = "scatter";
  r.problem.n[0] = 1 << 20;  // as scripts/sim-reproduce.sh
  r.problem.iters = 2;
  r.gpus = 4;
  r.layout = "slabs";
  const Trace scattered = make_trace(r);
  System fast = preset("v100-pcie4", 4);
  SimOptions graph;
  graph.graph_launch = true;
  graph.link_scale = 256 / fast.link.raw_GBps;  // 256 GB/s links
  const SimResult inf_fast = simulate(scattered, fast, SimParadigm::infinite, graph);
  const SimResult p2p_fast = simulate(scattered, fast, SimParadigm::p2p_inline, graph);
  EXPECT_LE(inf_fast.sec_per_iter, p2p_fast.sec_per_iter);
}

TEST(SimEngine, GpsQueueCoalescesStoresToOneLine) {
  TestLink l;
  // one warp: 32 x 4 B into one line as one run
  EXPECT_DOUBLE_EQ(sim(slabs({run(Op::store, kSlab + 256, 32)}), SimParadigm::gps_hw, l).link_bytes_per_iter,
                   2 * (128 + 24));
  // the same 32 stores as 32 separate runs: still one queue entry, one write
  std::vector<AccessRun> singles;
  for (int i = 0; i < 32; ++i) singles.push_back(run(Op::store, kSlab + 256 + 4 * i, 1));
  const Trace t = slabs(singles);
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l).link_bytes_per_iter, 2 * (128 + 24));
  // raw P2P stores send each one
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::p2p_inline, l).link_bytes_per_iter, 2 * 32 * (4 + 24));
}

TEST(SimEngine, GpsQueueFullDrainsOldestFirst) {
  TestLink l;
  // lines 0..7 twice: 8 entries fit (second pass coalesces), 4 do not (every store a new entry)
  std::vector<AccessRun> twice;
  for (int pass = 0; pass < 2; ++pass)
    for (int line = 0; line < 8; ++line) twice.push_back(run(Op::store, kSlab + 128 * line + 4 * pass, 1));
  const Trace t = slabs(twice);
  SimOptions big, small;
  big.write_queue_entries = 8;
  small.write_queue_entries = 4;
  // 8 entries: each line's bytes 0-3 and 4-7 merge into one 8-B write
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, big).link_bytes_per_iter, 2 * 8 * (8 + 24));
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, small).link_bytes_per_iter, 2 * 16 * (4 + 24));
}

TEST(SimEngine, FinepackPacksScatteredSmallStores) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 64, 256)});  // 64 x 4 B, each in its own line
  const SimResult gps = sim(t, SimParadigm::gps_hw, l), fp = sim(t, SimParadigm::finepack, l);
  EXPECT_DOUBLE_EQ(gps.link_bytes_per_iter, 2 * 64 * (4 + 24));
  // one drain of 64 entries: 64 sub-transactions of 5 + 4 B, 576 B in 3 packets
  EXPECT_DOUBLE_EQ(fp.link_bytes_per_iter, 2 * (64 * 9 + 3 * 24));
  EXPECT_LT(fp.link_bytes_per_iter, gps.link_bytes_per_iter);
  EXPECT_DOUBLE_EQ(fp.useful_bytes_per_iter, gps.useful_bytes_per_iter);
  // 3-B sub-headers: 14 offset bits, 16 KiB of addresses per message: the 64 entries (16 KiB
  // apart in all) still go as one message of 64 x 7 B, in 2 packets
  SimOptions sub3, sub2;
  sub3.finepack_subheader = 3;
  sub2.finepack_subheader = 2;
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::finepack, l, sub3).link_bytes_per_iter, 2 * (64 * 7 + 2 * 24));
  // 2-B sub-headers: 6 offset bits (64 B): every line its own message, 4 + 2 B + a header each
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::finepack, l, sub2).link_bytes_per_iter, 2 * 64 * (6 + 24));
}

// gps_hw on a GPS replica trace of 2-GPU jacobi2d (nx = 1024: a row is one 4-KiB page): each GPU
// subscribes to the pages it loads in the profiling iterations, so what is published is exactly
// the rows the neighbour reads: per iteration GPU 0's rows 1 and 16 (GPU 1's south halo and, by
// the periodic wrap, its north) and GPU 1's rows 17 and 32, each row's 1022 stored cells.
// With 64-KiB pages (16 rows) every page holds a row the other GPU reads: the whole grid goes.
TEST(SimEngine, GpsHwOnJacobiReplicasPublishesExactlyTheBoundaryRows) {
  TraceRequest r;
  r.app = "jacobi2d";
  r.problem.n[0] = 1024;
  r.problem.n[1] = 34;  // 32 interior rows, 16 per GPU
  r.problem.iters = 3;
  r.problem.tol = 0;
  r.gpus = 2;
  r.layout = sim_trace_layout(SimParadigm::gps_hw);
  const Trace t = make_trace(r);
  TestLink l;
  SimOptions page4k, page64k;
  page4k.gps_page_bytes = 4096;
  page64k.gps_page_bytes = 65536;
  const double row = 1022 * 4;
  for (SimParadigm p : {SimParadigm::gps_hw, SimParadigm::finepack}) {
    const SimResult a = sim(t, p, l, page4k);
    EXPECT_DOUBLE_EQ(a.useful_bytes_per_iter, 4 * row) << sim_paradigm_name(p);
    EXPECT_DOUBLE_EQ(sim(t, p, l, page64k).useful_bytes_per_iter, 32 * row) << sim_paradigm_name(p);
  }
  // GPS's queue sends the published rows as 128-B lines: a row is 32 lines, its first and last
  // partial (124 B: column 0 and nx - 1 are not stored), each one write.
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, page4k).link_bytes_per_iter, 4 * (row + 32 * 24));
  // The same replica trace under the managed-memory paradigms moves nothing (no managed pages,
  // every access local): the publishing is what gps_hw adds.
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::um, l).link_bytes_per_iter, 0);
}

// scatter on 4 GPUs (16384 4-B elements per GPU: one 64-KiB page each). p2p_inline: every remote
// 4-B store is its own packet. gps_hw on the replica trace publishes the stores into other GPUs'
// partitions only (each GPU loads, hence subscribes to, only its own partition's page), one packet
// per store (random targets do not share lines); finepack packs them.
TEST(SimEngine, ScatterRemoteStoresAreSmallPacketsThatFinepackPacks) {
  TraceRequest r;
  r.app = "scatter";
  r.problem.n[0] = 4 * 16384;
  r.problem.iters = 2;
  r.gpus = 4;
  r.layout = "slabs";
  const Trace slabs_t = make_trace(r);
  r.layout = sim_trace_layout(SimParadigm::finepack);
  const Trace repl = make_trace(r);
  System s = two_gpus();
  s.gpus = 4;
  TestLink l;
  const double remote_stores = 4 * 16384 / 4;  // per iteration, all GPUs
  const SimResult p2p = sim(slabs_t, SimParadigm::p2p_inline, l, {}, s);
  EXPECT_DOUBLE_EQ(p2p.useful_bytes_per_iter, remote_stores * 4);
  // one write per store, less the few pairs of one warp that land in one line (coalesced)
  EXPECT_LE(p2p.link_bytes_per_iter, remote_stores * (4 + 24));
  EXPECT_GT(p2p.link_bytes_per_iter, 0.99 * remote_stores * (4 + 24));
  const SimResult gps = sim(repl, SimParadigm::gps_hw, l, {}, s);
  const SimResult fp = sim(repl, SimParadigm::finepack, l, {}, s);
  // published = remote stores less the few that hit an element still queued (the two queues
  // drain differently: oldest entry / whole queue, so they merge slightly different stores)
  for (const SimResult* x : {&gps, &fp}) {
    EXPECT_LE(x->useful_bytes_per_iter, remote_stores * 4);
    EXPECT_GT(x->useful_bytes_per_iter, 0.98 * remote_stores * 4);
  }
  EXPECT_NEAR(gps.link_bytes_per_iter, gps.useful_bytes_per_iter / 4 * 28, 0.02 * gps.link_bytes_per_iter);
  // finepack: 64 entries per drain (a 4-B store + a 5-B sub-header each, 3 packet headers)
  EXPECT_LT(fp.link_bytes_per_iter, 0.4 * gps.link_bytes_per_iter);
  EXPECT_GT(fp.link_bytes_per_iter, gps.useful_bytes_per_iter / 4 * 9);
}

TEST(SimEngine, GpsPublishesOnlyToSubscribedPages) {
  TestLink l;
  Trace t;
  t.app = "hand";
  t.gpus = 2;
  t.layout = "grid";
  t.allocations = {{"a@0", MemKind::replica, 0, 7, 0, 65536}, {"a@1", MemKind::replica, 1, 7, kSlab, 65536}};
  IterationTrace it;
  it.host_sync = true;  // the host waits each iteration (as jacobi2d's norm)
  KernelTrace k0, k1;
  k0.gpu = 0, k1.gpu = 1;
  k0.grid_blocks = k1.grid_blocks = 1;
  BlockTrace b0, b1;
  b0.runs = {run(Op::store, 0, 256), run(Op::store, 8192, 256)};  // pages 0 and 2 (4 KiB pages)
  b1.runs = {run(Op::load, kSlab + 16, 4)};                       // GPU 1 reads its page 0 only
  k0.blocks = {b0};
  k1.blocks = {b1};
  it.kernels = {k0, k1};
  t.iterations = {it};
  SimOptions small, large;
  small.gps_page_bytes = 4096;
  large.gps_page_bytes = 65536;
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, small).useful_bytes_per_iter, 1024);
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, large).useful_bytes_per_iter, 2048);
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::gps_hw, l, large).link_bytes_per_iter, 16 * (128 + 24));
}

// Two GPUs on one managed grid: GPU 0 writes pages 0-3, GPU 1 writes pages 4-7 and reads page 3
// every iteration (`iters` of them).
Trace um_pingpong_trace(int iters = 8) {
  Trace t;
  t.app = "hand";
  t.gpus = 2;
  t.layout = "grid";
  t.allocations = {{"grid", MemKind::managed, 0, -1, 0, 8 * 4096}};
  for (int i = 0; i < iters; ++i) {
    IterationTrace it;
    it.host_sync = true;  // the host waits each iteration (as jacobi2d's norm)
    KernelTrace k0, k1;
    k0.gpu = 0, k1.gpu = 1;
    k0.grid_blocks = k1.grid_blocks = 1;
    BlockTrace b0, b1;
    b0.runs = {run(Op::store, 0, 4096)};
    b1.runs = {run(Op::store, 4 * 4096, 4096), run(Op::load, 3 * 4096, 1024)};
    k0.blocks = {b0};
    k1.blocks = {b1};
    it.kernels = {k0, k1};
    t.iterations.push_back(it);
  }
  return t;
}

TEST(SimEngine, UmFaultsPingPongSharedPagesAndHintsDoNot) {
  TestLink l;
  const Trace t = um_pingpong_trace();
  const SimResult um = sim(t, SimParadigm::um, l);
  // Page 3 goes to GPU 1 and back each iteration (two migrations of 4 KiB each). The driver sees
  // one migration an iteration (both GPUs touch it at their kernels' start; the one holding it
  // first), about 33 us apart, within its 500-us lapse: the second, third and fourth are
  // thrashing events, and GPU 1's fault in iteration 4 pins the page on GPU 0. From then on
  // GPU 1 reads it remotely (4 KiB a time).
  const double page = 4096 + 16 * 24;
  EXPECT_DOUBLE_EQ(um.link_bytes_per_iter, (4 * 2 * page + 4 * page) / 8);
  Trace two = t;
  two.iterations.resize(2);  // the ping-pong alone: one fault per iteration on the slowest GPU
  EXPECT_GE(sim(two, SimParadigm::um, l).sec_per_iter, 20e-6 + 5e-6 + 8e-6);
  // a long run: the pinned steady state dominates, no fault per iteration
  SimOptions longer;
  longer.run_iters = 1000;
  const SimResult steady = sim(t, SimParadigm::um, l, longer);
  EXPECT_LT(steady.sec_per_iter, um.sec_per_iter);
  EXPECT_LT(steady.sec_per_iter, 20e-6 + 5e-6 + 8e-6);
  EXPECT_NEAR(steady.link_bytes_per_iter, page, 0.01 * page);
  const SimResult hints = sim(t, SimParadigm::um_hints, l);
  EXPECT_DOUBLE_EQ(hints.link_bytes_per_iter, 32 * (16 + 128 + 24));  // 4 KiB read line by line
  EXPECT_LT(hints.sec_per_iter, um.sec_per_iter);
}

// The driver pins a page only if its migrations follow each other within its lapse: with a lapse
// shorter than the iteration (about 33 us) page 3 of the ping-pong keeps migrating, as jacobi2d's
// boundary rows do on 2 H200s at 11584^2 and 16384^2 (a page's migrations two iterations apart,
// beyond the 500-us lapse). A lapse just over one iteration pins it as the default does; the
// threshold sets how many thrashing events that takes.
TEST(SimEngine, UmPagesPinOnlyWhenTheyThrashWithinTheLapse) {
  TestLink l;
  const double page = 4096 + 16 * 24;
  SimOptions longer;
  longer.run_iters = 1000;
  System s = two_gpus();
  s.gpu.um_thrash_lapse_us = 30;  // an iteration: 5 + 20 + 8 us and the kernel
  const SimResult apart = sim(um_pingpong_trace(), SimParadigm::um, l, longer, s);
  EXPECT_DOUBLE_EQ(apart.link_bytes_per_iter, 2 * page);  // every iteration: over and back
  EXPECT_GE(apart.sec_per_iter, 20e-6 + 5e-6 + 8e-6);
  s.gpu.um_thrash_lapse_us = 40;
  EXPECT_NEAR(sim(um_pingpong_trace(), SimParadigm::um, l, longer, s).link_bytes_per_iter, page, 0.01 * page);
  // threshold 1: the first migration within the lapse is enough; GPU 1's fault in iteration 2 pins
  s.gpu.um_thrash_threshold = 1;
  EXPECT_DOUBLE_EQ(sim(um_pingpong_trace(), SimParadigm::um, l, {}, s).link_bytes_per_iter, (2 * 2 * page + 6 * page) / 8);
}

// A marching block's remote loads pass its L1 as its local ones do: a remote row it loads three
// times (as a centre and as two neighbours' rows) crosses the link once; a block that does not
// march pays every load. Before: 3 reads of the row for the marching block too.
TEST(SimEngine, MarchingBlocksReadEachRemoteByteOnce) {
  TestLink l;
  auto trace = [](std::uint32_t steps) {
    Trace t;
    t.app = "hand";
    t.gpus = 2;
    t.layout = "remote";
    t.allocations = {{"slab0", MemKind::device, 0, -1, 0, kSlab}, {"slab1", MemKind::device, 1, -1, kSlab, kSlab}};
    IterationTrace it;
    for (int g = 0; g < 2; ++g) {
      KernelTrace k;
      k.gpu = g;
      k.grid_blocks = 1;
      BlockTrace b;
      b.serial_steps = steps;
      b.runs = {run(Op::load, g * kSlab, 1024), run(Op::store, g * kSlab + 4096, 1024)};
      if (g == 0)
        for (int r = 0; r < 3; ++r) b.runs.push_back(run(Op::load, kSlab + 8192, 128));  // 512 B, 3 times
      k.blocks = {b};
      it.kernels.push_back(k);
    }
    t.iterations = {it, it};
    return t;
  };
  const double row = 4 * (16 + 128 + 24);  // 512 B: 4 line reads
  EXPECT_DOUBLE_EQ(sim(trace(4), SimParadigm::rdl, l).link_bytes_per_iter, row);
  EXPECT_DOUBLE_EQ(sim(trace(0), SimParadigm::rdl, l).link_bytes_per_iter, 3 * row);
}

TEST(SimEngine, ProactSendsChunksAndOverlapsThem) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256)});  // 1 KiB per direction, produced in wave 0
  SimOptions o;
  o.proact_chunk_bytes = 512;
  const SimResult pr = sim(t, SimParadigm::proact, l, o);
  EXPECT_DOUBLE_EQ(pr.link_bytes_per_iter, 2 * 2 * (512 + 2 * 24));
  // one chunk per direction (the default 1 MiB): GPU 1's halo comes from its last wave, so its copy
  // starts when the kernel ends, as memcpy's does: never slower than memcpy
  EXPECT_LE(sim(t, SimParadigm::proact, l).sec_per_iter, sim(t, SimParadigm::memcpy, l).sec_per_iter);
  // halos produced by the first wave on both GPUs: the copies overlap the second wave
  const Trace early = slabs({run(Op::store, kSlab, 256)}, 2, 16, true);
  const SimResult pe = sim(early, SimParadigm::proact, l), me = sim(early, SimParadigm::memcpy, l);
  EXPECT_LT(pe.sec_per_iter, me.sec_per_iter);
  EXPECT_DOUBLE_EQ(pe.link_bytes_per_iter, me.link_bytes_per_iter);
}

// GPU 0 loads 4 KiB from each of GPUs 1 and 2 (rdl's remote loads). Directly linked pairs carry
// the two reads side by side; a switched GPU (nvswitch) takes both through its one port: on
// 4xH200 (NV18 between every pair) rmat:20's remote loads on 4 GPUs took 527.5 us where the
// per-pair bound gave 183.7 (docs/sim.md "Link time").
TEST(SimEngine, SwitchedGpuReadsFromAllPeersThroughOnePort) {
  TestLink l;
  Trace t;
  t.app = "hand";
  t.gpus = 3;
  t.layout = "slabs";
  for (int g = 0; g < 3; ++g)
    t.allocations.push_back({"slab" + std::to_string(g), MemKind::device, g, -1, g * kSlab, kSlab});
  for (int i = 0; i < 2; ++i) {
    IterationTrace it;
    for (int g = 0; g < 3; ++g) {
      KernelTrace k;
      k.name = "step";
      k.gpu = g;
      k.grid_blocks = 1;
      BlockTrace b;
      b.block = 0;
      b.runs.push_back(run(Op::store, g * kSlab, 1024));
      if (g == 0)
        for (int peer = 1; peer < 3; ++peer) b.runs.push_back(run(Op::load, peer * kSlab, 1024));
      k.blocks.push_back(b);
      it.kernels.push_back(k);
    }
    t.iterations.push_back(it);
  }
  System direct = two_gpus();
  direct.gpus = 3;
  System sw = direct;
  sw.topology = Topology::nvswitch;
  // 4 KiB from a peer: 32 lines of 128 B, each 16 + 128 + 24 wire bytes, at 10 GB/s
  const double one_peer = 32 * (16 + 128 + 24) / 10e9;
  const SimResult d = sim(t, SimParadigm::rdl, l, {}, direct), s = sim(t, SimParadigm::rdl, l, {}, sw);
  EXPECT_DOUBLE_EQ(d.link_bytes_per_iter, s.link_bytes_per_iter);
  EXPECT_NEAR(d.transfer_s, one_peer, 1e-12);
  EXPECT_NEAR(s.transfer_s, 2 * one_peer, 1e-12);
}

TEST(SimEngine, RdlPaysALatencyPerReadingWave) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256)});
  const SimResult rdl = sim(t, SimParadigm::rdl, l), p2p = sim(t, SimParadigm::p2p_inline, l);
  EXPECT_DOUBLE_EQ(rdl.link_bytes_per_iter, 2 * 8 * (16 + 128 + 24));
  EXPECT_GE(rdl.sec_per_iter - p2p.sec_per_iter, 2e-6 - 1e-12);  // one round trip (2 x 1 us)
}

TEST(SimEngine, Deterministic) {
  TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256), run(Op::store, kSlab + 4096, 64, 256)}, 3);
  for (SimParadigm p : parse_sim_paradigms("all")) {
    const SimResult a = sim(t, p, l), b = sim(t, p, l);
    EXPECT_EQ(a.sec_per_iter, b.sec_per_iter) << sim_paradigm_name(p);
    EXPECT_EQ(a.link_bytes_per_iter, b.link_bytes_per_iter) << sim_paradigm_name(p);
    EXPECT_EQ(a.model, b.model);
  }
}

// One GPU, no remote traffic: a kernel of 2 blocks (a quarter wave) against a full wave of 8.
TEST(SimEngine, FewerBlocksThanAWaveAreSlowerPerByte) {
  TestLink l;
  auto kernel_of = [](std::uint32_t blocks) {
    Trace t;
    t.gpus = 1;
    t.allocations = {{"slab", MemKind::device, 0, -1, 0, kSlab}};
    IterationTrace it;
    it.host_sync = true;  // the host waits each iteration (as jacobi2d's norm)
    KernelTrace k;
    k.gpu = 0;
    k.grid_blocks = blocks;
    for (std::uint32_t b = 0; b < blocks; ++b) {
      BlockTrace bt;
      bt.block = b;
      bt.runs = {run(Op::load, b * 65536, 16384)};
      k.blocks.push_back(bt);
    }
    it.kernels = {k};
    t.iterations = {it};
    return t;
  };
  System s = two_gpus();
  s.gpus = 1;
  const double few = sim(kernel_of(2), SimParadigm::infinite, l, {}, s).sec_per_iter / 2;
  const double full = sim(kernel_of(8), SimParadigm::infinite, l, {}, s).sec_per_iter / 8;
  EXPECT_GT(few, 1.5 * full);
  EXPECT_DOUBLE_EQ(full, 65536 / 100e9);  // a full wave at HBM bandwidth
}

// Reloads of the same rows by neighbouring blocks hit L2: DRAM moves the distinct bytes.
TEST(SimEngine, ReReadsHitL2) {
  TestLink l;
  Trace t;
  t.gpus = 1;
  t.allocations = {{"slab", MemKind::device, 0, -1, 0, kSlab}};
  IterationTrace it;
  it.host_sync = true;  // the host waits each iteration (as jacobi2d's norm)
  KernelTrace k;
  k.gpu = 0;
  k.grid_blocks = 8;
  for (std::uint32_t b = 0; b < 8; ++b) {
    BlockTrace bt;
    bt.block = b;
    bt.runs = {run(Op::load, b * 4096, 3072)};  // 12 KiB windows overlapping by 8 KiB
    k.blocks.push_back(bt);
  }
  it.kernels = {k};
  t.iterations = {it};
  System s = two_gpus();
  s.gpus = 1;
  s.gpu.l2_GBps = 1e6;  // only DRAM matters here
  const double distinct = 7 * 4096 + 12288;
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, distinct / 100e9);
}

// One host thread issues every GPU's work: with the read-back (host_sync) issuing, executing and
// the sync add up; without it the slower of the GPUs and the host's issuing bounds the loop.
TEST(SimEngine, OneHostThreadIssuesEveryGpusWork) {
  const TestLink l;
  System s = two_gpus();
  s.gpu.issue_us = 100;  // far above the GPUs' time here
  s.gpu.readback_us = 7;
  Trace t = slabs({}, 3);
  const SimResult inf = sim(t, SimParadigm::infinite, l, {}, s);  // no host in the loop
  const SimResult synced = sim(t, SimParadigm::p2p_inline, l, {}, s);
  const double gpu = inf.sec_per_iter + s.gpu.launch_us * 1e-6;  // the slowest GPU, launched
  EXPECT_NEAR(synced.sec_per_iter, 2 * (100 + 7) * 1e-6 + gpu + s.gpu.sync_us * 1e-6, 1e-9);
  for (auto& it : t.iterations) it.host_sync = false;
  const SimResult ahead = sim(t, SimParadigm::p2p_inline, l, {}, s);
  EXPECT_NEAR(ahead.sec_per_iter, 2 * 100e-6, 1e-9);  // issue-bound: 2 GPUs x 100 us
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, inf.sec_per_iter, 1e-12);
}

// As one CUDA graph (gpsm bench's 3D host loops) an iteration without a read-back is the slowest
// GPU's kernels, each started graph_node_us after its dependencies: no host issue bound. An
// iteration with a read-back is host-issued either way.
TEST(SimEngine, GraphLaunchedLoopsPayNoHostIssue) {
  const TestLink l;
  System s = two_gpus();
  s.gpu.issue_us = 100;
  s.gpu.readback_us = 7;
  s.gpu.graph_node_us = 0.5;
  Trace t = slabs({}, 3);
  for (auto& it : t.iterations) it.host_sync = false;
  SimOptions graph;
  graph.graph_launch = true;
  const SimResult inf = sim(t, SimParadigm::infinite, l, graph, s);
  const SimResult g = sim(t, SimParadigm::p2p_inline, l, graph, s);
  const SimResult stream = sim(t, SimParadigm::p2p_inline, l, {}, s);
  EXPECT_NEAR(stream.sec_per_iter, 2 * 100e-6, 1e-9);  // issue-bound
  EXPECT_LT(g.sec_per_iter, 10e-6);                    // no issue bound
  EXPECT_GE(g.sec_per_iter, inf.sec_per_iter + 0.5e-6 - 1e-12);
  // kernels per iteration on the slowest GPU, each one node start
  const SimResult inf_stream = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_NEAR(inf.sec_per_iter, inf_stream.sec_per_iter, 1e-12);  // infinite has no host either way
  for (auto& it : t.iterations) it.host_sync = true;
  EXPECT_NEAR(sim(t, SimParadigm::p2p_inline, l, graph, s).sec_per_iter,
              sim(t, SimParadigm::p2p_inline, l, {}, s).sec_per_iter, 1e-12);
}

// A trace that names its host loop (the graph apps) is priced call by call: per GPU a set device,
// its launches, the memsets, the waits for the other GPUs' events and one record, memcpy's copies.
// Without a read-back the host issues ahead: the slower of the host and the GPUs (lengthened by the
// cross-GPU event hop) bounds the loop; with one, issuing, executing and reading back add up. The
// multi-GPU infinite run (the bench's elided bound) keeps the loop and its read-back: the same
// work per iteration as every paradigm, transfers elided.
TEST(SimEngine, NamedHostLoopsArePricedCallByCall) {
  const TestLink l;
  System s = two_gpus();
  s.gpu.issue_us = 1000;  // must not apply to a named loop
  s.gpu.readback_us = 1000;
  s.gpu.host.set_device_us = 1;
  s.gpu.host.launch_us = 30;
  s.gpu.host.record_us = 2;
  s.gpu.host.wait_us = 10;
  s.gpu.host.copy_us = 20;
  s.gpu.host.memset_us = 40;
  s.gpu.host.readback_us = 7;
  s.gpu.event_hop_us = 3;
  Trace t = slabs({run(Op::store, kSlab, 256)}, 3);
  for (auto& it : t.iterations) {
    it.host_sync = false;
    it.host_named = true;
    it.peer_waits = 1;
  }
  const SimResult bare = sim(t, SimParadigm::infinite, l, {}, System(two_gpus()));  // kernels alone
  // per GPU: 1 + 30 + 10 + 2 = 43 us; 86 us for both, above the GPUs' time
  const SimResult inf = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_LT(bare.sec_per_iter + 8e-6, 86e-6);
  EXPECT_NEAR(inf.sec_per_iter, 86e-6, 1e-9);
  SimOptions graph;  // a named loop is the app's own: host-issued whatever --host-loop says
  graph.graph_launch = true;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, graph, s).sec_per_iter, inf.sec_per_iter, 1e-12);
  EXPECT_NEAR(sim(t, SimParadigm::memcpy, l, graph, s).sec_per_iter, sim(t, SimParadigm::memcpy, l, {}, s).sec_per_iter,
              1e-12);
  EXPECT_EQ(inf.loop.bound, "host");
  EXPECT_TRUE(inf.loop.named);
  EXPECT_NEAR(inf.loop.host_s, 86e-6, 1e-9);
  EXPECT_NEAR(inf.loop.hop_s, 3e-6, 1e-12);
  EXPECT_NEAR(inf.loop.time_s, inf.sec_per_iter, 1e-12);
  const SimResult copies = sim(t, SimParadigm::memcpy, l, {}, s);
  EXPECT_NEAR(copies.sec_per_iter, 86e-6 + 2 * 20e-6, 1e-9);  // one copy per GPU to its neighbour
  // GPU-bound: the slowest GPU, launched, plus the event hop
  s.gpu.host = HostCallCosts{};
  s.gpu.host.launch_us = 1e-3;
  const SimResult gpu_bound = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_NEAR(gpu_bound.sec_per_iter, bare.sec_per_iter + (s.gpu.launch_us + 3) * 1e-6, 1e-9);
  EXPECT_EQ(gpu_bound.loop.bound, "gpus");
  EXPECT_EQ(bare.loop.bound, "kernels");  // infinite without a named loop: no host in it
  // with a read-back: issue + GPUs + sync + a read-back per GPU; infinite on 2 GPUs too
  s.gpu.host.launch_us = 30;
  s.gpu.host.memset_us = 40;
  s.gpu.host.readback_us = 7;
  for (auto& it : t.iterations) {
    it.host_sync = true;
    it.memsets = 1;
  }
  const SimResult synced = sim(t, SimParadigm::p2p_inline, l, {}, s);
  // each GPU's one kernel is now its memset: priced as one (40), not as a launch (30); set
  // device, wait and record are priced 0 here
  const double issue = 2 * 40e-6;
  const double gpu_p2p = sim(t, SimParadigm::p2p_inline, l, {}, System(two_gpus())).sec_per_iter;  // launched + sync
  EXPECT_NEAR(synced.sec_per_iter, issue + gpu_p2p + 2 * 7e-6, 1e-9);
  EXPECT_EQ(synced.loop.bound, "host+gpus");
  EXPECT_NEAR(synced.loop.host_s + synced.loop.gpus_s + synced.loop.readback_s, synced.sec_per_iter, 1e-12);
  const SimResult inf_synced = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_EQ(inf_synced.loop.bound, "host+gpus");
  EXPECT_NEAR(inf_synced.loop.readback_s, synced.loop.readback_s, 1e-12);
  EXPECT_NEAR(inf_synced.sec_per_iter, issue + inf_synced.loop.gpus_s + synced.loop.readback_s, 1e-9);
  EXPECT_LE(inf_synced.sec_per_iter, synced.sec_per_iter);
  // the loop's costs unmeasured (all 0): the estimate issue_us applies again
  s.gpu.host = HostCallCosts{};
  s.gpu.issue_us = 100;
  s.gpu.readback_us = 0;
  for (auto& it : t.iterations) it.host_sync = false;
  EXPECT_NEAR(sim(t, SimParadigm::p2p_inline, l, {}, s).sec_per_iter, 2 * 100e-6, 1e-9);
}

// In a CUDA graph memcpy's copies take the measured copy-node time (System::graph_copy_us),
// interpolated by size; on a stream, or without the table, the copy-engine model.
TEST(SimEngine, GraphCopiesTakeTheMeasuredNodeTime) {
  const TestLink l;
  System s = two_gpus();
  Trace t = slabs({run(Op::store, kSlab, 256)}, 3);
  for (auto& it : t.iterations) it.host_sync = false;
  SimOptions graph;
  graph.graph_launch = true;
  const SimResult without = sim(t, SimParadigm::memcpy, l, graph, s);
  const SimResult inf = sim(t, SimParadigm::infinite, l, graph, s);
  s.graph_copy_us = {{4, 50}, {1 << 20, 150}};
  const SimResult with = sim(t, SimParadigm::memcpy, l, graph, s);
  // one copy per GPU of the slab's boundary row: between 50 and 150 us, far above the link model
  EXPECT_GT(with.sec_per_iter, without.sec_per_iter + 40e-6);
  EXPECT_LT(with.sec_per_iter, inf.sec_per_iter + 151e-6);
  EXPECT_NEAR(sim(t, SimParadigm::memcpy, l, {}, s).sec_per_iter, sim(t, SimParadigm::memcpy, l, {}, two_gpus()).sec_per_iter,
              1e-12);  // a stream-issued loop keeps the copy-engine model
  // ... unless the copy right after a kernel on a stream is measured: the GPU's first copy takes
  // that (one 1024-B copy per GPU here: 50 + 100 x 1020 / (2^20 - 4) us against the copy-engine
  // model's 1 us + 1024 B at 10 GB/s)
  System streamed = two_gpus();
  streamed.stream_copy_us = {{4, 50}, {1 << 20, 150}};
  const double measured = 50e-6 + 100e-6 * 1020 / double((1 << 20) - 4), engine = 1e-6 + 1024 / 10e9;
  EXPECT_NEAR(sim(t, SimParadigm::memcpy, l, {}, streamed).sec_per_iter - sim(t, SimParadigm::memcpy, l, {}, two_gpus()).sec_per_iter,
              measured - engine, 1e-12);
  // a graph keeps its node time
  streamed.graph_copy_us = s.graph_copy_us;
  EXPECT_DOUBLE_EQ(sim(t, SimParadigm::memcpy, l, graph, streamed).sec_per_iter, with.sec_per_iter);
}

TEST(SimSystem, GraphCopyInterpolatesAndExtendsAtTheLinkRate) {
  System s = two_gpus();
  s.graph_copy_us = {{4, 5}, {1000, 7}, {3000, 17}};
  s.stream_copy_us = {{4, 6}, {1000, 8}};  // the same rule
  EXPECT_NEAR(s.stream_copy_s(502), 7e-6, 1e-15);
  EXPECT_THROW(two_gpus().stream_copy_s(8), std::logic_error);
  EXPECT_NEAR(s.graph_copy_s(2), 5e-6, 1e-15);
  EXPECT_NEAR(s.graph_copy_s(1000), 7e-6, 1e-15);
  EXPECT_NEAR(s.graph_copy_s(2000), 12e-6, 1e-15);
  EXPECT_EQ(s.graph_copy_s(0), 0);
  // past the last point: the extra bytes' wire time
  EXPECT_NEAR(s.graph_copy_s(3000 + 2560), 17e-6 + wire_time_s(s.link, wire_bytes_write(s.link, 2560)), 1e-15);
  s.graph_copy_us.clear();
  EXPECT_THROW(s.graph_copy_s(8), std::logic_error);
}

// A link sweep scales the measured copy curves at every size: their bytes' wire time moves to the
// swept link's rate, the rest (the fixed part) stays. Before, only bytes past the last point
// scaled, so a 1 GB/s link copied a halo as fast as the measured one.
TEST(SimSystem, CopyCurvesScaleWithTheLinkBelowAndAboveTheirLastPoint) {
  System s = two_gpus();
  s.graph_copy_us = {{4, 5}, {1000, 7}, {3000, 17}};
  s.stream_copy_us = s.graph_copy_us;
  const double base_mid = s.graph_copy_s(2000), base_past = s.graph_copy_s(5000);
  const double wire_mid = wire_time_s(s.link, wire_bytes_write(s.link, 2000));
  const double wire_past = wire_time_s(s.link, wire_bytes_write(s.link, 5000));
  System slow = s;  // a tenth of the link: every byte 10x as long, the fixed part unchanged
  slow.link.raw_GBps /= 10;
  slow.curve_link_scale = 0.1;
  EXPECT_NEAR(slow.graph_copy_s(2000) - base_mid, 9 * wire_mid, 1e-15);
  EXPECT_NEAR(slow.stream_copy_s(2000) - base_mid, 9 * wire_mid, 1e-15);
  EXPECT_NEAR(slow.graph_copy_s(5000) - base_past, 9 * wire_past, 1e-15);
  System fast = s;  // twice the link: half the bytes' time off
  fast.link.raw_GBps *= 2;
  fast.curve_link_scale = 2;
  EXPECT_NEAR(base_mid - fast.graph_copy_s(2000), wire_mid / 2, 1e-15);
  // never faster than the bytes alone on the swept link, even where the curve beats the link
  System quick = s;
  quick.graph_copy_us = {{4, 1e-6}, {1 << 20, 2e-6}};
  quick.link.raw_GBps /= 4;
  quick.curve_link_scale = 0.25;
  EXPECT_NEAR(quick.graph_copy_s(4096), wire_time_s(quick.link, wire_bytes_write(quick.link, 4096)), 1e-15);
  EXPECT_EQ(slow.graph_copy_s(0), 0);
}

// --sweep link_bw on the measured 4xH200 preset: every paradigm that moves bytes over the links
// slows when the link falls to 1 GB/s (memcpy among them: its copies take the measured curves)
// and none slows at 512 GB/s, memcpy in a graph speeds up; infinite moves nothing and never
// changes.
TEST(SimEngine, LinkSweepMovesEveryParadigmThatUsesTheLink) {
  const System h = preset("h200x4", 2);
  ASSERT_FALSE(h.graph_copy_us.empty());
  ASSERT_FALSE(h.stream_copy_us.empty());
  SimOptions measured, slow, fast;
  slow.link_scale = 1 / h.link.raw_GBps;
  fast.link_scale = 512 / h.link.raw_GBps;
  for (bool graph : {true, false}) {
    measured.graph_launch = slow.graph_launch = fast.graph_launch = graph;
    for (SimParadigm p : parse_sim_paradigms("all")) {
      TraceRequest r;
      r.app = "heat3d";
      r.gpus = 2;
      r.layout = sim_trace_layout(p);
      r.problem.iters = 2;
      r.problem.n[0] = r.problem.n[1] = r.problem.n[2] = 64;
      const Trace t = make_trace(r);
      const double at = simulate(t, h, p, measured).sec_per_iter;
      const double at_slow = simulate(t, h, p, slow).sec_per_iter;
      const double at_fast = simulate(t, h, p, fast).sec_per_iter;
      const std::string what = std::string(sim_paradigm_name(p)) + (graph ? " graph" : " stream");
      if (p == SimParadigm::infinite) {
        EXPECT_EQ(at_slow, at) << what;
        EXPECT_EQ(at_fast, at) << what;
        continue;
      }
      EXPECT_GT(at_slow, at) << what;
      EXPECT_LE(at_fast, at) << what;
      if (p == SimParadigm::memcpy) {
        // a 16-KiB halo plane each way: at 1 GB/s its bytes alone take 16 us more
        EXPECT_GT(at_slow - at, 15e-6) << what;
        if (graph) EXPECT_LT(at_fast, at) << what;  // a stream loop here is bound by the host's issue
      }
    }
  }
}

// Marching blocks: a kernel takes at least its busiest block slot's serial steps x
// serial_step_us (blocks go to slot block % wave, the wave from the kernel's own blocks_per_sm).
TEST(SimEngine, MarchingBlocksAreBoundByTheirSerialSteps) {
  const TestLink l;
  System s = two_gpus();  // 4 SMs
  s.gpu.serial_step_us = -1;  // not modelled
  Trace t = slabs({}, 1, 8);
  const SimResult roof = sim(t, SimParadigm::infinite, l, {}, s);
  for (auto& k : t.iterations[0].kernels) {
    k.blocks_per_sm = 1;  // a wave of 4 blocks: slots get blocks {0, 4}, {1, 5}, ...
    for (auto& b : k.blocks) b.serial_steps = b.block == 5 ? 300 : 100;
  }
  s.gpu.serial_step_us = 1;
  const SimResult marched = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_NEAR(marched.sec_per_iter, std::max(roof.sec_per_iter, (100 + 300) * 1e-6), 1e-9);
  EXPECT_GT(marched.sec_per_iter, roof.sec_per_iter);
  // Sampled (half the blocks recorded, each standing for two): the mean recorded block (200
  // steps) times the blocks per slot (8 / 4), at least the longest recorded block (300).
  Trace half = t;
  for (auto& k : half.iterations[0].kernels) {
    std::vector<BlockTrace> keep;
    for (auto& b : k.blocks)
      if (b.block == 1 || b.block == 5) keep.push_back(b);  // 100 and 300 steps
    for (auto& b : keep) b.weight = 4;
    k.blocks = keep;
  }
  const SimResult sampled = sim(half, SimParadigm::infinite, l, {}, s);
  EXPECT_GE(sampled.sec_per_iter, 400e-6 - 1e-9);
  EXPECT_NEAR(sampled.sec_per_iter, std::max(sim(half, SimParadigm::infinite, l, {}, [&] {
                                                System z = s;
                                                z.gpu.serial_step_us = -1;
                                                return z;
                                              }()).sec_per_iter,
                                              400e-6),
              1e-9);
  s.gpu.serial_step_us = -1;  // not modelled: the roofline alone
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, roof.sec_per_iter, 1e-12);
}

// Chains of dependent loads (BlockTrace::chain_steps): a kernel takes at least
// max(longest block chain, sum of the blocks' chains / wave slots) x load_latency_ns, the
// wave from the kernel's own blocks_per_sm; where its roofline is longer, the roofline.
TEST(SimEngine, ChainedLoadsAreBoundByTheLoadLatency) {
  const TestLink l;
  System s = two_gpus();  // 4 SMs x 2 blocks: a wave of 8
  Trace t = slabs({}, 1, 16);
  const SimResult roof = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_LT(roof.sec_per_iter, 5e-6);
  s.gpu.load_latency_ns = 1000;
  // no chains (an old trace): the latency changes nothing
  EXPECT_EQ(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, roof.sec_per_iter);
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.chain_steps = 10;
  // 16 blocks x 10 steps on 8 slots: 20 steps of 1 us
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 20e-6, 1e-12);
  // the kernel's own residency: 1 block per SM, 4 slots: 40 steps
  for (auto& k : t.iterations[0].kernels) k.blocks_per_sm = 1;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 40e-6, 1e-12);
  for (auto& k : t.iterations[0].kernels) k.blocks_per_sm = 0;
  // one long block: 15 x 10 + 50 = 200 steps / 8 = 25, but block 3 alone takes 50
  for (auto& k : t.iterations[0].kernels) k.blocks[3].chain_steps = 50;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 50e-6, 1e-12);
  // sampled: blocks 1 (10 steps) and 3 (50) recorded, 8 blocks each: 480 / 8 = 60 steps
  Trace half = t;
  for (auto& k : half.iterations[0].kernels) {
    std::vector<BlockTrace> keep;
    for (auto& b : k.blocks)
      if (b.block == 1 || b.block == 3) keep.push_back(b);
    for (auto& b : keep) b.weight = 8;
    k.blocks = keep;
  }
  EXPECT_NEAR(sim(half, SimParadigm::infinite, l, {}, s).sec_per_iter, 60e-6, 1e-12);
  // bandwidth-bound: at 1 ns a step the chains (at most 50 ns) stay under the roofline
  s.gpu.load_latency_ns = 1;
  EXPECT_EQ(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, roof.sec_per_iter);
  // not modelled (0): the roofline
  s.gpu.load_latency_ns = 0;
  EXPECT_EQ(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, roof.sec_per_iter);
}

// A rolled loop (KernelTrace::chain_adds): its rounds' latencies add to the roofline instead of
// competing with it. 16 blocks x 10 rounds on 8 slots at 50 ns: 1 us on top of the kernel's
// bandwidth time (1.31 us); without the flag the kernel takes the larger of the two.
TEST(SimEngine, RolledLoopChainsAddToTheRoofline) {
  const TestLink l;
  System s = two_gpus();  // 4 SMs x 2 blocks: a wave of 8
  s.gpu.load_latency_ns = 50;
  Trace t = slabs({}, 1, 16);
  const KernelBound base = sim(t, SimParadigm::infinite, l, {}, s).kernels.at(0);
  ASSERT_GT(base.time_s, 1e-6);
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.chain_steps = 10;
  const KernelBound competes = sim(t, SimParadigm::infinite, l, {}, s).kernels.at(0);
  EXPECT_NEAR(competes.chain_s, 1e-6, 1e-15);
  EXPECT_DOUBLE_EQ(competes.time_s, base.time_s);
  EXPECT_EQ(competes.bound, base.bound);
  for (auto& k : t.iterations[0].kernels) k.chain_adds = 1;
  const KernelBound adds = sim(t, SimParadigm::infinite, l, {}, s).kernels.at(0);
  EXPECT_NEAR(adds.time_s, base.time_s + 1e-6, 1e-15);
  EXPECT_EQ(adds.bound, base.bound + "+chain");
}

// Warp instructions (BlockTrace::warp_insts, push_insts for p2p_inline) issue at SMs x
// issue_per_clock x clock, and that time adds to the chain's (docs/sim.md "Issue bound").
// Hand-computed: 4 SMs x 4 schedulers at 1 GHz issue 16 G warp instructions a second.
TEST(SimEngine, IssueTimeAddsToTheChain) {
  const TestLink l;
  System s = two_gpus();  // 4 SMs x 2 blocks: a wave of 8
  s.gpu.clock_GHz = 1;
  s.gpu.issue_per_clock = 4;
  Trace t = slabs({}, 1, 16);
  const SimResult roof = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_LT(roof.sec_per_iter, 5e-6);
  // 16 blocks x 16000 instructions = 256000 at 16e9 a second: 16 us, alone
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) {
      b.warp_insts = 16000;
      b.push_insts = 32000;
    }
  SimResult r = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_FALSE(r.kernels.empty());
  EXPECT_NEAR(r.kernels[0].warp_insts, 256000, 1e-9);
  EXPECT_NEAR(r.kernels[0].issue_s, 16e-6, 1e-15);
  EXPECT_EQ(r.kernels[0].bound, "issue");
  EXPECT_NEAR(r.kernels[0].time_s, 16e-6, 1e-15);
  // p2p_inline takes the push variant's count: 32 us
  r = sim(t, SimParadigm::p2p_inline, l, {}, s);
  EXPECT_NEAR(r.kernels.at(0).issue_s, 32e-6, 1e-15);
  // with chains of 10 steps at 1 us (16 blocks on 8 slots: 20 us) the two add: 36 us
  s.gpu.load_latency_ns = 1000;
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.chain_steps = 10;
  r = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_NEAR(r.kernels.at(0).chain_s, 20e-6, 1e-15);
  EXPECT_NEAR(r.kernels[0].time_s, 36e-6, 1e-15);
  EXPECT_EQ(r.kernels[0].bound, "chain+issue");
  // sampled: 2 of the 16 blocks recorded, 8 each: the same count
  Trace half = t;
  for (auto& k : half.iterations[0].kernels) {
    k.blocks.resize(2);
    for (auto& b : k.blocks) b.weight = 8;
  }
  EXPECT_NEAR(sim(half, SimParadigm::infinite, l, {}, s).kernels.at(0).issue_s, 16e-6, 1e-15);
  // no instructions given (an older trace): no issue term
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.warp_insts = b.push_insts = 0;
  r = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_EQ(r.kernels.at(0).issue_s, 0);
  EXPECT_EQ(r.kernels[0].bound, "chain");
}

// The gathers of a chain (gather_steps) take the L2 latency as often as the kernel's gathered
// arrays (gather_bytes) fit the L2: hit = min(1, l2_bytes / gather_bytes), a gather
// hit x l2 + (1 - hit) x hbm; the other steps the HBM latency. Hand-computed: 16 blocks of
// 10 steps, 4 of them gathers, on 8 slots (2 blocks a slot), HBM 1000 ns, L2 400 ns, L2 1 MiB.
TEST(SimEngine, ChainGathersTakeTheL2LatencyWhenTheirArraysFit) {
  const TestLink l;
  System s = two_gpus();
  Trace t = slabs({}, 1, 16);
  s.gpu.load_latency_ns = 1000;
  s.gpu.l2_latency_ns = 400;
  s.gpu.l2_bytes = 1 << 20;
  auto set = [&](std::uint64_t bytes) {
    for (auto& k : t.iterations[0].kernels) {
      k.gather_bytes = bytes;
      for (auto& b : k.blocks) {
        b.chain_steps = 10;
        b.gather_steps = 4;
      }
    }
  };
  // fits (512 KiB): 6 x 1000 + 4 x 400 = 7.6 us a block, 2 a slot: 15.2 us
  set(512 << 10);
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 15.2e-6, 1e-12);
  // exactly the L2: still every gather a hit
  set(1 << 20);
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 15.2e-6, 1e-12);
  // 4 MiB: hit 1/4, a gather 0.25 x 400 + 0.75 x 1000 = 850 ns: 6 + 3.4 = 9.4 us a block: 18.8 us
  set(4 << 20);
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 18.8e-6, 1e-12);
  // no gathered bytes given (a version-4 trace): every step HBM, 20 us
  set(0);
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 20e-6, 1e-12);
  // no L2 latency modelled: every step HBM
  set(512 << 10);
  s.gpu.l2_latency_ns = 0;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 20e-6, 1e-12);
  s.gpu.l2_latency_ns = 400;
  // no gathers among the steps: every step HBM, whatever the footprint
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.gather_steps = 0;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 20e-6, 1e-12);
  // the longest block by time: block 3 of 10 steps, none a gather (10 us) against 15 blocks of
  // 10 steps, 4 gathers in a fitting footprint (7.6 us): sum 124 / 8 = 15.5 us > 10 us
  set(512 << 10);
  for (auto& k : t.iterations[0].kernels) k.blocks[3].gather_steps = 0;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 15.5e-6, 1e-12);
  // ... and block 3 of 40 steps, none a gather: 40 us alone
  for (auto& k : t.iterations[0].kernels) k.blocks[3].chain_steps = 40;
  EXPECT_NEAR(sim(t, SimParadigm::infinite, l, {}, s).sec_per_iter, 40e-6, 1e-12);
}

// The stencil traces give no chains: their simulation does not depend on the load latency.
// --explain's data: per kernel of the last iteration, every bound and the one that set its time.
// The slabs trace (16 blocks x 8 KiB of local loads and stores per GPU) is bound by the bytes;
// with 10-step chains of 1 us (the previous test: 20 us) by the chains.
TEST(SimEngine, KernelBoundsNameWhatSetEachKernelsTime) {
  const TestLink l;
  System s = two_gpus();
  Trace t = slabs({}, 2, 16);
  const SimResult roof = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_EQ(roof.kernels.size(), 2u);  // the last iteration's two kernels, GPU 0 first
  EXPECT_EQ(roof.kernels[0].gpu, 0);
  EXPECT_EQ(roof.kernels[1].gpu, 1);
  for (const KernelBound& k : roof.kernels) {
    EXPECT_EQ(k.name, "step");
    EXPECT_TRUE(k.bound == "dram" || k.bound == "l2") << k.bound;
    EXPECT_NEAR(k.time_s, std::max({k.dram_s, k.l2_s, k.flops_s}) * k.wave_factor, 1e-15);
    EXPECT_EQ(k.chain_s, 0);
    EXPECT_GT(k.dram_bytes, 0);
  }
  EXPECT_NEAR(roof.kernels[0].time_s, roof.compute_s, 1e-15);  // one kernel a GPU: its time is the compute
  s.gpu.load_latency_ns = 1000;
  for (auto& it : t.iterations)
    for (auto& k : it.kernels)
      for (auto& b : k.blocks) b.chain_steps = 10;
  const SimResult chained = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_EQ(chained.kernels.size(), 2u);
  EXPECT_EQ(chained.kernels[0].bound, "chain");
  EXPECT_NEAR(chained.kernels[0].chain_s, 20e-6, 1e-12);
  EXPECT_NEAR(chained.kernels[0].time_s, 20e-6, 1e-12);
  const std::string text = explain_kernels(chained);
  EXPECT_NE(text.find("gpu0 step: 20.00 us, chain bound; roofline "), std::string::npos) << text;
  EXPECT_NE(text.find("; chain 20.00 us; issue -\ngpu1 step: 20.00 us, chain bound"), std::string::npos) << text;
  EXPECT_EQ(explain_kernels(SimResult{}), "");
}

TEST(SimEngine, StencilTracesIgnoreTheLoadLatency) {
  System h = preset("h200x4", 2);
  ASSERT_GT(h.gpu.load_latency_ns, 0);
  ASSERT_GT(h.gpu.l2_latency_ns, 0);
  System z = h;
  z.gpu.load_latency_ns = 0;
  z.gpu.l2_latency_ns = 0;
  for (const char* app : {"jacobi2d", "heat3d"}) {
    TraceRequest r;
    r.app = app;
    r.gpus = 2;
    r.problem.iters = 2;
    r.problem.tol = 0;
    const bool j = std::string(app) == "jacobi2d";
    r.problem.n[0] = j ? 64 : 32;
    r.problem.n[1] = j ? 64 : 32;
    r.problem.n[2] = j ? 0 : 32;
    const Trace t = make_trace(r);
    for (const auto& it : t.iterations)
      for (const auto& k : it.kernels)
        for (const auto& b : k.blocks) ASSERT_EQ(b.chain_steps, 0u) << app;
    for (SimParadigm p : {SimParadigm::memcpy, SimParadigm::p2p_inline, SimParadigm::infinite}) {
      const SimResult a = simulate(t, h, p, {}), b = simulate(t, z, p, {});
      EXPECT_EQ(a.sec_per_iter, b.sec_per_iter) << app << " " << sim_paradigm_name(p);
      EXPECT_EQ(a.link_bytes_per_iter, b.link_bytes_per_iter) << app;
    }
  }
}

// A marching kernel's tail wave is left to its serial bound: 9 blocks on a wave of 4 (a tail of
// 1 < half a wave) cost a plain kernel 10 / 9 of its roofline; marching (1 step each, far below
// the roofline) they cost the roofline alone.
TEST(SimEngine, MarchingKernelsTakeNoPartialWaveFactor) {
  const TestLink l;
  System s = two_gpus();  // 4 SMs
  Trace t = slabs({}, 1, 9);
  for (auto& k : t.iterations[0].kernels) k.blocks_per_sm = 1;
  s.gpu.serial_step_us = 1e-9;
  const SimResult plain = sim(t, SimParadigm::infinite, l, {}, s);
  for (auto& k : t.iterations[0].kernels)
    for (auto& b : k.blocks) b.serial_steps = 1;
  const SimResult marched = sim(t, SimParadigm::infinite, l, {}, s);
  EXPECT_NEAR(marched.sec_per_iter, plain.sec_per_iter * 9.0 / 10.0, 1e-12);
}

// A result standing for a longer run weighs bytes like time: useful bytes never exceed wire bytes.
TEST(SimEngine, LongerRunsWeighBytesLikeTime) {
  const TestLink l;
  const Trace t = slabs({run(Op::store, kSlab, 256)}, 3);
  SimOptions o;
  o.run_iters = 1000;
  for (SimParadigm p : {SimParadigm::memcpy, SimParadigm::p2p_inline, SimParadigm::proact}) {
    const SimResult r = sim(t, p, l, o);
    EXPECT_GT(r.useful_bytes_per_iter, 0.0);
    EXPECT_LE(r.useful_bytes_per_iter, r.link_bytes_per_iter);
    EXPECT_NEAR(r.useful_bytes_per_iter, sim(t, p, l).useful_bytes_per_iter, 1e-9);  // steady from the start
  }
  // UM: the early iterations migrate pages, the later ones read remotely; both counts follow
  const SimResult um = sim(um_pingpong_trace(), SimParadigm::um, l, o);
  EXPECT_LE(um.useful_bytes_per_iter, um.link_bytes_per_iter);
  EXPECT_NEAR(um.useful_bytes_per_iter, 4096, 0.01 * 4096);  // the pinned page's 4 KiB per iteration
}

namespace {

// One GPU, one kernel of `blocks` blocks (blocks_per_sm of them per SM); block b loads and stores
// its own 4 KiB and marches steps(b) steps.
template <class Steps>
Trace marching_kernel(std::uint32_t blocks, std::uint32_t per_sm, Steps steps) {
  Trace t;
  t.gpus = 1;
  t.allocations = {{"slab", MemKind::device, 0, -1, 0, kSlab}};
  IterationTrace it;
  it.host_sync = true;
  KernelTrace k;
  k.gpu = 0;
  k.grid_blocks = blocks;
  k.blocks_per_sm = per_sm;
  for (std::uint32_t b = 0; b < blocks; ++b) {
    BlockTrace bt;
    bt.block = b;
    bt.serial_steps = steps(b);
    bt.runs = {run(Op::load, b * 4096, 1024), run(Op::store, kSlab / 2 + b * 4096, 1024)};
    k.blocks.push_back(bt);
  }
  it.kernels = {k};
  t.iterations = {it};
  return t;
}

System one_gpu() {
  System s = two_gpus();  // 4 SMs, HBM 100 GB/s, L2 1000 GB/s
  s.gpus = 1;
  return s;
}

}  // namespace

// serial_step_us = 0: a step's time is derived, resident blocks x bytes per block-step / HBM, so
// it follows the residency. 8 blocks, each 4 KiB loaded and 4 KiB stored; block 5 marches 12
// steps, the others 4: 40 steps, 65536 B, 1638.4 B per step.
TEST(SimEngine, MarchStepIsDerivedFromTheResidency) {
  const TestLink l;
  System s = one_gpu();
  s.gpu.serial_step_us = 0;
  const auto steps = [](std::uint32_t b) { return b == 5 ? 12u : 4u; };
  // 1 block per SM: 4 resident, a step 4 x 1638.4 B / 100 GB/s = 65.536 ns; slot 1 holds blocks 1
  // and 5, 16 steps: 1.048576 us, above the DRAM roofline (65536 B / 100 GB/s = 0.65536 us).
  EXPECT_NEAR(sim(marching_kernel(8, 1, steps), SimParadigm::infinite, l, {}, s).sec_per_iter, 16 * 4 * 1638.4 / 100e9,
              1e-15);
  // 2 blocks per SM: all 8 resident, each step twice as long; the busiest slot is block 5 alone.
  EXPECT_NEAR(sim(marching_kernel(8, 2, steps), SimParadigm::infinite, l, {}, s).sec_per_iter, 12 * 8 * 1638.4 / 100e9,
              1e-15);
  // 4 blocks per SM: 16 slots, but only the 8 blocks of the grid are resident: as at 2 per SM.
  EXPECT_NEAR(sim(marching_kernel(8, 4, steps), SimParadigm::infinite, l, {}, s).sec_per_iter, 12 * 8 * 1638.4 / 100e9,
              1e-15);
  // Bytes that hit the L2 go at its rate: every block loads the same 4 KiB (as a chunk's priming
  // planes are the chunk below's), so of the 65536 B the march asks beyond L1 36864 come from HBM
  // (4096 loaded once, 32768 stored) and 28672 from the L2. Per step 921.6 B at 100 GB/s and
  // 716.8 B at 1000 GB/s, 4 resident: 39.7312 ns; the busiest slot's 16 steps 635.6992 ns.
  Trace shared = marching_kernel(8, 1, steps);
  for (auto& b : shared.iterations[0].kernels[0].blocks) b.runs[0].addr = 0;
  EXPECT_NEAR(sim(shared, SimParadigm::infinite, l, {}, s).sec_per_iter, 16 * 4 * (921.6 / 100e9 + 716.8 / 1000e9),
              1e-15);
  // A given serial_step_us is taken as it is: 16 steps x 1 us.
  s.gpu.serial_step_us = 1;
  EXPECT_NEAR(sim(marching_kernel(8, 1, steps), SimParadigm::infinite, l, {}, s).sec_per_iter, 16e-6, 1e-15);
}

// A marching block's rows along the other axis are its other warps' centres (L1 hits): its L2
// traffic is its distinct loads plus its stores. Each block loads its 4-KiB row and the rows
// 512 B below and above it (12 KiB of loads, 5 KiB distinct) and stores 4 KiB; HBM is made fast
// so that L2 (1000 GB/s) bounds the kernel.
TEST(SimEngine, MarchingBlocksReadTheirNeighbourRowsFromL1) {
  const TestLink l;
  System s = one_gpu();
  s.gpu.hbm_GBps = 1e6;
  s.gpu.serial_step_us = -1;  // the serial bound is not modelled: the L2 bound alone
  const auto kernel = [](std::uint32_t steps) {
    Trace t = marching_kernel(8, 2, [&](std::uint32_t) { return steps; });
    for (auto& b : t.iterations[0].kernels[0].blocks) {
      const std::uint64_t row = 8192 + std::uint64_t(b.block) * 8192;
      b.runs = {run(Op::load, row, 1024), run(Op::load, row - 512, 1024), run(Op::load, row + 512, 1024),
                run(Op::store, kSlab / 2 + row, 1024)};
    }
    return t;
  };
  EXPECT_NEAR(sim(kernel(3), SimParadigm::infinite, l, {}, s).sec_per_iter, 8 * (5120 + 4096) / 1000e9, 1e-15);
  // The same blocks not marching (a plain kernel): every load through L2.
  EXPECT_NEAR(sim(kernel(0), SimParadigm::infinite, l, {}, s).sec_per_iter, 8 * (3 * 4096 + 4096) / 1000e9, 1e-15);
}

// The driver's rule on one page, as jacobi2d's boundary row meets it: GPU 1 reads it at the end of
// an iteration, GPU 0 writes it at the start of the next, and then GPU 1 again two iterations
// later. Migrations 0.1 ms and 2T - 0.1 ms apart: with 2T within the 500-us lapse the page
// pins at the fifth fault; beyond it the short gaps count, the long ones reset the page once it
// reaches the threshold, and it never pins.
TEST(SimEngine, UmDriverPinsOnlyWhenEveryGapIsWithinTheLapse) {
  const UmThrashing th;  // 500 us, 3 events
  const auto faults_until_pinned = [&](double T) {
    UmPages pg(0, 0, 4096, 4096, 2, 0);
    pg.place_first_touch();  // nothing touched: stays on GPU 0
    for (int cycle = 0; cycle < 20; ++cycle) {
      const double t0 = cycle * 2 * T;
      for (const auto& [g, at] : {std::pair{1, t0 + T - 0.05e-3}, std::pair{0, t0 + T + 0.05e-3}}) {
        pg.add(0, g, g == 1, g == 0, 4, 0);
        pg.driver_faults([&](int, double) { return at; }, th);
        pg.end_iteration();
        if (pg.pinned(0)) return 2 * cycle + (g == 1 ? 1 : 2);
      }
    }
    return -1;
  };
  EXPECT_EQ(faults_until_pinned(176e-6), 5);   // 8192^2 on 2 H200s: um 175.9 us, as um_hints
  EXPECT_EQ(faults_until_pinned(318e-6), -1);  // 11584^2: 593.1 us, um_hints 317.7
  EXPECT_EQ(faults_until_pinned(612e-6), -1);  // 16384^2
  // Touches of two GPUs that interleave in one iteration (3D um split along y) ping-pong the page
  // within microseconds: it pins at once, whatever the gaps between iterations. Stored by both
  // (write-shared), it does not: it keeps migrating between its writers.
  for (bool both_store : {false, true}) {
    UmPages pg(0, 0, 4096, 4096, 2, 0);
    pg.place_first_touch();
    pg.add(0, 0, true, true, 4, 0.1);
    pg.add(0, 0, true, false, 4, 0.9);
    pg.add(0, 1, true, both_store, 4, 0.5);
    pg.driver_faults([](int, double pos) { return pos * 1e-3; }, th);
    EXPECT_EQ(pg.pinned(0), !both_store) << both_store;
  }
}

// A page stored by both GPUs in one iteration migrates between them every iteration while its
// migrations are further apart than the driver's lapse (here 10 us; 3D um split along y: 11-21
// ms iterations on 4xH200). GPU 0 stores page 0 and the first KiB of page 1, GPU 1 the other
// 3 KiB of page 1 and page 2: page 1 lives on GPU 1 (most stores); each iteration GPU 0 faults
// it over and GPU 1 faults it back.
TEST(SimEngine, UmWriteSharedPagesKeepMigrating) {
  const TestLink l;
  const auto trace = [](bool gpu0_loads) {
    Trace t;
    t.gpus = 2;
    t.layout = "grid";
    t.allocations = {{"grid", MemKind::managed, 0, -1, 0, 8 * 4096}};
    for (int i = 0; i < 4; ++i) {
      IterationTrace it;
      it.host_sync = true;
      KernelTrace k0, k1;
      k0.gpu = 0, k1.gpu = 1;
      k0.grid_blocks = k1.grid_blocks = 1;
      BlockTrace b0, b1;
      b0.runs = {run(Op::store, 0, 1280)};  // 5 KiB
      if (gpu0_loads) b0.runs.push_back(run(Op::load, 4096, 256));  // its KiB of page 1, loaded too
      b1.runs = {run(Op::store, 5120, 1792)};  // 7 KiB
      k0.blocks = {b0};
      k1.blocks = {b1};
      it.kernels = {k0, k1};
      t.iterations.push_back(it);
    }
    return t;
  };
  const double page = 4096 + 16 * 24;  // one migration's wire bytes
  // Every iteration: GPU 1 (slower kernel: 7 KiB stored, 71.68 ns, x4 for one block on a wave of
  // 8) waits for one fault (20 us; the migration's 0.448 us on the link hides under it):
  // launch 5 + 0.28672 + 20, then the host's sync, 8 us.
  SimOptions longer;
  longer.run_iters = 1000;
  System s = two_gpus();
  s.gpu.um_thrash_lapse_us = 10;
  for (const SimOptions& o : {SimOptions{}, longer}) {
    const SimResult um = sim(trace(false), SimParadigm::um, l, o, s);
    EXPECT_NEAR(um.sec_per_iter, (5 + 4 * 7168 / 100e3 + 20 + 8) * 1e-6, 1e-12);
    EXPECT_DOUBLE_EQ(um.link_bytes_per_iter, 2 * page);
  }
  // GPU 0 also loads its KiB of page 1 (as wave3d loads a plane's previous values before storing
  // over them): its loads and its stores fault apart, two faults a step. GPU 0: 1 KiB loaded and
  // 5 KiB stored (61.44 ns, x4), two faults: 5 + 0.24576 + 40 + 8 us; three migrations.
  const SimResult ls = sim(trace(true), SimParadigm::um, l, longer, s);
  EXPECT_NEAR(ls.sec_per_iter, (5 + 4 * 6144 / 100e3 + 40 + 8) * 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(ls.link_bytes_per_iter, 3 * page);
}

// Faults of one GPU to contiguous pages are one batch (one fault_us), also across two managed
// allocations that abut (the trace's per-span pieces of one real buffer). Pages 0-3 (allocation
// A) are GPU 0's, pages 4-7 (B) GPU 1's; GPU 1 loads A's pages 1 and 3, GPU 0 loads B's page 4.
// GPU 0 faults page 4 over and pages 1 and 3 back: batches {1}, {3, 4}: 2 x 20 us, where one
// fault each would be 60 us. GPU 1 the same: pages 1 and 3 over, 4 back.
TEST(SimEngine, UmFaultsToContiguousPagesAreOneBatch) {
  const TestLink l;
  Trace t;
  t.gpus = 2;
  t.layout = "grid";
  t.allocations = {{"A", MemKind::managed, 0, -1, 0, 4 * 4096}, {"B", MemKind::managed, 1, -1, 4 * 4096, 4 * 4096}};
  IterationTrace it;
  it.host_sync = true;
  KernelTrace k0, k1;
  k0.gpu = 0, k1.gpu = 1;
  k0.grid_blocks = k1.grid_blocks = 1;
  BlockTrace b0, b1;
  b0.runs = {run(Op::store, 0, 4096), run(Op::load, 4 * 4096, 1024)};
  b1.runs = {run(Op::store, 4 * 4096, 4096), run(Op::load, 1 * 4096, 1024), run(Op::load, 3 * 4096, 1024)};
  k0.blocks = {b0};
  k1.blocks = {b1};
  it.kernels = {k0, k1};
  t.iterations = {it};
  const SimResult um = sim(t, SimParadigm::um, l);
  // The slower GPU is GPU 1: 8 KiB loaded + 16 KiB stored at 100 GB/s, x4 (one block on a wave
  // of 8): 0.98304 us; 5 us launch, 2 batches x 20 us, 8 us sync. Six migrations in all.
  EXPECT_NEAR(um.sec_per_iter, (5 + 4 * 24576 / 100e3 + 2 * 20 + 8) * 1e-6, 1e-12);
  EXPECT_DOUBLE_EQ(um.link_bytes_per_iter, 6 * (4096 + 16 * 24));
}

// A marching kernel's remote loads (rdl's halo planes) are dependent steps: all reading blocks of
// a wave ask at once, so they wait a round trip plus the burst's wire time through the link, not
// a round trip alone. Each of GPU 0's 8 marching blocks (one wave) loads 4 KiB of GPU 1's slab:
// 8 x 32 lines x (16 + 128 + 24) = 43008 wire bytes at 10 GB/s = 4.30 us, plus the 2-us round trip.
TEST(SimEngine, MarchingRemoteLoadsWaitForTheirBurst) {
  const TestLink l;
  System s = two_gpus();  // a wave of 8
  s.gpu.serial_step_us = 0.01;  // short steps: the roofline and the waits decide
  auto trace = [](bool remote) {
    Trace t = slabs({}, 1, 8);
    t.layout = "remote";
    for (auto& k : t.iterations[0].kernels) {
      for (auto& b : k.blocks) {
        b.serial_steps = 4;
        if (k.gpu == 0)  // the halo: GPU 1's slab (remote), or GPU 0's own (local, same bytes)
          b.runs.push_back(run(Op::load, (remote ? kSlab : 0) + 65536 + b.block * 4096, 1024));
      }
    }
    return t;
  };
  const SimResult local = sim(trace(false), SimParadigm::rdl, l, {}, s);
  const SimResult rdl = sim(trace(true), SimParadigm::rdl, l, {}, s);
  EXPECT_DOUBLE_EQ(rdl.link_bytes_per_iter, 8 * 32 * (16 + 128 + 24));
  const double burst = 8 * 32 * (16 + 128 + 24) / 10e9;
  // the local variant moves the halo through HBM (4 KiB x 8 at 100 GB/s = 0.33 us) where rdl does
  // not; the wait (2 us + 4.30 us) and the last latency (1 us) come on top
  EXPECT_GE(rdl.sec_per_iter - local.sec_per_iter, 2e-6 + burst + 1e-6 - 8 * 4096 / 100e9 - 1e-9);
  // Before 2026-11-22 the wave paid the round trip alone (2 us): on PCIe 4 that made rdl's heat3d
  // halo (256 KB per side) cost ~1.3 us where its link needs ~10 us.
  EXPECT_GT(rdl.sec_per_iter - local.sec_per_iter, 2e-6 + 1e-6);
}

// Stores and atomics to one word (sssp's `changed` flag) add hot_word_ns per warp request on top
// of the kernel's bound; the same requests spread over a large array's sectors add next to nothing
// (docs/sim.md "Hot words"). Hand-computed on slabs' 16 blocks per GPU and iteration.
TEST(SimEngine, HotWordRequestsAddToTheKernel) {
  const TestLink l;
  System s = two_gpus();
  Trace t = slabs({}, 1, 16);
  const std::uint64_t flag = 3 * kSlab;  // a 4-B allocation of GPU 0's
  t.allocations.push_back({"flag0", MemKind::device, 0, -1, flag, 4});
  s.gpu.hot_word_ns = 1000;
  // no requests to the flag: the slabs' own stores, one run a block, spread over the slab's 32768
  // sectors (16 / 32768 a sector)
  const SimResult spread = sim(t, SimParadigm::infinite, l, {}, s);
  ASSERT_EQ(spread.kernels.size(), 2u);
  EXPECT_NEAR(spread.kernels[0].hot_requests, 16.0 / (kSlab / 32), 1e-12);
  Trace hot = t;
  for (auto& k : hot.iterations[0].kernels)
    if (k.gpu == 0)
      for (auto& b : k.blocks) {
        b.runs.push_back(run(Op::store, flag, 1));   // one warp's store
        b.runs.push_back(run(Op::atomic, flag, 1));  // another warp's atomic
      }
  const SimResult r = sim(hot, SimParadigm::infinite, l, {}, s);
  System off = s;  // not modelled (0): nothing added
  off.gpu.hot_word_ns = 0;
  const SimResult base = sim(hot, SimParadigm::infinite, l, {}, off);
  // 16 blocks x 2 requests at 1 us: 32 us on top of GPU 0's kernel, GPU 1's untouched
  EXPECT_NEAR(r.kernels[0].hot_requests, 32, 1e-12);
  EXPECT_NEAR(r.kernels[0].time_s - base.kernels[0].time_s, 32e-6, 1e-12);
  EXPECT_EQ(r.kernels[1].hot_s, spread.kernels[1].hot_s);
  EXPECT_EQ(r.kernels[0].bound, base.kernels[0].bound);  // the bound names what the requests add to
  EXPECT_GT(r.sec_per_iter, base.sec_per_iter + 31e-6);
  // sampled: 2 of the 16 blocks recorded, weight 8 each: the same 32 requests
  Trace half = hot;
  for (auto& k : half.iterations[0].kernels) {
    std::vector<BlockTrace> keep = {k.blocks[1], k.blocks[3]};
    for (auto& b : keep) b.weight = 8;
    k.blocks = keep;
  }
  EXPECT_NEAR(sim(half, SimParadigm::infinite, l, {}, s).kernels[0].hot_requests, 32, 1e-12);
  // a remote flag (GPU 1's) is not GPU 0's hot word
  Trace remote = hot;
  remote.allocations.back().gpu = 1;
  EXPECT_LT(sim(remote, SimParadigm::infinite, l, {}, s).kernels[0].hot_requests, 1);
  EXPECT_EQ(base.kernels[0].hot_s, 0.0);
}

// A measured compute (KernelTrace::compute_s, trace version 9; the CT projectors) is a roofline
// term taken in whole waves of blocks: 10 blocks on a wave of 8 take two waves, 1.6 x the compute
// at full occupancy; 16 blocks take exactly it. The bound is named "compute" and the bytes' terms
// still compete with it.
TEST(SimEngine, MeasuredComputeTakesWholeWaves) {
  TestLink l;
  const auto one_kernel = [](std::uint32_t blocks, double compute_s) {
    Trace t;
    t.app = "hand";
    t.gpus = 1;
    t.layout = "slabs";
    t.allocations = {{"slab0", MemKind::device, 0, -1, 0, kSlab}};
    IterationTrace it;
    KernelTrace k;
    k.name = "measured";
    k.grid_blocks = blocks;
    k.compute_s = compute_s;
    BlockTrace b;
    b.weight = blocks;
    b.runs = {run(Op::load, 0, 1024)};  // 4 KiB
    k.blocks = {b};
    it.kernels = {k};
    t.iterations = {it};
    return t;
  };
  const SimResult r10 = sim(one_kernel(10, 1e-3), SimParadigm::infinite, l);
  ASSERT_EQ(r10.kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(r10.kernels[0].compute_s, 1.6e-3);
  EXPECT_DOUBLE_EQ(r10.kernels[0].time_s, 1.6e-3);
  EXPECT_EQ(r10.kernels[0].bound, "compute");
  EXPECT_DOUBLE_EQ(sim(one_kernel(16, 1e-3), SimParadigm::infinite, l).kernels[0].time_s, 1e-3);
  // a compute below the bytes' time leaves the kernel DRAM-bound: 40 KiB (10 blocks) at 100 GB/s
  const SimResult small = sim(one_kernel(10, 1e-9), SimParadigm::infinite, l);
  EXPECT_EQ(small.kernels[0].bound, "dram");
  EXPECT_GT(small.kernels[0].time_s, 1.6e-9);
}
