// Jacobi 2D on NVSHMEM: gpsm bench's nvshmem paradigm starts one worker process per GPU
// (gpsm-nvshmem-stencil) and verifies the gathered grid against the CPU reference, as for every
// other paradigm. Skipped (never passed) without a GPU or in a build without NVSHMEM; in such a
// build the paradigm must say why it is unsupported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "app_test_util.hpp"

using namespace gpsm::apps;

namespace {

std::unique_ptr<App> jacobi_with_worker() { return apptest::nvshmem_app("jacobi2d"); }

}  // namespace

// 1, 2 and all GPUs; uneven split (129 interior rows) and a norm every 3 iterations, as the other
// paradigms' test.
TEST(JacobiNvshmemGpu, MatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi_with_worker();
  ASSERT_NE(app, nullptr);
  GPSM_SKIP_WITHOUT_NVSHMEM(app);
  Problem p = app->problem("200x131", 40);
  p.nccheck = 3;
  for (int g : apptest::gpu_counts()) {
    SCOPED_TRACE("nvshmem on " + std::to_string(g) + " GPUs");
    const RunOutcome o = apptest::run(*app, Paradigm::nvshmem, g, p);
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_EQ(o.iterations, 40);
    ASSERT_EQ(o.sec_per_iter.size(), 1u);
    EXPECT_GT(o.sec_per_iter[0], 0.0);
    EXPECT_LE(o.error, 1e-6);
    const double halo = 2.0 * g * (200 - 2) * sizeof(float), norms = g * (g - 1) * sizeof(float) / 3.0;
    EXPECT_DOUBLE_EQ(o.link_bytes_per_iter, g == 1 ? 0.0 : halo + norms);
  }
}

// Several solves in one worker: each starts from a fresh, poisoned grid, and the last one is the
// one verified; warm-ups are not reported.
TEST(JacobiNvshmemGpu, RepeatedSolvesInOneWorkerEachVerify) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi_with_worker();
  GPSM_SKIP_WITHOUT_NVSHMEM(app);
  RunRequest r;
  r.paradigm = Paradigm::nvshmem;
  r.devices = gpstest::all_devices();
  r.problem = app->problem("96x70", 25);
  r.problem.nccheck = 2;
  r.warmup = 2;
  r.reps = 3;
  const RunOutcome o = app->run(r);
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  EXPECT_EQ(o.iterations, 25);
  EXPECT_EQ(o.sec_per_iter.size(), 3u);
  EXPECT_LE(o.error, 1e-6);
}

TEST(JacobiNvshmemGpu, ToleranceStopsWhereTheReferenceStops) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi_with_worker();
  GPSM_SKIP_WITHOUT_NVSHMEM(app);
  Problem p = app->problem("64x40", 500);
  p.tol = 0.05f;  // reached after a few dozen iterations
  const int g = std::min<int>(2, static_cast<int>(gpstest::all_devices().size()));
  const RunOutcome o = apptest::run(*app, Paradigm::nvshmem, g, p);
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;  // includes: same iteration count as the reference
  EXPECT_LT(o.iterations, 500);
  EXPECT_GT(o.iterations, 1);
}
