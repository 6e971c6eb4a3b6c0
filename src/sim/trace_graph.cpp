// Traces of the graph apps (docs/sim.md "Graph apps"): pagerank and sssp as graph_kernels.cu
// runs them, one GPU's rows (a contiguous part, graph_io::partition_rows_equal or _by_nnz) per GPU,
// `lanes` threads per row in 256-thread blocks, hub rows split into 1024-edge block segments run
// as a kernel of their own before the row kernel. The values are the CPU references'
// (graph_refs.hpp), so the trace is the access stream of the real computation.
#include "sim/trace_graph.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <utility>

#include "apps/graph/graph_proact_plan.hpp"  // kGraphThreads
#include "apps/graph/graph_refs.hpp"
#include "apps/graph/graph_spec.hpp"
#include "apps/graph/row_segments.hpp"
#include "apps/graph/vec_layout.hpp"
#include "gpsm/error.hpp"
#include "sim/graph_insts.hpp"
#include "sim/trace_addr.hpp"

namespace gpsm::sim {

namespace {

using i64 = std::int64_t;
using u64 = std::uint64_t;
namespace ga = gpsm::apps::graph;

using namespace trace_detail;  // bad, the address scheme, sampled (trace_addr.hpp)

constexpr int kThreads = ga::kGraphThreads;  // 256
constexpr int kWarp = 32;
constexpr u64 kSectorBytes = 32;
constexpr u64 kSegmentRecordBytes = sizeof(ga::RowSegment);  // 48

// Addresses (trace_addr.hpp's scheme): GPU g's copy of vector buffer b at slab_base(g, b), its
// other arrays from (g << 40) + 2^39 in 2^35 steps; the managed vector at grid_base(b); GPS
// replicas at replica_base(g, b).
enum Arr { aRowPtr = 0, aCol, aWeight, aSegs, aPartial, aDone, aChanged, aCount };
const char* const kArrName[aCount] = {"row_ptr", "col", "weight", "segs", "partial", "done", "changed"};
u64 arr_base(int g, int k) { return (static_cast<u64>(g) << 40) + (u64{1} << 39) + (static_cast<u64>(k) << 35); }

// A thread's chain of `chain` dependent loads, `gathers` of them gathers (docs/sim.md "Chain
// bound"): the block keeps its longest thread's chain, and of equal chains the one with fewer
// gathers (the slower one at any latencies with L2 <= HBM).
void set_chain(BlockTrace& b, std::uint32_t chain, std::uint32_t gathers) {
  if (chain > b.chain_steps || (chain == b.chain_steps && gathers < b.gather_steps)) {
    b.chain_steps = chain;
    b.gather_steps = gathers;
  }
}

// A warp's accesses, grouped by instruction (slot, and the loop iteration k of a lane's edge
// loop), coalesced the way the memory system sees them: a load instruction as the 32-B sectors
// its active threads touch (contiguous sectors one run of 16-B operations: what the L2 and DRAM
// move for a gather), a store or atomic as the bytes written (same addresses once, consecutive
// words one run: what a remote store or a GPS publish carries).
class WarpRec {
 public:
  void add(int slot, i64 k, Op op, std::uint8_t bytes, u64 addr) {
    const u64 key = (static_cast<u64>(slot) << 40) | static_cast<u64>(k);
    for (Group& g : groups_)
      if (g.key == key) {
        g.addrs.push_back(addr);
        return;
      }
    groups_.push_back(Group{key, op, bytes, {addr}});
  }
  // Emits the warp's runs into b and clears.
  void flush(BlockTrace& b) {
    for (Group& g : groups_) {
      std::vector<u64>& a = g.addrs;
      if (g.op == Op::load) {
        std::vector<u64> sec;
        for (u64 x : a)
          for (u64 s = x / kSectorBytes; s <= (x + g.bytes - 1) / kSectorBytes; ++s) sec.push_back(s);
        std::sort(sec.begin(), sec.end());
        sec.erase(std::unique(sec.begin(), sec.end()), sec.end());
        std::size_t i = 0;
        while (i < sec.size()) {
          std::size_t j = i + 1;
          while (j < sec.size() && sec[j] == sec[j - 1] + 1) ++j;
          AccessRun r;
          r.op = Op::load;
          r.bytes = 16;
          r.count = static_cast<std::uint32_t>(2 * (j - i));
          r.addr = sec[i] * kSectorBytes;
          r.stride = 16;
          b.runs.push_back(r);
          i = j;
        }
      } else {
        std::sort(a.begin(), a.end());
        a.erase(std::unique(a.begin(), a.end()), a.end());
        std::size_t i = 0;
        while (i < a.size()) {
          std::size_t j = i + 1;
          while (j < a.size() && a[j] == a[j - 1] + g.bytes) ++j;
          AccessRun r;
          r.op = g.op;
          r.bytes = g.bytes;
          r.count = static_cast<std::uint32_t>(j - i);
          r.addr = a[i];
          r.stride = g.bytes;
          b.runs.push_back(r);
          i = j;
        }
      }
    }
    groups_.clear();
  }

 private:
  struct Group {
    u64 key;
    Op op;
    std::uint8_t bytes;
    std::vector<u64> addrs;
  };
  std::vector<Group> groups_;
};

enum Slot { sRp0 = 0, sRp1, sCol, sW, sX, sOld, sPartial, sDone, sChanged, sSeg, sY = 16 };

struct GraphRun {
  const TraceRequest& r;
  const graph_io::Csr& in;
  const std::vector<float>& inv_deg;
  bool pagerank;
  int G;
  ga::VecLayout l;
  int lanes = 1;
  std::int64_t long_row = 0;                 // rows with more edges are split (0: none)
  std::vector<std::int32_t> slot_of;         // vertex -> slot
  std::vector<std::vector<ga::RowSegment>> segs;  // per GPU
  double sample = 1;
  u64 gather_bytes = 0;  // per GPU: the arrays the gathers read (x; pagerank also inv_deg), whole

  GraphRun(const TraceRequest& r_, const graph_io::Csr& in_, const std::vector<float>& inv_, bool pr)
      : r(r_), in(in_), inv_deg(inv_), pagerank(pr), G(r_.gpus) {}

  bool slabs() const { return r.layout == "slabs"; }
  bool remote() const { return r.layout == "remote"; }
  bool grid() const { return r.layout == "grid"; }

  // x[j] as GPU g's kernel loads it from buffer b.
  u64 x_addr(int g, int b, i64 j) const {
    const u64 off = static_cast<u64>(j) * 4;
    if (slabs()) return slab_base(g, b) + off;
    if (remote()) return slab_base(static_cast<int>(j / l.chunk), b) + off;
    if (grid()) return grid_base(b) + off;
    return replica_base(g, b) + off;
  }
  // The stores of GPU g's value of slot s into buffer b.
  void store_y(WarpRec& w, int g, int b, i64 s) const {
    const u64 off = static_cast<u64>(s) * 4;
    if (slabs()) {
      for (int d = 0; d < G; ++d) w.add(sY + d, 0, Op::store, 4, slab_base(d, b) + off);  // Acc<push>::store
    } else if (remote()) {
      w.add(sY, 0, Op::store, 4, slab_base(g, b) + off);
    } else if (grid()) {
      w.add(sY, 0, Op::store, 4, grid_base(b) + off);
    } else {
      w.add(sY, 0, Op::store, 4, replica_base(g, b) + off);
    }
  }

  void setup(Trace& t) {
    l = ga::layout_for(in, G, r.problem.balance_nnz, 1);
    for (int g = 0; g < G; ++g)
      if (l.part_rows(g) < 1) bad("the graph has fewer rows than GPUs");
    const double mean = in.rows > 0 ? double(in.nnz()) / double(in.rows) : 1;
    lanes = ga::lanes_for(mean);
    const std::int64_t chain = ga::chain_edges_setting(std::getenv("GPSM_GRAPH_SPLIT"));
    long_row = chain > 0 ? chain * lanes : 0;
    slot_of.resize(static_cast<std::size_t>(in.rows));
    for (int g = 0; g < G; ++g)
      for (i64 v = l.parts[g].begin; v < l.parts[g].end; ++v) slot_of[v] = static_cast<std::int32_t>(l.slot(v));
    segs.resize(G);
    sample = r.sample > 0 ? std::min(1.0, r.sample) : std::min(1.0, kGraphAutoEdges / std::max<double>(1, double(in.nnz())));
    const u64 vec_bytes = static_cast<u64>(l.elems()) * 4;
    gather_bytes = (pagerank ? 2 : 1) * vec_bytes;
    for (int g = 0; g < G; ++g) {
      const i64 b0 = l.parts[g].begin, b1 = l.parts[g].end;
      const i64 nnz = in.row_ptr[b1] - in.row_ptr[b0];
      if (long_row > 0) {
        std::vector<i64> rp(static_cast<std::size_t>(b1 - b0 + 1));
        for (i64 v = b0; v <= b1; ++v) rp[v - b0] = in.row_ptr[v] - in.row_ptr[b0];
        segs[g] = ga::split_long_rows(rp, long_row);
      }
      const u64 nsegs = segs[g].size();
      const u64 nsplit = static_cast<u64>(ga::split_rows(segs[g]));
      const u64 bytes[aCount] = {static_cast<u64>(b1 - b0 + 1) * 8,
                                 static_cast<u64>(nnz) * 4,
                                 pagerank ? vec_bytes : static_cast<u64>(nnz) * 4,
                                 nsegs * kSegmentRecordBytes,
                                 nsegs * 4,
                                 nsplit * 4,
                                 pagerank ? u64{0} : u64{4}};
      for (int k = 0; k < aCount; ++k) {
        if (bytes[k] == 0) continue;
        const std::string nm = k == aWeight ? (pagerank ? "inv_deg" : "val") : kArrName[k];
        t.allocations.push_back({"gpu" + std::to_string(g) + "." + nm, MemKind::device, g, -1, arr_base(g, k), bytes[k]});
      }
    }
    for (int b = 0; b < 2; ++b) {
      const std::string bs = std::to_string(b);
      for (int g = 0; g < G; ++g) {
        const std::string gs = std::to_string(g);
        if (slabs() || remote())
          t.allocations.push_back({"gpu" + gs + ".x" + bs, MemKind::device, g, -1, slab_base(g, b), vec_bytes});
        else if (grid())  // per-GPU spans of the managed vector, each starting on its owner
          t.allocations.push_back({"grid.x" + bs + ".gpu" + gs, MemKind::managed, g, -1,
                                   grid_base(b) + static_cast<u64>(l.first_elem(g)) * 4,
                                   static_cast<u64>(l.chunk) * 4});
        else
          t.allocations.push_back({"gps.x" + bs + ".gpu" + gs, MemKind::replica, g, b, replica_base(g, b), vec_bytes});
      }
    }
  }

  // The edge weight load of edge e (global index) whose column has slot j, GPU g's local edge el.
  void weight_load(WarpRec& w, int g, i64 k, i64 el, std::int32_t j) const {
    if (pagerank) w.add(sW, k, Op::load, 4, arr_base(g, aWeight) + static_cast<u64>(j) * 4);
    else w.add(sW, k, Op::load, 4, arr_base(g, aWeight) + static_cast<u64>(el) * 4);
  }

  // The finishing stores of a row (its last thread to hold the value): sssp reads the old value.
  void finish_row(WarpRec& w, int g, int xb, int yb, i64 s, bool changed) const {
    if (!pagerank) w.add(sOld, 0, Op::load, 4, x_addr(g, xb, s));
    store_y(w, g, yb, s);
    if (!pagerank && changed) w.add(sChanged, 0, Op::store, 4, arr_base(g, aChanged));
  }

  // Iteration `it` of GPU g: x in buffer xb, y in 1 - xb; x/y the values (vertex order).
  void kernels(IterationTrace& iter, int g, int xb, const std::vector<float>& x, const std::vector<float>& y) const {
    const int yb = 1 - xb;
    const i64 v0 = l.parts[g].begin, rows = l.part_rows(g);
    const i64 e0 = in.row_ptr[v0];
    const i64 first_slot = static_cast<i64>(g) * l.chunk;
    auto changed = [&](i64 v) { return !pagerank && y[v] < x[v]; };
    if (!pagerank) {  // cudaMemsetAsync(changed, 0): a one-word store before the kernels
      KernelTrace kt;
      kt.name = "sssp_clear_changed";
      kt.gpu = g;
      kt.grid_blocks = 1;
      kt.threads_per_block = 1;
      BlockTrace bt;
      bt.runs.push_back(AccessRun{Op::store, 4, 1, arr_base(g, aChanged), 4});
      kt.blocks.push_back(bt);
      iter.kernels.push_back(std::move(kt));
    }
    const std::vector<ga::RowSegment>& sg = segs[g];
    WarpRec w;
    if (!sg.empty()) {
      KernelTrace kt;
      kt.name = pagerank ? "pagerank_segments" : "sssp_segments";
      kt.gpu = g;
      kt.gather_bytes = gather_bytes;
      kt.grid_blocks = static_cast<std::uint32_t>(sg.size());
      kt.threads_per_block = kThreads;
      std::vector<char> boundary;
      for (u64 k = 0; k < sg.size(); ++k) {
        const Pick pick = pick_block(k, sg.size(), sample);
        if (pick == Pick::no) continue;
        boundary.push_back(pick == Pick::boundary);
        const ga::RowSegment& s = sg[k];
        BlockTrace bt;
        bt.block = static_cast<std::uint32_t>(k);
        for (int wp = 0; wp < kThreads / kWarp; ++wp) {
          for (int tl = 0; tl < kWarp; ++tl) {
            const int t = wp * kWarp + tl;
            w.add(sSeg, 0, Op::load, 16, arr_base(g, aSegs) + k * kSegmentRecordBytes);  // the record (48 B)
            w.add(sSeg, 0, Op::load, 16, arr_base(g, aSegs) + k * kSegmentRecordBytes + 16);
            w.add(sSeg, 0, Op::load, 16, arr_base(g, aSegs) + k * kSegmentRecordBytes + 32);
            i64 i = 0;
            for (i64 el = s.begin + t; el < s.end; el += kThreads, ++i) {
              const std::int32_t j = slot_of[in.col[e0 + el]];
              w.add(sCol, i, Op::load, 4, arr_base(g, aCol) + static_cast<u64>(el) * 4);
              weight_load(w, g, i, el, j);
              w.add(sX, i, Op::load, 4, x_addr(g, xb, j));
              bt.flops += 2;
            }
            // Dependent loads (docs/sim.md "Chain bound"): the record, then per group of four
            // edges (for_edges' Gather4) and per edge of the rest, col and then the gather.
            std::uint32_t chain = 1 + static_cast<std::uint32_t>(2 * (i / 4 + i % 4));
            if (t == 0) {  // thread 0: the partial, the finish counter; the row's last segment finishes it
              w.add(sPartial, 0, Op::store, 4, arr_base(g, aPartial) + k * 4);
              w.add(sDone, 0, Op::atomic, 4, arr_base(g, aDone) + static_cast<u64>(s.split) * 4);
              chain += 1;  // segment_finish waits for the counter's old value
              if (static_cast<i64>(k) == s.first + s.count - 1) {
                for (i64 p = 0; p < s.count; ++p)
                  w.add(sPartial, 1, Op::load, 4, arr_base(g, aPartial) + static_cast<u64>(s.first + p) * 4);
                w.add(sDone, 1, Op::store, 4, arr_base(g, aDone) + static_cast<u64>(s.split) * 4);
                finish_row(w, g, xb, yb, first_slot + s.row, changed(v0 + s.row));
                bt.flops += 2 + s.count;
                chain += pagerank ? 1 : 2;  // the partials; sssp: then the old value
              }
            }
            set_chain(bt, chain, static_cast<std::uint32_t>(i / 4 + i % 4));  // the gathers: one a group or edge
          }
          w.flush(bt);
        }
        kt.blocks.push_back(std::move(bt));
      }
      set_weights(kt, boundary);
      iter.kernels.push_back(std::move(kt));
    }
    // The row kernel: block b, thread t: row (b 256 + t) / lanes, lane (b 256 + t) % lanes.
    KernelTrace kt;
    kt.name = pagerank ? "pagerank_rows" : "sssp_rows";
    kt.gpu = g;
    const u64 grid = static_cast<u64>((rows * lanes + kThreads - 1) / kThreads);
    if (grid > UINT32_MAX) bad("kernel " + kt.name + " has more than 2^32 blocks");
    kt.grid_blocks = static_cast<std::uint32_t>(grid);
    kt.threads_per_block = kThreads;
    kt.gather_bytes = gather_bytes;
    std::vector<char> boundary;
    const RowKernelInsts& ki = row_kernel_insts(pagerank);
    for (u64 b = 0; b < grid; ++b) {
      const Pick pick = pick_block(b, grid, sample);
      if (pick == Pick::no) continue;
      boundary.push_back(pick == Pick::boundary);
      BlockTrace bt;
      bt.block = static_cast<std::uint32_t>(b);
      for (int wp = 0; wp < kThreads / kWarp; ++wp) {
        WarpLanes lanes_did;  // for the warp's instructions (graph_insts.hpp)
        for (int tl = 0; tl < kWarp; ++tl) {
          const i64 th = static_cast<i64>(b) * kThreads + wp * kWarp + tl;
          const i64 row = th / lanes;
          const int lane = static_cast<int>(th % lanes);
          if (row >= rows) continue;
          const i64 v = v0 + row;
          w.add(sRp0, 0, Op::load, 8, arr_base(g, aRowPtr) + static_cast<u64>(row) * 8);
          w.add(sRp1, 0, Op::load, 8, arr_base(g, aRowPtr) + static_cast<u64>(row + 1) * 8);
          const i64 begin = in.row_ptr[v] - e0, end = in.row_ptr[v + 1] - e0;
          set_chain(bt, 1, 0);  // row_ptr
          if (long_row > 0 && end - begin > long_row) {  // a split row: its segments write it
            lanes_did.add(true, 0, lane == 0, false);
            continue;
          }
          i64 k = 0;
          for (i64 el = begin + lane; el < end; el += lanes, ++k) {
            const std::int32_t j = slot_of[in.col[e0 + el]];
            w.add(sCol, k, Op::load, 4, arr_base(g, aCol) + static_cast<u64>(el) * 4);
            weight_load(w, g, k, el, j);
            w.add(sX, k, Op::load, 4, x_addr(g, xb, j));
            bt.flops += 2;
          }
          // Dependent loads (docs/sim.md "Chain bound"): row_ptr, then the edge loop as the
          // compiler unrolled it (sim/graph_insts.hpp's SASS): per 4 trips the four col loads,
          // the first edge's gathers, then the other three edges' gathers (3 steps, 2 of them
          // gathers); per remaining trip col[e], then its gathers (2 steps, 1 a gather). sssp's
          // finishing lane then loads the old value.
          const i64 quads = k >> 2, rest = k & 3;
          const std::uint32_t chain =
              static_cast<std::uint32_t>(1 + 3 * quads + 2 * rest + (lane == 0 && !pagerank ? 1 : 0));
          set_chain(bt, chain, static_cast<std::uint32_t>(2 * quads + rest));
          if (lane == 0) {
            finish_row(w, g, xb, yb, first_slot + row, changed(v));
            bt.flops += 2;
          }
          lanes_did.add(false, k, lane == 0, lane == 0 && changed(v));
        }
        bt.warp_insts += warp_insts(ki, lanes_did, lanes, 0);
        bt.push_insts += warp_insts(ki, lanes_did, lanes, G);
        w.flush(bt);
      }
      kt.blocks.push_back(std::move(bt));
    }
    set_weights(kt, boundary);
    iter.kernels.push_back(std::move(kt));
  }
};

}  // namespace

bool is_graph_app(const std::string& app) { return app == "pagerank" || app == "sssp"; }

Trace graph_trace_csr(const TraceRequest& r, const graph_io::Csr& in, const std::vector<float>& inv_deg,
                      std::int64_t source, std::vector<float>* result) {
  if (!is_graph_app(r.app)) bad("unknown graph app '" + r.app + "' (expected pagerank or sssp)");
  check_layout(r.layout);
  if (r.gpus < 1 || r.gpus > 31) bad("graph traces support 1 to 31 GPUs");
  if (r.problem.iters < 1) bad("at least one iteration");
  if (in.rows != in.cols || in.rows < 1) bad("the graph must be square and non-empty");
  const bool pr = r.app == "pagerank";
  if (pr && static_cast<i64>(inv_deg.size()) != in.rows) bad("pagerank needs inv_deg per vertex");
  if (!pr && !in.weighted()) bad("sssp needs a weighted graph");
  if (!pr && (source < 0 || source >= in.rows)) bad("sssp source out of range");

  Trace t;
  t.app = r.app;
  t.problem = r.problem.graph.empty() ? std::to_string(in.rows) + "x" + std::to_string(in.nnz()) : r.problem.graph;
  t.gpus = r.gpus;
  t.layout = r.layout;
  GraphRun run(r, in, inv_deg, pr);
  run.setup(t);

  std::vector<float> x(static_cast<std::size_t>(in.rows)), y(x.size());
  if (pr) {
    std::fill(x.begin(), x.end(), 1.0f / static_cast<float>(in.rows));
  } else {
    std::fill(x.begin(), x.end(), std::numeric_limits<float>::infinity());
    x[static_cast<std::size_t>(source)] = 0;
  }
  for (int it = 0; it < r.problem.iters; ++it) {
    bool any_changed = true;
    if (pr) ga::pagerank_step(in, inv_deg, x, y);
    else any_changed = ga::sssp_step(in, x, y);
    IterationTrace iter;
    iter.host_sync = !pr;  // sssp reads `changed` back every iteration; pagerank (fixed iterations) does not
    // The bench's phase (graph::PhaseEvents, or the GPS runtime's fence_async: the same calls):
    // every GPU's stream waits for every other GPU's last event, launches, records; sssp zeroes its
    // `changed` flag first, a cudaMemsetAsync traced as the kernel sssp_clear_changed.
    iter.host_named = true;
    iter.peer_waits = static_cast<std::uint8_t>(std::min(r.gpus - 1, 255));
    iter.memsets = pr ? 0 : 1;
    for (int g = 0; g < r.gpus; ++g) run.kernels(iter, g, it & 1, x, y);
    t.iterations.push_back(std::move(iter));
    x.swap(y);
    // sssp stops as the bench does: after the first iteration in which no distance fell (it
    // counts). The trace then holds fewer iterations than asked, and gpsm sim takes it for the
    // whole run.
    if (!any_changed) break;
  }
  if (result != nullptr) *result = x;
  return t;
}

Trace graph_trace(const TraceRequest& r, std::vector<float>* result) {
  if (!is_graph_app(r.app)) bad("unknown graph app '" + r.app + "' (expected pagerank or sssp)");
  if (r.problem.graph.empty()) bad(r.app + " needs a graph (--size, e.g. rmat:20 or road:1024)");
  ga::GraphSpec s;
  try {
    s = ga::parse_graph_spec(r.problem.graph);
  } catch (const std::invalid_argument& e) {
    bad(e.what());
  }
  const bool pr = r.app == "pagerank";
  if (s.tol > 0) bad("@tol is not traced (fixed iterations only)");
  graph_io::Csr g;
  try {
    g = ga::build_graph(s, !pr, r.problem.seed);
  } catch (const Error& e) {  // a file that cannot be read: a bad --size for the trace
    bad(e.what());
  }
  if (g.rows != g.cols) bad(r.problem.graph + " is not square");
  std::vector<float> inv;
  std::int64_t source = 0;
  if (pr) inv = ga::inverse_out_degree(g);
  else source = ga::sssp_source(g);
  const graph_io::Csr in = graph_io::transpose(g);
  g = graph_io::Csr{};
  TraceRequest rr = r;
  rr.problem.balance_nnz = s.balance_nnz;
  return graph_trace_csr(rr, in, inv, source, result);
}

}  // namespace gpsm::sim
