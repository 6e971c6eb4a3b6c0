// The machine model: JSON round trip, validation errors, and building it from scope results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "gpsm/machine_model.hpp"
#include "scope/model_build.hpp"
#include "scope/results.hpp"

namespace gm = gpsm::model;
using nlohmann::json;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

gm::Segment seg(double lo, double hi, double c_s, double bw, double err) {
  gm::Segment s;
  s.min_bytes = lo;
  s.max_bytes = hi;
  s.c_s = c_s;
  s.bw_Bps = bw;
  s.max_rel_err = err;
  return s;
}

gm::MachineModel sample_model() {
  gm::MachineModel m;
  m.created = "2025-01-02T03:04:05Z";
  m.machine = "node17 (4x H100 SXM)";
  m.gpsm_commit = "0123456789ab";
  gm::PathModel p;
  p.src = "gpu0";
  p.dst = "gpu1";
  p.mechanism = "ce_peer";
  p.direction = "uni";
  p.fit.segments = {seg(0, 65536, 2.1e-6, 51.3e9, 0.012),
                    seg(65536, 123456.789, 9.87e-6, 1.0 / 3.0 * 1e12, 0.03),
                    seg(123456.789, kInf, 1.0e-5, 391.7e9, 0.021)};
  p.fit.max_rel_err = 0.03;
  p.peak_GBps = 372.25;
  m.paths.push_back(p);
  gm::PathModel q;
  q.src = "host_numa0";
  q.dst = "gpu0";
  q.mechanism = "sm_copy:read";
  q.direction = "bidir";
  q.fit.segments = {seg(0, kInf, 7.5e-6, kInf, 0.004)};  // latency only
  q.fit.max_rel_err = 0.004;
  q.peak_GBps = 0;
  m.paths.push_back(q);
  m.goodput.push_back({"gpu0", "gpu1", "p2p_store", {{4, 1.5}, {32, 11.25}, {128, 40.0}}});
  m.saturation.push_back({"gpu0", "gpu2", "sm_copy", 16, 180.5});
  m.latencies.push_back({"pingpong", "gpu0", "gpu1", 1.75, 1.5, 3.25});
  gm::GpuInfo g;
  g.node = "gpu0";
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sm_count = 132;
  g.sm_clock_max_mhz = 1980;
  g.l2_bytes = 52428800;
  g.mem_bytes = 85520809984;
  m.gpus.push_back(g);
  g.node = "gpu1";
  g.sm_clock_max_mhz = 0;  // NVML unavailable
  m.gpus.push_back(g);
  m.local.push_back({"gpu0", "sm_stream_local", {{16777216, 3817.5}, {33554432, 5080.25}, {1073741824, 3905}}});
  return m;
}

void expect_rel(double got, double want, const std::string& what) {
  if (std::isinf(want)) {
    EXPECT_TRUE(std::isinf(got) && got > 0) << what;
    return;
  }
  EXPECT_NEAR(got, want, 1e-12 * std::abs(want)) << what;
}

void expect_same(const gm::MachineModel& a, const gm::MachineModel& b) {
  EXPECT_EQ(a.schema_version, b.schema_version);
  EXPECT_EQ(a.created, b.created);
  EXPECT_EQ(a.machine, b.machine);
  EXPECT_EQ(a.gpsm_commit, b.gpsm_commit);
  ASSERT_EQ(a.paths.size(), b.paths.size());
  for (size_t i = 0; i < a.paths.size(); ++i) {
    const auto &p = a.paths[i], &q = b.paths[i];
    EXPECT_EQ(p.src, q.src);
    EXPECT_EQ(p.dst, q.dst);
    EXPECT_EQ(p.mechanism, q.mechanism);
    EXPECT_EQ(p.direction, q.direction);
    EXPECT_EQ(p.peak_GBps, q.peak_GBps);
    EXPECT_EQ(p.fit.max_rel_err, q.fit.max_rel_err);
    ASSERT_EQ(p.fit.segments.size(), q.fit.segments.size());
    for (size_t k = 0; k < p.fit.segments.size(); ++k) {
      const auto &s = p.fit.segments[k], &t = q.fit.segments[k];
      const std::string w = "paths[" + std::to_string(i) + "].segments[" + std::to_string(k) + "]";
      EXPECT_EQ(s.min_bytes, t.min_bytes) << w;
      if (std::isinf(s.max_bytes))
        EXPECT_TRUE(std::isinf(t.max_bytes)) << w;
      else
        EXPECT_EQ(s.max_bytes, t.max_bytes) << w;
      expect_rel(s.c_s, t.c_s, w + ".c_s");
      expect_rel(s.bw_Bps, t.bw_Bps, w + ".bw_Bps");
      EXPECT_EQ(s.max_rel_err, t.max_rel_err) << w;
    }
  }
  ASSERT_EQ(a.goodput.size(), b.goodput.size());
  for (size_t i = 0; i < a.goodput.size(); ++i) {
    EXPECT_EQ(a.goodput[i].src, b.goodput[i].src);
    EXPECT_EQ(a.goodput[i].dst, b.goodput[i].dst);
    EXPECT_EQ(a.goodput[i].mechanism, b.goodput[i].mechanism);
    ASSERT_EQ(a.goodput[i].points.size(), b.goodput[i].points.size());
    for (size_t k = 0; k < a.goodput[i].points.size(); ++k) {
      EXPECT_EQ(a.goodput[i].points[k].bytes_per_line, b.goodput[i].points[k].bytes_per_line);
      EXPECT_EQ(a.goodput[i].points[k].GBps, b.goodput[i].points[k].GBps);
    }
  }
  ASSERT_EQ(a.saturation.size(), b.saturation.size());
  for (size_t i = 0; i < a.saturation.size(); ++i) {
    EXPECT_EQ(a.saturation[i].src, b.saturation[i].src);
    EXPECT_EQ(a.saturation[i].dst, b.saturation[i].dst);
    EXPECT_EQ(a.saturation[i].mechanism, b.saturation[i].mechanism);
    EXPECT_EQ(a.saturation[i].blocks_to_saturate, b.saturation[i].blocks_to_saturate);
    EXPECT_EQ(a.saturation[i].peak_GBps, b.saturation[i].peak_GBps);
  }
  ASSERT_EQ(a.latencies.size(), b.latencies.size());
  for (size_t i = 0; i < a.latencies.size(); ++i) {
    EXPECT_EQ(a.latencies[i].name, b.latencies[i].name);
    EXPECT_EQ(a.latencies[i].src, b.latencies[i].src);
    EXPECT_EQ(a.latencies[i].dst, b.latencies[i].dst);
    EXPECT_EQ(a.latencies[i].median_us, b.latencies[i].median_us);
    EXPECT_EQ(a.latencies[i].min_us, b.latencies[i].min_us);
    EXPECT_EQ(a.latencies[i].max_us, b.latencies[i].max_us);
  }
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (size_t i = 0; i < a.gpus.size(); ++i) {
    EXPECT_EQ(a.gpus[i].node, b.gpus[i].node);
    EXPECT_EQ(a.gpus[i].name, b.gpus[i].name);
    EXPECT_EQ(a.gpus[i].cc_major, b.gpus[i].cc_major);
    EXPECT_EQ(a.gpus[i].cc_minor, b.gpus[i].cc_minor);
    EXPECT_EQ(a.gpus[i].sm_count, b.gpus[i].sm_count);
    EXPECT_EQ(a.gpus[i].sm_clock_max_mhz, b.gpus[i].sm_clock_max_mhz);
    EXPECT_EQ(a.gpus[i].l2_bytes, b.gpus[i].l2_bytes);
    EXPECT_EQ(a.gpus[i].mem_bytes, b.gpus[i].mem_bytes);
  }
  ASSERT_EQ(a.local.size(), b.local.size());
  for (size_t i = 0; i < a.local.size(); ++i) {
    EXPECT_EQ(a.local[i].gpu, b.local[i].gpu);
    EXPECT_EQ(a.local[i].mechanism, b.local[i].mechanism);
    ASSERT_EQ(a.local[i].points.size(), b.local[i].points.size());
    for (size_t k = 0; k < a.local[i].points.size(); ++k) {
      EXPECT_EQ(a.local[i].points[k].footprint_bytes, b.local[i].points[k].footprint_bytes);
      EXPECT_EQ(a.local[i].points[k].GBps, b.local[i].points[k].GBps);
    }
  }
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "gpsm_machine_model_test_" + name + ".json";
}

// Expects model_from_json(j) to throw std::runtime_error whose message contains `needle`.
void expect_rejected(const json& j, const std::string& needle) {
  try {
    gm::model_from_json(j);
    ADD_FAILURE() << "accepted a bad model; expected an error naming '" << needle << "'";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not name '" << needle << "'";
    EXPECT_EQ(std::string(e.what()).rfind("machine model: ", 0), 0u) << e.what();
  }
}

}  // namespace

TEST(MachineModelJson, RoundTripThroughFile) {
  const gm::MachineModel m = sample_model();
  const std::string path = temp_path("roundtrip");
  gm::save_model(m, path);
  const gm::MachineModel back = gm::load_model(path);
  std::remove(path.c_str());
  expect_same(m, back);
  // and once more through the in-memory JSON
  expect_same(m, gm::model_from_json(gm::to_json(back)));
}

TEST(MachineModelJson, HumanReadableUnitsAndNulls) {
  const json j = gm::to_json(sample_model());
  EXPECT_EQ(j.at("schema"), "gpsm.machine_model");
  EXPECT_EQ(j.at("schema_version"), 1);
  const json& s0 = j.at("paths").at(0).at("segments").at(0);
  EXPECT_NEAR(s0.at("c_us").get<double>(), 2.1, 1e-12);
  EXPECT_NEAR(s0.at("bw_GBps").get<double>(), 51.3, 1e-12);
  EXPECT_EQ(s0.at("min_bytes"), 0);
  EXPECT_TRUE(s0.at("max_bytes").is_number_integer());
  EXPECT_EQ(s0.at("max_bytes"), 65536);
  EXPECT_TRUE(j.at("paths").at(0).at("segments").at(2).at("max_bytes").is_null());
  const json& lat = j.at("paths").at(1).at("segments").at(0);
  EXPECT_TRUE(lat.at("bw_GBps").is_null());
  EXPECT_TRUE(lat.at("max_bytes").is_null());
  EXPECT_NEAR(j.at("paths").at(0).at("max_rel_err").get<double>(), 0.03, 1e-15);
}

TEST(MachineModelJson, FindPath) {
  const gm::MachineModel m = sample_model();
  const gm::PathModel* p = m.find("gpu0", "gpu1", "ce_peer");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->peak_GBps, 372.25);
  EXPECT_EQ(m.find("gpu1", "gpu0", "ce_peer"), nullptr);
  EXPECT_EQ(m.find("gpu0", "gpu1", "ce_peer", "bidir"), nullptr);
  ASSERT_NE(m.find("host_numa0", "gpu0", "sm_copy:read", "bidir"), nullptr);
  EXPECT_EQ(m.find("host_numa0", "gpu0", "sm_copy:read"), nullptr);
}

TEST(MachineModelJson, RejectsWrongSchemaAndVersion) {
  const json good = gm::to_json(sample_model());
  EXPECT_NO_THROW(gm::model_from_json(good));
  json j = good;
  j["schema"] = "gpsm.results";
  expect_rejected(j, "schema");
  j = good;
  j.erase("schema");
  expect_rejected(j, "schema: missing");
  j = good;
  j["schema_version"] = 2;
  expect_rejected(j, "schema_version: unsupported version 2");
  j = good;
  j["schema_version"] = "1";
  expect_rejected(j, "schema_version: expected integer");
  expect_rejected(json::array(), "expected object");
}

TEST(MachineModelJson, RejectsMalformedFieldsNamingThePath) {
  const json good = gm::to_json(sample_model());
  json j = good;
  j["paths"][1]["segments"][0]["bw_GBps"] = "fast";
  expect_rejected(j, "paths[1].segments[0].bw_GBps: expected number");
  j = good;
  j["paths"][0]["segments"][1].erase("c_us");
  expect_rejected(j, "paths[0].segments[1].c_us: missing");
  j = good;
  j["paths"][0]["segments"][1]["min_bytes"] = 70000;
  expect_rejected(j, "paths[0].segments[1].min_bytes");
  j = good;
  j["paths"][0]["segments"][0]["min_bytes"] = 4;
  expect_rejected(j, "paths[0].segments[0].min_bytes");
  j = good;
  j["paths"][0]["segments"][2]["max_bytes"] = 1e12;
  expect_rejected(j, "paths[0].segments[2].max_bytes");
  j = good;
  j["paths"][0]["segments"][0]["bw_GBps"] = 0;
  expect_rejected(j, "paths[0].segments[0].bw_GBps");
  j = good;
  j["paths"][0]["segments"][0]["c_us"] = -1;
  expect_rejected(j, "paths[0].segments[0].c_us");
  j = good;  // a later segment may have a negative intercept...
  j["paths"][0]["segments"][2]["c_us"] = -0.2;  // -0.2 us + 123456.789 B / 391.7 GB/s (0.315 us) > 0
  EXPECT_NO_THROW(gm::model_from_json(j));
  j["paths"][0]["segments"][2]["c_us"] = -0.4;  // ...but must not predict negative times
  expect_rejected(j, "paths[0].segments[2].c_us: predicts a negative time");
  j = good;
  j["paths"][0]["segments"] = json::array();
  expect_rejected(j, "paths[0].segments");
  j = good;
  j["paths"][1]["src"] = 0;
  expect_rejected(j, "paths[1].src: expected string");
  j = good;
  j["paths"] = json::object();
  expect_rejected(j, "paths: expected array");
  j = good;
  j["goodput"][0]["points"][2]["GBps"] = nullptr;
  expect_rejected(j, "goodput[0].points[2].GBps: expected number");
  j = good;
  j["saturation"][0]["blocks_to_saturate"] = 2.5;
  expect_rejected(j, "saturation[0].blocks_to_saturate");
  j = good;
  j["latencies"][0].erase("median_us");
  expect_rejected(j, "latencies[0].median_us: missing");
  for (const char* cc : {"9", "9.x", "0.0", "9.0.1", ".0", "-1.0"}) {
    j = good;
    j["gpus"][1]["cc"] = cc;
    expect_rejected(j, "gpus[1].cc: expected \"<major>.<minor>\"");
  }
  j = good;
  j["gpus"][0]["sm_count"] = 13.5;
  expect_rejected(j, "gpus[0].sm_count: expected positive integer");
  j = good;
  j["gpus"][0]["l2_bytes"] = 0;
  expect_rejected(j, "gpus[0].l2_bytes: must be > 0");
  j = good;
  j["gpus"][1]["node"] = "gpu0";
  expect_rejected(j, "gpus[1].node: \"gpu0\" appears twice");
  j = good;
  j["local"][0]["points"][2]["footprint_bytes"] = 1024;
  expect_rejected(j, "local[0].points[2].footprint_bytes: must ascend");
  j = good;
  j["local"][0]["points"][0]["GBps"] = 0;
  expect_rejected(j, "local[0].points[0].GBps: must be > 0");
  j = good;
  j["local"][0]["points"] = json::array();
  expect_rejected(j, "local[0].points: expected at least one point");
  j = good;  // models written before the gpus and local sections still read
  j.erase("gpus");
  j.erase("local");
  const gm::MachineModel old = gm::model_from_json(j);
  EXPECT_TRUE(old.gpus.empty());
  EXPECT_TRUE(old.local.empty());
  EXPECT_EQ(old.paths.size(), 2u);
}

TEST(MachineModelJson, LoadReportsMissingAndBrokenFiles) {
  const std::string missing = temp_path("does_not_exist");
  std::remove(missing.c_str());
  try {
    gm::load_model(missing);
    ADD_FAILURE() << "loaded a missing file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string broken = temp_path("broken");
  { std::ofstream(broken) << "{ \"schema\": \"gpsm.machine_model\", "; }
  try {
    gm::load_model(broken);
    ADD_FAILURE() << "loaded a truncated file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
  { std::ofstream(broken) << R"({"schema": "gpsm.machine_model", "schema_version": 1, "paths": 3})"; }
  try {
    gm::load_model(broken);
    ADD_FAILURE() << "loaded a bad model";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("paths: expected array"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(broken), std::string::npos) << e.what();
  }
  std::remove(broken.c_str());
  EXPECT_THROW(gm::save_model(sample_model(), "/nonexistent-dir/x/model.json"), std::runtime_error);
}

// ---------------------------------------------------------------------------------------------
// build_model from scope results

namespace {

using gpsm::scope::make_point;
using gpsm::scope::Series;
using gpsm::scope::Status;
using gpsm::scope::TestResult;

// Two-segment path: c = 2 us, 50 GB/s below 64 KiB; c = 10 us, 400 GB/s from there on.
double path_time(double b) { return b < 65536 ? 2e-6 + b / 50e9 : 10e-6 + b / 400e9; }

Series bandwidth_series(const std::string& src, const std::string& dst, bool all_verified = true) {
  Series s;
  s.label = src + "->" + dst;
  s.params = {{"src", src}, {"dst", dst}};
  for (double b = 4; b <= 1073741824.0; b *= 4) {
    const double t = path_time(b);
    s.points.push_back(make_point(b, b, {t * 1.01, t, t * 0.995}, "GB/s", all_verified));
  }
  return s;
}

TestResult bandwidth_test(const std::string& name) {
  TestResult t;
  t.name = name;
  t.group = "bandwidth";
  t.unit = "GB/s";
  t.x_name = "bytes";
  return t;
}

}  // namespace

TEST(MachineModelBuild, PathsFromBandwidthSweeps) {
  TestResult ce = bandwidth_test("ce_peer");
  ce.series.push_back(bandwidth_series("gpu0", "gpu1"));
  Series bi = bandwidth_series("gpu1", "gpu0");
  bi.params["direction"] = "bidir";
  ce.series.push_back(bi);
  TestResult sm = bandwidth_test("sm_copy");
  Series rd = bandwidth_series("gpu0", "gpu2");
  rd.params["mechanism"] = "read";
  sm.series.push_back(rd);

  const gm::MachineModel m = gpsm::scope::build_model({ce, sm}, "box", "2025-01-01T00:00:00Z", "abc");
  EXPECT_EQ(m.machine, "box");
  EXPECT_EQ(m.created, "2025-01-01T00:00:00Z");
  EXPECT_EQ(m.gpsm_commit, "abc");
  EXPECT_EQ(m.schema_version, 1);
  ASSERT_EQ(m.paths.size(), 3u);
  const gm::PathModel* p = m.find("gpu0", "gpu1", "ce_peer");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->direction, "uni");
  ASSERT_EQ(p->fit.segments.size(), 2u);
  EXPECT_NEAR(p->fit.segments[0].max_bytes, 65536, 0.02 * 65536);
  EXPECT_NEAR(p->fit.segments[0].bw_Bps, 50e9, 0.02 * 50e9);
  EXPECT_NEAR(p->fit.segments[1].bw_Bps, 400e9, 0.02 * 400e9);
  // peak = max over points of the median GB/s (the 1 GiB point here)
  const double big = 1073741824.0;
  EXPECT_NEAR(p->peak_GBps, big / path_time(big) / 1e9, 1e-9);
  EXPECT_NE(m.find("gpu1", "gpu0", "ce_peer", "bidir"), nullptr);
  EXPECT_EQ(m.find("gpu1", "gpu0", "ce_peer"), nullptr);
  EXPECT_NE(m.find("gpu0", "gpu2", "sm_copy:read"), nullptr);
  EXPECT_EQ(m.find("gpu0", "gpu2", "sm_copy"), nullptr);
}

TEST(MachineModelBuild, IgnoresWaivedFailedAndUnverifiedData) {
  TestResult waived = bandwidth_test("ce_waived");
  waived.status = Status::waived;
  waived.reason = "no peer access";
  waived.series.push_back(bandwidth_series("gpu0", "gpu3"));
  TestResult failed = bandwidth_test("ce_failed");
  failed.status = Status::failed;
  failed.series.push_back(bandwidth_series("gpu0", "gpu3"));
  TestResult unverified = bandwidth_test("ce_unverified");
  unverified.series.push_back(bandwidth_series("gpu0", "gpu3", /*all_verified=*/false));

  // One good sweep with a few corrupted-but-unverified points that must not enter the fit.
  TestResult mixed = bandwidth_test("ce_peer");
  Series s = bandwidth_series("gpu0", "gpu1");
  for (double b : {256.0, 1048576.0, 268435456.0}) {
    const double t = path_time(b) * 10;  // ten times slower: would wreck the fit and the peak
    s.points.push_back(make_point(b, b, {t, t, t}, "GB/s", false));
  }
  s.points.push_back(make_point(2147483648.0, 2147483648.0, {1e-4}, "GB/s", false));  // 21 TB/s
  mixed.series.push_back(s);

  TestResult lat_failed;
  lat_failed.name = "pingpong";
  lat_failed.unit = "us";
  lat_failed.x_name = "bytes";
  lat_failed.status = Status::failed;
  lat_failed.series.push_back({"gpu0<->gpu1", {{"src", "gpu0"}, {"dst", "gpu1"}},
                               {make_point(8, 8, {2e-6}, "us", true)}});

  const gm::MachineModel m =
      gpsm::scope::build_model({waived, failed, unverified, mixed, lat_failed}, "box", "", "");
  ASSERT_EQ(m.paths.size(), 1u);
  EXPECT_EQ(m.paths[0].mechanism, "ce_peer");
  const double big = 1073741824.0;
  EXPECT_NEAR(m.paths[0].peak_GBps, big / path_time(big) / 1e9, 1e-9);
  ASSERT_EQ(m.paths[0].fit.segments.size(), 2u);
  EXPECT_LT(m.paths[0].fit.max_rel_err, 0.02);
  EXPECT_TRUE(m.latencies.empty());
  EXPECT_TRUE(m.goodput.empty());
  EXPECT_TRUE(m.saturation.empty());
}

TEST(MachineModelBuild, GoodputSaturationAndLatencies) {
  TestResult gp;
  gp.name = "p2p_store";
  gp.unit = "GB/s";
  gp.x_name = "bytes_per_line";
  Series gs{"gpu0->gpu1", {{"src", "gpu0"}, {"dst", "gpu1"}}, {}};
  // bytes moved per timed op: 1 MiB; GB/s grows with line size. Listed out of order.
  const double op = 1048576;
  for (double bpl : {128.0, 4.0, 32.0, 8.0}) {
    const double gbps = bpl / 128.0 * 100.0;
    gs.points.push_back(make_point(bpl, op, {op / (gbps * 1e9)}, "GB/s", true));
  }
  gs.points.push_back(make_point(64, op, {op / 1e12}, "GB/s", false));  // unverified: dropped
  gp.series.push_back(gs);

  TestResult blocks;
  blocks.name = "sm_copy";
  blocks.unit = "GB/s";
  blocks.x_name = "blocks";
  Series bs{"gpu0->gpu2", {{"src", "gpu0"}, {"dst", "gpu2"}, {"mechanism", "write"}}, {}};
  const double curve[][2] = {{1, 20}, {2, 40}, {4, 80}, {8, 150}, {16, 192}, {32, 199}, {64, 200}};
  for (const auto& c : curve)
    bs.points.push_back(make_point(c[0], op, {op / (c[1] * 1e9)}, "GB/s", true));
  blocks.series.push_back(bs);

  TestResult lat;
  lat.name = "pingpong";
  lat.unit = "us";
  lat.x_name = "bytes";
  Series ls{"gpu0<->gpu1", {{"src", "gpu0"}, {"dst", "gpu1"}}, {}};
  ls.points.push_back(make_point(8, 8, {2.5e-6, 2.0e-6, 3.5e-6, 2.25e-6, 2.1e-6}, "us", true));
  ls.points.push_back(make_point(1024, 1024, {9e-6}, "us", true));  // not the first point: unused
  lat.series.push_back(ls);
  Series ls2{"launch", {}, {make_point(0, 0, {4e-6, 5e-6, 6e-6}, "us", true)}};
  lat.series.push_back(ls2);

  TestResult launch;  // two series with the same (name, src, dst): told apart by their labels
  launch.name = "lat_launch";
  launch.unit = "us";
  launch.x_name = "none";
  launch.series.push_back({"gpu0 launch", {{"src", "host"}, {"dst", "gpu0"}},
                           {make_point(0, 0, {3e-6}, "us", true)}});
  launch.series.push_back({"gpu0 launch+sync", {{"src", "host"}, {"dst", "gpu0"}},
                           {make_point(0, 0, {8e-6}, "us", true)}});
  launch.series.push_back({"gpu1 launch", {{"src", "host"}, {"dst", "gpu1"}},
                           {make_point(0, 0, {3e-6}, "us", true)}});

  TestResult a2a = bandwidth_test("all_to_all");  // aggregates without src/dst: not paths
  Series total = bandwidth_series("gpu0", "gpu1");
  total.params = {{"direction", "total"}};
  a2a.series.push_back(total);

  TestResult other;  // an x the model does not use
  other.name = "allreduce";
  other.unit = "GB/s";
  other.x_name = "gpus";
  other.series.push_back({"nccl", {}, {make_point(2, op, {1e-5}, "GB/s", true)}});

  const gm::MachineModel m = gpsm::scope::build_model({gp, blocks, lat, launch, a2a, other}, "box", "", "");
  EXPECT_TRUE(m.paths.empty());

  ASSERT_EQ(m.goodput.size(), 1u);
  EXPECT_EQ(m.goodput[0].src, "gpu0");
  EXPECT_EQ(m.goodput[0].dst, "gpu1");
  EXPECT_EQ(m.goodput[0].mechanism, "p2p_store");
  ASSERT_EQ(m.goodput[0].points.size(), 4u);
  const double want_x[] = {4, 8, 32, 128};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(m.goodput[0].points[i].bytes_per_line, want_x[i]);
    EXPECT_NEAR(m.goodput[0].points[i].GBps, want_x[i] / 128.0 * 100.0, 1e-9);
  }

  ASSERT_EQ(m.saturation.size(), 1u);
  EXPECT_EQ(m.saturation[0].mechanism, "sm_copy:write");
  EXPECT_EQ(m.saturation[0].src, "gpu0");
  EXPECT_EQ(m.saturation[0].dst, "gpu2");
  EXPECT_NEAR(m.saturation[0].peak_GBps, 200, 1e-9);
  EXPECT_EQ(m.saturation[0].blocks_to_saturate, 16);  // 192 >= 0.95 * 200 = 190; 150 is not

  ASSERT_EQ(m.latencies.size(), 5u);
  EXPECT_EQ(m.latencies[0].name, "pingpong");
  EXPECT_EQ(m.latencies[0].src, "gpu0");
  EXPECT_EQ(m.latencies[0].dst, "gpu1");
  EXPECT_NEAR(m.latencies[0].median_us, 2.25, 1e-9);
  EXPECT_NEAR(m.latencies[0].min_us, 2.0, 1e-9);
  EXPECT_NEAR(m.latencies[0].max_us, 3.5, 1e-9);
  EXPECT_EQ(m.latencies[1].src, "");
  EXPECT_NEAR(m.latencies[1].median_us, 5.0, 1e-9);
  EXPECT_EQ(m.latencies[2].name, "lat_launch:gpu0 launch");
  EXPECT_EQ(m.latencies[3].name, "lat_launch:gpu0 launch+sync");
  EXPECT_NEAR(m.latencies[3].median_us, 8.0, 1e-9);
  EXPECT_EQ(m.latencies[4].name, "lat_launch");  // unique: keeps the plain name
  EXPECT_EQ(m.latencies[4].dst, "gpu1");

  // The built model survives its own JSON.
  expect_same(m, gm::model_from_json(gm::to_json(m)));
}

// Footprint sweeps of the GPU's own memory become local curves (ascending, verified points only),
// and the topology's GPUs become the model's gpus; a GPU CUDA could not describe is left out.
TEST(MachineModelBuild, LocalCurvesAndGpusFromTheTopology) {
  TestResult st;
  st.name = "sm_stream_local";
  st.unit = "GB/s";
  st.x_name = "footprint_bytes";
  Series s0{"gpu0 copy loop", {{"src", "gpu0"}, {"dst", "gpu0"}}, {}};
  for (double mib : {1024.0, 16.0, 32.0}) {  // listed out of order
    const double f = mib * 1048576, gbps = mib == 32 ? 5000 : 3800;
    s0.points.push_back(make_point(f, f, {f / (gbps * 1e9)}, "GB/s", true));
  }
  s0.points.push_back(make_point(64.0 * 1048576, 64.0 * 1048576, {1e-6}, "GB/s", false));  // unverified
  st.series.push_back(s0);
  st.series.push_back({"gpu0->gpu1", {{"src", "gpu0"}, {"dst", "gpu1"}},  // not the GPU's own memory
                       {make_point(1048576, 1048576, {1e-6}, "GB/s", true)}});

  gpsm::topo::Topology topo;
  gpsm::topo::Gpu g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.cc_major = 9;
  g.sm_count = 132;
  g.l2_bytes = 62914560;
  g.mem_bytes = 150109880320;
  g.sm_clock_max_mhz = 1980;
  topo.gpus.push_back(g);
  g.index = 1;
  g.sm_clock_max_mhz = 0;  // NVML could not say
  topo.gpus.push_back(g);
  g.index = 2;
  g.sm_count = 0;  // CUDA could not describe it
  topo.gpus.push_back(g);

  const gm::MachineModel m = gpsm::scope::build_model({st}, "box", "", "", &topo);
  ASSERT_EQ(m.local.size(), 1u);
  EXPECT_EQ(m.local[0].gpu, "gpu0");
  EXPECT_EQ(m.local[0].mechanism, "sm_stream_local");
  ASSERT_EQ(m.local[0].points.size(), 3u);
  EXPECT_EQ(m.local[0].points[0].footprint_bytes, 16.0 * 1048576);
  EXPECT_NEAR(m.local[0].points[1].GBps, 5000, 1e-6);
  EXPECT_EQ(m.local[0].points[2].footprint_bytes, 1024.0 * 1048576);
  EXPECT_NEAR(m.local[0].points[2].GBps, 3800, 1e-6);
  EXPECT_TRUE(m.paths.empty());
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].node, "gpu0");
  EXPECT_EQ(m.gpus[1].node, "gpu1");
  EXPECT_EQ(m.gpus[0].sm_count, 132);
  EXPECT_EQ(m.gpus[0].l2_bytes, 62914560);
  EXPECT_EQ(m.gpus[0].sm_clock_max_mhz, 1980);
  EXPECT_EQ(m.gpus[1].sm_clock_max_mhz, 0);
  EXPECT_EQ(m.gpu("gpu2"), nullptr);
  ASSERT_NE(m.local_curve("gpu0", "sm_stream_local"), nullptr);
  EXPECT_EQ(m.local_curve("gpu1", "sm_stream_local"), nullptr);
  expect_same(m, gm::model_from_json(gm::to_json(m)));
  // without a topology, no gpus
  EXPECT_TRUE(gpsm::scope::build_model({st}, "box", "", "").gpus.empty());
}
