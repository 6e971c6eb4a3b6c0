// GPU-SM's remote-access study priced by the simulator (sim/remote_study_sim.hpp): on a machine
// like GPU-SM's System B (K40s on PCIe 3.0) it gives the paper's findings (spread remote accesses
// hidden up to about 10 %, batch ones not; compute-bound kernels hide more; low occupancy less),
// and an NVLink node hides more than PCIe, as the paper expected of NVLink.
#include <gtest/gtest.h>

#include "scope/remote_study.hpp"
#include "sim/remote_study_sim.hpp"

using namespace gpsm::sim;

namespace {

// GPU-SM's System B GPU: a K40 (15 SMs, 288 GB/s GDDR5 of which ~200 reached, 4.29 TFLOP/s fp32)
// behind a PCIe 3.0 switch.
System k40_pcie3() {
  System s = preset("v100-pcie3");
  s.gpu.name = "K40";
  s.gpu.sms = 15;
  s.gpu.hbm_GBps = 200;
  s.gpu.flops_G = 4290;
  s.gpu.load_latency_ns = 600;
  return s;
}

const gpsm::model::RemoteSlowdownCurve& curve(const gpsm::model::RemoteStudy& st, const std::string& test,
                                              const std::string& dist, double flops, double occ) {
  for (const auto& c : st.curves)
    if (c.test == test && c.distribution == dist && c.flops_per_datum == flops && c.occupancy == occ) return c;
  throw std::runtime_error("no curve " + test + " " + dist);
}

}  // namespace

TEST(RemoteStudySim, KernelCostIsTheLargestDemandAndBatchTheSumOfItsPhases) {
  const System s = k40_pcie3();
  const double n = 8192.0 * 8192.0;
  const auto local = remote_kernel_cost(s, n, 0, 10, 8, false);
  EXPECT_DOUBLE_EQ(local.hbm_s, 8 * n / 200e9);
  EXPECT_EQ(local.link_s, 0);
  EXPECT_DOUBLE_EQ(local.total_s, std::max({local.hbm_s, local.flops_s, local.latency_s}));
  const auto all = remote_kernel_cost(s, n, 1, 10, 8, false);
  EXPECT_EQ(all.hbm_s, 0);
  EXPECT_GT(all.link_s, 8 * n / 2 / (s.link.raw_GBps * 1e9));  // more than the payload one way
  // at 0 % and 100 % batch and spread are one kernel; between, batch is its two phases in turn
  EXPECT_DOUBLE_EQ(remote_kernel_cost(s, n, 1, 10, 8, true).total_s, all.total_s);
  const auto b = remote_kernel_cost(s, n, 0.3, 10, 8, true);
  EXPECT_NEAR(b.total_s, 0.3 * all.total_s + 0.7 * local.total_s, 1e-12);
  EXPECT_GE(b.total_s, remote_kernel_cost(s, n, 0.3, 10, 8, false).total_s);
  EXPECT_THROW(remote_kernel_cost(s, n, 1.5, 10, 8, false), std::invalid_argument);
  EXPECT_THROW(remote_kernel_cost(s, n, 0.5, 10, 0, false), std::invalid_argument);
}

TEST(RemoteStudySim, PcieThreeGivesGpuSmsFindings) {
  const auto st = predict_remote_study(k40_pcie3());
  // H1: under the link's raw rate, reads and writes near it, both at once more than one alone
  const double raw = 15.75;
  EXPECT_GT(st.read_GBps, 0.7 * raw);
  EXPECT_LT(st.read_GBps, raw);
  EXPECT_LT(st.write_GBps, raw);
  EXPECT_GT(st.read_write_GBps, st.read_GBps);
  EXPECT_LT(st.read_write_GBps, 2 * raw);
  // H3: spread hides about GPU-SM's 10 % at every intensity; batch grows from the first percent
  EXPECT_GE(st.spread_hidden_percent, 5);
  EXPECT_LE(st.spread_hidden_percent, 20);
  EXPECT_LE(st.batch_hidden_percent, 2);
  const auto& mem = curve(st, gpsm::scope::remote::kIntensity, "spread", 0, 1);
  const auto& cpu = curve(st, gpsm::scope::remote::kIntensity, "spread", 1000, 1);
  EXPECT_GT(cpu.hidden_percent, mem.hidden_percent);  // compute-bound kernels hide more
  const auto& batch = curve(st, gpsm::scope::remote::kIntensity, "batch", 0, 1);
  EXPECT_DOUBLE_EQ(batch.points.back().slowdown, mem.points.back().slowdown);  // 100 %: one kernel
  for (std::size_t i = 1; i < batch.points.size(); ++i)  // batch: linear in the remote share
    EXPECT_GE(batch.points[i].slowdown, batch.points[i - 1].slowdown);
  // H4: a low occupancy hides less than the full one; some lower occupancy hides as much
  const auto& low = curve(st, gpsm::scope::remote::kOccupancy, "spread", 10, 0.125);
  const auto& full = curve(st, gpsm::scope::remote::kOccupancy, "spread", 10, 1);
  EXPECT_LT(low.hidden_percent, full.hidden_percent);
  EXPECT_GT(st.occupancy_to_hide, 0.125);
  EXPECT_LE(st.occupancy_to_hide, 1);
}

TEST(RemoteStudySim, NvlinkHidesMoreThanPcie) {
  const auto pcie = predict_remote_study(preset("v100-pcie3"));
  const auto nv = predict_remote_study(preset("h200x4"));
  EXPECT_GT(nv.read_GBps, 10 * pcie.read_GBps);
  EXPECT_GE(nv.spread_hidden_percent, pcie.spread_hidden_percent);
  const std::string text = render_remote_study(nv, "h200x4");
  EXPECT_NE(text.find("remote.h3_intensity"), std::string::npos) << text;
  EXPECT_NE(text.find("hidden: spread"), std::string::npos) << text;
}

TEST(RemoteStudySim, TestsCarryTheSameCurvesAsScopesResults) {
  const System s = k40_pcie3();
  const auto st = predict_remote_study(s, true);
  const auto tests = predict_remote_study_tests(s, true);
  ASSERT_EQ(tests.size(), 2u);
  std::size_t series = 0;
  for (const auto& t : tests) {
    EXPECT_EQ(t.group, gpsm::scope::remote::kGroup);
    EXPECT_EQ(t.x_name, "remote_percent");
    for (const auto& se : t.series) {
      ++series;
      ASSERT_FALSE(se.points.empty());
      ASSERT_EQ(se.points.front().x, 0);
      const double base = se.points.front().value.median;
      const auto& c = curve(st, t.name, se.params.at("distribution"), std::stod(se.params.at("flops_per_datum")),
                            std::stod(se.params.at("occupancy")));
      ASSERT_EQ(c.points.size(), se.points.size()) << se.label;
      for (std::size_t i = 0; i < se.points.size(); ++i) {
        EXPECT_FALSE(se.points[i].verified);  // nothing ran
        EXPECT_NEAR(se.points[i].value.median / base, c.points[i].slowdown, 1e-9) << se.label;
      }
    }
  }
  EXPECT_EQ(series, st.curves.size());
}
