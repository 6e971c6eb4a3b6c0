// fd3d (GPU-SM's finite differences) on GPUs: every paradigm on 1, 2 and all GPUs, split along each
// axis, at the smallest and the largest halo, on volumes whose interiors no GPU count divides and
// whose tiles are partly outside the volume, verified by the app bit for bit against the CPU
// reference; a large volume verified against the checked one-GPU run instead; the checker shown
// to catch a wrong result (infinite's elided halos).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include <fmt/format.h>

#include "app_test_util.hpp"
#include "apps/harness/app.hpp"
#include "apps/stencil/decomp.hpp"

using namespace gpsm::apps;

namespace {

using apptest::app_named;
using apptest::gpu_counts;
using apptest::run;

const Paradigm kParadigms[] = {Paradigm::single, Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::rdl,
                               Paradigm::gps,    Paradigm::infinite};

// A box for g GPUs at halo r: along the split axis each GPU owns at least r planes and the interior
// is not a multiple of g (unequal slabs); x = 2r + 37 (two tiles of 32, the second mostly outside),
// the third extent 2r + 21 (two tiles of 16).
std::string box_for(int r, Axis axis, int g) {
  std::int64_t split = static_cast<std::int64_t>(g) * r + 3;
  if (g > 1 && split % g == 0) ++split;
  std::int64_t n[3] = {2 * r + 37, 2 * r + 21, 2 * r + 19};
  n[static_cast<int>(axis)] = 2 * r + split;
  return fmt::format("{}x{}x{}:h{}", n[0], n[1], n[2], r);
}

void check_run(App& app, Paradigm par, int g, const Problem& p, const std::string& what) {
  SCOPED_TRACE(what + " " + paradigm_name(par) + " on " + std::to_string(g) + " GPUs along " + axis_name(p.axis));
  const RunOutcome o = run(app, par, g, p);
  if (par == Paradigm::single && g > 1) {
    EXPECT_EQ(o.status, RunStatus::unsupported);
    return;
  }
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  EXPECT_EQ(o.iterations, p.iters);
  EXPECT_EQ(o.sec_per_iter.size(), 1u);
  if (par == Paradigm::infinite && g > 1) {
    EXPECT_GT(o.error, 0.0) << "the elided halos must change the result, or the check proves nothing";
    EXPECT_EQ(o.tolerance, std::numeric_limits<double>::infinity());
    EXPECT_EQ(o.link_bytes_per_iter, 0.0);
    return;
  }
  EXPECT_EQ(o.error, 0.0);
  EXPECT_EQ(o.tolerance, 0.0);
  EXPECT_NE(o.timing.find("checked bit for bit against"), std::string::npos) << o.timing;
  if (g == 1 || par == Paradigm::infinite) EXPECT_EQ(o.link_bytes_per_iter, 0.0);
  else EXPECT_GT(o.link_bytes_per_iter, 0.0);
  // gps: after tracking, every GPU's timed step is a published one (the hand-written step with its
  // published planes copied after it, or the tile kernel asking per work item; one GPU: the
  // hand-written step alone), not the checked fallback.
  if (par == Paradigm::gps) {
    EXPECT_EQ(o.timing.find("the checked step"), std::string::npos) << o.timing;
    if (g == 1)
      EXPECT_NE(o.timing.find("(sole)"), std::string::npos) << o.timing;
    else
      EXPECT_TRUE(o.timing.find("published planes copied after it") != std::string::npos ||
                  o.timing.find("the tile kernel, published") != std::string::npos)
          << o.timing;
  }
}

}  // namespace

TEST(Fd3dGpu, EveryParadigmAxisAndGpuCountEqualsTheCpuReferenceBitForBit) {
  GPSM_REQUIRE_GPUS(1);
  auto app = app_named("fd3d");
  ASSERT_NE(app, nullptr);
  for (int r : {2, 16})
    for (Axis axis : {Axis::z, Axis::y, Axis::x})
      for (int g : gpu_counts())
        for (Paradigm par : kParadigms) {
          const std::string size = box_for(r, axis, g);
          Problem p = app->problem(size, 4);
          p.axis = axis;
          p.seed = 5;
          check_run(*app, par, g, p, size);
        }
}

// gps with each of its steps forced (GPSM_FD3D_GPS_STEP): the copies step, the tile kernel asking
// per work item and the checked step run on one GPU too (where auto runs the hand-written step),
// and on every GPU count give the reference's bits.
TEST(Fd3dGpu, GpsWithEachStepForcedEqualsTheCpuReferenceBitForBit) {
  GPSM_REQUIRE_GPUS(1);
  auto app = app_named("fd3d");
  ASSERT_NE(app, nullptr);
  for (const char* step : {"copies", "items", "checked"}) {
    apptest::ScopedEnv env("GPSM_FD3D_GPS_STEP", step);
    for (int r : {2, 8})
      for (Axis axis : {Axis::z, Axis::y, Axis::x})
        for (int g : gpu_counts()) {
          // Copies need each plane's pages to have one set of subscribers: these boxes' planes
          // are not page multiples, so on more GPUs auto asks per item (the test above).
          if (std::string(step) == "copies" && g > 1) continue;
          const std::string size = box_for(r, axis, g);
          Problem p = app->problem(size, 4);
          p.axis = axis;
          p.seed = 7;
          SCOPED_TRACE(std::string(step) + " " + size + " on " + std::to_string(g) + " GPUs along " + axis_name(axis));
          const RunOutcome o = run(*app, Paradigm::gps, g, p);
          ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
          EXPECT_EQ(o.error, 0.0);
          const std::string want = std::string(step) == "copies"  ? "published planes copied"
                                   : std::string(step) == "items" ? "published per work item"
                                                                  : "the checked step";
          EXPECT_NE(o.timing.find(want), std::string::npos) << o.timing;
        }
  }
}

// The axis in the size wins over --axis (Problem::axis).
TEST(Fd3dGpu, TheSizesAxisWinsOverTheOptions) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("fd3d");
  ASSERT_NE(app, nullptr);
  const std::string size = box_for(4, Axis::x, 2) + ":x";
  Problem p = app->problem(size, 3);
  p.axis = Axis::z;  // what --axis would set
  const RunOutcome o = run(*app, Paradigm::rdl, 2, p);
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  EXPECT_EQ(o.error, 0.0);
  // The halo cells loaded are an x split's, not a z split's.
  EXPECT_EQ(o.link_bytes_per_iter, slab3d_halo_bytes(p.n, Axis::x, 4, 2, false));
  EXPECT_NE(o.link_bytes_per_iter, slab3d_halo_bytes(p.n, Axis::z, 4, 2, false));
}

// 256^3 at halo 16 and its default iterations is past the CPU reference's budget: the runs are
// compared with a one-GPU run whose last step the CPU recomputed on sampled planes.
TEST(Fd3dGpu, LargeVolumesMatchTheCheckedOneGpuRun) {
  GPSM_REQUIRE_GPUS(1);
  auto app = app_named("fd3d");
  ASSERT_NE(app, nullptr);
  const int all = static_cast<int>(gpstest::all_devices().size());
  for (Axis axis : {Axis::z, Axis::x}) {
    Problem p = app->problem("256:h16", 0);
    p.axis = axis;
    for (Paradigm par : {Paradigm::rdl, Paradigm::memcpy, Paradigm::gps}) {
      const RunOutcome o = run(*app, par, all, p);
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_EQ(o.error, 0.0);
      EXPECT_NE(o.timing.find("a one-GPU run"), std::string::npos) << o.timing;
    }
    if (all > 1) {  // the comparison with the one-GPU run sees halos that were never exchanged
      const RunOutcome o = run(*app, Paradigm::infinite, all, p);
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_GT(o.error, 0.0);
    }
  }
}

// Halo planes come only from the direct neighbours: a slab thinner than the halo is refused with
// the reason, before any GPU work.
TEST(Fd3dGpu, ASlabThinnerThanTheHaloIsUnsupportedWithTheReason) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("fd3d");
  ASSERT_NE(app, nullptr);
  Problem p = app->problem("64x64x40:h16:z", 2);
  const RunOutcome o = run(*app, Paradigm::rdl, 2, p);
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_NE(o.reason.find("8 interior planes along z leave a GPU fewer than 16 (the halo)"), std::string::npos)
      << o.reason;
}
