// Host logic of `gpsm scope`: sizes, points, results JSON, the registry's selection and failure
// rules, the terminal matrices.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"
#include "scope/registry.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "scope/text_report.hpp"

using namespace gpsm;
using namespace gpsm::scope;

TEST(ScopeSizes, ParseSize) {
  EXPECT_EQ(parse_size("4"), 4u);
  EXPECT_EQ(parse_size("64K"), 64u << 10);
  EXPECT_EQ(parse_size("1MiB"), 1u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("512mb"), 512ull << 20);
  EXPECT_THROW(parse_size("12Q"), std::invalid_argument);
  EXPECT_THROW(parse_size("K"), std::invalid_argument);
  EXPECT_THROW(parse_size("0"), std::invalid_argument);
  EXPECT_THROW(parse_size("99999999999999G"), std::invalid_argument);
}

TEST(ScopeSizes, Pow2Sweep) {
  auto s = pow2_sweep(4, 1ull << 30);
  ASSERT_EQ(s.size(), 29u);
  EXPECT_EQ(s.front(), 4u);
  EXPECT_EQ(s.back(), 1ull << 30);
  auto q = pow2_sweep(4, 1ull << 30, 4);  // 4, 64, 1K, ... then the top
  EXPECT_EQ(q[1], 64u);
  EXPECT_EQ(q.back(), 1ull << 30);
  EXPECT_THROW(pow2_sweep(8, 4), std::invalid_argument);
  EXPECT_EQ(format_size(1ull << 30), "1GiB");
  EXPECT_EQ(format_size(48), "48B");
}

TEST(ScopeResults, MakePointUnits) {
  auto p = make_point(1 << 20, 1e9, {0.5, 0.25, 1.0}, "GB/s", true);
  EXPECT_DOUBLE_EQ(p.value.median, 2.0);
  EXPECT_DOUBLE_EQ(p.value.min, 1.0);
  EXPECT_DOUBLE_EQ(p.value.max, 4.0);
  auto l = make_point(0, 0, {2e-6, 4e-6}, "us", true);
  EXPECT_DOUBLE_EQ(l.value.median, 3.0);
  EXPECT_THROW(make_point(0, 0, {1.0}, "furlongs", true), std::invalid_argument);
  EXPECT_THROW(make_point(0, 0, {}, "us", true), std::invalid_argument);
}

namespace {
TestResult sample_result() {
  TestResult t;
  t.name = "ce_peer";
  t.group = "gpu-gpu";
  t.unit = "GB/s";
  t.x_name = "bytes";
  for (int a = 0; a < 2; ++a) {
    Series s;
    s.label = "gpu" + std::to_string(a) + "->gpu" + std::to_string(1 - a);
    s.params = {{"src", "gpu" + std::to_string(a)}, {"dst", "gpu" + std::to_string(1 - a)}, {"direction", "uni"}};
    s.points.push_back(make_point(1024, 1024, {1e-6, 1.1e-6, 0.9e-6, 1e-6, 1e-6}, "GB/s", true));
    s.points.push_back(make_point(512 << 20, 512 << 20, {1.4e-3, 1.41e-3, 1.39e-3, 1.4e-3, 1.4e-3}, "GB/s", true));
    t.series.push_back(s);
  }
  return t;
}
}  // namespace

TEST(ScopeResults, JsonRoundTripKeepsSamples) {
  auto t = sample_result();
  auto back = test_result_from_json(to_json(t));
  ASSERT_EQ(back.series.size(), 2u);
  EXPECT_EQ(back.series[1].params.at("src"), "gpu1");
  EXPECT_EQ(back.series[0].points[1].time_s, t.series[0].points[1].time_s);
  EXPECT_DOUBLE_EQ(back.series[0].points[1].value.median, t.series[0].points[1].value.median);
  auto bad = to_json(t);
  bad["status"] = "great";
  EXPECT_THROW(test_result_from_json(bad), std::runtime_error);
}

TEST(ScopeResults, DocumentRoundTripAndVersionCheck) {
  RunMeta m;
  m.command = "gpsm scope --quick";
  m.created = utc_now_iso8601();
  gpsm::topo::Topology topo;
  gpsm::model::MachineModel model;
  auto doc = results_document(m, topo, {sample_result()}, model);
  EXPECT_EQ(doc["schema"], "gpsm.results");
  auto tests = tests_from_document(doc);
  ASSERT_EQ(tests.size(), 1u);
  EXPECT_EQ(tests[0].name, "ce_peer");
  doc["schema_version"] = 2;
  EXPECT_THROW(tests_from_document(doc), std::runtime_error);
  doc["schema"] = "other";
  EXPECT_THROW(tests_from_document(doc), std::runtime_error);
}

namespace {
class FakeTest : public Test {
 public:
  enum Mode { good, waive, boom, unverified };
  FakeTest(std::string n, Mode m) : n_(std::move(n)), m_(m) {}
  std::string name() const override { return n_; }
  std::string group() const override { return "fake"; }
  std::string description() const override { return "fake test"; }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "none"; }
  std::string waived(const Options&, const gpsm::topo::Topology&) const override {
    return m_ == waive ? "needs two GPUs" : "";
  }
  void run(const Options&, const gpsm::topo::Topology&, TestResult& r) override {
    if (m_ == boom) throw gpsm::Error("gpsm: device 3 fell over");
    r.series.push_back({"s", {}, {make_point(0, 0, {1e-6, 1e-6, 1e-6, 1e-6, 1e-6}, "us", m_ != unverified)}});
  }

 private:
  std::string n_;
  Mode m_;
};

std::vector<std::unique_ptr<Test>> fakes() {
  std::vector<std::unique_ptr<Test>> v;
  v.push_back(std::make_unique<FakeTest>("ce_peer", FakeTest::good));
  v.push_back(std::make_unique<FakeTest>("ce_peer_read", FakeTest::waive));
  v.push_back(std::make_unique<FakeTest>("lat_launch", FakeTest::boom));
  v.push_back(std::make_unique<FakeTest>("lat_peer_load", FakeTest::unverified));
  return v;
}
}  // namespace

TEST(ScopeRegistry, SelectByNameAndRegex) {
  auto v = fakes();
  EXPECT_EQ(select_tests(v, {}).size(), 4u);
  auto s = select_tests(v, {"ce_peer"});  // exact name and also a regex matching only itself
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0]->name(), "ce_peer");
  EXPECT_EQ(select_tests(v, {"lat_.*"}).size(), 2u);
  EXPECT_EQ(select_tests(v, {"ce_.*", "lat_launch"}).size(), 3u);
  try {
    select_tests(v, {"no_such_test"});
    FAIL() << "expected an error";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_test"), std::string::npos);
  }
}

TEST(ScopeRegistry, RunTestStatuses) {
  auto v = fakes();
  Options o;
  gpsm::topo::Topology topo;
  auto ok = run_test(*v[0], o, topo);
  EXPECT_EQ(ok.status, Status::ok);
  EXPECT_EQ(ok.name, "ce_peer");
  auto w = run_test(*v[1], o, topo);
  EXPECT_EQ(w.status, Status::waived);
  EXPECT_EQ(w.reason, "needs two GPUs");
  auto f = run_test(*v[2], o, topo);
  EXPECT_EQ(f.status, Status::failed);
  EXPECT_NE(f.reason.find("device 3"), std::string::npos);
  auto u = run_test(*v[3], o, topo);  // a time for unverified data is never reported
  EXPECT_EQ(u.status, Status::failed);
  EXPECT_TRUE(u.series.empty());
}

TEST(ScopeRegistry, DevicePairs) {
  Options o;
  o.devices = {0, 1, 2, 3};
  EXPECT_EQ(device_pairs(o).size(), 12u);
  o.quick = true;
  EXPECT_EQ(device_pairs(o).size(), 6u);  // only pairs touching the first device
  o.devices = {2};
  EXPECT_TRUE(device_pairs(o).empty());
}

TEST(ScopeText, MatrixAtPeakSize) {
  auto out = render_test(sample_result(), double(512 << 20));
  // 512 MiB in 1.4 ms = 383.48 GB/s in both off-diagonal cells, '-' on the diagonal
  EXPECT_NE(out.find("383.48"), std::string::npos) << out;
  EXPECT_NE(out.find("row = src"), std::string::npos);
  EXPECT_NE(out.find("-"), std::string::npos);
  TestResult w;
  w.name = "x";
  w.status = Status::waived;
  w.reason = "needs two GPUs";
  EXPECT_NE(render_test(w, 0).find("WAIVED: needs two GPUs"), std::string::npos);
  EXPECT_EQ(gpu_index("gpu12"), 12);
  EXPECT_EQ(gpu_index("host_numa0"), -1);
}

// Sub-0.1 values keep three significant digits in the series tables (lat_hot_word's 0.71 ns
// a request is 0.00071 us); larger ones two decimals.
TEST(ScopeText, SmallValuesKeepTheirDigits) {
  TestResult t;
  t.name = "lat_hot_word";
  t.unit = "us";
  t.x_name = "requests";
  t.status = Status::ok;
  Series s{"gpu0 one word", {{"src", "gpu0"}, {"dst", "gpu0"}}, {}};
  s.points.push_back(make_point(524288, 0, {0.71e-9, 0.72e-9}, "us", true));
  s.points.push_back(make_point(65536, 0, {2.5e-6}, "us", true));
  t.series.push_back(s);
  const std::string out = render_test(t, 0);
  EXPECT_NE(out.find("0.000715"), std::string::npos) << out;
  EXPECT_NE(out.find("2.50"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 0.00 "), std::string::npos) << out;
}
