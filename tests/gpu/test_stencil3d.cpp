// heat3d and wave3d on GPUs: every implemented paradigm (proact included), on 1, 2 and all GPUs, split along each
// axis, on both row paths of the kernels (scalar: x not a multiple of 4; float4), verified by the
// app against the CPU reference (a wrong halo fails the run); the checker itself is shown to
// catch a wrong result (the `infinite` bound, whose transfers are elided). um_hints' hints are
// also checked on their own: placed on every GPU's pages and read back.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cuda_runtime.h>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_gps_items.hpp"
#include "apps/stencil3d/stencil3d_gps_lists.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "app_test_util.hpp"
#include "common/dev_buf.hpp"
#include "common/fork_join.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

using namespace gpsm::apps;

namespace {

using apptest::app_named;
using apptest::gpu_counts;
using apptest::run;

// Cells of one plane across the split axis (the product of the two other extents).
double plane_cells(const Problem& p) {
  const int a = static_cast<int>(p.axis);
  return static_cast<double>(p.n[(a + 1) % 3]) * static_cast<double>(p.n[(a + 2) % 3]);
}

const Paradigm kParadigms[] = {Paradigm::single,   Paradigm::memcpy,     Paradigm::um,  Paradigm::um_hints,
                               Paradigm::rdl,      Paradigm::p2p_inline, Paradigm::gps, Paradigm::proact,
                               Paradigm::cpu_free, Paradigm::infinite};

// Runs `par` on g GPUs and checks what every run must show: the iterations asked, one timed
// sample, and the result of the CPU reference, exactly (bound 1e-6); or, for `infinite` on more
// than one GPU, its transfers were elided, so its result must differ from the reference (else the
// check proves nothing) and it moved at most the iteration sync's words (IterSync: 8 bytes per
// ordered GPU pair) between GPUs.
RunOutcome check_run(App& app, Paradigm par, int g, const Problem& p) {
  SCOPED_TRACE(std::string(app.name()) + " " + paradigm_name(par) + " on " + std::to_string(g) + " GPUs along " +
               axis_name(p.axis));
  const RunOutcome o = run(app, par, g, p);
  EXPECT_EQ(o.status, RunStatus::ok) << o.reason;
  if (o.status != RunStatus::ok) return o;
  EXPECT_EQ(o.iterations, p.iters);
  EXPECT_EQ(o.sec_per_iter.size(), 1u);
  if (!o.sec_per_iter.empty()) EXPECT_GT(o.sec_per_iter[0], 0.0);
  if (par == Paradigm::infinite) {
    // The faster of the persistent kernel and the host-driven loop; the text says which.
    EXPECT_NE(o.timing.find("the faster of two runs"), std::string::npos) << o.timing;
    EXPECT_EQ(o.timing.find("inf us"), std::string::npos) << o.timing;  // both medians are real
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
    if (g == 1) EXPECT_EQ(o.link_bytes_per_iter, 0.0);
    else if (par == Paradigm::um || par == Paradigm::um_hints) EXPECT_LT(o.link_bytes_per_iter, 0.0);  // '?'
    else EXPECT_GT(o.link_bytes_per_iter, 0.0);
  }
  return o;
}

// Every paradigm (nccl: its own test), GPU count and axis of `size(axis, gpus)`, `iters` iterations.
template <class Size>
void check_every_run(const std::string& name, Size size, int iters) {
  auto app = app_named(name);
  ASSERT_NE(app, nullptr);
  for (Axis axis : {Axis::z, Axis::y, Axis::x})
    for (int g : gpu_counts())
      for (Paradigm par : kParadigms) {
        if (par == Paradigm::single && g != 1) continue;
        const std::string sz = size(axis, g);
        SCOPED_TRACE(name + " " + sz);
        Problem p = app->problem(sz, iters);
        p.axis = axis;
        p.seed = 3;
        if (par == Paradigm::um_hints && axis == Axis::x) {  // no page belongs to one GPU: said, not run
          const RunOutcome o = run(*app, par, g, p);
          EXPECT_EQ(o.status, RunStatus::unsupported);
          EXPECT_NE(o.reason.find("um_hints along x"), std::string::npos) << o.reason;
          EXPECT_TRUE(o.sec_per_iter.empty());
          continue;
        }
        if (par == Paradigm::proact && axis == Axis::x && g > 1) {  // edge columns are no chunk: said, not run
          const RunOutcome o = run(*app, par, g, p);
          EXPECT_EQ(o.status, RunStatus::unsupported);
          EXPECT_NE(o.reason.find("proact along x"), std::string::npos) << o.reason;
          EXPECT_TRUE(o.sec_per_iter.empty());
          continue;
        }
        const RunOutcome o = check_run(*app, par, g, p);
        if (par == Paradigm::proact && g > 1 && o.status == RunStatus::ok) {
          const int radius = name == "heat3d" ? 1 : 2;
          EXPECT_EQ(o.link_bytes_per_iter, 2.0 * (g - 1) * radius * plane_cells(p) * 4) << "memcpy's whole planes";
          EXPECT_NE(o.timing.find("ready counters"), std::string::npos) << o.timing;
        }
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

// proact on a box that the step splits into many work items, so the edge chunks are a small
// part of the launch and the copies really overlap the interior (a count reached too early
// ships planes still being written; a target too high never ends), for many iterations, on
// both row paths and both host-loop launches (the graph, where the driver captures stream waits:
// the timing text says which ran and why).
TEST(Stencil3DGpu, ProactManyIterationsOnALargerBoxMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  struct EnvGuard {
    ~EnvGuard() { unsetenv("GPSM_HOST_LOOP"); }
  } guard;
  for (const char* mode : {"graph", "stream"}) {
    setenv("GPSM_HOST_LOOP", mode, 1);
    for (const char* name : {"heat3d", "wave3d"}) {
      auto app = app_named(name);
      ASSERT_NE(app, nullptr);
      for (const char* size : {"132x45x97", "131x45x97"})
        for (Axis axis : {Axis::z, Axis::y})
          for (int g : gpu_counts()) {
            SCOPED_TRACE(std::string(mode) + " " + name + " " + size + " proact on " + std::to_string(g) +
                         " GPUs along " + axis_name(axis));
            Problem p = app->problem(size, 40);
            p.axis = axis;
            p.seed = 11;
            const RunOutcome o = check_run(*app, Paradigm::proact, g, p);
            const bool graph = o.timing.find("CUDA graph") != std::string::npos;
            if (std::string(mode) == "stream") EXPECT_FALSE(graph) << o.timing;
            // Graph mode runs the graph, or says why stream waits do not go into one.
            else EXPECT_TRUE(graph || o.timing.find("stream waits do not go into a CUDA graph") != std::string::npos)
                << o.timing;
          }
    }
  }
}

// wave3d with 3 planes per GPU: fewer than two halo depths (2R = 4), so the plan has no edge
// chunks and both edges lie in one interior chunk, whose items count for both sides.
TEST(Stencil3DGpu, ProactWithFewerPlanesThanTwoHaloDepthsMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(2);
  auto app = app_named("wave3d");
  ASSERT_NE(app, nullptr);
  for (const auto& [axis, size] : {std::pair<Axis, std::string>{Axis::z, "28x21x10"}, {Axis::y, "27x10x23"}}) {
    SCOPED_TRACE(std::string("along ") + axis_name(axis));
    Problem p = app->problem(size, 9);
    p.axis = axis;
    p.seed = 13;
    check_run(*app, Paradigm::proact, 2, p);
  }
}

// um, um_hints and rdl on the marching step over a box that it splits into many work items (x
// tiles, tiles of the other axis, chunks of the march axis), on both row paths: um's sub-boxes of
// the managed grid have rows and planes longer than the box (the grid's strides), rdl's first and
// last chunks load their halo planes from the neighbours' boxes (its own halo planes are NaN);
// along x the edge cells of rdl's rows load their x neighbours in the halo columns from them,
// and um's sub-boxes start off a 16-byte boundary on some GPUs (scalar path).
TEST(Stencil3DGpu, UmAndRdlMarchOnALargerBoxMatchTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  for (const char* name : {"heat3d", "wave3d"}) {
    auto app = app_named(name);
    ASSERT_NE(app, nullptr);
    for (const char* size : {"132x45x97", "131x45x97"})
      for (Axis axis : {Axis::z, Axis::y, Axis::x})
        for (int g : gpu_counts())
          for (Paradigm par : {Paradigm::um, Paradigm::um_hints, Paradigm::rdl}) {
            if (par == Paradigm::um_hints && axis == Axis::x) continue;  // unsupported (checked above)
            SCOPED_TRACE(std::string(name) + " " + size + " " + paradigm_name(par) + " on " + std::to_string(g) +
                         " GPUs along " + axis_name(axis));
            Problem p = app->problem(size, 9);
            p.axis = axis;
            p.seed = 9;
            check_run(*app, par, g, p);
          }
  }
}

// The host-driven paradigms run as one CUDA graph of every iteration by default and as a launch
// per GPU per iteration with GPSM_HOST_LOOP=stream (gps too: its fence_async is stream work): both give the reference exactly, the timing
// text says which ran, and a value that is neither fails the run with the variable named.
TEST(Stencil3DGpu, GraphAndStreamHostLoopsBothMatchTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  auto app = app_named("wave3d");
  ASSERT_NE(app, nullptr);
  struct EnvGuard {
    ~EnvGuard() { unsetenv("GPSM_HOST_LOOP"); }
  } guard;
  for (const char* mode : {"graph", "stream"}) {
    setenv("GPSM_HOST_LOOP", mode, 1);
    for (int g : gpu_counts())
      for (Paradigm par : {Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::rdl, Paradigm::um, Paradigm::gps}) {
        SCOPED_TRACE(std::string(mode) + " " + paradigm_name(par) + " on " + std::to_string(g) + " GPUs");
        Problem p = app->problem("28x21x23", 9);
        p.seed = 7;
        const RunOutcome o = check_run(*app, par, g, p);
        const bool graph = o.timing.find("CUDA graph") != std::string::npos;
        EXPECT_EQ(graph, std::string(mode) == "graph") << o.timing;
      }
  }
  setenv("GPSM_HOST_LOOP", "threads", 1);
  const RunOutcome bad = run(*app, Paradigm::p2p_inline, 1, app->problem("28x21x23", 3));
  EXPECT_EQ(bad.status, RunStatus::failed);
  EXPECT_NE(bad.reason.find("GPSM_HOST_LOOP='threads'"), std::string::npos) << bad.reason;
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
  EXPECT_EQ(run(*app, Paradigm::proact, 2, p).link_bytes_per_iter, 2.0 * 2 * 23 * 25 * 4);  // memcpy's planes
  // rdl loads the same interior cells from the neighbour that p2p_inline stores into it.
  EXPECT_EQ(run(*app, Paradigm::rdl, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4);
  EXPECT_LT(run(*app, Paradigm::um, 2, p).link_bytes_per_iter, 0.0);  // not known: shown as '?'
  // gps: counted by the runtime; at least the interior cells of both boundary planes each way.
  EXPECT_GE(run(*app, Paradigm::gps, 2, p).link_bytes_per_iter, 2.0 * 2 * 19 * 21 * 4);
  // The float4 path (x = 24) pushes the same interior cells: 20 x 21 per plane.
  Problem v = app->problem("24x21x25", 3);
  v.axis = Axis::y;
  EXPECT_EQ(run(*app, Paradigm::p2p_inline, 2, v).link_bytes_per_iter, 2.0 * 2 * 20 * 21 * 4);
  EXPECT_EQ(run(*app, Paradigm::cpu_free, 2, v).link_bytes_per_iter, 2.0 * 2 * 20 * 21 * 4 + 2 * 8);
  EXPECT_EQ(run(*app, Paradigm::memcpy, 2, v).link_bytes_per_iter, 2.0 * 2 * 24 * 25 * 4);
  // rdl's float4 march loads whole rows of the neighbour's planes (x boundary cells too): 24 x 21.
  EXPECT_EQ(run(*app, Paradigm::rdl, 2, v).link_bytes_per_iter, 2.0 * 2 * 24 * 21 * 4);
  v.axis = Axis::x;  // along x rdl's march loads single cells, the interior ones: 17 x 21 per plane
  EXPECT_EQ(run(*app, Paradigm::rdl, 2, v).link_bytes_per_iter, 2.0 * 2 * 17 * 21 * 4);
}

// NCCL send/recv of whole halo planes (packed along x and y), one process over every GPU; one GPU
// runs without NCCL.
TEST(Stencil3DGpu, NcclMatchesTheCpuReference) {
  GPSM_REQUIRE_GPUS(1);
  for (const auto& [name, size] : {std::pair<std::string, std::string>{"heat3d", "21x19x23"}, {"wave3d", "23x21x25"}}) {
    auto app = app_named(name);
    ASSERT_NE(app, nullptr);
    if (!app->has(Paradigm::nccl)) {
      const RunOutcome o = run(*app, Paradigm::nccl, 1, app->problem(size, 5));
      EXPECT_EQ(o.status, RunStatus::unsupported);
      EXPECT_EQ(o.reason, "built without NCCL (run scripts/setup.sh)");
      GTEST_SKIP() << "gpsm built without NCCL (" << o.reason << ")";
    }
    for (Axis axis : {Axis::z, Axis::y, Axis::x})
      for (int g : gpu_counts()) {
        Problem p = app->problem(size, 7);
        p.axis = axis;
        p.seed = 3;
        const RunOutcome o = check_run(*app, Paradigm::nccl, g, p);
        const int radius = name == "heat3d" ? 1 : 2;
        if (o.status == RunStatus::ok && g > 1)
          EXPECT_EQ(o.link_bytes_per_iter, 2.0 * (g - 1) * radius * plane_cells(p) * 4) << axis_name(axis);
      }
  }
}

// um_hints' hints on their own: every GPU holds preferred pages, every neighbour's planes are
// accessed-by pages, each GPU's pages were prefetched to it, and all of it read back (a hint that
// did not take throws, naming it). Problems large enough that every GPU's planes hold whole
// pages: along z whole planes; along y rows of 4 KiB and more per z.
TEST(Stencil3DGpu, UmHintsReadBackOnEveryGpu) {
  GPSM_REQUIRE_GPUS(1);
  auto app = app_named("heat3d");
  ASSERT_NE(app, nullptr);
  for (const auto& [axis, size] : {std::pair<Axis, std::string>{Axis::z, "64x48x40"}, {Axis::y, "1024x70x5"}})
    for (int g : gpu_counts()) {
      SCOPED_TRACE(std::string("along ") + axis_name(axis) + " on " + std::to_string(g) + " GPUs");
      Problem p = app->problem(size, 3);
      p.axis = axis;
      std::vector<int> devices = gpstest::all_devices();
      devices.resize(static_cast<std::size_t>(g));
      try {
        gpsm::gps::Context ctx(devices);
        const stencil3d::UmHintCount c = stencil3d::check_um_hints(ctx, stencil3d::Kind::heat, p);
        EXPECT_EQ(c.gpus_with_pages, g);
        EXPECT_GE(c.preferred, 2 * g);  // both buffers
        EXPECT_EQ(c.prefetched, c.preferred);
        if (g == 1) EXPECT_EQ(c.accessed_by, 0);
        else EXPECT_GE(c.accessed_by, 2 * 2 * (g - 1));  // each neighbour pair both ways, both buffers
      } catch (const gpsm::Error& e) {
        ADD_FAILURE() << e.what();
      }
      check_run(*app, Paradigm::um_hints, g, p);
    }
}

// gps's step checks once per work item that this GPU's replica holds what the item reads, and
// updates the item cell by cell through the views (View::load reads the page's home copy) where it
// does not. Rank 0 gives up its subscription to its upper halo (rank 1's first R planes of the
// input) and its stale copy of them is NaN: one iteration of both ranks must give the result of
// the same iteration with every page subscribed, where every item marches through the replica
// (the march reading the stale copy would show as NaN). Along z (pages of one plane) and y (pages
// of one row), heat3d and wave3d, float4 rows.
//
// The same with the host's split of the items (what the gps paradigm runs once subscriptions are
// learned): the cut items must go to the GPS step, the rest run plain, and the cells agree.
TEST(Stencil3DGpu, GpsStepReadsHomeWhereReplicaLacksThePages) {
  GPSM_REQUIRE_GPUS(2);
  using stencil3d::Kind;
  namespace gps = gpsm::gps;
  for (Kind kind : {Kind::heat, Kind::wave})
    for (Axis axis : {Axis::z, Axis::y}) {
      const int R = stencil3d::radius_of(kind);
      SCOPED_TRACE(std::string(kind == Kind::heat ? "heat3d" : "wave3d") + " along " + axis_name(axis));
      const std::int64_t n[3] = {32, 32, 24};
      const std::int64_t sy = n[0], sz = n[0] * n[1];
      const std::uint64_t cells = static_cast<std::uint64_t>(sz * n[2]);
      const int a = axis == Axis::z ? 2 : 1;
      gps::Context ctx({0, 1});
      Slab3D slab[2] = {slab3d(n, axis, R, 2, 0), slab3d(n, axis, R, 2, 1)};
      stencil3d::GpsItemLists lists[2];
      const gpsm::ForkJoin side[2] = {gpsm::ForkJoin(ctx.device(0)), gpsm::ForkJoin(ctx.device(1))};
      // split: the host's split of the items by the runtime's reach (classify_gps_items), the gps
      // items on a side stream: must give the same cells as the checked step, cut or not.
      const auto one_step = [&](bool cut, bool split) {
        gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
        o.page_bytes = static_cast<std::uint64_t>(a == 2 ? sz : sy) * sizeof(float);  // a plane / a row
        gps::Array<float> in = ctx.alloc<float>(cells, o), out = ctx.alloc<float>(cells, o);
        const auto init = [&] {
          for (int r = 0; r < 2; ++r) {
            GPSM_CUDA(cudaSetDevice(ctx.device(r)));
            for (int b = 0; b < 2; ++b) {
              stencil3d::GridInit g;
              g.buf = (b == 0 ? in : out).view(r).local();
              for (int d = 0; d < 3; ++d) g.n[d] = n[d];
              g.axis = a;
              g.radius = R;
              g.hi = n[a];
              g.seed_interior = b == 0 ? 7 : 11;
              g.seed_boundary = 5;
              stencil3d::launch_grid_init(g, ctx.stream(r));
            }
          }
          ctx.synchronize();
        };
        init();
        if (split) {  // subscriptions learned as the paradigm learns them (every page held by both: no plain item)
          ctx.tracking_start();
          for (int it = 0; it < 2; ++it) {  // each array read in one, written in the other
            for (int r = 0; r < 2; ++r) {
              GPSM_CUDA(cudaSetDevice(ctx.device(r)));
              stencil3d::GpsStep st;
              st.in = (it == 0 ? in : out).view(r);
              st.out = (it == 0 ? out : in).view(r);
              st.slab = slab[r];
              st.edges_first = true;
              stencil3d::launch_gps_step(kind, st, ctx.stream(r));
            }
            ctx.fence();
          }
          ctx.tracking_stop();
          init();
        }
        if (cut) {
          // Rank 1's first R planes: per z plane along y (rows), one range along z.
          const std::int64_t lo = slab[1].first, planes = a == 2 ? 1 : n[2];
          const std::int64_t run = (a == 2 ? sz : sy) * R;
          for (std::int64_t z = 0; z < planes; ++z) {
            const std::uint64_t first = static_cast<std::uint64_t>(a == 2 ? lo * sz : z * sz + lo * sy);
            in.unsubscribe(first, static_cast<std::uint64_t>(run), 0);
            GPSM_CUDA(cudaSetDevice(ctx.device(0)));
            GPSM_CUDA(cudaMemset(in.view(0).local() + first, 0xFF, static_cast<std::size_t>(run) * sizeof(float)));
          }
          GPSM_CUDA(cudaDeviceSynchronize());  // the poison lands before the step on ctx's stream
          const std::uint64_t cut_page = static_cast<std::uint64_t>(lo * (a == 2 ? sz : sy)) * sizeof(float) / in.page_bytes();
          EXPECT_EQ(in.subscriptions().mask(cut_page), 2u);  // rank 1's alone: its home
          if (!split) EXPECT_EQ(in.subscriptions().mask(0), 3u);
        }
        for (int r = 0; r < 2; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx.device(r)));
          stencil3d::GpsStep st;
          st.in = in.view(r);
          st.out = out.view(r);
          st.slab = slab[r];
          st.edges_first = true;
          if (split) {
            const stencil3d::GpsStepShape shape = stencil3d::gps_step_shape(kind, st);
            const stencil3d::SubBox sb = stencil3d::sub_box(slab[r]);
            const auto in_reach = [&](std::int64_t lo, std::int64_t hi) {
              return in.reach(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo), r);
            };
            const auto out_subscribers = [&](std::int64_t lo, std::int64_t hi) {
              return out.subscribers(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo));
            };
            const stencil3d::GpsItems items =
                stencil3d::classify_gps_items(shape.plan, sb, R, shape.v, sb.offset, r, in_reach, out_subscribers);
            // The edge planes a neighbour reads are published; with the cut, rank 0's items that read
            // the planes it lost (its upper halo) go through the checked GPS step.
            if (!(cut && r == 0)) EXPECT_FALSE(items.published.empty());  // rank 0's edge items all read the cut
            EXPECT_FALSE(items.plain.empty());
            if (cut && r == 0) EXPECT_FALSE(items.gps.empty());
            if (!cut) EXPECT_TRUE(items.gps.empty());
            lists[r].upload(ctx.device(r), items);
            lists[r].apply(st, &side[r]);
          }
          stencil3d::launch_gps_step(kind, st, ctx.stream(r));
        }
        ctx.fence();
        return out.coherent();
      };
      const std::vector<float> march = one_step(false, false);
      for (auto [cut, split] : {std::pair{true, false}, std::pair{false, true}, std::pair{true, true}}) {
        SCOPED_TRACE(std::string(cut ? "cut" : "every page subscribed") + (split ? ", split on the host" : ", checked"));
        const std::vector<float> mixed = one_step(cut, split);
        ASSERT_EQ(march.size(), mixed.size());
        std::size_t bad = 0, nan = 0;
        for (std::size_t i = 0; i < march.size(); ++i) {
          nan += std::isnan(march[i]) || std::isnan(mixed[i]) ? 1 : 0;
          bad += march[i] == mixed[i] ? 0 : 1;
        }
        EXPECT_EQ(nan, 0u);
        EXPECT_EQ(bad, 0u) << "cells that differ between the march and the per-cell path";
      }
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
