// heat3d and wave3d on NVSHMEM: gpsm bench's nvshmem paradigm starts one worker process per GPU
// (gpsm-nvshmem-stencil --app heat3d|wave3d), each stepping its slab with the app's own step kernel
// and storing its boundary planes into the neighbours' symmetric buffers; the app verifies the
// gathered box against the CPU reference, as for every other paradigm (bound 1e-6: in fact bit
// for bit). Skipped (never passed) without a GPU or in a build without NVSHMEM; in such a build
// the paradigm must say why it is unsupported.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "app_test_util.hpp"

using namespace gpsm::apps;

namespace {

// p2p_inline's count: per boundary, both directions, `radius` planes of their interior cells.
double pushed_bytes(const Problem& p, int radius, int g) {
  const int a = static_cast<int>(p.axis);
  const double interior = static_cast<double>(p.n[(a + 1) % 3] - 2 * radius) * static_cast<double>(p.n[(a + 2) % 3] - 2 * radius);
  return 2.0 * (g - 1) * radius * interior * 4;
}

}  // namespace

// 1, 2 and all GPUs; split along z and y; odd extents (scalar rows, unequal plane counts) and an x
// multiple of 4 (the float4 rows).
TEST(Stencil3DNvshmemGpu, MatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  const std::pair<const char*, const char*> cases[] = {
      {"heat3d", "21x19x23"}, {"wave3d", "23x21x25"}, {"heat3d", "28x21x23"}, {"wave3d", "28x21x23"}};
  for (const auto& [name, size] : cases) {
    auto app = apptest::nvshmem_app(name);
    ASSERT_NE(app, nullptr);
    GPSM_SKIP_WITHOUT_NVSHMEM(app);
    const int radius = std::string(name) == "heat3d" ? 1 : 2;
    for (Axis axis : {Axis::z, Axis::y})
      for (int g : apptest::gpu_counts()) {
        SCOPED_TRACE(std::string(name) + " " + size + " nvshmem on " + std::to_string(g) + " GPUs along " +
                     axis_name(axis));
        Problem p = app->problem(size, 7);
        p.axis = axis;
        p.seed = 3;
        const RunOutcome o = apptest::run(*app, Paradigm::nvshmem, g, p);
        EXPECT_EQ(o.status, RunStatus::ok) << o.reason;
        if (o.status != RunStatus::ok) continue;
        EXPECT_EQ(o.iterations, 7);
        ASSERT_EQ(o.sec_per_iter.size(), 1u);
        EXPECT_GT(o.sec_per_iter[0], 0.0);
        EXPECT_LE(o.error, 1e-6);
        EXPECT_EQ(o.tolerance, 1e-6);
        EXPECT_EQ(o.link_bytes_per_iter, g == 1 ? 0.0 : pushed_bytes(p, radius, g));
      }
  }
}

// Several solves in one worker: each starts from fresh values with poisoned halos (a halo left
// over from the previous solve would hide a missing store), the last one is verified, and the
// warm-ups are not reported. An even iteration count: the result is in buffer 0.
TEST(Stencil3DNvshmemGpu, RepeatedSolvesInOneWorkerEachVerify) {
  GPSM_REQUIRE_GPUS(1);
  for (const char* name : {"heat3d", "wave3d"}) {
    SCOPED_TRACE(name);
    auto app = apptest::nvshmem_app(name);
    ASSERT_NE(app, nullptr);
    GPSM_SKIP_WITHOUT_NVSHMEM(app);
    RunRequest r;
    r.paradigm = Paradigm::nvshmem;
    r.devices = gpstest::all_devices();
    r.problem = app->problem("24x30x37", 10);
    r.problem.seed = 9;
    r.warmup = 2;
    r.reps = 3;
    const RunOutcome o = app->run(r);
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_EQ(o.iterations, 10);
    EXPECT_EQ(o.sec_per_iter.size(), 3u);
    EXPECT_LE(o.error, 1e-6);
  }
}
