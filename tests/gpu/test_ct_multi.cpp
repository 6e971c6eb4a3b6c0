// CT across GPUs (`gpsm bench --app ct`): every paradigm on 1, 2 and all GPUs on `small` with 4
// subsets, each run verified by the app against the one-GPU run (image within ct_verify.hpp's
// tolerance in HU, cost within 1e-5 and falling), gps among them; proact also with small chunks (many counters
// per slab); and the checker shown to catch a missing exchange: the elided run's image is off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "app_test_util.hpp"
#include "apps/ct/ct_bench_spec.hpp"
#include "apps/ct/ct_gpu.hpp"
#include "apps/ct/ct_multi.hpp"
#include "apps/ct/ct_partition.hpp"
#include "apps/ct/ct_phantom.hpp"
#include "apps/ct/ct_projector.hpp"
#include "apps/ct/ct_verify.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/gps/context.hpp"
#include "gpu_test_util.hpp"

using namespace gpsm::apps;

TEST(CtMultiGpu, EveryParadigmOnOneTwoAndAllGpusMatchesTheOneGpuRun) {
  GPSM_REQUIRE_GPUS(1);
  auto app = apptest::app_named("ct");
  ASSERT_NE(app, nullptr);
  const Problem p = app->problem("small@subsets=4", 2);
  const ct::CtBenchSpec spec = ct::parse_bench_spec("small@subsets=4");
  for (int g : apptest::gpu_counts())
    for (Paradigm par :
         {Paradigm::single, Paradigm::memcpy, Paradigm::nccl, Paradigm::proact, Paradigm::gps, Paradigm::infinite}) {
      if (par == Paradigm::single && g != 1) continue;
      SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs");
      const RunOutcome o = apptest::run(*app, par, g, p);
      if (par == Paradigm::nccl && g > 1 && !gpsm::nccl_built()) {
        EXPECT_EQ(o.status, RunStatus::unsupported);
        continue;
      }
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      std::printf("ct small, 4 subsets, %s on %d GPU(s): %.3f ms per iteration, image off the one-GPU run by %.3g HU "
                  "(tolerance %.3g)\n  %s\n",
                  paradigm_name(par), g, o.sec_per_iter.at(0) * 1e3, o.error, o.tolerance, o.timing.c_str());
      EXPECT_EQ(o.iterations, 2);
      ASSERT_EQ(o.sec_per_iter.size(), 1u);
      EXPECT_GT(o.sec_per_iter[0], 0.0);
      if (par == Paradigm::infinite && g > 1) {
        EXPECT_EQ(o.tolerance, std::numeric_limits<double>::infinity());
        EXPECT_EQ(o.link_bytes_per_iter, 0.0);
        continue;
      }
      EXPECT_GT(o.tolerance, 0.0);
      EXPECT_LE(o.error, o.tolerance);
      EXPECT_NE(o.timing.find("RMSE vs the phantom per iteration"), std::string::npos);
      const double exchanged = static_cast<double>(ct::CtPartition(spec.g, g, 4).iteration_bytes());
      if (g == 1) {
        EXPECT_EQ(o.link_bytes_per_iter, 0.0);
      } else if (par == Paradigm::gps) {
        // counted by the runtime: every stored word goes to the GPUs that read its page, at most
        // every other GPU (32 B sectors of whole dirty lines: no more than the words, up to the
        // lines at the parts' edges)
        EXPECT_GT(o.link_bytes_per_iter, 0.0);
        EXPECT_LE(o.link_bytes_per_iter, exchanged * 1.01);
        EXPECT_NE(o.timing.find("subscriptions learned"), std::string::npos);
      } else {
        EXPECT_EQ(o.link_bytes_per_iter, exchanged);
      }
      if (par == Paradigm::proact && g > 1) {
        EXPECT_EQ(o.proact.agent, "copy_engine");
        // 1 MiB by default; a slab of fewer columns (2 GPUs: 32 planes of 64 columns of 256 B) is one chunk
        const std::uint64_t slab = static_cast<std::uint64_t>((64 + g - 1) / g) * 64 * 256;
        EXPECT_EQ(o.proact.chunk_bytes, std::min<std::uint64_t>(1u << 20, slab));
      }
    }
}

// 4 KiB chunks: 16 columns of 64 voxels, 128 counters per slab on 2 GPUs, the copies waiting on
// each; and a request below one column, which runs as one column per chunk.
TEST(CtMultiGpu, ProactSmallChunksMatchTheOneGpuRun) {
  GPSM_REQUIRE_GPUS(2);
  auto app = apptest::app_named("ct");
  const Problem p = app->problem("small@subsets=4", 2);
  for (std::uint64_t bytes : {4096u, 100u}) {
    SCOPED_TRACE(std::to_string(bytes) + " B asked");
    ProactChunk c;
    c.bytes = bytes;
    c.source = "the test";
    const RunOutcome o = apptest::run(*app, Paradigm::proact, 2, p, c);
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_EQ(o.proact.chunk_bytes, bytes == 4096u ? 4096u : 256u);
    EXPECT_LE(o.error, o.tolerance);
    std::printf("ct small proact, %llu B asked: chunk %llu B, image off by %.3g HU (tolerance %.3g)\n",
                static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(o.proact.chunk_bytes),
                o.error, o.tolerance);
  }
}

// The small problem with 4 subsets as the bench makes it (phantom, noisy scan, zero start), for
// the tests that drive MultiGpuPwls directly.
struct SmallScan {
  ct::CtBenchSpec spec = ct::parse_bench_spec("small@subsets=4");
  std::vector<float> mu = ct::phantom_mu(spec.g);
  ct::Scan scan = ct::scan_from_line_integrals(ct::forward_project_gpu(spec.g, mu, ct::all_views(spec.g)),
                                               ct::kBenchI0, ct::kBenchScanSeed);
  ct::PwlsSettings s = [] {
    ct::PwlsSettings p;
    p.subsets = 4;
    return p;
  }();
  std::vector<float> x0 = std::vector<float>(static_cast<std::size_t>(spec.g.voxels()), 0.0f);
};

// Without the exchanges each GPU updates its slab from a stale image: the result must fail the
// check that passes the real runs, or that check proves nothing.
TEST(CtMultiGpu, ElidedExchangesFailTheCheck) {
  GPSM_REQUIRE_GPUS(2);
  const SmallScan sc;
  const ct::PwlsRun ref = ct::pwls_os_gpu(sc.spec.g, sc.scan, sc.s, sc.x0, 2, sc.mu, gpstest::all_devices().at(0));
  std::vector<int> devs = gpstest::all_devices();
  devs.resize(2);
  gpsm::gps::Context ctx(devs);
  ct::MultiOptions o;
  o.exchange = ct::CtExchange::elided;
  ct::MultiGpuPwls elided(ctx, sc.spec.g, sc.scan, sc.s, o);
  const ct::PwlsRun got = elided.solve(sc.x0, 2, sc.mu, nullptr);
  const ct::RunCheck c = ct::check_run(ref, got, 4);
  std::printf("ct small elided on 2 GPUs: %s\n", c.failure.c_str());
  EXPECT_FALSE(c.failure.empty());
}

// A timing-only solve (Record::nothing, the bench's reps before the verified one) keeps no cost,
// RMSE or image, and changes nothing for the next solve: a recorded solve after it passes the
// bench's check against a fresh solver's run (the projections add with atomics, so not bit for
// bit), on all GPUs, with copies and with gps.
TEST(CtMultiGpu, TimingOnlySolveKeepsNothingAndChangesNothing) {
  GPSM_REQUIRE_GPUS(1);
  const SmallScan sc;
  for (ct::CtExchange e : {ct::CtExchange::copies, ct::CtExchange::gps}) {
    gpsm::gps::Context ctx(gpstest::all_devices());
    SCOPED_TRACE(std::string(ct::exchange_name(e)) + " on " + std::to_string(ctx.size()) + " GPUs");
    ct::MultiOptions o;
    o.exchange = e;
    ct::PwlsRun fresh;
    {
      ct::MultiGpuPwls run(ctx, sc.spec.g, sc.scan, sc.s, o);
      fresh = run.solve(sc.x0, 2, sc.mu, nullptr);
    }
    ct::MultiGpuPwls run(ctx, sc.spec.g, sc.scan, sc.s, o);
    std::vector<double> secs;
    const ct::PwlsRun quiet = run.solve(sc.x0, 2, sc.mu, &secs, ct::MultiGpuPwls::Record::nothing);
    EXPECT_TRUE(quiet.cost.empty() && quiet.rmse_hu.empty() && quiet.x.empty());
    EXPECT_EQ(secs.size(), 2u);
    const ct::PwlsRun after = run.solve(sc.x0, 2, sc.mu, nullptr);
    ASSERT_EQ(after.cost.size(), 3u);
    ASSERT_EQ(after.rmse_hu.size(), 3u);
    const ct::RunCheck c = ct::check_run(fresh, after, 4);
    EXPECT_TRUE(c.failure.empty()) << c.failure;
    std::printf("ct small %s on %d GPUs: after a timing-only solve, %.3g HU from a fresh solver's image\n",
                ct::exchange_name(e), ctx.size(), c.difference_hu);
  }
}

// A solver given d = A^T W A 1 (the bench shares the first paradigm's d with the rest) solves as
// one that computed it, and uses what it is given: twice d (half the steps) ends elsewhere. A d of
// the wrong size is refused.
TEST(CtMultiGpu, GivenCurvatureIsUsedAndSolvesAsComputingIt) {
  GPSM_REQUIRE_GPUS(1);
  const SmallScan sc;
  gpsm::gps::Context ctx(gpstest::all_devices());
  ct::MultiOptions o;
  ct::PwlsRun fresh;
  std::shared_ptr<const std::vector<float>> d;
  {
    ct::MultiGpuPwls run(ctx, sc.spec.g, sc.scan, sc.s, o);
    d = run.curvature();
    fresh = run.solve(sc.x0, 2, sc.mu, nullptr);
  }
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->size(), sc.x0.size());
  o.curvature = d;
  ct::MultiGpuPwls given(ctx, sc.spec.g, sc.scan, sc.s, o);
  EXPECT_EQ(given.curvature(), d);
  const ct::RunCheck same = ct::check_run(fresh, given.solve(sc.x0, 2, sc.mu, nullptr), 4);
  EXPECT_TRUE(same.failure.empty()) << same.failure;
  auto twice = std::make_shared<std::vector<float>>(*d);
  for (float& v : *twice) v *= 2;
  o.curvature = twice;
  ct::MultiGpuPwls doubled(ctx, sc.spec.g, sc.scan, sc.s, o);
  const ct::RunCheck off = ct::check_run(fresh, doubled.solve(sc.x0, 2, sc.mu, nullptr), 4);
  EXPECT_FALSE(off.failure.empty());
  std::printf("ct small on %d GPUs: given d %.3g HU from computing it; twice d fails the check: %s\n", ctx.size(),
              same.difference_hu, off.failure.c_str());
  o.curvature = std::make_shared<std::vector<float>>(d->size() - 1, 1.0f);
  EXPECT_THROW(ct::MultiGpuPwls(ctx, sc.spec.g, sc.scan, sc.s, o), std::invalid_argument);
}

// The per-phase times: one entry per GPU, compute phases measured, and the four phases of a GPU
// (marks on its stream between the first subset's start and the last's end) inside the host's
// wall clock of the iteration, which starts before the first mark and ends after the last.
TEST(CtMultiGpu, PhaseTimesFitInsideEachIteration) {
  GPSM_REQUIRE_GPUS(1);
  const SmallScan sc;
  for (ct::CtExchange e : {ct::CtExchange::copies, ct::CtExchange::proact}) {
    gpsm::gps::Context ctx(gpstest::all_devices());
    SCOPED_TRACE(std::string(ct::exchange_name(e)) + " on " + std::to_string(ctx.size()) + " GPUs");
    ct::MultiOptions o;
    o.exchange = ctx.size() > 1 ? e : ct::CtExchange::copies;
    ct::MultiGpuPwls run(ctx, sc.spec.g, sc.scan, sc.s, o);
    std::vector<double> secs;
    run.solve(sc.x0, 3, sc.mu, &secs);
    double mean_ms = 0;
    for (double t : secs) mean_ms += t * 1e3 / static_cast<double>(secs.size());
    const std::vector<ct::PhaseTimes> ph = run.phase_times();
    ASSERT_EQ(ph.size(), static_cast<std::size_t>(ctx.size()));
    for (std::size_t r = 0; r < ph.size(); ++r) {
      const ct::PhaseTimes& t = ph[r];
      const double sum = t.forward_ms + t.residual_exchange_ms + t.update_ms + t.image_exchange_ms;
      std::printf("ct small %s, GPU %zu of %zu: forward %.3f, residual exchange %.3f, update %.3f, image exchange %.3f "
                  "ms (sum %.3f) per iteration of %.3f ms\n",
                  ct::exchange_name(o.exchange), r, ph.size(), t.forward_ms, t.residual_exchange_ms, t.update_ms,
                  t.image_exchange_ms, sum, mean_ms);
      EXPECT_GT(t.forward_ms, 0.0);
      EXPECT_GT(t.update_ms, 0.0);
      EXPECT_GE(t.residual_exchange_ms, 0.0);
      EXPECT_GE(t.image_exchange_ms, 0.0);
      EXPECT_LE(sum, mean_ms * 1.01 + 0.01);  // event resolution ~0.5 us a mark
    }
  }
}

// --pictures: the files gpsm report draws, from the run's own reference: nine slices, the
// phantom's skull and air where they belong, the final image nearer the phantom than the first
// iterate, and the cost series the run reported.
TEST(CtMultiGpu, PicturesHoldTheSlicesOfThePhantomAndTheIterates) {
  GPSM_REQUIRE_GPUS(1);
  auto app = apptest::app_named("ct");
  gpsm::apps::RunRequest r;
  r.paradigm = Paradigm::single;
  r.devices = {gpstest::all_devices().at(0)};
  r.problem = app->problem("small@subsets=4", 2);
  r.reps = 1;
  r.warmup = 0;
  const std::string dir = ::testing::TempDir() + "gpsm_ct_pictures";
  std::filesystem::remove_all(dir);
  r.pictures_dir = dir;
  const RunOutcome o = app->run(r);
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  std::ifstream jf(dir + "/ct-small_subsets_4.json");
  ASSERT_TRUE(jf.good());
  const nlohmann::json j = nlohmann::json::parse(jf);
  std::ifstream rf(dir + "/" + j["raw"].get<std::string>(), std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(rf)), std::istreambuf_iterator<char>());
  ASSERT_EQ(j["slices"].size(), 9u);
  EXPECT_EQ(j["cost"].size(), 3u);  // the start and 2 iterations
  const auto slice = [&](int k) {
    const nlohmann::json& s = j["slices"][k];
    std::vector<float> v(s["rows"].get<std::size_t>() * s["cols"].get<std::size_t>());
    std::memcpy(v.data(), raw.data() + s["offset"].get<std::size_t>(), v.size() * 4);
    return v;
  };
  const std::vector<float> phantom = slice(0), first = slice(3), last = slice(6);  // axial
  EXPECT_EQ(phantom.front(), -1000.0f);  // a corner: air
  EXPECT_GT(*std::max_element(phantom.begin(), phantom.end()), 500.0f);  // the skull
  double e_first = 0, e_last = 0;
  for (std::size_t i = 0; i < phantom.size(); ++i) {
    e_first += std::abs(first[i] - phantom[i]);
    e_last += std::abs(last[i] - phantom[i]);
  }
  std::printf("ct small pictures: axial mean |x - phantom| first iterate %.1f HU, final %.1f HU\n",
              e_first / static_cast<double>(phantom.size()), e_last / static_cast<double>(phantom.size()));
  EXPECT_LT(e_last, e_first);
  std::size_t pngs = 0;  // one to look at per slice
  for (const auto& e : std::filesystem::directory_iterator(dir)) pngs += e.path().extension() == ".png";
  EXPECT_EQ(pngs, 9u);
  std::filesystem::remove_all(dir);
}
