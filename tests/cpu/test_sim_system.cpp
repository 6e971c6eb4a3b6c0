// Simulated machines (src/sim/system.cpp): presets, the machine-model reader, copy times.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"
#include "scope/model_build.hpp"
#include "scope/results.hpp"
#include "sim/model_gpu.hpp"
#include "sim/system.hpp"

using namespace gpsm::sim;

namespace {
constexpr double GiB = 1024.0 * 1024 * 1024;
// Machine models from our 4xH200 scope runs (tests/fixtures/machine_models/README.md says which run
// each file comes from and what of it is kept).
const std::string kModels = std::string(GPSM_FIXTURES_DIR) + "/machine_models";
const std::string kH200Model = kModels + "/h200x4_full_machine_model.json";
}  // namespace

TEST(SimSystem, EveryPresetConstructs) {
  const auto names = preset_names();
  ASSERT_EQ(names.size(), 7u);
  for (const auto& n : names) {
    const System s = preset(n);
    EXPECT_EQ(s.name, n);
    EXPECT_GE(s.gpus, 2) << n;
    EXPECT_GT(s.link.raw_GBps, 0) << n;
    EXPECT_GT(s.gpu.hbm_GBps, s.link.raw_GBps) << n;
    EXPECT_FALSE(s.description.empty()) << n;
    EXPECT_GT(s.copy_time_s(0, 1, 1 << 20), 0) << n;
  }
  EXPECT_EQ(preset("v100-pcie4").topology, Topology::switch_tree);
  EXPECT_EQ(preset("v100-pcie4").link.kind, LinkKind::pcie4);
  EXPECT_EQ(preset("v100-pcie6").link.kind, LinkKind::pcie6);
  EXPECT_EQ(preset("v100-pcie3").gpus, 4);
  EXPECT_EQ(preset("dgx1").gpus, 8);
  EXPECT_EQ(preset("dgx1").topology, Topology::direct);
  EXPECT_DOUBLE_EQ(preset("dgx1").link.raw_GBps, 25);
  EXPECT_EQ(preset("dgx2").gpus, 16);
  EXPECT_EQ(preset("dgx2").topology, Topology::nvswitch);
  EXPECT_DOUBLE_EQ(preset("dgx2").link.raw_GBps, 150);
  const System h = preset("h200x4");
  EXPECT_EQ(h.gpus, 4);
  EXPECT_EQ(h.topology, Topology::nvswitch);  // NV18 between every pair
  EXPECT_EQ(h.gpu.sms, 132);
  EXPECT_EQ(h.gpu.name, "H200");
  EXPECT_EQ(preset("v100-pcie5").gpu.name, "V100");
  // h200x4: measured 395.75 GB/s per pair alone, 236.7 GB/s per GPU in an all-to-all.
  EXPECT_NEAR(h.link.raw_GBps * 256 / 272, 395.75, 0.01);
  EXPECT_NEAR(h.egress_GBps * 256 / 272, 236.7, 0.01);
  EXPECT_LT(h.egress_GBps, 3 * h.link.raw_GBps);
}

TEST(SimSystem, GpuCountOverride) {
  EXPECT_EQ(preset("dgx1", 4).gpus, 4);
  EXPECT_EQ(preset("v100-pcie3", 16).gpus, 16);
  EXPECT_EQ(preset("dgx1", 1).gpus, 1);  // the single-GPU baseline
  EXPECT_THROW(preset("dgx1", 0 - 1), std::invalid_argument);
  EXPECT_THROW(preset("dgx1", 17), std::invalid_argument);
  EXPECT_THROW(preset("dgx1", -2), std::invalid_argument);
}

TEST(SimSystem, UnknownPresetListsValidNames) {
  try {
    preset("dgx3");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dgx3"), std::string::npos);
    for (const auto& n : preset_names()) EXPECT_NE(msg.find(n), std::string::npos) << n;
  }
}

// 1 GiB GPU0 -> GPU1 on v100-pcie3: 2^30 / 256 = 4,194,304 TLPs of 282 wire bytes at 15.75 GB/s
// = 75.1 ms, plus 500 ns link + 150 ns switch latency. I.e. 1 GiB / (15.75 GB/s x 0.908): the
// band asked is +-1 % around that, and 5-15 % slower than the raw 1 GiB / 15.75 GB/s = 68.2 ms.
TEST(SimSystem, CopyTimePcie3) {
  const System s = preset("v100-pcie3");
  const double t = s.copy_time_s(0, 1, GiB);
  const double expect = GiB / (15.75e9 * 256.0 / 282) + 650e-9;
  EXPECT_NEAR(t / expect, 1.0, 1e-9);
  EXPECT_NEAR(t, 0.0751, 0.0008);
  const double naive = GiB / 15.75e9;
  EXPECT_GT(t / naive, 1.05);
  EXPECT_LT(t / naive, 1.15);
  // Small copies are latency bound: 4 B takes link + switch latency + 30 B of wire.
  EXPECT_NEAR(s.copy_time_s(0, 1, 4), 650e-9 + 30 / 15.75e9, 1e-15);
  // A local copy reads and writes HBM.
  EXPECT_NEAR(s.copy_time_s(2, 2, GiB), 2 * GiB / 830e9, 1e-12);
  EXPECT_THROW(s.copy_time_s(0, 4, 1), std::invalid_argument);
  EXPECT_THROW(s.copy_time_s(-1, 0, 1), std::invalid_argument);
}

// A copy's fixed time replaces the link latency where it is larger: h200x4, a 256-KiB halo plane
// GPU0 -> GPU1 = 2.34 us + its wire bytes at the link rate; the V100 presets keep the latency.
TEST(SimSystem, CopyFixedTimeReplacesTheLatency) {
  const System s = preset("h200x4");
  ASSERT_GT(s.copy_fixed_us * 1e3, s.link.latency_ns);
  const double plane = 256.0 * 1024;
  EXPECT_NEAR(s.copy_time_s(0, 1, plane), 2.34e-6 + wire_time_s(s.link, wire_bytes_write(s.link, plane)), 1e-15);
  EXPECT_NEAR(s.copy_time_s(0, 1, 4), 2.34e-6 + wire_time_s(s.link, wire_bytes_write(s.link, 4)), 1e-15);
  System lat = s;
  lat.copy_fixed_us = 0.1;  // below the latency: the latency counts
  EXPECT_NEAR(lat.copy_time_s(0, 1, plane), 427e-9 + wire_time_s(s.link, wire_bytes_write(s.link, plane)), 1e-15);
  EXPECT_EQ(preset("v100-pcie3").copy_fixed_us, 0);
  EXPECT_EQ(preset("dgx2").copy_fixed_us, 0);
}

TEST(SimSystem, CopyTimeOrdersGenerations) {
  double prev = 1e9;
  for (const char* n : {"v100-pcie3", "v100-pcie4", "v100-pcie5", "v100-pcie6", "dgx2"}) {
    const double t = preset(n).copy_time_s(0, 1, GiB);
    EXPECT_LT(t, prev) << n;
    prev = t;
  }
}

TEST(SimSystem, FromMachineModelH200) {
  const System s = from_machine_model(kH200Model);
  EXPECT_EQ(s.gpus, 4);
  EXPECT_EQ(s.topology, Topology::nvswitch);  // a pair alone above 250 GB/s: switched
  EXPECT_EQ(s.link.kind, LinkKind::nvlink4);
  EXPECT_EQ(s.gpu.name, "H200");
  // The measured ce_peer uni median, 395.75 GB/s, as the payload rate of a long copy.
  EXPECT_NEAR(s.link.raw_GBps * 256 / 272, 395.75, 0.5);
  const double bytes = 512.0 * (1 << 20);
  EXPECT_NEAR(bytes / s.copy_time_s(0, 3, bytes) / 1e9, 395.75, 1.0);
  // One way = half the measured peer-load round trip (0.854 us).
  EXPECT_NEAR(s.link.latency_ns, 427, 2);
  EXPECT_NEAR(s.gpu.fault_us, 40, 1);
  // The median of the 4 GPUs' "resident" chases from the host: 253-272 ns, median 260.1.
  EXPECT_NEAR(s.gpu.load_latency_ns, 260.1, 0.1);
  EXPECT_NEAR(s.gpu.load_latency_ns, preset("h200x4").gpu.load_latency_ns, 0.5);
  // The gpu0 -> gpu0 peer-load chase (L2-resident): 0.1435 us a hop.
  EXPECT_NEAR(s.gpu.l2_latency_ns, 143.5, 0.1);
  EXPECT_NEAR(s.gpu.l2_latency_ns, preset("h200x4").gpu.l2_latency_ns, 0.5);
  EXPECT_NEAR(s.gpu.l2_bytes, 50.0 * (1 << 20), 1);
  EXPECT_NEAR(s.gpu.launch_us, 1.6, 0.01);
  // The copies' fixed time: the ce_peer fits' large-copy intercepts, 2.31-3.24 us, median 2.340.
  EXPECT_NEAR(s.copy_fixed_us, 2.340, 0.001);
  EXPECT_NEAR(s.copy_fixed_us, preset("h200x4").copy_fixed_us, 0.001);
  EXPECT_NE(s.description.find("machine_model.json"), std::string::npos);
  // Matches the preset made from the same measurements.
  EXPECT_NEAR(s.link.raw_GBps, preset("h200x4").link.raw_GBps, 0.5);
}

// The host loop's call costs, the cross-GPU event hop and the graph copy node come from the
// lat_host_calls / lat_event_hop / lat_graph_copy latencies (2026-11-22_c9c3bf0eca72's run, here
// added to the full model's); a model without them keeps none (issue_us applies).
TEST(SimSystem, FromMachineModelReadsTheHostLoop) {
  nlohmann::json full, calls;
  std::ifstream(kH200Model) >> full;
  std::ifstream(kModels + "/h200x4_host_calls_machine_model.json") >> calls;
  ASSERT_TRUE(calls.contains("latencies"));
  for (const auto& l : calls["latencies"])
    if (l["name"].get<std::string>().rfind("lat_launch", 0) != 0) full["latencies"].push_back(l);
  const std::string path = testing::TempDir() + "gpsm_sim_host_model.json";
  std::ofstream(path) << full.dump();
  const System s = from_machine_model(path);
  std::remove(path.c_str());
  ASSERT_TRUE(s.gpu.host.measured());
  EXPECT_NEAR(s.gpu.host.set_device_us, 0.095, 0.001);
  EXPECT_NEAR(s.gpu.host.launch_us, 4.224, 0.001);
  EXPECT_NEAR(s.gpu.host.record_us, 0.267, 0.001);
  EXPECT_NEAR(s.gpu.host.wait_us, 1.668, 0.001);
  EXPECT_NEAR(s.gpu.host.copy_us, 2.675, 0.001);
  EXPECT_NEAR(s.gpu.host.memset_us, s.gpu.host.launch_us, 1e-9);  // not in this run: a launch's
  EXPECT_NEAR(s.gpu.host.readback_us, 7.20, 0.01);  // lat_copy_small gpu0->host, the full model's
  // that run had only the chain: the cross-GPU hop over the same-GPU one
  EXPECT_NEAR(s.gpu.event_hop_us, 7.076 - 1.717, 0.001);
  ASSERT_EQ(s.graph_copy_us.size(), 1u);  // the 4-B point: the node's fixed time
  EXPECT_NEAR(s.graph_copy_us[0].second, 5.532, 0.001);
  ASSERT_EQ(s.stream_copy_us.size(), 1u);  // the stream series' 4-B point
  EXPECT_NEAR(s.stream_copy_us[0].second, 6.58, 0.01);
  // the same preset numbers
  const System h = preset("h200x4");
  EXPECT_NEAR(h.gpu.host.wait_us, s.gpu.host.wait_us, 0.01);
  // where the host-issued phase loop was measured, its wait is the hop (as the preset's, from
  // 2026-11-22_ef00c90_event-hop on 2xH200), whatever the chain says
  full["latencies"].push_back({{"name", "lat_event_hop:host-issued phase wait"}, {"src", "gpu0"}, {"dst", "all"},
                               {"median_us", 2.39}, {"min_us", 2.2}, {"max_us", 2.5}});
  std::ofstream(path) << full.dump();
  const System phased = from_machine_model(path);
  std::remove(path.c_str());
  EXPECT_NEAR(phased.gpu.event_hop_us, 2.39, 1e-9);
  EXPECT_NEAR(h.gpu.event_hop_us, phased.gpu.event_hop_us, 0.01);
  EXPECT_NEAR(h.graph_copy_us.front().second, s.graph_copy_us[0].second, 0.01);
  const System none = from_machine_model(kH200Model);
  EXPECT_FALSE(none.gpu.host.measured());
  EXPECT_EQ(none.gpu.event_hop_us, 0);
  EXPECT_TRUE(none.graph_copy_us.empty());
  EXPECT_TRUE(none.stream_copy_us.empty());
  EXPECT_FALSE(preset("v100-pcie3").gpu.host.measured());
}

// The hot word's cost per request comes from lat_hot_word's "store, among streaming loads" series
// (its first point: every warp stores), here built into a model from the 1xH200 run's results and
// added to the full model's; the preset carries the same number.
TEST(SimSystem, FromMachineModelReadsTheHotWord) {
  nlohmann::json full, hot;
  std::ifstream(kH200Model) >> full;
  std::ifstream(kModels + "/h200_hot_word_results.json") >> hot;
  ASSERT_TRUE(hot.contains("tests"));
  std::vector<gpsm::scope::TestResult> tests;
  for (const auto& t : hot["tests"]) tests.push_back(gpsm::scope::test_result_from_json(t));
  const nlohmann::json built = gpsm::model::to_json(gpsm::scope::build_model(tests, "1x H200", "", ""));
  int added = 0;
  for (const auto& l : built["latencies"]) {
    full["latencies"].push_back(l);
    ++added;
  }
  EXPECT_EQ(added, 3);  // store and atomicAdd among loads, store alone
  const std::string path = testing::TempDir() + "gpsm_sim_hot_model.json";
  std::ofstream(path) << full.dump();
  const System s = from_machine_model(path);
  std::remove(path.c_str());
  EXPECT_NEAR(s.gpu.hot_word_ns, 0.7102, 0.0001);
  EXPECT_NEAR(preset("h200x4").gpu.hot_word_ns, s.gpu.hot_word_ns, 0.001);
  EXPECT_EQ(from_machine_model(kH200Model).gpu.hot_word_ns, 0);  // not measured there: not modelled
  EXPECT_EQ(preset("v100-pcie3").gpu.hot_word_ns, 0);
}

TEST(SimSystem, FromMachineModelErrorsNameTheFile) {
  const std::string missing = kModels + "/no/such/machine_model.json";
  try {
    from_machine_model(missing);
    FAIL() << "no throw";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
}

namespace {
// The full H200 model with a gpus entry and local curves for each of its 4 GPUs, written to a
// temporary file; `edit` changes the JSON first.
std::string model_with_gpus(const std::string& tag, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j;
  std::ifstream(kH200Model) >> j;
  for (int i = 0; i < 4; ++i) {
    const std::string node = "gpu" + std::to_string(i);
    j["gpus"].push_back({{"node", node}, {"name", "NVIDIA H200"}, {"cc", "9.0"}, {"sm_count", 132},
                         {"sm_clock_max_mhz", 1980}, {"l2_bytes", 62914560}, {"mem_bytes", 150109880320}});
    // sm_stream_local at 16 MiB, 32 MiB and 1 GiB; gpu3 a little faster (the median is the middle two)
    j["local"].push_back({{"gpu", node}, {"mechanism", "sm_stream_local"},
                          {"points", {{{"footprint_bytes", 16777216}, {"GBps", 3817}},
                                      {{"footprint_bytes", 33554432}, {"GBps", 5080}},
                                      {{"footprint_bytes", 1073741824}, {"GBps", i == 3 ? 3950.0 : 3900.0 + i}}}}});
    j["local"].push_back({{"gpu", node}, {"mechanism", "sm_l2_local:read"},
                          {"points", {{{"footprint_bytes", 4194304}, {"GBps", 7100}},
                                      {{"footprint_bytes", 33554432}, {"GBps", 7900.0 + 100 * i}}}}});
    j["local"].push_back({{"gpu", node}, {"mechanism", "sm_gather_local"},
                          {"points", {{{"footprint_bytes", 16777216}, {"GBps", 4600.0 + 10 * i}},
                                      {{"footprint_bytes", 1073741824}, {"GBps", 900}}}}});
  }
  edit(j);
  const std::string path = testing::TempDir() + "gpsm_sim_gpus_" + tag + ".json";
  std::ofstream(path) << j.dump();
  return path;
}
}  // namespace

// A model that describes its GPUs sets the simulated GPU: SMs, clock, L2 from CUDA's description,
// FP32 rate and resident blocks from the capability, HBM from the copy loop beyond the L2 (times
// the apps' share of a copy), the L2's rate from sm_l2_local's reads, its gather rate from
// sm_gather_local inside it.
TEST(SimSystem, FromMachineModelReadsTheGpus) {
  const std::string path = model_with_gpus("h200", [](nlohmann::json&) {});
  const System s = from_machine_model(path);
  const System plain = from_machine_model(kH200Model);
  std::remove(path.c_str());
  EXPECT_EQ(s.gpu.name, "NVIDIA H200");
  EXPECT_EQ(s.gpu.sms, 132);
  EXPECT_NEAR(s.gpu.clock_GHz, 1.98, 1e-12);
  EXPECT_EQ(s.gpu.l2_bytes, 62914560);  // CUDA's 60 MiB, where the preset says 50
  EXPECT_NEAR(s.gpu.flops_G, 132 * 128 * 2 * 1.98, 1e-6);
  EXPECT_EQ(s.gpu.blocks_per_sm, 8);
  // median of 3900, 3901, 3902, 3950 = 3901.5: exactly the copy rate kAppShareOfCopy was taken at
  EXPECT_NEAR(s.gpu.hbm_GBps, 3530, 1e-9);
  EXPECT_NEAR(s.gpu.gather_GBps, 4615, 1e-9);  // median of 4600..4630
  EXPECT_NEAR(s.gpu.l2_GBps, 8050, 1e-9);  // the best footprint's reads, median of 7900..8200
  EXPECT_NE(s.description.find("L2 8050 GB/s (sm_l2_local reads)"), std::string::npos) << s.description;
  EXPECT_NE(s.description.find("sm_stream_local 3902 x 0.905"), std::string::npos) << s.description;
  EXPECT_NE(s.description.find("132 SMs"), std::string::npos) << s.description;
  // what the GPU section does not cover stays as it was
  EXPECT_EQ(s.gpu.fault_us, plain.gpu.fault_us);
  EXPECT_EQ(s.link.raw_GBps, plain.link.raw_GBps);
  EXPECT_EQ(plain.gpu.hbm_GBps, preset("h200x4").gpu.hbm_GBps);
  EXPECT_NE(plain.description.find("GPU H200 from the closest preset"), std::string::npos) << plain.description;
}

// Another GPU generation: its own SMs, clock and capability rates; without sm_l2_local the
// preset's L2 rate scaled with SMs x clock; a copy loop that never left the L2 leaves the preset's HBM, and says so.
TEST(SimSystem, FromMachineModelOtherGpus) {
  const std::string a100 = model_with_gpus("a100", [](nlohmann::json& j) {
    for (auto& g : j["gpus"]) {
      g["name"] = "NVIDIA A100-SXM4-80GB";
      g["cc"] = "8.0";
      g["sm_count"] = 108;
      g["sm_clock_max_mhz"] = 1410;
      g["l2_bytes"] = 41943040;
    }
    nlohmann::json kept = nlohmann::json::array();
    for (auto& c : j["local"]) {
      if (c["mechanism"] == "sm_stream_local") c["points"].erase(2);  // the largest footprint is 32 MiB
      if (c["mechanism"] != "sm_l2_local:read") kept.push_back(c);    // and no L2 measurement
    }
    j["local"] = kept;
  });
  const System s = from_machine_model(a100);
  std::remove(a100.c_str());
  const GpuParams h = preset("h200x4").gpu;
  EXPECT_EQ(s.gpu.sms, 108);
  EXPECT_NEAR(s.gpu.flops_G, 108 * 64 * 2 * 1.41, 1e-6);
  EXPECT_EQ(s.gpu.blocks_per_sm, 8);
  EXPECT_NEAR(s.gpu.l2_GBps, h.l2_GBps * (108 * 1.41) / (132 * 1.98), 1e-9);
  EXPECT_EQ(s.gpu.hbm_GBps, h.hbm_GBps);
  EXPECT_NE(s.description.find("the preset's: no sm_stream_local beyond the L2"), std::string::npos) << s.description;
  EXPECT_NE(s.description.find("scaled to these SMs: no sm_l2_local"), std::string::npos) << s.description;

  const std::string v = model_with_gpus("t4", [](nlohmann::json& j) {
    for (auto& g : j["gpus"]) {
      g["cc"] = "7.5";
      g["sm_count"] = 40;
      g.erase("sm_clock_max_mhz");
    }
  });
  const System t = from_machine_model(v);
  std::remove(v.c_str());
  EXPECT_EQ(t.gpu.blocks_per_sm, 4);                  // 1024 threads an SM
  EXPECT_NEAR(t.gpu.clock_GHz, 1.38, 1e-12);          // no clock in the model: the V100 base's
  EXPECT_NEAR(t.gpu.flops_G, 40 * 64 * 2 * 1.38, 1e-6);
  EXPECT_NE(t.description.find("no clock in the model"), std::string::npos) << t.description;
}

TEST(SimSystem, FromMachineModelRefusesMixedGpus) {
  const std::string path = model_with_gpus("mixed", [](nlohmann::json& j) {
    j["gpus"][2]["name"] = "NVIDIA H100";
    j["gpus"][2]["sm_count"] = 114;
  });
  try {
    from_machine_model(path);
    ADD_FAILURE() << "no throw";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("identical GPUs; gpu0 is NVIDIA H200 (132 SMs) and gpu2 is NVIDIA H100 (114 SMs)"),
              std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

TEST(SimSystem, CapabilityTables) {
  EXPECT_EQ(fp32_lanes_per_sm(7, 0), 64);
  EXPECT_EQ(fp32_lanes_per_sm(8, 6), 128);
  EXPECT_EQ(fp32_lanes_per_sm(9, 0), 128);
  EXPECT_EQ(fp32_lanes_per_sm(8, 7), 0);  // not in the tables: scaled from the preset instead
  EXPECT_EQ(max_threads_per_sm(8, 9), 1536);
  EXPECT_EQ(max_threads_per_sm(9, 0), 2048);
  EXPECT_EQ(max_threads_per_sm(12, 0), 1536);
  EXPECT_EQ(max_threads_per_sm(5, 2), 0);
}
