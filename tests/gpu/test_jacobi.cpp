// Jacobi 2D on GPUs: every implemented paradigm, on 1, 2 and all GPUs, verified by the app
// against the CPU reference (a wrong halo or norm fails the run); the checker itself is shown
// to catch a wrong result (the `infinite` bound, whose transfers are elided). The nvshmem
// paradigm, which runs in worker processes, is tested in test_jacobi_nvshmem.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "app_test_util.hpp"

using namespace gpsm::apps;

namespace {

std::unique_ptr<App> jacobi() { return apptest::app_named("jacobi2d"); }
using apptest::run;

}  // namespace

TEST(JacobiGpu, EveryParadigmMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi();
  ASSERT_NE(app, nullptr);
  // Uneven split (interior rows not a multiple of the GPU count) and a norm every 3 iterations;
  // nx = 200 takes the float4 sweeps, nx = 202 the scalar ones.
  const std::vector<int> counts = apptest::gpu_counts();
  for (const char* size : {"200x131", "202x131"})
  for (int g : counts)
    for (Paradigm par : {Paradigm::single, Paradigm::memcpy, Paradigm::um, Paradigm::um_hints, Paradigm::rdl,
                         Paradigm::p2p_inline, Paradigm::gps, Paradigm::proact, Paradigm::cpu_free,
                         Paradigm::infinite}) {
      if (par == Paradigm::single && g != 1) continue;
      SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size);
      Problem p = app->problem(size, 40);
      p.nccheck = 3;
      const RunOutcome o = run(*app, par, g, p);
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_EQ(o.iterations, 40);
      ASSERT_EQ(o.sec_per_iter.size(), 1u);
      EXPECT_GT(o.sec_per_iter[0], 0.0);
      if (par == Paradigm::infinite && g > 1) {
        // Transfers elided: the result must differ from the reference, or the check proves nothing.
        EXPECT_GT(o.error, 1e-3);
      } else {
        EXPECT_LE(o.error, 1e-6);
      }
    }
}

TEST(JacobiGpu, ToleranceStopsEveryParadigmWhereTheReferenceStops) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi();
  const int g = std::min<int>(2, static_cast<int>(gpstest::all_devices().size()));
  for (const char* size : {"64x40", "66x40"})  // float4 and scalar sweeps
  for (Paradigm par : {Paradigm::memcpy, Paradigm::um, Paradigm::rdl, Paradigm::p2p_inline, Paradigm::gps, Paradigm::proact,
                       Paradigm::cpu_free}) {
    SCOPED_TRACE(std::string(paradigm_name(par)) + " " + size);
    Problem p = app->problem(size, 500);
    p.tol = 0.05f;  // reached after a few dozen iterations
    const RunOutcome o = run(*app, par, g, p);
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;  // includes: same iteration count as the reference
    EXPECT_LT(o.iterations, 500);
    EXPECT_GT(o.iterations, 1);
  }
}

// NCCL send/recv halos and allreduce norm (one process, every GPU); one GPU runs without NCCL.
TEST(JacobiGpu, NcclMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  auto app = jacobi();
  ASSERT_NE(app, nullptr);
  if (!app->has(Paradigm::nccl)) {
    const RunOutcome o = run(*app, Paradigm::nccl, 1, app->problem("64", 5));
    EXPECT_EQ(o.status, RunStatus::unsupported);
    GTEST_SKIP() << "gpsm built without NCCL (" << o.reason << ")";
  }
  Problem p = app->problem("200x131", 40);
  p.nccheck = 3;
  const std::vector<int> counts = apptest::gpu_counts();
  for (int g : counts) {
    SCOPED_TRACE("nccl on " + std::to_string(g) + " GPUs");
    const RunOutcome o = run(*app, Paradigm::nccl, g, p);
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_EQ(o.iterations, 40);
    ASSERT_EQ(o.sec_per_iter.size(), 1u);
    EXPECT_GT(o.sec_per_iter[0], 0.0);
    EXPECT_LE(o.error, 1e-6);
    if (g == 1) EXPECT_EQ(o.link_bytes_per_iter, 0.0);
    else EXPECT_GE(o.link_bytes_per_iter, 2.0 * g * 200 * sizeof(float));
  }
}
