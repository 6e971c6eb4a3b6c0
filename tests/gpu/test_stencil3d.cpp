// heat3d and wave3d on GPUs: every implemented paradigm, on 1, 2 and all GPUs, split along each
// axis, on both row paths of the kernels (scalar: x not a multiple of 4; float4), verified by the
// app against the CPU reference (a wrong halo fails the run); the checker itself is shown to
// catch a wrong result (the `infinite` bound, whose transfers are elided).
#include <gtest/gtest.h>

#include <limits>
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

const Paradigm kParadigms[] = {Paradigm::single, Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::cpu_free,
                               Paradigm::infinite};

// One paradigm on g GPUs: the app verified it against the CPU reference (exactly: bound 1e-6),
// or, for `infinite` on more than one GPU, its transfers were elided, so its result must differ
// from the reference (else the check proves nothing) and it moved at most the iteration sync's
// words (IterSync: 8 bytes per ordered GPU pair) between GPUs.
void check_run(App& app, Paradigm par, int g, const Problem& p) {
  const RunOutcome o = run(app, par, g, p);
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  EXPECT_EQ(o.iterations, p.iters);
  ASSERT_EQ(o.sec_per_iter.size(), 1u);
  EXPECT_GT(o.sec_per_iter[0], 0.0);
  if (par == Paradigm::infinite) {
    // The faster of the persistent kernel and the host-driven loop; the text says which.
    EXPECT_NE(o.timing.find("the faster of two runs"), std::string::npos) << o.timing;
    EXPECT_TRUE(o.timing.find("the persistent kernel") != std::string::npos ||
                o.timing.find("the host-driven step loop") != std::string::npos)
        << o.timing;
  }
  if (par == Paradigm::infinite && g > 1) {
    EXPECT_GT(o.error, 1e-4);
    EXPECT_EQ(o.tolerance, std::numeric_limits<double>::infinity());
    EXPECT_LE(o.link_bytes_per_iter, 8.0 * g * (g - 1));
  } else {
    EXPECT_LE(o.error, 1e-6);
    EXPECT_EQ(o.tolerance, 1e-6);
    if (g > 1) EXPECT_GT(o.link_bytes_per_iter, 0.0);
  }
}

// Every paradigm, GPU count and axis of `size(axis, gpus)`, `iters` iterations.
template <class Size>
void check_every_run(const std::string& name, Size size, int iters) {
  auto app = app_named(name);
  ASSERT_NE(app, nullptr);
  for (Axis axis : {Axis::z, Axis::y, Axis::x})
    for (int g : gpu_counts())
      for (Paradigm par : kParadigms) {
        if (par == Paradigm::single && g != 1) continue;
        const std::string sz = size(axis, g);
        SCOPED_TRACE(name + " " + sz + " " + paradigm_name(par) + " on " + std::to_string(g) + " GPUs along " +
                     axis_name(axis));
        Problem p = app->problem(sz, iters);
        p.axis = axis;
        p.seed = 3;
        check_run(*app, par, g, p);
      }
}

// Extents whose row length (x) is a multiple of 4 on every rank, so every kernel takes the float4
// path (a thread owns 4 cells of a row; the first and last vector of a row are stored lane by
// lane): x = 28 when the split is along y or z (whose odd extents still give two or more GPUs
// unequal plane counts); along x each of the g GPUs owns c planes with c + 2R a multiple of 4
// (heat: 6, wave: 4), so there the counts are equal.
std::string vector_rows_size(int radius, Axis axis, int g) {
  if (axis != Axis::x) return "28x21x23";
  const int c = radius == 1 ? 6 : 4;
  return std::to_string(g * c + 2 * radius) + "x21x23";
}

}  // namespace

// The extents are odd, distinct and small: x odd takes the scalar path (a thread per cell of a
// row), the interior along every axis is odd, so two or more GPUs own unequal plane counts, and a
// stride mixed up between axes shows; up to 8 GPUs still own at least `radius` planes each.
TEST(Stencil3DGpu, HeatEveryParadigmAxisAndGpuCountMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("heat3d", [](Axis, int) { return std::string("21x19x23"); }, 7);
}

TEST(Stencil3DGpu, WaveEveryParadigmAxisAndGpuCountMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("wave3d", [](Axis, int) { return std::string("23x21x25"); }, 7);
}

TEST(Stencil3DGpu, HeatFloat4RowsEveryParadigmAxisAndGpuCountMatchTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("heat3d", [](Axis a, int g) { return vector_rows_size(1, a, g); }, 7);
}

TEST(Stencil3DGpu, WaveFloat4RowsEveryParadigmAxisAndGpuCountMatchTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  check_every_run("wave3d", [](Axis a, int g) { return vector_rows_size(2, a, g); }, 7);
}

// A box large enough that the kernels split it into many work items (chunks of the march axis,
// tiles of x and of the other axis), and enough iterations that the persistent kernel's blocks
// read, many times over, cells other blocks and GPUs wrote in the iteration before (a missing
// iteration sync or a stale cached line shows), on both row paths.
TEST(Stencil3DGpu, PersistentKernelManyIterationsOnALargerBoxMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  for (const char* name : {"heat3d", "wave3d"}) {
    auto app = app_named(name);
    ASSERT_NE(app, nullptr);
    for (const char* size : {"132x45x97", "131x45x97"})
      for (Axis axis : {Axis::z, Axis::y, Axis::x})
        for (int g : gpu_counts()) {
          SCOPED_TRACE(std::string(name) + " " + size + " cpu_free on " + std::to_string(g) + " GPUs along " +
                       axis_name(axis));
          Problem p = app->problem(size, 40);
          p.axis = axis;
          p.seed = 5;
          check_run(*app, Paradigm::cpu_free, g, p);
        }
  }
}

TEST(Stencil3DGpu, LinkBytesCountThePlanesEachParadigmMoves) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("wave3d");
  Problem p = app->problem("23x21x25", 3);
  p.axis = Axis::y;  // planes are x by z: 23 x 25 cells, 19 x 21 of them interior
  // Two GPUs: one boundary, both directions, radius 2 planes of 4-byte cells; cpu_free adds its
  // iteration sync: one 8-byte word per ordered GPU pair.
  EXPECT_EQ(run(*app, Paradigm::memcpy, 2, p).link_bytes_per_iter, 2.0 * 2 * 23 * 25 * 4);
  EXPECT_EQ(run(*app, Paradigm::p2p_inline, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4);
  EXPECT_EQ(run(*app, Paradigm::cpu_free, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4 + 2 * 8);
  EXPECT_EQ(run(*app, Paradigm::memcpy, 1, p).link_bytes_per_iter, 0.0);
  // The float4 path (x = 24) pushes the same interior cells: 20 x 21 per plane.
  Problem v = app->problem("24x21x25", 3);
  v.axis = Axis::y;
  EXPECT_EQ(run(*app, Paradigm::p2p_inline, 2, v).link_bytes_per_iter, 2.0 * 2 * 20 * 21 * 4);
  EXPECT_EQ(run(*app, Paradigm::cpu_free, 2, v).link_bytes_per_iter, 2.0 * 2 * 20 * 21 * 4 + 2 * 8);
  EXPECT_EQ(run(*app, Paradigm::memcpy, 2, v).link_bytes_per_iter, 2.0 * 2 * 24 * 25 * 4);
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
