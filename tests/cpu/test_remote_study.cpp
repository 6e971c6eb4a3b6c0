// The remote-access study's host half (GPU-SM's H1-H5): the layout of remote rows and columns,
// occupancy through shared memory, the timeline's byte accounting, the link bound, and the machine
// model's remote_study derived from a results document with known (synthetic) numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gpsm/machine_model.hpp"
#include "scope/model_build.hpp"
#include "scope/remote_study.hpp"
#include "scope/results_file.hpp"
#include "scope/text_report.hpp"

using namespace gpsm::scope;
using namespace gpsm::scope::remote;
using json = nlohmann::json;

namespace {

json load_fixture(const std::string& rel) {
  std::ifstream f(std::string(GPSM_FIXTURES_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

std::vector<TestResult> sample_tests() { return tests_from_document(load_fixture("results/remote_study_sample.json")); }

}  // namespace

TEST(RemoteLayout, RowsAreBatchColumnsAreSpreadAndCutsRound) {
  EXPECT_EQ(cut_for_percent(8192, 0), 0u);
  EXPECT_EQ(cut_for_percent(8192, 100), 8192u);
  EXPECT_EQ(cut_for_percent(8192, 20), 1638u);  // 1638.4
  EXPECT_EQ(cut_for_percent(10, 25), 3u);  // 2.5 rounds away from zero
  EXPECT_THROW(cut_for_percent(10, 101), std::invalid_argument);
  EXPECT_TRUE(is_remote(Distribution::batch, 5000, 3, 4));
  EXPECT_FALSE(is_remote(Distribution::batch, 0, 4, 4));
  EXPECT_TRUE(is_remote(Distribution::spread, 3, 5000, 4));
  EXPECT_FALSE(is_remote(Distribution::spread, 4, 0, 4));
}

TEST(RemoteLayout, WorkIsTheSameFmaChainOnTheHost) {
  float v = input_value(12345, 7);
  EXPECT_GE(v, 1.0f);
  EXPECT_LT(v, 2.0f);
  float want = v;
  for (int k = 0; k < 50; ++k) want = std::fma(want, 0.999f, 0.001f);
  EXPECT_EQ(work(v, 100), want);
  EXPECT_EQ(work(v, 0), v);
  EXPECT_EQ(work(v, 1), v);  // an odd FLOP count rounds down to whole FMAs
}

TEST(RemoteOccupancy, SharedMemoryLeavesRoomForExactlyTheBlocksAskedFor) {
  // Hopper: 228 KiB per SM, 1 KiB reserved per block, 227 KiB at most per block, 8 blocks of 256
  // threads fill the SM's 2048 threads
  const std::uint64_t sm = 228 * 1024, reserved = 1024, optin = 227 * 1024;
  EXPECT_EQ(smem_for_blocks(8, 8, sm, reserved, optin), 0u);
  EXPECT_EQ(smem_for_blocks(16, 8, sm, reserved, optin), 0u);
  EXPECT_EQ(smem_for_blocks(1, 8, sm, reserved, optin), optin);  // capped at the per-block limit
  for (int k : {1, 2, 3, 4, 5, 6, 7}) {
    const std::uint64_t s = smem_for_blocks(k, 8, sm, reserved, optin);
    EXPECT_LE(k * (s + reserved), sm) << k << " blocks must fit";
    EXPECT_GT((k + 1) * (s + reserved), sm) << k + 1 << " blocks must not";
  }
  EXPECT_THROW(smem_for_blocks(0, 8, sm, reserved, optin), std::invalid_argument);
}

TEST(RemoteTimeline, BatchPutsEveryRemoteByteInTheFirstBlocksSpreadInEveryRowOfBlocks) {
  const std::uint32_t n = 256;
  const std::uint32_t rc = cut_for_percent(n, 20), wc = cut_for_percent(n, 10);
  const std::uint32_t gx = n / kBlockX;
  for (Distribution d : {Distribution::batch, Distribution::spread}) {
    const auto bb = block_bytes(n, d, rc, wc);
    ASSERT_EQ(bb.size(), std::size_t(gx) * (n / kBlockY));
    double remote = 0, all = 0;
    for (const auto& b : bb) {
      remote += b.remote;
      all += b.all;
    }
    EXPECT_EQ(all, 8.0 * n * n);
    EXPECT_EQ(remote, 4.0 * n * (rc + wc)) << to_string(d);
    if (d == Distribution::batch) {
      // remote bytes only in the first rows of blocks, a prefix of the launch order
      const std::size_t last_remote_row = (rc - 1) / kBlockY;
      for (std::size_t i = 0; i < bb.size(); ++i) EXPECT_EQ(bb[i].remote > 0, i / gx <= last_remote_row) << i;
    } else {
      // every row of blocks has the same remote bytes, in its first block(s)
      for (std::size_t row = 0; row < bb.size() / gx; ++row) {
        double r = 0;
        for (std::size_t x = 0; x < gx; ++x) r += bb[row * gx + x].remote;
        EXPECT_EQ(r, 4.0 * kBlockY * (rc + wc)) << row;
        EXPECT_GT(bb[row * gx].remote, 0);
        EXPECT_EQ(bb[row * gx + gx - 1].remote, 0);
      }
    }
  }
}

TEST(RemoteTimeline, FractionTimesCountBlocksWhenTheyEnd) {
  // four blocks starting at 1000 ns, ending at 2000, 5000, 3000, 9000 ns, moving 1, 1, 2, 0 bytes
  const std::vector<unsigned long long> start{1000, 1100, 1200, 1300}, end{2000, 5000, 3000, 9000};
  const std::vector<double> bytes{1, 1, 2, 0};
  const auto t = fraction_times(start, end, bytes, {0.25, 0.5, 0.75, 1.0});
  ASSERT_EQ(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t[0], 1e-6);  // block 0 (1 byte) ends at 2000: 1 us after the first start
  EXPECT_DOUBLE_EQ(t[1], 2e-6);  // with block 2 (2 bytes) at 3000: 3 of 4 bytes
  EXPECT_DOUBLE_EQ(t[2], 2e-6);
  EXPECT_DOUBLE_EQ(t[3], 4e-6);  // the last byte with block 1 at 5000; block 3 moves none
  EXPECT_THROW(fraction_times(start, end, {1, 1}, {1.0}), std::invalid_argument);
  EXPECT_THROW(fraction_times(start, end, bytes, {0.0}), std::invalid_argument);
}

TEST(RemoteLinks, PeakFromTheTopologysGraph) {
  const auto sw = gpsm::topo::topology_from_json(load_fixture("topology/nvswitch_8gpu.json"));
  EXPECT_DOUBLE_EQ(link_peak_GBps(sw, 0, 1), 18 * 25.0);  // 18 NVLink4 links to the switches
  const auto pcie = gpsm::topo::topology_from_json(load_fixture("topology/pcie_2socket.json"));
  EXPECT_NEAR(link_peak_GBps(pcie, 0, 3), 16 * gpsm::topo::pcie_lane_GBps(3), 1e-9);
  EXPECT_EQ(link_peak_GBps(pcie, 0, 7), 0);  // no such GPU: no estimate
}

TEST(RemoteStudyDerive, HiddenPercentStopsAtTheFirstSlowPoint) {
  using P = gpsm::model::RemoteSlowdownPoint;
  EXPECT_EQ(hidden_percent({{0, 1}, {5, 1.02}, {10, 1.09}, {20, 1.3}, {40, 1.05}}, 0.10), 10);
  EXPECT_EQ(hidden_percent({{0, 1}, {1, 1.10}}, 0.10), 0);  // exactly 10 % is not below it
  EXPECT_EQ(hidden_percent({{20, 1.01}, {0, 1}, {10, 1.2}}, 0.10), 0);  // sorted first
  EXPECT_EQ(hidden_percent(std::vector<P>{}, 0.10), 0);
}

TEST(RemoteStudyDerive, ModelFieldsFromASyntheticResultsDocument) {
  // tests/fixtures/results/make_remote_study_sample.py says how each number was made
  const auto st = derive_study(sample_tests());
  EXPECT_EQ(st.src, "gpu0");
  EXPECT_EQ(st.dst, "gpu1");
  EXPECT_NEAR(st.read_GBps, 300, 1e-9);
  EXPECT_NEAR(st.write_GBps, 270, 1e-9);
  EXPECT_NEAR(st.read_write_GBps, 520, 1e-9);
  EXPECT_NEAR(st.copy_GBps, 310, 1e-9);
  EXPECT_EQ(st.concurrent_gpus, 2);
  EXPECT_NEAR(st.concurrent_read_GBps, 580, 1e-9);
  EXPECT_NEAR(st.concurrent_write_GBps, 530, 1e-9);
  // H2: batch moves its remote bytes at 400 GB/s; spread over the whole 210 us kernel
  EXPECT_NEAR(st.batch_peak_remote_GBps, 400, 1e-6);
  const double remote_bytes = 4 * 0.3 * 8192.0 * 8192.0;
  EXPECT_NEAR(st.spread_peak_remote_GBps, remote_bytes / 210e-6 / 1e9, 1e-6);
  EXPECT_NEAR(st.batch_timeline_slowdown, 450.0 / 200.0, 1e-9);
  EXPECT_NEAR(st.spread_timeline_slowdown, 210.0 / 200.0, 1e-9);
  // H3: spread hides 10 % at every FLOPs per datum (20 % only at 1000); batch 1 % (2 % at 1000)
  EXPECT_EQ(st.spread_hidden_percent, 10);
  EXPECT_EQ(st.batch_hidden_percent, 1);
  // H4: occupancy 0.125 hides 5 %, 0.25 and up hide the full occupancy's 10 %
  EXPECT_EQ(st.occupancy_to_hide, 0.25);
  ASSERT_EQ(st.curves.size(), 8u + 8u);
  for (const auto& c : st.curves) {
    ASSERT_FALSE(c.points.empty());
    EXPECT_EQ(c.points.front().remote_percent, 0);
    EXPECT_DOUBLE_EQ(c.points.front().slowdown, 1);
    if (c.test == kIntensity && c.distribution == "spread")
      EXPECT_EQ(c.hidden_percent, c.flops_per_datum == 1000 ? 20 : 10) << c.flops_per_datum;
    if (c.test == kIntensity && c.distribution == "batch") {
      EXPECT_EQ(c.hidden_percent, c.flops_per_datum == 1000 ? 2 : 1) << c.flops_per_datum;
      EXPECT_NEAR(c.points.back().slowdown, c.flops_per_datum == 1000 ? 4 : 7, 1e-9);
    }
  }
  // H5: 9 sizes at two occupancies; at full occupancy ldcg is 8x ldg at 64 B, the cache saving >= 10 %
  // while 800 / (b / 64)^0.3 (floored at 120) stays >= 1.1 x the ldg time
  EXPECT_EQ(st.cache.size(), 18u);
  EXPECT_NEAR(st.cache_speedup_smallest, 8, 1e-9);
  double helps = 0;
  for (std::uint64_t b = 64; b <= (4u << 20); b *= 4) {
    const double ldg = b <= 65536 ? 100.0 : 100.0 * std::pow(b / 65536.0, 0.25);
    const double ldcg = std::max(120.0, 800.0 / std::pow(b / 64.0, 0.3));
    if (ldcg / ldg >= 1.1) helps = double(b);
  }
  EXPECT_EQ(st.cache_helps_up_to_bytes, helps);
  EXPECT_GT(helps, 0);
  for (const auto& c : st.cache)
    if (c.occupancy == 1) EXPECT_NEAR(c.local_ldg_us, 60, 1e-9);
}

TEST(RemoteStudyDerive, TestsNotOkOrAbsentLeaveTheirFieldsAtZero) {
  auto tests = sample_tests();
  for (auto& t : tests)
    if (t.name == kIntensity) t.status = Status::failed;
  tests.erase(std::remove_if(tests.begin(), tests.end(), [](const TestResult& t) { return t.name == kBandwidth; }),
              tests.end());
  const auto st = derive_study(tests);
  EXPECT_EQ(st.read_GBps, 0);
  EXPECT_EQ(st.spread_hidden_percent, 0);
  EXPECT_EQ(st.src, "gpu0");  // from the other tests' initiator / target
  EXPECT_EQ(st.occupancy_to_hide, 0.25);
  EXPECT_TRUE(derive_study({}).empty());
}

TEST(RemoteStudyModel, BuiltIntoTheMachineModelAndRoundTripsThroughJson) {
  const auto tests = sample_tests();
  const auto m = build_model(tests, "fixture", "2026-11-28T00:00:00Z", "abc");
  // the study's times are not latencies and its bars are not paths
  EXPECT_TRUE(m.latencies.empty());
  EXPECT_TRUE(m.paths.empty());
  EXPECT_FALSE(m.remote_study.empty());
  const json j = gpsm::model::to_json(m);
  ASSERT_TRUE(j.contains("remote_study"));
  const auto back = gpsm::model::model_from_json(json::parse(j.dump()));
  EXPECT_EQ(gpsm::model::to_json(back), j);
  EXPECT_EQ(back.remote_study.spread_hidden_percent, 10);
  // a model without the study writes none and reads back empty
  const auto plain = build_model({}, "fixture", "", "");
  EXPECT_FALSE(gpsm::model::to_json(plain).contains("remote_study"));
  EXPECT_TRUE(gpsm::model::model_from_json(gpsm::model::to_json(plain)).remote_study.empty());
}

TEST(RemoteStudyModel, BadFieldsAreRefusedNamingThePath) {
  const json good = gpsm::model::to_json(build_model(sample_tests(), "fixture", "", ""));
  auto expect_bad = [&](const std::function<void(json&)>& spoil, const std::string& what) {
    json j = good;
    spoil(j);
    try {
      gpsm::model::model_from_json(j);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_bad([](json& j) { j["remote_study"]["read_GBps"] = -1; }, "remote_study.read_GBps");
  expect_bad([](json& j) { j["remote_study"]["tolerance"] = 2; }, "remote_study.tolerance");
  expect_bad([](json& j) { j["remote_study"]["curves"][0]["distribution"] = "diagonal"; },
             "remote_study.curves[0].distribution");
  expect_bad([](json& j) { j["remote_study"]["curves"][1]["points"][2]["remote_percent"] = 0; },
             "remote_study.curves[1].points[2].remote_percent");
  expect_bad([](json& j) { j["remote_study"]["cache"][0]["remote_ldg_us"] = 0; }, "remote_study.cache[0]");
  expect_bad([](json& j) { j["remote_study"] = 3; }, "remote_study: expected object");
}

TEST(RemoteStudyTable, SlowdownsWithTheHiddenShareAndCacheRatios) {
  for (const auto& t : sample_tests()) {
    const std::string text = render_test(t, 0);
    if (t.name == kIntensity) {
      EXPECT_NE(text.find("slowdown"), std::string::npos) << text;
      EXPECT_NE(text.find("1.04*"), std::string::npos) << text;  // spread at 10 %: hidden
      EXPECT_NE(text.find("7.00"), std::string::npos) << text;   // batch at 100 %
      EXPECT_NE(text.find("10%"), std::string::npos) << text;
    }
    if (t.name == kCache) EXPECT_NE(text.find("8.00x"), std::string::npos) << text;
    if (t.name == kBandwidth) EXPECT_NE(text.find("300.000"), std::string::npos) << text;
  }
}
