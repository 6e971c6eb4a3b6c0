// Graph apps on GPUs (pagerank, sssp, als): every paradigm on 1, 2 and all GPUs on small graphs,
// each run verified by the app against its CPU reference (PageRank L1 <= 1e-5, SSSP exact, SGD
// RMSE within 1%); the elided `infinite` bound must miss the reference (or the check proves
// nothing); GPS link bytes and subscriber counts against memcpy's and gps_all's; proact's chunk
// counters against the host plan.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "app_test_util.hpp"
#include "apps/graph/graph_exchange.hpp"
#include "apps/graph/graph_exchange_proact.hpp"
#include "apps/graph/graph_proact_plan.hpp"
#include "apps/graph/graph_refs.hpp"
#include "apps/graph/graph_spec.hpp"
#include "gpsm/gps/context.hpp"

using namespace gpsm::apps;

namespace {

const std::vector<Paradigm> kParadigms{Paradigm::single,     Paradigm::memcpy, Paradigm::um,      Paradigm::um_hints,
                                       Paradigm::rdl,        Paradigm::p2p_inline, Paradigm::gps, Paradigm::gps_all,
                                       Paradigm::proact,     Paradigm::nccl,       Paradigm::infinite};

// Runs every paradigm on every GPU count; bound: the app's own (checked by the app), elided_min:
// the least error the elided bound must show on more than one GPU on the first size (a graph
// whose values move far from their initial ones, so stale copies show).
void every_paradigm(const char* app_name, const std::vector<std::string>& sizes, int iters, double elided_min) {
  auto app = apptest::app_named(app_name);
  ASSERT_NE(app, nullptr) << app_name;
  for (const std::string& size : sizes)
    for (int g : apptest::gpu_counts())
      for (Paradigm par : kParadigms) {
        if (par == Paradigm::single && g != 1) continue;
        SCOPED_TRACE(std::string(app_name) + " " + size + " " + paradigm_name(par) + " on " + std::to_string(g) +
                     " GPUs");
        if (par == Paradigm::nccl && !app->has(par)) {
          const RunOutcome o = apptest::run(*app, par, g, app->problem(size, iters));
          EXPECT_EQ(o.status, RunStatus::unsupported);
          continue;
        }
        const RunOutcome o = apptest::run(*app, par, g, app->problem(size, iters));
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        ASSERT_EQ(o.sec_per_iter.size(), 1u);
        EXPECT_GT(o.sec_per_iter[0], 0.0);
        EXPECT_GT(o.iterations, 0);
        if (par == Paradigm::infinite && g > 1) {
          if (size == sizes.front())
            EXPECT_GT(o.error, elided_min) << "transfers elided, yet the result matches the reference";
        } else {
          EXPECT_LE(o.error, o.tolerance);
        }
        if (g == 1 && par != Paradigm::um && par != Paradigm::um_hints) EXPECT_EQ(o.link_bytes_per_iter, 0.0);
        if (par == Paradigm::gps || par == Paradigm::gps_all) EXPECT_EQ(o.subscriber_pages.size(), static_cast<std::size_t>(g));
      }
}

// The exchange-layer tests' GPUs: up to four of the machine's.
std::vector<int> up_to_four_devices() {
  const std::vector<int> devices = gpstest::all_devices();
  return std::vector<int>(devices.begin(), devices.begin() + std::min<std::size_t>(devices.size(), 4));
}
// 4 KiB GPS pages: the small graphs' vectors then span several, so subscriptions differ by page.
gpsm::gps::Settings small_pages() {
  gpsm::gps::Settings st = gpsm::gps::Settings::from_env();
  st.page_bytes = 4096;
  return st;
}

}  // namespace

TEST(GraphAppsGpu, PageRankEveryParadigm) {
  GPSM_REQUIRE_GPUS(1);
  every_paradigm("pagerank", {"rmat:11", "road:48x37@nnz"}, 10, 1e-4);
}

TEST(GraphAppsGpu, PageRankToleranceStopsWhereTheReferenceStops) {
  GPSM_REQUIRE_GPUS(1);
  auto app = apptest::app_named("pagerank");
  const int g = static_cast<int>(apptest::gpu_counts().back());
  for (Paradigm par : {Paradigm::memcpy, Paradigm::rdl, Paradigm::gps, Paradigm::p2p_inline, Paradigm::proact}) {
    SCOPED_TRACE(paradigm_name(par));
    const RunOutcome o = apptest::run(*app, par, g, app->problem("rmat:11@tol=1e-5", 300));
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;  // includes: within one iteration of the reference's count
    EXPECT_LT(o.iterations, 300);
    EXPECT_GT(o.iterations, 3);
  }
}

TEST(GraphAppsGpu, SsspEveryParadigm) {
  GPSM_REQUIRE_GPUS(1);
  // rmat converges; the 40x40 road grid hits the 30-iteration cap.
  every_paradigm("sssp", {"rmat:11", "road:40@nnz"}, 30, 0.0);
}

// Hub rows split into block segments (apps/graph/row_segments.hpp), forced onto most rows:
// GPSM_GRAPH_SPLIT=2 splits every row of more than 2 x lanes edges (32 on rmat:13), and its
// largest row (1502 edges) takes two segments. Every paradigm still matches the reference
// (distances exactly), tracking (gps) included.
TEST(GraphAppsGpu, SplitRowsEveryParadigm) {
  GPSM_REQUIRE_GPUS(1);
  struct EnvGuard {
    EnvGuard() { setenv("GPSM_GRAPH_SPLIT", "2", 1); }
    ~EnvGuard() { unsetenv("GPSM_GRAPH_SPLIT"); }
  } split;
  every_paradigm("pagerank", {"rmat:13"}, 10, 1e-4);
  every_paradigm("sssp", {"rmat:13"}, 30, 0.0);
  // tolerance mode: the split rows' last blocks add their L1 change too
  auto app = apptest::app_named("pagerank");
  const int g = static_cast<int>(apptest::gpu_counts().back());
  for (Paradigm par : {Paradigm::memcpy, Paradigm::gps}) {
    SCOPED_TRACE(paradigm_name(par));
    const RunOutcome o = apptest::run(*app, par, g, app->problem("rmat:13@tol=1e-5", 300));
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;  // within one iteration of the reference's count
    EXPECT_GT(o.iterations, 3);
  }
}

TEST(GraphAppsGpu, AlsEveryParadigm) {
  GPSM_REQUIRE_GPUS(1);
  every_paradigm("als", {"ratings:3000x400x12", "ratings:2000x500x8@nnz"}, 3, 1e-3);
}

// proact with one kernel block per chunk (the most chunks, waits and copies per rank; the default
// 2 MiB floor leaves these small vectors one chunk per rank): still the reference's result, and
// memcpy's link bytes.
TEST(GraphAppsGpu, ProactWithTheSmallestChunks) {
  GPSM_REQUIRE_GPUS(1);
  const std::vector<std::pair<const char*, const char*>> runs{
      {"pagerank", "rmat:11"}, {"pagerank", "road:48x37@nnz"}, {"sssp", "rmat:11"}, {"als", "ratings:3000x400x12"}};
  for (const auto& [name, size] : runs)
    for (int g : apptest::gpu_counts()) {
      SCOPED_TRACE(std::string(name) + " " + size + " on " + std::to_string(g) + " GPUs");
      auto app = apptest::app_named(name);
      const Problem p = app->problem(size, std::string(name) == "als" ? 3 : 10);
      // asked through the request, as gpsm bench's --proact-chunk does
      const RunOutcome o = apptest::run(*app, Paradigm::proact, g, p, {1, "test: one byte"});
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_LE(o.error, o.tolerance);
      EXPECT_EQ(o.proact.requested, 1u);
      EXPECT_EQ(o.proact.source, "test: one byte");
      EXPECT_GT(o.proact.chunk_bytes, 0u);  // one kernel block's rows
      EXPECT_LE(o.proact.chunk_bytes, 256u * 4u * 64u);
      EXPECT_GT(o.proact.key_size, 0u);
      const RunOutcome m = apptest::run(*app, Paradigm::memcpy, g, p);
      ASSERT_EQ(m.status, RunStatus::ok) << m.reason;
      EXPECT_DOUBLE_EQ(o.link_bytes_per_iter, m.link_bytes_per_iter);
    }
}

// The kernel's counting against the host plan: after k publications every chunk counter holds
// k x its contributors (fewer would hang the copy stream, more would let copies start early),
// and the vector equals memcpy's exchange bit for bit.
TEST(GraphAppsGpu, ProactCountersMatchTheChunkPlan) {
  GPSM_REQUIRE_GPUS(2);
  using namespace gpsm::apps::graph;
  const std::vector<int> use = up_to_four_devices();
  const int n = static_cast<int>(use.size());
  const GraphSpec gs = parse_graph_spec("rmat:12");
  const gpsm::graph_io::Csr g = build_graph(gs, false, 1);
  const gpsm::graph_io::Csr in = gpsm::graph_io::transpose(g);
  const int lanes = lanes_for(static_cast<double>(in.nnz()) / static_cast<double>(in.rows));
  gpsm::gps::Context ctx(use, gpsm::gps::Settings::from_env());
  const VecLayout l = layout_for(in, n, false, 1);
  Exchange px(ctx, Paradigm::proact, l, 2, "counted", nullptr, rows_per_block(lanes), 256);
  Exchange mx(ctx, Paradigm::memcpy, l, 2, "plain");
  ASSERT_NE(px.proact(), nullptr);
  std::vector<DeviceSlice> dev(n);
  std::vector<gpsm::DevBuf<float>> inv(n);
  const std::vector<float> inv_slots = to_slots(l, inverse_out_degree(g), 0.0f);
  for (int r = 0; r < n; ++r) {
    dev[r].upload(ctx.device(r), slice_rows(in, l.parts[r], l));
    upload_floats(inv[r], ctx.device(r), inv_slots);
  }
  const std::vector<float> x0 = to_slots(l, std::vector<float>(static_cast<std::size_t>(l.rows()), 1.0f / l.rows()), 0.0f);
  const int phases = 5;
  for (Exchange* x : {&px, &mx}) {
    x->upload(0, x0);
    x->upload(1, x0);
    for (int it = 0; it < phases; ++it) {
      const int c = it & 1;
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(cudaSetDevice(ctx.device(r)), cudaSuccess);
        const ReadyArg ready = x->before_kernel(r, 1 - c);
        EXPECT_EQ(ready.counters != nullptr, x == &px);
        launch_pagerank(dev[r].arg(r * l.chunk), x->arg(r, c), x->arg(r, 1 - c), inv[r].p, 0.1f, kDamping, nullptr,
                        lanes, ctx.stream(r), ready);
        x->after_kernel(r, 1 - c);
      }
      ctx.synchronize();  // the phase order the events give in the apps
    }
  }
  for (int r = 0; r < n; ++r) {
    const ChunkSplit& s = px.proact()->split(r);
    EXPECT_GT(s.chunks(), 1) << "rank " << r << ": the test wants several chunks";
    const std::vector<std::uint32_t> got = px.proact()->counters(r);
    ASSERT_EQ(static_cast<std::int64_t>(got.size()), s.chunks());
    for (std::int64_t k = 0; k < s.chunks(); ++k)
      EXPECT_EQ(got[k], phases * s.contributors(k)) << "rank " << r << " chunk " << k;
  }
  // Every replica, not just the owners' rows: the copies must have landed everywhere.
  for (int r = 0; r < n; ++r) {
    std::vector<float> a(static_cast<std::size_t>(l.elems())), b(a.size());
    ASSERT_EQ(cudaSetDevice(ctx.device(r)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(a.data(), px.arg(r, phases & 1).local, a.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpy(b.data(), mx.arg(r, phases & 1).local, b.size() * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_EQ(a, b) << "replica on rank " << r;
  }
}

// road:512 (1 MiB rank vector): each GPU reads its neighbours' boundary rows only, so GPS
// subscribes it to few foreign pages and publishes far less than memcpy's allgather; gps_all,
// every GPU subscribed to every page, publishes about as much as memcpy.
TEST(GraphAppsGpu, GpsPublishesLessThanMemcpyOnARoadGraph) {
  GPSM_REQUIRE_GPUS(2);
  auto app = apptest::app_named("pagerank");
  const int g = static_cast<int>(apptest::gpu_counts().back());
  const Problem p = app->problem("road:512", 4);
  const RunOutcome mem = apptest::run(*app, Paradigm::memcpy, g, p);
  const RunOutcome gps = apptest::run(*app, Paradigm::gps, g, p);
  const RunOutcome all = apptest::run(*app, Paradigm::gps_all, g, p);
  for (const RunOutcome* o : {&mem, &gps, &all}) ASSERT_EQ(o->status, RunStatus::ok) << o->reason;
  EXPECT_DOUBLE_EQ(mem.link_bytes_per_iter, 512.0 * 512 * sizeof(float) * (g - 1));
  EXPECT_GT(gps.link_bytes_per_iter, 0.0);
  EXPECT_LT(gps.link_bytes_per_iter, 0.5 * mem.link_bytes_per_iter);
  EXPECT_GE(all.link_bytes_per_iter, 0.9 * mem.link_bytes_per_iter);
  const double pages_gps = std::accumulate(gps.subscriber_pages.begin(), gps.subscriber_pages.end(), 0.0);
  const double pages_all = std::accumulate(all.subscriber_pages.begin(), all.subscriber_pages.end(), 0.0);
  EXPECT_EQ(pages_gps, pages_all);                          // the same arrays, counted the same
  EXPECT_GT(gps.subscriber_pages[0], 0.5 * pages_gps);      // most pages private
  EXPECT_EQ(all.subscriber_pages[g - 1], pages_all);        // every page on every GPU
}

TEST(GraphAppsGpu, UnimplementedParadigmsSayWhy) {
  GPSM_REQUIRE_GPUS(1);
  for (const char* name : {"pagerank", "sssp", "als"}) {
    auto app = apptest::app_named(name);
    ASSERT_NE(app, nullptr);
    for (Paradigm par : {Paradigm::cpu_free, Paradigm::nvshmem}) {
      EXPECT_FALSE(app->has(par));
      const RunOutcome o = apptest::run(*app, par, 1, app->problem(std::string(name) == "als" ? "ratings:100" : "rmat:6", 2));
      EXPECT_EQ(o.status, RunStatus::unsupported);
      EXPECT_NE(o.reason.find("not implemented"), std::string::npos) << o.reason;
    }
  }
}

// The exchange layer's gps vector after a tracked PageRank iteration pair: each GPU is subscribed
// exactly to the pages it writes (its rows) or reads (its slice's columns), as predicted_masks
// computes from the CSR on the host (pages nobody touches, padding only, are not compared).
TEST(GraphAppsGpu, TrackedSubscriptionsAreThePagesEachGpuTouches) {
  GPSM_REQUIRE_GPUS(2);
  using namespace gpsm::apps::graph;
  const std::vector<int> use = up_to_four_devices();
  const int n = static_cast<int>(use.size());
  for (const char* spec : {"rmat:14", "road:128x96@nnz"}) {
    SCOPED_TRACE(spec);
    const GraphSpec gs = parse_graph_spec(spec);
    const gpsm::graph_io::Csr g = build_graph(gs, false, 1);
    const gpsm::graph_io::Csr in = gpsm::graph_io::transpose(g);
    gpsm::gps::Context ctx(use, small_pages());
    const VecLayout l = layout_for(in, n, gs.balance_nnz, 1);
    Exchange x(ctx, Paradigm::gps, l, 2, "tracked");
    std::vector<Slice> host(n);
    std::vector<DeviceSlice> dev(n);
    std::vector<gpsm::DevBuf<float>> inv(n);
    const std::vector<float> inv_slots = to_slots(l, inverse_out_degree(g), 0.0f);
    for (int r = 0; r < n; ++r) {
      host[r] = slice_rows(in, l.parts[r], l);
      dev[r].upload(ctx.device(r), host[r]);
      upload_floats(inv[r], ctx.device(r), inv_slots);
    }
    x.upload(0, to_slots(l, std::vector<float>(static_cast<std::size_t>(l.rows()), 1.0f / l.rows()), 0.0f));
    x.upload(1, std::vector<float>(static_cast<std::size_t>(l.elems()), 0.0f));
    ctx.tracking_start();
    for (int it = 0; it < 2; ++it) {
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(cudaSetDevice(ctx.device(r)), cudaSuccess);
        launch_pagerank(dev[r].arg(r * l.chunk), x.arg(r, it & 1), x.arg(r, 1 - (it & 1)), inv[r].p, 0.1f, kDamping,
                        nullptr, lanes_for(4.0), ctx.stream(r));
      }
      x.after_phase(1 - (it & 1));
    }
    ctx.tracking_stop();
    std::vector<std::vector<const Slice*>> reads(n);
    for (int r = 0; r < n; ++r) reads[r] = {&host[r]};
    const auto want = predicted_masks(l, reads, 4096);
    for (int b = 0; b < 2; ++b) {
      const auto& got = x.gps_array(b)->subscriptions().masks();
      ASSERT_EQ(got.size(), want.size());
      int compared = 0;
      for (std::size_t p = 0; p < want.size(); ++p) {
        if (want[p] == 0) continue;
        ++compared;
        EXPECT_EQ(got[p], want[p]) << "buffer " << b << ", page " << p;
      }
      EXPECT_GT(compared, 0);
    }
  }
}

// The exchange layer hands a tracked gps vector over as `held` exactly where the rank subscribes
// to every page (loads from its replica with no mask, stores published through the view), else
// as `gps`; then sssp run with those kinds equals the CPU reference after the same iterations.
// rmat: every GPU gathers from every page; the road grid: each GPU reads a band, so not held.
TEST(GraphAppsGpu, HeldKindWhereTheRankHoldsEveryPage) {
  GPSM_REQUIRE_GPUS(2);
  using namespace gpsm::apps::graph;
  const std::vector<int> use = up_to_four_devices();
  const int n = static_cast<int>(use.size());
  for (const char* spec : {"rmat:14", "road:128x96@nnz"}) {
    SCOPED_TRACE(spec);
    const bool power_law = std::string(spec).rfind("rmat", 0) == 0;
    const GraphSpec gs = parse_graph_spec(spec);
    const gpsm::graph_io::Csr g = build_graph(gs, true, 1);
    const gpsm::graph_io::Csr in = gpsm::graph_io::transpose(g);
    const std::int64_t source = sssp_source(g);
    gpsm::gps::Context ctx(use, small_pages());
    const int lanes = lanes_for(static_cast<double>(in.nnz()) / static_cast<double>(in.rows));
    const VecLayout l = layout_for(in, n, gs.balance_nnz, 1);
    Exchange x(ctx, Paradigm::gps, l, 2, "held");
    std::vector<DeviceSlice> dev(n);
    std::vector<gpsm::DevBuf<int>> changed(n);
    for (int r = 0; r < n; ++r) {
      dev[r].upload(ctx.device(r), slice_rows(in, l.parts[r], l));
      changed[r].alloc(ctx.device(r), 1);
    }
    std::vector<float> d0(static_cast<std::size_t>(l.rows()), std::numeric_limits<float>::infinity());
    d0[static_cast<std::size_t>(source)] = 0;
    x.upload(0, to_slots(l, d0, 0.0f));
    x.upload(1, std::vector<float>(static_cast<std::size_t>(l.elems()), std::numeric_limits<float>::quiet_NaN()));
    constexpr int kIters = 6;
    int held_launches = 0;
    for (int it = 0; it < kIters; ++it) {
      if (it == 0) ctx.tracking_start();
      if (it == 2) ctx.tracking_stop();
      for (int r = 0; r < n; ++r) {
        ASSERT_EQ(cudaSetDevice(ctx.device(r)), cudaSuccess);
        const VecArg rd = x.arg(r, it & 1), wr = x.arg(r, 1 - (it & 1));
        for (int b = 0; b < 2; ++b) {
          const VecArg v = x.arg(r, b);
          const bool every = x.gps_array(b)->holds_every_page(r);
          EXPECT_EQ(v.kind == Access::held, every) << "rank " << r << ", buffer " << b << ", iteration " << it;
          if (it >= 2 && power_law) EXPECT_TRUE(every) << "rank " << r << ", buffer " << b;
        }
        held_launches += rd.kind == Access::held && wr.kind == Access::held;
        launch_sssp(dev[r].arg(r * l.chunk), rd, wr, changed[r].p, lanes, ctx.stream(r));
      }
      x.after_phase(1 - (it & 1));
    }
    ctx.synchronize();
    if (power_law) EXPECT_EQ(held_launches, (kIters - 2) * n);
    if (!power_law) EXPECT_EQ(held_launches, 0);
    const SsspResult ref = sssp_reference(in, source, kIters);
    // iteration 3 (the first held one) must still change distances, or the published stores go unchecked
    ASSERT_TRUE(!ref.converged || ref.iterations >= 4) << ref.iterations;
    const std::vector<float> got = from_slots(l, x.download(kIters & 1));
    ASSERT_EQ(got.size(), ref.dist.size());
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] == ref.dist[i] ? 0 : 1;
    EXPECT_EQ(bad, 0);
  }
}
