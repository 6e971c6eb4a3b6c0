// PROACT autotuner: choice on recorded sweeps (fastest, simpler within the margin, ties), model
// pruning of chunk sizes, the choice cache's JSON round trip and its errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"
#include "proact/agent.hpp"
#include "proact/autotune.hpp"

using namespace gpsm::proact;

namespace {

// A recorded sweep in the shape of PROACT dissertation Fig 2.6: slow at small chunks
// (initiation-bound), best in the middle, slower again at large chunks (tail-bound). Times in
// microseconds.
std::vector<SweepRecord> fig26_like() {
  std::vector<SweepRecord> r = {{Agent::memcpy, 0, 0, 3000e-6}, {Agent::inline_store, 0, 0, 2600e-6}};
  const std::uint64_t chunks[] = {4096, 65536, 1 << 20, 16 << 20};
  const double pst[] = {4000, 1700, 1650, 2300};
  const double cdp[] = {6000, 2100, 1800, 2400};
  const double ce[] = {9000, 2500, 1900, 2350};
  for (int i = 0; i < 4; ++i) {
    r.push_back({Agent::persistent, chunks[i], 1024, pst[i] * 1e-6});
    r.push_back({Agent::persistent, chunks[i], 4096, pst[i] * 1.01e-6});
    r.push_back({Agent::device_launch, chunks[i], 256, cdp[i] * 1e-6});
    r.push_back({Agent::copy_engine, chunks[i], 0, ce[i] * 1e-6});
  }
  return r;
}

}  // namespace

TEST(ProactAutotune, PicksFastestWithoutMargin) {
  const auto c = choose_config(fig26_like(), 0.0);
  EXPECT_EQ(c.agent, Agent::persistent);
  EXPECT_EQ(c.chunk_bytes, 1u << 20);
  EXPECT_EQ(c.threads, 1024);
  EXPECT_DOUBLE_EQ(c.time_s, 1650e-6);
  EXPECT_DOUBLE_EQ(c.best_time_s, 1650e-6);
  EXPECT_NE(c.why.find("fastest"), std::string::npos) << c.why;
}

TEST(ProactAutotune, PrefersSimplerWithinMargin) {
  auto r = fig26_like();
  // copy_engine at 1 MiB within 2 % of the fastest persistent run: the simpler mechanism wins
  r.push_back({Agent::copy_engine, 4 << 20, 0, 1680e-6});
  const auto c = choose_config(r, 0.03);
  EXPECT_EQ(c.agent, Agent::copy_engine);
  EXPECT_EQ(c.chunk_bytes, 4u << 20);
  EXPECT_DOUBLE_EQ(c.best_time_s, 1650e-6);
  EXPECT_NE(c.why.find("simpler"), std::string::npos) << c.why;
  // outside a 1 % margin the fastest stays
  EXPECT_EQ(choose_config(r, 0.01).agent, Agent::persistent);
}

TEST(ProactAutotune, SameAgentPrefersFewerThreadsThenLargerChunk) {
  std::vector<SweepRecord> r = {{Agent::persistent, 65536, 4096, 1000e-6},
                                {Agent::persistent, 65536, 1024, 1010e-6},
                                {Agent::persistent, 1 << 20, 1024, 1015e-6}};
  const auto c = choose_config(r, 0.02);
  EXPECT_EQ(c.threads, 1024);
  EXPECT_EQ(c.chunk_bytes, 1u << 20);
}

TEST(ProactAutotune, MemcpyWinsWhenNothingBeatsIt) {
  std::vector<SweepRecord> r = {{Agent::memcpy, 0, 0, 1000e-6}, {Agent::persistent, 65536, 1024, 1020e-6}};
  EXPECT_EQ(choose_config(r, 0.03).agent, Agent::memcpy);
}

TEST(ProactAutotune, BadRecordsThrow) {
  EXPECT_THROW(choose_config({}, 0.03), gpsm::Error);
  EXPECT_THROW(choose_config({{Agent::memcpy, 0, 0, 0.0}}, 0.03), gpsm::Error);
  EXPECT_THROW(choose_config({{Agent::memcpy, 0, 0, -1.0}}, 0.03), gpsm::Error);
  EXPECT_THROW(choose_config({{Agent::memcpy, 0, 0, 1.0}}, 1.5), gpsm::Error);
  EXPECT_THROW(choose_config({{Agent::memcpy, 0, 0, 1.0}}, -0.1), gpsm::Error);
}

TEST(ProactAutotune, AgentNames) {
  for (Agent a : parse_agents("all")) EXPECT_EQ(parse_agent(agent_name(a)), a);
  EXPECT_EQ(parse_agents("ce,pst,ce"), (std::vector<Agent>{Agent::copy_engine, Agent::persistent}));
  EXPECT_EQ(parse_agent("cdp"), Agent::device_launch);
  try {
    parse_agents("persistent,dma");
    FAIL();
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown agent 'dma'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_agents(""), gpsm::Error);
  EXPECT_LT(simplicity_rank(Agent::memcpy), simplicity_rank(Agent::copy_engine));
  EXPECT_LT(simplicity_rank(Agent::copy_engine), simplicity_rank(Agent::persistent));
}

TEST(ProactAutotune, ModelPrunesInitiationAndTailBound) {
  // t = 10 us + bytes / 100 GB/s
  gpsm::model::PiecewiseFit f;
  f.segments.push_back({0, std::numeric_limits<double>::infinity(), 10e-6, 100e9, 0});
  const std::uint64_t total = 256ull << 20;
  std::vector<std::uint64_t> chunks;
  for (std::uint64_t c = 4096; c <= (128ull << 20); c *= 4) chunks.push_back(c);
  const auto pr = prune_chunk_sizes(f, total, chunks, 0.25, 0.25);
  // 4 KiB: 0.04 us of data per 10 us: initiation-bound; 16 KiB and 64 KiB likewise (< 25 %)
  // 256 KiB: 2.6 us / 12.6 us = 21 % -> dropped; 1 MiB: 10.5/20.5 = 51 % kept; 64 MiB: 681 us, over 25 % of
  // the whole 2694 us transfer: tail-bound
  EXPECT_EQ(pr.kept, (std::vector<std::uint64_t>{1 << 20, 4 << 20, 16 << 20}));
  ASSERT_EQ(pr.dropped.size(), 5u);
  EXPECT_NE(pr.dropped.front().reason.find("initiation-bound"), std::string::npos);
  EXPECT_NE(pr.dropped.back().reason.find("tail-bound"), std::string::npos);
  // everything dropped: keeps the best one that is not tail-bound
  const auto one = prune_chunk_sizes(f, total, {4096, 8192}, 0.9, 0.25);
  EXPECT_EQ(one.kept, (std::vector<std::uint64_t>{8192}));
  EXPECT_THROW(prune_chunk_sizes(f, 0, chunks), gpsm::Error);
  EXPECT_THROW(prune_chunk_sizes(f, total, {}), gpsm::Error);
}

TEST(ProactCache, RoundTripFileAndReplace) {
  TuneCache c;
  CacheEntry e;
  e.key = {"nvidia-h200-x4", "synthetic:one_to_all:4gpu", 256ull << 20};
  e.choice = choose_config(fig26_like(), 0.03);
  e.margin = 0.03;
  e.records = 18;
  e.created = "2026-11-22T01:00:00Z";
  e.gpsm_commit = "abc123";
  c.put(e);
  CacheEntry e2 = e;
  e2.key.size = 64ull << 20;
  e2.choice.agent = Agent::memcpy;
  e2.choice.chunk_bytes = 0;
  e2.choice.threads = 0;
  c.put(e2);
  const std::string path = ::testing::TempDir() + "proact_cache_test.json";
  std::remove(path.c_str());
  EXPECT_TRUE(load_cache(path).entries().empty());  // missing file: empty cache
  save_cache(c, path);
  const TuneCache back = load_cache(path);
  ASSERT_EQ(back.entries().size(), 2u);
  const CacheEntry* f = back.find(e.key);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->choice.agent, Agent::persistent);
  EXPECT_EQ(f->choice.chunk_bytes, 1u << 20);
  EXPECT_EQ(f->choice.threads, 1024);
  EXPECT_NEAR(f->choice.time_s, 1650e-6, 1e-12);
  EXPECT_EQ(f->choice.why, e.choice.why);
  EXPECT_EQ(f->records, 18);
  EXPECT_EQ(f->gpsm_commit, "abc123");
  EXPECT_EQ(back.find(e2.key)->choice.agent, Agent::memcpy);
  EXPECT_EQ(back.find({"other", e.key.app, e.key.size}), nullptr);
  // the file is readable JSON with the documented keys
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema"), "gpsm.proact_cache");
  EXPECT_EQ(j.at("entries")[0].at("agent"), "persistent");
  EXPECT_EQ(j.at("entries")[0].at("chunk_bytes"), 1u << 20);
  // put replaces the entry with the same key
  TuneCache c2 = back;
  e.choice.agent = Agent::copy_engine;
  c2.put(e);
  EXPECT_EQ(c2.entries().size(), 2u);
  EXPECT_EQ(c2.find(e.key)->choice.agent, Agent::copy_engine);
  std::remove(path.c_str());
}

TEST(ProactCache, BadFilesNameTheProblem) {
  auto good = to_json(TuneCache{});
  EXPECT_NO_THROW(cache_from_json(good));
  auto bad_schema = good;
  bad_schema["schema"] = "gpsm.results";
  EXPECT_THROW(cache_from_json(bad_schema), gpsm::Error);
  auto bad_version = good;
  bad_version["schema_version"] = 2;
  EXPECT_THROW(cache_from_json(bad_version), gpsm::Error);
  nlohmann::json entry = {{"machine", "m"},  {"app", "a"},       {"size", 1},         {"agent", "persistent"},
                          {"chunk_bytes", 4096}, {"threads", 256}, {"time_us", 1.0},   {"best_time_us", 1.0},
                          {"why", "w"},      {"margin", 0.03},   {"records", 3},      {"created", "t"},
                          {"gpsm_commit", "c"}};
  auto ok = good;
  ok["entries"] = {entry};
  EXPECT_EQ(cache_from_json(ok).entries().size(), 1u);
  auto bad_agent = ok;
  bad_agent["entries"][0]["agent"] = "dma";
  try {
    cache_from_json(bad_agent);
    FAIL();
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("entries[0].agent"), std::string::npos) << e.what();
  }
  auto bad_type = ok;
  bad_type["entries"][0]["chunk_bytes"] = "big";
  try {
    cache_from_json(bad_type);
    FAIL();
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("entries[0].chunk_bytes"), std::string::npos) << e.what();
  }
  auto missing = ok;
  missing["entries"][0].erase("threads");
  EXPECT_THROW(cache_from_json(missing), gpsm::Error);
  auto dup = ok;
  dup["entries"].push_back(entry);
  EXPECT_THROW(cache_from_json(dup), gpsm::Error);
  auto zero_chunk = ok;
  zero_chunk["entries"][0]["chunk_bytes"] = 0;
  EXPECT_THROW(cache_from_json(zero_chunk), gpsm::Error);
  const std::string path = ::testing::TempDir() + "proact_cache_garbage.json";
  {
    std::ofstream f(path);
    f << "{not json";
  }
  try {
    load_cache(path);
    FAIL();
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}
