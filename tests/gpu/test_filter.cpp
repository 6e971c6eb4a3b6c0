// Image filtering on GPUs (`gpsm bench --app filter`): every paradigm on 1, 2 and all GPUs equal
// to the CPU reference bit for bit (the app fails a run on any differing bit), at sizes that are
// multiples of nothing (the rows split unevenly, rows not a whole number of warps or pages), for
// the unrolled sides (3, 5) and the looped one (7), with the weights in constant memory,
// replicated and read remotely. The `infinite` bound, whose halo transfers are elided, shows that
// the check catches a wrong halo.
#include <gtest/gtest.h>

#include <string>

#include "app_test_util.hpp"

using namespace gpsm::apps;

namespace {

std::unique_ptr<App> filter_app() { return apptest::app_named("filter"); }

}  // namespace

TEST(FilterGpu, EveryParadigmOnOneTwoAndAllGpusEqualsTheCpuReferenceBitForBit) {
  GPSM_REQUIRE_GPUS(1);
  auto app = filter_app();
  ASSERT_NE(app, nullptr);
  for (const char* size : {"203x77:k5", "129x61:k3:replicated", "97x45:k7:remote"})
    for (int g : apptest::gpu_counts())
      for (Paradigm par : {Paradigm::single, Paradigm::memcpy, Paradigm::um, Paradigm::p2p_inline, Paradigm::rdl,
                           Paradigm::gps, Paradigm::infinite}) {
        if (par == Paradigm::single && g != 1) continue;
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size);
        const Problem p = app->problem(size, 7);
        const RunOutcome o = apptest::run(*app, par, g, p);
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        EXPECT_EQ(o.iterations, 7);
        ASSERT_EQ(o.sec_per_iter.size(), 1u);
        EXPECT_GT(o.sec_per_iter[0], 0.0);
        if (par == Paradigm::infinite && g > 1) {
          EXPECT_GT(o.error, 0.0);  // the halos were never filled: the check must see it
        } else {
          EXPECT_EQ(o.error, 0.0);
          EXPECT_EQ(o.tolerance, 0.0);
        }
      }
}

TEST(FilterGpu, AHaloThatSpansTheWholeSlabStillMatches) {
  GPSM_REQUIRE_GPUS(2);
  auto app = filter_app();
  const int all = static_cast<int>(gpstest::all_devices().size());
  // 7x7 filter, 3 halo rows, and as few rows per GPU as that allows (3 or 4): each GPU's halo is
  // its neighbour's whole slab.
  const std::string size = "61x" + std::to_string(3 * all + 1) + ":k7";
  for (Paradigm par : {Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::rdl, Paradigm::gps, Paradigm::um}) {
    SCOPED_TRACE(std::string(paradigm_name(par)) + " " + size);
    const RunOutcome o = apptest::run(*app, par, all, app->problem(size, 5));
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_EQ(o.error, 0.0);
  }
}

TEST(FilterGpu, ASlabTallerThanTheGridLoopsOverItsRows) {
  GPSM_REQUIRE_GPUS(1);
  auto app = filter_app();
  // 524301 rows: 65538 rows of 8-row thread blocks on one GPU, more than a grid's 65535.
  for (int g : apptest::gpu_counts())
    for (Paradigm par : {Paradigm::single, Paradigm::p2p_inline, Paradigm::rdl}) {
      if (par == Paradigm::single && g != 1) continue;
      SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs");
      const RunOutcome o = apptest::run(*app, par, g, app->problem("3x524301:k3", 2));
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_EQ(o.error, 0.0);
    }
}

TEST(FilterGpu, FewerRowsPerGpuThanTheHaloIsUnsupportedWithTheReason) {
  GPSM_REQUIRE_GPUS(2);
  auto app = filter_app();
  const RunOutcome o = apptest::run(*app, Paradigm::rdl, 2, app->problem("64x3:k5", 3));
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_NE(o.reason.find("fewer than the 2 halo rows"), std::string::npos) << o.reason;
}
