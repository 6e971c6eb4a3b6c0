// The memory estimates gpsm bench and gpsm sim check before allocating (apps/harness/memory_estimate.hpp,
// graph_build_host_bytes, cg_host_bytes): each refuses an impossible size with the figure and
// passes a small one, and stays within 20% of the peak the code it stands for really allocates,
// measured here by counting operator new's live bytes.
#include <gtest/gtest.h>
#include "app_named.hpp"
#include "test_support.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/reference.hpp"
#include "apps/graph/graph_spec.hpp"
#include "apps/harness/memory_estimate.hpp"
#include "apps/stencil/reference.hpp"
#include "common/memory_budget.hpp"
#include "gpsm/error.hpp"

// ---- live-byte counting: every operator new of this binary goes through here -------------------
namespace {
std::atomic<long long> g_live{0}, g_peak{0};
constexpr std::size_t kHeader = 16;  // keeps malloc's 16-B alignment

void* counted_new(std::size_t n) {
  void* raw = std::malloc(n + kHeader);
  if (raw == nullptr) throw std::bad_alloc();
  *static_cast<std::size_t*>(raw) = n;
  const long long now = g_live.fetch_add(static_cast<long long>(n), std::memory_order_relaxed) + static_cast<long long>(n);
  long long seen = g_peak.load(std::memory_order_relaxed);
  while (now > seen && !g_peak.compare_exchange_weak(seen, now, std::memory_order_relaxed)) {
  }
  return static_cast<char*>(raw) + kHeader;
}
void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  void* raw = static_cast<char*>(p) - kHeader;
  g_live.fetch_sub(static_cast<long long>(*static_cast<std::size_t*>(raw)), std::memory_order_relaxed);
  std::free(raw);
}
}  // namespace

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }

namespace gpsm::apps {
namespace {

// The peak of live bytes above the level at construction, while the object lives.
class PeakBytes {
 public:
  PeakBytes() : base_(g_live.load()) { g_peak.store(base_); }
  double above_start() const { return double(g_peak.load() - base_); }

 private:
  long long base_;
};

// GPSM_MEMORY_LIMIT set for the test, restored after.
using gpsm::test::ScopedEnv;

void expect_within_20_percent(double estimate, double measured, const std::string& what) {
  EXPECT_GT(measured, 0) << what;
  std::printf("%s: estimate %.0f B, measured peak %.0f B (%.2f)\n", what.c_str(), estimate, measured, estimate / measured);
  EXPECT_LE(estimate, 1.2 * measured) << what << ": estimate " << estimate << " B, measured peak " << measured << " B";
  EXPECT_GE(estimate, 0.8 * measured) << what << ": estimate " << estimate << " B, measured peak " << measured << " B";
}

// Whether require_host_memory refuses `bytes` under a 1 GB limit, with the figure in the message.
bool refused_under_1g(double bytes) {
  ScopedEnv lim("GPSM_MEMORY_LIMIT", "1G");
  try {
    require_host_memory(bytes, "test", "smaller");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs about"), std::string::npos) << e.what();
    return true;
  }
  return false;
}

// ---- graphs --------------------------------------------------------------------------------------
double graph_peak(const std::string& spec, bool weighted) {
  const graph::GraphSpec s = graph::parse_graph_spec(spec);
  PeakBytes peak;
  const graph_io::Csr g = graph::build_graph(s, weighted, 7);
  EXPECT_GT(g.nnz(), 0);
  return peak.above_start();
}

TEST(MemoryEstimate, RmatBuildMatchesItsPeak) {
  const auto s = graph::parse_graph_spec("rmat:16");
  expect_within_20_percent(graph::graph_build_host_bytes(s), graph_peak("rmat:16", false), "rmat:16");
  expect_within_20_percent(graph::graph_build_host_bytes(s), graph_peak("rmat:16", true), "rmat:16 weighted");
}

TEST(MemoryEstimate, RoadBuildMatchesItsPeak) {
  const auto s = graph::parse_graph_spec("road:300x200");
  expect_within_20_percent(graph::graph_build_host_bytes(s), graph_peak("road:300x200", true), "road:300x200");
}

TEST(MemoryEstimate, RatingsBuildMatchesItsPeak) {
  const auto s = graph::parse_graph_spec("ratings:20000x2000x20");
  expect_within_20_percent(graph::graph_build_host_bytes(s), graph_peak("ratings:20000x2000x20", true), "ratings");
}

TEST(MemoryEstimate, GraphBuildRefusesWhatTheHostCannotHold) {
  EXPECT_TRUE(refused_under_1g(graph::graph_build_host_bytes(graph::parse_graph_spec("rmat:30"))));
  EXPECT_TRUE(refused_under_1g(graph::graph_build_host_bytes(graph::parse_graph_spec("road:46000"))));
  EXPECT_TRUE(refused_under_1g(graph::graph_build_host_bytes(graph::parse_graph_spec("ratings:100000000"))));
  EXPECT_FALSE(refused_under_1g(graph::graph_build_host_bytes(graph::parse_graph_spec("rmat:16"))));
  EXPECT_FALSE(refused_under_1g(graph::graph_build_host_bytes(graph::parse_graph_spec("road:1024"))));
  EXPECT_EQ(graph::graph_build_host_bytes(graph::parse_graph_spec("some/file.mtx")), 0.0);
  // build_graph itself refuses before drawing anything.
  ScopedEnv lim("GPSM_MEMORY_LIMIT", "1G");
  try {
    graph::build_graph(graph::parse_graph_spec("rmat:26"), false, 1);
    FAIL() << "rmat:26 built under a 1 GB limit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("generating graph rmat:26 needs about 27.1 GB"), std::string::npos) << e.what();
  }
}

// ---- stencils ------------------------------------------------------------------------------------
TEST(MemoryEstimate, JacobiHostMatchesReferenceAndGather) {
  JacobiProblem p;
  p.nx = 700;
  p.ny = 500;
  p.niter = 3;
  PeakBytes peak;
  const JacobiResult ref = jacobi_reference(p);
  const std::vector<float> gathered(static_cast<std::size_t>(p.nx * p.ny));  // what gather() returns
  expect_within_20_percent(jacobi2d_host_bytes(p.nx, p.ny), peak.above_start(), "jacobi2d 700x500");
  EXPECT_TRUE(refused_under_1g(jacobi2d_host_bytes(200000, 200000)));
  EXPECT_FALSE(refused_under_1g(jacobi2d_host_bytes(4096, 4096)));
}

TEST(MemoryEstimate, Stencil3dHostMatchesReferenceAndGather) {
  Stencil3DProblem p;
  p.n[0] = 64, p.n[1] = 48, p.n[2] = 40;
  p.iters = 2;
  const std::size_t cells = static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]);
  {
    PeakBytes peak;
    const std::vector<float> ref = heat3d_reference(p);
    const std::vector<float> gathered(cells);
    expect_within_20_percent(stencil3d_host_bytes(p.n), peak.above_start(), "heat3d");
  }
  {
    PeakBytes peak;
    const std::vector<float> ref = wave3d_reference(p);
    const std::vector<float> gathered(cells);
    expect_within_20_percent(stencil3d_host_bytes(p.n), peak.above_start(), "wave3d");
  }
  const std::int64_t huge[3] = {4096, 4096, 4096};
  const std::int64_t small[3] = {256, 256, 256};
  EXPECT_TRUE(refused_under_1g(stencil3d_host_bytes(huge)));
  EXPECT_FALSE(refused_under_1g(stencil3d_host_bytes(small)));
}

// The GPU side: the slabs' two buffers per GPU, exactly as jacobi::Slabs and stencil3d::Slabs
// allocate them (local rows / cells from the same decomposition).
TEST(MemoryEstimate, StencilGpuBytesAreTheSlabBuffers) {
  EXPECT_EQ(jacobi2d_gpu_bytes(4096, 4096, 1), 2.0 * 4 * 4096 * 4096);                 // 4094 rows + 2 halos
  EXPECT_EQ(jacobi2d_gpu_bytes(4096, 4096, 4), 2.0 * 4 * (1024 + 2) * 4096);           // 4094 = 1023 + 1023 + 1024 + 1024
  EXPECT_EQ(jacobi2d_gpu_bytes(10, 10, 9), 0.0);                                        // 8 interior rows: cannot split
  const std::int64_t n[3] = {256, 256, 256};
  EXPECT_EQ(stencil3d_gpu_bytes(n, Axis::z, 1, 1), 2.0 * 4 * 256 * 256 * 256);
  EXPECT_EQ(stencil3d_gpu_bytes(n, Axis::z, 1, 2), 2.0 * 4 * 256 * 256 * (127 + 2));  // 254 interior planes
  EXPECT_EQ(stencil3d_gpu_bytes(n, Axis::x, 2, 2), 2.0 * 4 * 256 * 256 * (126 + 4));  // wave: 252 interior, 2 halos
}

// gps allocates each of its two float arrays whole on every GPU, so its estimate is the whole
// problem twice at any GPU count, where the slab paradigms' shrinks with the GPUs.
TEST(MemoryEstimate, GpsHoldsBothWholeArraysOnEveryGpu) {
  EXPECT_EQ(gps_replica_bytes(1000.0), 8000.0);
  const struct {
    const char* app;
    const char* size;
    double cells;
  } cases[] = {{"jacobi2d", "4096", 4096.0 * 4096},
               {"heat3d", "256", 256.0 * 256 * 256},
               {"wave3d", "256x128x64", 256.0 * 128 * 64},
               {"fd3d", "512:h4", 512.0 * 512 * 512},
               {"filter", "4096x2048:k5", 4096.0 * 2048}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.app);
    const std::unique_ptr<gpsm::apps::App> app = gpsm::test::app_named(c.app);
    ASSERT_NE(app, nullptr);
    const gpsm::apps::Problem p = app->problem(c.size, 0);
    for (int gpus : {1, 2, 4}) {
      EXPECT_EQ(app->gpu_bytes_per_gpu(p, gpus, gpsm::apps::Paradigm::gps), 2.0 * 4 * c.cells) << gpus << " GPUs";
      if (gpus > 1) EXPECT_LT(app->gpu_bytes_per_gpu(p, gpus, gpsm::apps::Paradigm::memcpy), 2.0 * 4 * c.cells) << gpus;
    }
  }
}

TEST(MemoryEstimate, GpuRefusalSaysNeedAndFree) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_EQ(gpu_memory_refusal("heat3d", "4096x4096x4096", 2, 512.0 * gib, 79.25 * gib),
            "gpsm: heat3d 4096x4096x4096 on 2 GPUs needs 512.0 GiB per GPU, the GPU has 79.2 GiB free; use a smaller "
            "size or more GPUs");
  EXPECT_NE(gpu_memory_refusal("jacobi2d", "200000x200000", 1, 298.0 * gib, 79.0 * gib).find("on 1 GPU needs"),
            std::string::npos);
  EXPECT_EQ(gpu_memory_refusal("heat3d", "256x256x256", 1, 0.5 * gib, 79.0 * gib), "");
  EXPECT_EQ(gpu_memory_refusal("heat3d", "256x256x256", 1, 500 * gib, 0), "");  // free not known: the run decides
  EXPECT_EQ(gpu_memory_refusal("heat3d", "256x256x256", 1, 0, 79.0 * gib), "");  // not estimated
}

// ---- cg ------------------------------------------------------------------------------------------
// What CgApp holds at its peak: the matrix, a plan, both variants' starts and reference solves
// (cached between runs), the sliced copy the upload builds and the x gathered from the GPUs.
TEST(MemoryEstimate, CgRunMatchesItsPeak) {
  for (const char* spec : {"poisson3d:40", "poisson2d:300"}) {
    const cg::MatrixSpec s = cg::parse_spec(spec);
    PeakBytes peak;
    const cg::Matrix a = cg::load(s);
    // GPSM_CG_INDEX=i16: the upload also builds the deltas, the largest peak a run has.
    const cg::Plan plan = cg::make_plan(a, cg::split_rows(a.n, 1), cg::SpmvChoice::automatic,
                                        cg::ValueChoice::automatic, cg::Variant::standard, 0, cg::IndexChoice::i16);
    const cg::Start st = cg::make_start(a, plan, cg::Variant::standard, 0);
    const cg::Start sp = cg::make_start(a, plan, cg::Variant::pipelined, 0);
    const cg::Solve rs = cg::reference_solve(a, plan, st, cg::Variant::standard, 5);
    const cg::Solve rp = cg::reference_solve(a, plan, sp, cg::Variant::pipelined, 5);
    {  // the upload's sliced copy of a GPU's rows and its deltas, while the references are cached
      ASSERT_EQ(plan.spmv.layout, cg::SpmvLayout::sell);
      ASSERT_EQ(plan.index.storage, cg::IndexStorage::i16);
      const cg::Sell sell = cg::make_sell(plan.rank[0].row_ptr, plan.rank[0].col, plan.rank[0].val);
      const cg::SellDeltas deltas = cg::make_deltas(sell);
    }
    const std::vector<double> gathered(static_cast<std::size_t>(a.n));
    expect_within_20_percent(cg::cg_host_bytes(s), peak.above_start(), spec);
  }
  EXPECT_TRUE(refused_under_1g(cg::cg_host_bytes(cg::parse_spec("poisson3d:1000"))));
  EXPECT_FALSE(refused_under_1g(cg::cg_host_bytes(cg::parse_spec("poisson2d:512"))));
  EXPECT_EQ(cg::cg_host_bytes(cg::parse_spec("some/file.mtx")), 0.0);
}

}  // namespace
}  // namespace gpsm::apps
