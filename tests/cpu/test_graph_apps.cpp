// Graph apps (apps/graph): the size strings, the CPU references on hand-checked graphs, the
// slot layout and slices, the per-paradigm byte accounting, GPS subscription prediction, and a
// CPU emulation of the multi-rank exchange that must reproduce the references exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/graph_io/graph.hpp"
#include "apps/graph/graph_refs.hpp"
#include "apps/graph/graph_spec.hpp"
#include "apps/graph/vec_layout.hpp"
#include "apps/harness/bench_report.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::graph;
using gpsm::graph_io::Csr;
using gpsm::graph_io::Entry;
using gpsm::graph_io::RowRange;

namespace {

Csr from(std::int64_t n, std::vector<Entry> e, bool weighted) {
  return gpsm::graph_io::csr_from_entries(n, n, std::move(e), weighted);
}

constexpr float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST(GraphApps, TransposeSwapsEntries) {
  Csr m = gpsm::graph_io::csr_from_entries(2, 3, {{0, 2, 5.f}, {0, 0, 1.f}, {1, 2, 7.f}}, true);
  Csr t = gpsm::graph_io::transpose(m);
  t.validate("t");
  EXPECT_EQ(t.rows, 3);
  EXPECT_EQ(t.cols, 2);
  EXPECT_EQ(t.row_ptr, (std::vector<std::int64_t>{0, 1, 1, 3}));
  EXPECT_EQ(t.col, (std::vector<std::int32_t>{0, 0, 1}));
  EXPECT_EQ(t.val, (std::vector<float>{1.f, 5.f, 7.f}));
  EXPECT_EQ(gpsm::graph_io::transpose(t), m);
}

TEST(GraphApps, ParsesGraphSpecs) {
  GraphSpec s = parse_graph_spec("rmat:20");
  EXPECT_EQ(s.kind, GraphKind::rmat);
  EXPECT_EQ(s.scale, 20);
  EXPECT_EQ(s.edge_factor, 16);
  s = parse_graph_spec("rmat:12:8@nnz@tol=1e-6");
  EXPECT_EQ(s.edge_factor, 8);
  EXPECT_TRUE(s.balance_nnz);
  EXPECT_DOUBLE_EQ(s.tol, 1e-6);
  s = parse_graph_spec("road:300x200");
  EXPECT_EQ(s.kind, GraphKind::road);
  EXPECT_EQ(s.nx, 300);
  EXPECT_EQ(s.ny, 200);
  EXPECT_EQ(parse_graph_spec("road:64").ny, 64);
  s = parse_graph_spec("ratings:1000");
  EXPECT_EQ(s.users, 1000);
  EXPECT_EQ(s.items, 100);
  EXPECT_EQ(s.per_user, 20);
  EXPECT_EQ(parse_graph_spec("ratings:10x5x3").per_user, 3);
  s = parse_graph_spec("/data/web-Google.txt@nnz");
  EXPECT_EQ(s.kind, GraphKind::file);
  EXPECT_EQ(s.path, "/data/web-Google.txt");
  for (const char* bad : {"", "rmat:", "rmat:0", "rmat:x", "rmat:31", "road:1", "road:2x3x4", "rmat:10@tol=",
                          "rmat:10@tol=-1", "rmat:10@fast", "ratings:10x0"})
    EXPECT_THROW(parse_graph_spec(bad), std::invalid_argument) << bad;
  try {
    parse_graph_spec("rmat:10@fast");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option '@fast'"), std::string::npos) << e.what();
  }
}

TEST(GraphApps, BuildsGraphsFromSpecs) {
  const Csr r = build_graph(parse_graph_spec("rmat:8"), true, 1);
  EXPECT_EQ(r.rows, 256);
  EXPECT_TRUE(r.weighted());
  EXPECT_EQ(build_graph(parse_graph_spec("rmat:8"), true, 1), r);  // deterministic
  const Csr g = build_graph(parse_graph_spec("road:4x3"), false, 1);
  EXPECT_EQ(g.rows, 12);
  EXPECT_EQ(g.nnz(), 2 * (3 * 3 + 4 * 2));  // both directions of every grid edge
  const Csr m = build_graph(parse_graph_spec("ratings:50x20x4"), true, 1);
  EXPECT_EQ(m.rows, 50);
  EXPECT_EQ(m.cols, 20);
  EXPECT_EQ(m.nnz(), 200);
}

// 0 -> 1, 0 -> 2; 1 and 2 dangling (their rank is not redistributed).
TEST(GraphApps, PageRankByHand) {
  const Csr g = from(3, {{0, 1, 0}, {0, 2, 0}}, false);
  const auto inv = inverse_out_degree(g);
  EXPECT_EQ(inv, (std::vector<float>{0.5f, 0.f, 0.f}));
  const Csr in = gpsm::graph_io::transpose(g);
  PageRankResult r = pagerank_reference(in, inv, 1, 0);
  EXPECT_EQ(r.iterations, 1);
  EXPECT_NEAR(r.rank[0], 0.05, 1e-7);
  EXPECT_NEAR(r.rank[1], 0.05 + 0.85 / 6, 1e-7);
  EXPECT_NEAR(r.rank[2], 0.05 + 0.85 / 6, 1e-7);
  r = pagerank_reference(in, inv, 2, 0);
  EXPECT_NEAR(r.rank[1], 0.05 + 0.85 * 0.05 / 2, 1e-7);
  // A 3-cycle: uniform is the fixed point, so the tolerance mode stops after one iteration.
  const Csr c = from(3, {{0, 1, 0}, {1, 2, 0}, {2, 0, 0}}, false);
  r = pagerank_reference(gpsm::graph_io::transpose(c), inverse_out_degree(c), 50, 1e-6);
  EXPECT_EQ(r.iterations, 1);
  for (float v : r.rank) EXPECT_NEAR(v, 1.0 / 3, 1e-7);
  EXPECT_DOUBLE_EQ(l1_distance({1.f, 2.f}, {1.5f, 1.f}), 1.5);
  EXPECT_TRUE(std::isinf(l1_distance({1.f}, {std::nanf("")})));
}

// 0 -4-> 1, 0 -1-> 2, 2 -2-> 1, 1 -1-> 3; 4 unreachable.
TEST(GraphApps, SsspByHand) {
  const Csr g = from(5, {{0, 1, 4}, {0, 2, 1}, {2, 1, 2}, {1, 3, 1}}, true);
  EXPECT_EQ(sssp_source(g), 0);
  const Csr in = gpsm::graph_io::transpose(g);
  SsspResult r = sssp_reference(in, 0, 100);
  EXPECT_EQ(r.dist, (std::vector<float>{0, 3, 1, 4, kInf}));
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 4);  // 1: d1 = 4, d2 = 1; 2: d1 = 3, d3 = 5; 3: d3 = 4; 4: no change
  r = sssp_reference(in, 0, 2);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(r.dist, (std::vector<float>{0, 3, 1, 5, kInf}));
  EXPECT_THROW(sssp_reference(gpsm::graph_io::transpose(from(2, {{0, 1, 0}}, false)), 0, 5), gpsm::Error);
}

TEST(GraphApps, SgdStepByHandAndConverges) {
  SgdParams p;
  p.rank = 1;
  const Csr one = gpsm::graph_io::csr_from_entries(1, 1, {{0, 0, 3.f}}, true);
  std::vector<float> u{1.f}, i{1.f};
  sgd_half_step(one, u, i, p);  // e = 3 - 1 = 2; u += 0.01 (2 - 0.05)
  EXPECT_FLOAT_EQ(u[0], 1.0195f);
  EXPECT_FLOAT_EQ(i[0], 1.f);
  EXPECT_NEAR(rmse(one, u, i, 1), 3 - 1.0195, 1e-6);

  const Csr m = build_graph(parse_graph_spec("ratings:400x60x10"), true, 3);
  const Csr t = gpsm::graph_io::transpose(m);
  SgdParams q;
  const SgdResult a = sgd_reference(m, t, q, 8);
  EXPECT_LT(a.rmse, 0.8 * a.initial_rmse);  // it learns
  const SgdResult b = sgd_reference(m, t, q, 8);
  EXPECT_EQ(a.users, b.users);  // deterministic, OpenMP or not
  EXPECT_EQ(a.items, b.items);
  const auto init = sgd_initial(10, 16, 1, 0);
  for (float v : init) {
    EXPECT_GE(v, 0.f);
    EXPECT_LT(v, std::sqrt(12.f / 16));
  }
  EXPECT_NE(sgd_initial(10, 16, 1, 0), sgd_initial(10, 16, 1, 1));
}

TEST(GraphApps, SlotLayout) {
  const VecLayout l = make_layout({{0, 3}, {3, 5}}, 2);
  EXPECT_EQ(l.chunk, 3);
  EXPECT_EQ(l.elems(), 12);
  EXPECT_EQ(l.owner(2), 0);
  EXPECT_EQ(l.owner(3), 1);
  EXPECT_EQ(l.slot(4), 4);
  EXPECT_EQ(l.first_elem(1), 6);
  EXPECT_EQ(l.owned_elems(1), 4);
  const std::vector<float> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto s = to_slots(l, v, -1);
  EXPECT_EQ(s, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1, -1}));
  EXPECT_EQ(from_slots(l, s), v);
  EXPECT_THROW(make_layout({{0, 3}, {4, 5}}, 1), gpsm::Error);
  EXPECT_THROW(l.owner(5), gpsm::Error);
  // An empty part (more ranks than rows) still has a chunk of one slot row.
  const VecLayout e = make_layout({{0, 0}, {0, 0}}, 1);
  EXPECT_EQ(e.chunk, 1);
}

TEST(GraphApps, SlicesCarrySlotColumns) {
  // 5 vertices, rows split 3 + 2 (chunk 3): column 4 is slot 4, column 3 slot 3; 1 + 2 parts: chunk 2.
  const Csr g = from(5, {{0, 4, 1}, {1, 3, 2}, {3, 0, 3}, {4, 1, 4}, {4, 4, 5}}, true);
  const VecLayout a = make_layout({{0, 1}, {1, 5}}, 1);  // chunk 4: col c >= 1 at slot c + 3
  const Slice s0 = slice_rows(g, a.parts[0], a);
  EXPECT_EQ(s0.row_ptr, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(s0.col, (std::vector<std::int32_t>{7}));
  const Slice s1 = slice_rows(g, a.parts[1], a);
  EXPECT_EQ(s1.row_ptr, (std::vector<std::int64_t>{0, 1, 1, 2, 4}));
  EXPECT_EQ(s1.col, (std::vector<std::int32_t>{6, 0, 4, 7}));
  EXPECT_EQ(s1.val, (std::vector<float>{2, 3, 4, 5}));
  // rdl: rank 0 reads column 4 (rank 1's); rank 1 reads column 0 (rank 0's) once.
  EXPECT_DOUBLE_EQ(remote_read_bytes(a, s0, 0), 4);
  EXPECT_DOUBLE_EQ(remote_read_bytes(a, s1, 1), 4);
  EXPECT_THROW(slice_rows(g, a.parts[0], make_layout({{0, 4}}, 1)), gpsm::Error);
}

TEST(GraphApps, LanesPerRow) {
  EXPECT_EQ(lanes_for(0.0), 1);
  EXPECT_EQ(lanes_for(1.0), 1);
  EXPECT_EQ(lanes_for(4.0), 4);   // road grids
  EXPECT_EQ(lanes_for(4.1), 8);
  EXPECT_EQ(lanes_for(15.4), 16);  // R-MAT, edge factor 16 after dedup
  EXPECT_EQ(lanes_for(500.0), 32);
}

TEST(GraphApps, LaneShiftIsLog2OfAPowerOfTwo) {
  for (int s = 0; s <= 5; ++s) EXPECT_EQ(lane_shift(1 << s), s);
  for (double mean : {0.0, 3.0, 4.1, 15.4, 500.0}) EXPECT_EQ(1 << lane_shift(lanes_for(mean)), lanes_for(mean));
  for (int bad : {0, 3, 6, 64, -4}) EXPECT_THROW(lane_shift(bad), gpsm::Error) << bad;
}

TEST(GraphApps, PublishBytesPerParadigm) {
  const VecLayout l = make_layout({{0, 3}, {3, 5}, {5, 6}}, 2);  // chunk 3, 6 rows x 2 floats
  const double owned = 6 * 2 * 4;
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::memcpy, l), owned * 2);
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::p2p_inline, l), owned * 2);
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::nccl, l), 3 * 2 * 4 * 3 * 2);  // padded chunks
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::single, make_layout({{0, 6}}, 2)), 0);
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::infinite, l), 0);
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::rdl, l), 0);
  EXPECT_LT(publish_bytes(Paradigm::um, l), 0);
  EXPECT_LT(publish_bytes(Paradigm::gps, l), 0);
}

TEST(GraphApps, GpsSubscriptionsAndBytesByHand) {
  // 8 rows, 2 ranks of 4 rows, pages of 2 floats: pages 0-1 rank 0's rows, 2-3 rank 1's.
  const Csr g = from(8, {{0, 1, 1}, {3, 4, 1}, {5, 2, 1}, {6, 7, 1}}, true);
  const VecLayout l = make_layout({{0, 4}, {4, 8}}, 1);
  const Slice s0 = slice_rows(g, l.parts[0], l), s1 = slice_rows(g, l.parts[1], l);
  const auto masks = predicted_masks(l, {{&s0}, {&s1}}, 8);
  // Rank 0 reads row 4 (page 2); rank 1 reads row 2 (page 1).
  EXPECT_EQ(masks, (std::vector<std::uint32_t>{1u, 3u, 3u, 2u}));
  EXPECT_EQ(subscriber_histogram(masks, 2), (std::vector<double>{2, 2}));
  // Each rank's rows on a shared page (2 floats each) go to the one other subscriber.
  EXPECT_DOUBLE_EQ(gps_publish_bytes(l, masks, 8), 2 * 4 + 2 * 4);
  const std::vector<std::uint32_t> all(4, 3u);
  EXPECT_DOUBLE_EQ(gps_publish_bytes(l, all, 8), publish_bytes(Paradigm::memcpy, l));
  EXPECT_EQ(subscriber_histogram({0u, 1u, 7u, 15u}, 4), (std::vector<double>{1, 0, 1, 1}));
}

// A road grid keeps most pages private; an R-MAT graph shares most of them (GPS paper Fig 9's
// range).
TEST(GraphApps, SubscriberDistributionOfRoadAndRmat) {
  for (const char* spec : {"road:64", "rmat:12"}) {
    SCOPED_TRACE(spec);
    const Csr in = gpsm::graph_io::transpose(build_graph(parse_graph_spec(spec), true, 1));
    const VecLayout l = layout_for(in, 4, false, 1);
    std::vector<Slice> s;
    for (int r = 0; r < 4; ++r) s.push_back(slice_rows(in, l.parts[r], l));
    const auto masks = predicted_masks(l, {{&s[0]}, {&s[1]}, {&s[2]}, {&s[3]}}, 1024);
    const auto h = subscriber_histogram(masks, 4);
    const double pages = h[0] + h[1] + h[2] + h[3];
    EXPECT_EQ(pages, static_cast<double>(masks.size()));
    const double gps = gps_publish_bytes(l, masks, 1024), mem = publish_bytes(Paradigm::memcpy, l);
    if (std::string(spec) == "road:64") {
      EXPECT_GT(h[0] / pages, 0.5);
      EXPECT_LT(gps, 0.5 * mem);
    } else {
      EXPECT_GT(h[3] / pages, 0.5);
      EXPECT_LE(gps, mem);
    }
  }
}

// The exchange the GPUs perform, emulated on the CPU: each rank computes its rows from its slice
// over its own slot-order copy, then every rank's rows are copied into every copy (memcpy's
// allgather). Must equal the references exactly, for equal and nnz-balanced splits.
TEST(GraphApps, EmulatedMultiRankRunsMatchTheReferences) {
  for (bool nnz : {false, true})
    for (int ranks : {1, 3, 4}) {
      SCOPED_TRACE(std::to_string(ranks) + (nnz ? " ranks, nnz-balanced" : " ranks"));
      const Csr g = build_graph(parse_graph_spec("rmat:10"), true, 2);
      const Csr in = gpsm::graph_io::transpose(g);
      const VecLayout l = layout_for(in, ranks, nnz, 1);
      std::vector<Slice> s;
      for (int r = 0; r < ranks; ++r) s.push_back(slice_rows(in, l.parts[r], l));
      // SSSP
      const std::int64_t src = sssp_source(g);
      const SsspResult ref = sssp_reference(in, src, 1000);
      std::vector<float> x(static_cast<std::size_t>(in.rows), kInf);
      x[src] = 0;
      std::vector<std::vector<float>> copy(ranks, to_slots(l, x, 0.0f));
      int it = 0;
      for (bool changed = true; changed && it < 1000; ++it) {
        changed = false;
        std::vector<std::vector<float>> next = copy;
        for (int r = 0; r < ranks; ++r)
          for (std::int64_t i = 0; i < s[r].rows(); ++i) {
            const std::int64_t slot = r * l.chunk + i;
            float d = copy[r][slot];
            for (std::int64_t e = s[r].row_ptr[i]; e < s[r].row_ptr[i + 1]; ++e)
              d = std::fmin(d, copy[r][s[r].col[e]] + s[r].val[e]);
            changed |= d < copy[r][slot];
            for (int t = 0; t < ranks; ++t) next[t][slot] = d;  // the allgather
          }
        copy.swap(next);
      }
      EXPECT_EQ(it, ref.iterations);
      EXPECT_EQ(from_slots(l, copy[ranks - 1]), ref.dist);
      // PageRank, 5 iterations, the reference's arithmetic per row
      const auto inv = to_slots(l, inverse_out_degree(g), 0.0f);
      const PageRankResult pr = pagerank_reference(in, inverse_out_degree(g), 5, 0);
      std::vector<std::vector<float>> rk(
          ranks, to_slots(l, std::vector<float>(static_cast<std::size_t>(in.rows), 1.0f / in.rows), 0.0f));
      const float base = (1.0f - kDamping) / static_cast<float>(in.rows);
      for (int k = 0; k < 5; ++k) {
        std::vector<std::vector<float>> next = rk;
        for (int r = 0; r < ranks; ++r)
          for (std::int64_t i = 0; i < s[r].rows(); ++i) {
            double sum = 0;
            for (std::int64_t e = s[r].row_ptr[i]; e < s[r].row_ptr[i + 1]; ++e)
              sum += static_cast<double>(rk[r][s[r].col[e]]) * inv[s[r].col[e]];
            for (int t = 0; t < ranks; ++t) next[t][r * l.chunk + i] = base + kDamping * static_cast<float>(sum);
          }
        rk.swap(next);
      }
      EXPECT_EQ(from_slots(l, rk[0]), pr.rank);
    }
}

TEST(GraphApps, BenchJsonCarriesBytesVsMemcpyAndSubscribers) {
  Problem p;
  p.graph = "road:64@nnz";
  p.balance_nnz = true;
  p.iters = 10;
  EXPECT_EQ(p.label(), "road:64@nnz");
  auto rec = [](Paradigm par, double bytes) {
    RunRecord r;
    r.paradigm = par;
    r.gpus = 4;
    r.out.sec_per_iter = {1e-3};
    r.out.iterations = 10;
    r.out.tolerance = 1e-5;
    r.out.link_bytes_per_iter = bytes;
    return r;
  };
  RunRecord gps = rec(Paradigm::gps, 250);
  gps.out.subscriber_pages = {90, 8, 1, 1};
  const auto j = bench_test_json("pagerank", "t", p, {rec(Paradigm::memcpy, 1000), gps, rec(Paradigm::um, -1)});
  EXPECT_EQ(j.at("problem").at("graph"), "road:64@nnz");
  EXPECT_TRUE(j.at("problem").at("balance_nnz").get<bool>());
  const auto& s = j.at("series");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_DOUBLE_EQ(s[0].at("points")[0].at("link_bytes_vs_memcpy").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(s[1].at("points")[0].at("link_bytes_vs_memcpy").get<double>(), 0.25);
  EXPECT_EQ(s[1].at("points")[0].at("subscriber_pages"), (std::vector<double>{90, 8, 1, 1}));
  EXPECT_FALSE(s[2].at("points")[0].contains("link_bytes_vs_memcpy"));  // unknown bytes
  EXPECT_FALSE(s[0].at("points")[0].contains("subscriber_pages"));
  EXPECT_EQ(parse_paradigms("gps_all"), std::vector<Paradigm>{Paradigm::gps_all});
}
