// heat3d and wave3d on GPUs: every implemented paradigm, on 1, 2 and all GPUs, split along each
// axis, verified by the app against the CPU reference (a wrong halo fails the run); the checker
// itself is shown to catch a wrong result (the `infinite` bound, whose transfers are elided).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "app_test_util.hpp"

using namespace gpsm::apps;

namespace {

using apptest::app_named;
using apptest::gpu_counts;
using apptest::run;

// Every paradigm, GPU count and axis of `size`, 7 iterations. The extents are odd, distinct and
// small: the interior along every axis is odd, so two or more GPUs own unequal plane counts, and
// a stride mixed up between axes shows; up to 8 GPUs still own at least `radius` planes each.
void check_every_run(const std::string& name, const std::string& size) {
  auto app = app_named(name);
  ASSERT_NE(app, nullptr);
  for (Axis axis : {Axis::z, Axis::y, Axis::x})
    for (int g : gpu_counts())
      for (Paradigm par : {Paradigm::single, Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::cpu_free,
                           Paradigm::infinite}) {
        if (par == Paradigm::single && g != 1) continue;
        SCOPED_TRACE(name + " " + paradigm_name(par) + " on " + std::to_string(g) + " GPUs along " + axis_name(axis));
        Problem p = app->problem(size, 7);
        p.axis = axis;
        p.seed = 3;
        const RunOutcome o = run(*app, par, g, p);
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        EXPECT_EQ(o.iterations, 7);
        ASSERT_EQ(o.sec_per_iter.size(), 1u);
        EXPECT_GT(o.sec_per_iter[0], 0.0);
        if (par == Paradigm::infinite && g > 1) {
          // Transfers elided: the result must differ from the reference, or the check proves nothing.
          EXPECT_GT(o.error, 1e-4);
          EXPECT_EQ(o.link_bytes_per_iter, 0.0);
        } else {
          EXPECT_LE(o.error, 1e-6);
          if (g > 1) EXPECT_GT(o.link_bytes_per_iter, 0.0);
        }
      }
}

}  // namespace

TEST(Stencil3DGpu, HeatEveryParadigmAxisAndGpuCountMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("heat3d", "21x19x23");
}

TEST(Stencil3DGpu, WaveEveryParadigmAxisAndGpuCountMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("wave3d", "23x21x25");
}

TEST(Stencil3DGpu, LinkBytesCountThePlanesEachParadigmMoves) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("wave3d");
  Problem p = app->problem("23x21x25", 3);
  p.axis = Axis::y;  // planes are x by z: 23 x 25 cells, 19 x 21 of them interior
  // Two GPUs: one boundary, both directions, radius 2 planes of 4-byte cells.
  EXPECT_EQ(run(*app, Paradigm::memcpy, 2, p).link_bytes_per_iter, 2.0 * 2 * 23 * 25 * 4);
  EXPECT_EQ(run(*app, Paradigm::p2p_inline, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4);
  EXPECT_EQ(run(*app, Paradigm::cpu_free, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4);
  EXPECT_EQ(run(*app, Paradigm::memcpy, 1, p).link_bytes_per_iter, 0.0);
}

TEST(Stencil3DGpu, UnimplementedParadigmsSaySo) {
  GPSM_REQUIRE_GPUS(1);
  for (const char* name : {"heat3d", "wave3d"}) {
    auto app = app_named(name);
    ASSERT_NE(app, nullptr);
    const RunOutcome o = run(*app, Paradigm::nccl, 1, app->problem("16", 5));
    EXPECT_EQ(o.status, RunStatus::unsupported);
    EXPECT_EQ(o.reason, std::string("the nccl paradigm is not implemented for ") + name + " yet");
    EXPECT_TRUE(o.sec_per_iter.empty());
  }
}

TEST(Stencil3DGpu, TooManyGpusForTheHaloDepthIsUnsupported) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("wave3d");
  Problem p = app->problem("8x8x7", 2);  // 3 interior planes along z: two GPUs can't each own 2
  const RunOutcome o = run(*app, Paradigm::memcpy, 2, p);
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_FALSE(o.reason.empty());
}

// Parsing needs no GPU.
TEST(Stencil3DProblem, SizesParseAndBadOnesAreRejected) {
  auto heat = app_named("heat3d");
  auto wave = app_named("wave3d");
  ASSERT_NE(heat, nullptr);
  ASSERT_NE(wave, nullptr);
  const Problem cube = heat->problem("64", 0);
  EXPECT_EQ(cube.n[0], 64);
  EXPECT_EQ(cube.n[1], 64);
  EXPECT_EQ(cube.n[2], 64);
  EXPECT_EQ(cube.iters, 100);
  EXPECT_EQ(cube.axis, Axis::z);
  const Problem box = wave->problem("20x18x23", 7);
  EXPECT_EQ(box.n[0], 20);
  EXPECT_EQ(box.n[1], 18);
  EXPECT_EQ(box.n[2], 23);
  EXPECT_EQ(box.iters, 7);
  EXPECT_EQ(wave->problem("5", 0).iters, 100);
  for (const char* bad : {"", "x", "64x64", "64x64x64x64", "2", "3x3x-3", "12.5", "64xx64", "abc", "9999999"})
    EXPECT_THROW(heat->problem(bad, 0), std::invalid_argument) << bad;
  EXPECT_THROW(wave->problem("4", 0), std::invalid_argument);  // radius 2 needs 5 cells per axis
  EXPECT_NO_THROW(heat->problem("3", 0));
}
