// `gpsm proact` host logic: argument parsing and validation, slices, derived figures (speedup,
// overlap, tracking slowdown) from recorded runs, the table and the results document.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"
#include "gpsm/topology.hpp"
#include "scope/results_file.hpp"
#include "proact/values.hpp"
#include "proact/proact_plan.hpp"

using namespace gpsm::proact;

namespace {

ProactConfig good() {
  ProactConfig c;
  c.devices = {0, 1, 2, 3};
  c.bytes = 256ull << 20;
  c.agents = parse_agents("all");
  c.chunks = parse_chunk_list("4K..16M");
  c.threads = {256, 1024};
  return c;
}

void expect_error(const ProactConfig& c, const std::string& needle) {
  try {
    validate(c);
    FAIL() << "expected an error containing " << needle;
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// A recorded run: compute 1000 us, copies alone 1000 us, memcpy 2000 us, persistent 1200 us.
ProactRun recorded() {
  ProactRun r;
  r.cfg = good();
  r.cfg.agents = {Agent::memcpy, Agent::persistent, Agent::copy_engine};
  r.cfg.chunks = {65536, 1 << 20};
  r.cfg.threads = {1024};
  r.base.work = 40;
  r.base.compute_s = {1000e-6, 1010e-6, 990e-6, 1000e-6, 1005e-6};
  r.base.transfer_s = {1000e-6, 1000e-6, 1000e-6, 1000e-6, 1000e-6};
  r.base.tracked_s = {{65536, {1100e-6, 1100e-6, 1100e-6, 1100e-6, 1100e-6}},
                      {1 << 20, {1050e-6, 1050e-6, 1050e-6, 1050e-6, 1050e-6}}};
  ConfigResult m;
  m.agent = Agent::memcpy;
  m.total_s = {2000e-6, 2010e-6, 1990e-6, 2000e-6, 2000e-6};
  m.tail_s = {1000e-6, 1000e-6, 1000e-6, 1000e-6, 1000e-6};
  ConfigResult p;
  p.agent = Agent::persistent;
  p.chunk_bytes = 65536;
  p.threads = 1024;
  p.total_s = {1200e-6, 1250e-6, 1190e-6, 1200e-6, 1300e-6};
  p.tail_s = {50e-6, 50e-6, 50e-6, 50e-6, 50e-6};
  p.mechanism = "polling_warps";
  ConfigResult ce;
  ce.agent = Agent::copy_engine;
  ce.chunk_bytes = 4096;
  ce.status = "skipped";
  ce.reason = "too many stream operations";
  ConfigResult bad;
  bad.agent = Agent::persistent;
  bad.chunk_bytes = 1 << 20;
  bad.threads = 1024;
  bad.status = "failed";
  bad.reason = "rank 2 holds 1 wrong word";
  r.results = {m, p, ce, bad};
  return r;
}

}  // namespace

TEST(ProactPlan, ParseLists) {
  const auto r = parse_chunk_list("4K..16M");
  ASSERT_EQ(r.size(), 13u);
  EXPECT_EQ(r.front(), 4096u);
  EXPECT_EQ(r.back(), 16u << 20);
  EXPECT_EQ(parse_chunk_list("1M,64K,64K"), (std::vector<std::uint64_t>{65536, 1 << 20}));
  EXPECT_THROW(parse_chunk_list("16M..4K"), gpsm::Error);
  EXPECT_THROW(parse_chunk_list("3K..16M"), gpsm::Error);
  EXPECT_THROW(parse_chunk_list("64K,,1M"), gpsm::Error);
  EXPECT_THROW(parse_chunk_list("lots"), gpsm::Error);
  EXPECT_EQ(parse_int_list("256,1024,256", "--threads"), (std::vector<int>{256, 1024}));
  EXPECT_THROW(parse_int_list("256,x", "--threads"), gpsm::Error);
  EXPECT_THROW(parse_int_list("-32", "--threads"), gpsm::Error);
  EXPECT_EQ(parse_pattern("all_to_all"), Pattern::all_to_all);
  EXPECT_THROW(parse_pattern("ring"), gpsm::Error);
}

TEST(ProactPlan, ValidateNamesTheSetting) {
  EXPECT_NO_THROW(validate(good()));
  auto c = good();
  c.devices = {0};
  expect_error(c, "2 or more");
  c = good();
  c.devices = {0, 1, 1};
  expect_error(c, "twice");
  c = good();
  c.wait_timeout_ms = 18446744073710ull;  // * 10^6 ns wraps past 2^64 to 448 us
  expect_error(c, "--wait-timeout-ms 18446744073710: more than a day");
  c.wait_timeout_ms = 86400000;
  EXPECT_NO_THROW(validate(c));
  c = good();
  c.bytes = 4096 * 3 + 1;
  expect_error(c, "--size");
  c = good();
  c.pattern = Pattern::all_to_all;
  c.bytes = 4096 * 6;  // not a multiple of 4 GPUs x 4 KiB
  expect_error(c, "--size");
  c = good();
  c.chunks = {6144};
  expect_error(c, "chunk size 6144");
  c = good();
  c.chunks = {512ull << 20};
  expect_error(c, "at most");
  c = good();
  c.threads = {100};
  expect_error(c, "--threads 100");
  c = good();
  c.reps = 3;
  expect_error(c, ">= 5");
  c = good();
  c.agents = {};
  expect_error(c, "--agents");
  c = good();
  c.chunks = {};
  expect_error(c, "--chunks");
  c = good();
  c.force_ce_proxy = true;
  c.allow_ce_proxy = false;
  expect_error(c, "contradict");
  c = good();
  c.agents = {Agent::memcpy, Agent::inline_store};
  c.chunks = {};
  c.threads = {};
  EXPECT_NO_THROW(validate(c));  // no chunked agent: no chunk sizes needed
}

TEST(ProactPlan, SlicesAndUsefulBytes) {
  auto c = good();
  auto s = producer_slices(c);
  EXPECT_EQ(s[0].bytes, c.bytes);
  EXPECT_EQ(s[1].bytes, 0u);
  EXPECT_EQ(useful_bytes(c), 3 * c.bytes);
  c.pattern = Pattern::all_to_all;
  s = producer_slices(c);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(s[r].bytes, c.bytes / 4);
    EXPECT_EQ(s[r].offset, r * (c.bytes / 4));
  }
  EXPECT_EQ(useful_bytes(c), 3 * c.bytes);
  // copy_engine: 256 MiB in 64 KiB chunks over 2 streams = 2048 chunks per stream, 2 ops each
  c.pattern = Pattern::one_to_all;
  c.ce_streams = 2;
  EXPECT_EQ(ce_ops_per_stream(c, 65536), 4096u);
}

TEST(ProactPlan, DerivedFigures) {
  const auto r = recorded();
  const auto& p = r.results[1];
  EXPECT_NEAR(speedup_over_memcpy(r, p), 2000.0 / 1200.0, 1e-9);
  // overlap = 1 - (1200 - 1000) / 1000
  EXPECT_NEAR(overlap_fraction(r, p), 0.8, 1e-9);
  EXPECT_NEAR(overlap_fraction(r, r.results[0]), 0.0, 1e-9);  // memcpy overlaps nothing
  EXPECT_NEAR(tracking_slowdown(r, 65536), 0.1, 1e-9);
  EXPECT_NEAR(tracking_slowdown(r, 1 << 20), 0.05, 1e-9);
  EXPECT_TRUE(std::isnan(tracking_slowdown(r, 4096)));
  EXPECT_TRUE(std::isnan(speedup_over_memcpy(r, r.results[2])));  // skipped
  const auto rec = sweep_records(r);
  ASSERT_EQ(rec.size(), 2u);  // ok results only
  EXPECT_EQ(rec[1].agent, Agent::persistent);
  EXPECT_NEAR(rec[1].time_s, 1200e-6, 1e-12);
}

TEST(ProactPlan, TableShowsEveryConfiguration) {
  const std::string t = render_table(recorded());
  EXPECT_NE(t.find("1.67x"), std::string::npos) << t;
  EXPECT_NE(t.find("80%"), std::string::npos) << t;
  EXPECT_NE(t.find("skipped"), std::string::npos) << t;
  EXPECT_NE(t.find("failed"), std::string::npos) << t;
  EXPECT_NE(t.find("10.0"), std::string::npos) << t;  // tracking +10 %
}

TEST(ProactPlan, DocumentFollowsTheSchema) {
  gpsm::topo::Topology topo;
  topo.hostname = "h";
  ProactMeta meta;
  meta.command = "gpsm proact --json x";
  meta.created = "2026-11-22T01:00:00Z";
  const auto j = proact_document(meta, recorded(), topo);
  EXPECT_EQ(j.at("schema"), "gpsm.results");
  EXPECT_EQ(j.at("tool"), "proact");
  EXPECT_FALSE(j.contains("model"));
  ASSERT_EQ(j.at("tests").size(), 3u);
  const auto& sweep = j.at("tests")[1];
  EXPECT_EQ(sweep.at("name"), "proact_sweep");
  EXPECT_EQ(sweep.at("x"), "chunk_bytes");
  EXPECT_EQ(sweep.at("status"), "failed");
  ASSERT_EQ(sweep.at("series").size(), 1u);
  EXPECT_EQ(sweep.at("series")[0].at("label"), "persistent/1024t");
  const auto& pt = sweep.at("series")[0].at("points")[0];
  EXPECT_EQ(pt.at("x"), 65536.0);
  EXPECT_NEAR(pt.at("median").get<double>(), 1200.0, 1e-6);
  EXPECT_NEAR(pt.at("overlap_fraction").get<double>(), 0.8, 1e-9);
  EXPECT_NEAR(pt.at("tracking_slowdown").get<double>(), 0.1, 1e-9);
  EXPECT_EQ(sweep.at("skipped")[0].at("agent"), "copy_engine");
  EXPECT_EQ(sweep.at("failed")[0].at("chunk_bytes"), 1u << 20);
  const auto& base = j.at("tests")[0];
  std::vector<std::string> labels;
  for (const auto& s : base.at("series")) labels.push_back(s.at("label"));
  EXPECT_EQ(labels, (std::vector<std::string>{"compute", "transfer", "memcpy"}));
  EXPECT_EQ(j.at("tests")[2].at("series")[0].at("points").size(), 2u);
  EXPECT_EQ(j.at("options").at("block_bytes"), kBlockBytes);
  // the scope reader accepts the tests
  EXPECT_NO_THROW(gpsm::scope::tests_from_document(j));
}

TEST(ProactPlan, ProducedValuesDependOnIndexPhaseAndWork) {
  EXPECT_NE(produce_value(0, 1, 1, 10), produce_value(1, 1, 1, 10));
  EXPECT_NE(produce_value(5, 1, 1, 10), produce_value(5, 1, 2, 10));
  EXPECT_NE(produce_value(5, 1, 1, 10), produce_value(5, 1, 1, 11));
  EXPECT_NE(produce_value(5, 1, 1, 10), produce_value(5, 2, 1, 10));
  EXPECT_NE(produce_value(1ull << 32, 1, 1, 0), produce_value(0, 1, 1, 0));
}

TEST(ProactPlan, SweepPointsAscendByChunkWhateverTheRunOrder) {
  auto r = recorded();
  ConfigResult small;  // run after the 64 KiB one (copy_engine-style descending order)
  small.agent = Agent::persistent;
  small.chunk_bytes = 4096;
  small.threads = 1024;
  small.total_s = {3000e-6, 3000e-6, 3000e-6, 3000e-6, 3000e-6};
  small.tail_s = small.total_s;
  r.results.push_back(small);
  gpsm::topo::Topology topo;
  const auto j = proact_document(ProactMeta{}, r, topo);
  const auto& pts = j.at("tests")[1].at("series")[0].at("points");
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0].at("x"), 4096.0);
  EXPECT_EQ(pts[1].at("x"), 65536.0);
  EXPECT_NEAR(pts[0].at("speedup_vs_memcpy").get<double>(), 2000.0 / 3000.0, 1e-9);
}
