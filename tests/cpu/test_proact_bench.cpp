// gpsm bench's PROACT options in plain C++: the chunk lists, the cache lookup and its fallbacks,
// the env fallback of the graph apps, a recorded app sweep -> choice -> cache -> lookup round trip
// (fixed numbers), the decomposition-fixed entry, the Table 2.2-style rendering, and the chunk
// recorded in the results file.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/graphapps/graph_proact_plan.hpp"
#include "apps/harness/bench_report.hpp"
#include "apps/harness/proact_bench.hpp"
#include "gpsm/error.hpp"
#include "transfer/autotune.hpp"

using namespace gpsm::apps;
using gpsm::transfer::Agent;
using gpsm::transfer::CacheEntry;
using gpsm::transfer::CacheKey;
using gpsm::transfer::TuneCache;

namespace {

bool has(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// A run at `gpus` GPUs whose reps all took `us` microseconds per iteration.
RunRecord run_of(Paradigm p, int gpus, double us, std::uint64_t requested = 0, std::uint64_t key_size = 4u << 20) {
  RunRecord r;
  r.paradigm = p;
  r.gpus = gpus;
  r.out.sec_per_iter = {us * 1e-6, us * 1e-6 * 1.2, us * 1e-6 * 0.9};  // median: us
  r.out.iterations = 20;
  if (p == Paradigm::proact) {
    r.out.proact.requested = requested;
    r.out.proact.chunk_bytes = requested + 512;  // as built: rounded up to whole blocks (the cache keeps the request)
    r.out.proact.source = "test";
    r.out.proact.key_size = key_size;
    r.label = sweep_label(requested);
  }
  return r;
}

TuneSetup graph_setup() {
  TuneSetup s;
  s.machine = "nvidia-h200-x4";
  s.app = "pagerank";
  s.gpus = 4;
  s.chunk_is_choice = true;
  s.margin = 0.03;
  s.created = "2026-01-01T00:00:00Z";
  s.gpsm_commit = "abc";
  return s;
}

CacheEntry entry(const std::string& app, std::uint64_t size, Agent agent, std::uint64_t chunk, double us,
                 const std::string& why) {
  CacheEntry e;
  e.key = {"m1", app, size};
  e.choice.agent = agent;
  e.choice.chunk_bytes = chunk;
  e.choice.time_s = us * 1e-6;
  e.choice.best_time_s = us * 1e-6;
  e.choice.why = why;
  e.records = 3;
  return e;
}

}  // namespace

TEST(ProactBench, ParsesChunkOptions) {
  EXPECT_EQ(parse_proact_chunk("256K"), 256u << 10);
  EXPECT_EQ(parse_proact_chunk("65536"), 65536u);
  EXPECT_EQ(parse_proact_chunk("1M"), 1u << 20);
  for (const char* bad : {"0", "abc", "12Q", ""}) {
    try {
      parse_proact_chunk(bad);
      ADD_FAILURE() << "accepted --proact-chunk " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "--proact-chunk")) << e.what();
    }
  }
  const auto r = parse_proact_chunks("64K..4M");
  EXPECT_EQ(r, (std::vector<std::uint64_t>{64u << 10, 128u << 10, 256u << 10, 512u << 10, 1u << 20, 2u << 20, 4u << 20}));
  EXPECT_EQ(parse_proact_chunks("1M,64K,1M"), (std::vector<std::uint64_t>{64u << 10, 1u << 20}));
  for (const char* bad : {"4M..64K", "3K..1M", "64K,,1M", "lots", "0,64K"}) {
    try {
      parse_proact_chunks(bad);
      ADD_FAILURE() << "accepted --proact-chunks " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(has(e.what(), "gpsm bench: --proact-chunks")) << e.what();
    }
  }
  EXPECT_EQ(sweep_label(64u << 10), "proact@64K");
  EXPECT_EQ(sweep_label(1u << 20), "proact@1M");
  EXPECT_EQ(sweep_label(1000), "proact@1000B");
}

TEST(ProactBench, MachineKeyPrefersTheDeviceKind) {
  EXPECT_EQ(gpsm::transfer::machine_key("nvidia-h200-x4", "host1", "NVIDIA H200"), "nvidia-h200-x4");
  EXPECT_EQ(gpsm::transfer::machine_key(nullptr, "host1", "NVIDIA H200"), "host1:NVIDIA H200");
  EXPECT_EQ(gpsm::transfer::machine_key("", "host1", "NVIDIA H200"), "host1:NVIDIA H200");
}

TEST(ProactBench, CacheLookupAndItsFallbacks) {
  TuneCache c;
  c.put(entry("pagerank:4gpu", 4194304, Agent::copy_engine, 1 << 20, 80, "copy_engine chunk 1048576 B: fastest"));
  c.put(entry("sssp:4gpu", 4194304, Agent::memcpy, 0, 90, "memcpy (90.0 us) is within 3% of ... and simpler"));
  c.put(entry("als:4gpu", 4194304, Agent::persistent, 65536, 70, "persistent ..."));
  EXPECT_EQ(bench_cache_key("m1", "pagerank", 4, 4194304), (CacheKey{"m1", "pagerank:4gpu", 4194304}));

  const ProactChunk hit = chunk_from_cache(c, "cache.json", bench_cache_key("m1", "pagerank", 4, 4194304));
  EXPECT_EQ(hit.bytes, 1u << 20);
  EXPECT_EQ(hit.source, "chunk 1048576 B from cache.json (key (m1, pagerank:4gpu, 4194304))");

  // another size, GPU count or machine: no entry, the default
  for (const CacheKey& k : {bench_cache_key("m1", "pagerank", 4, 4194308), bench_cache_key("m1", "pagerank", 2, 4194304),
                            bench_cache_key("m2", "pagerank", 4, 4194304)}) {
    const ProactChunk miss = chunk_from_cache(c, "cache.json", k);
    EXPECT_EQ(miss.bytes, 0u);
    EXPECT_TRUE(has(miss.source, "no entry for key " + describe(k) + " in cache.json")) << miss.source;
    EXPECT_TRUE(has(miss.source, "default chunk")) << miss.source;
  }
  // an agent the apps' exchange does not implement: said, and the default
  for (const char* app : {"sssp", "als"}) {
    const ProactChunk other = chunk_from_cache(c, "cache.json", bench_cache_key("m1", app, 4, 4194304));
    EXPECT_EQ(other.bytes, 0u) << app;
    EXPECT_TRUE(has(other.source, std::string("chose the ") + (app == std::string("sssp") ? "memcpy" : "persistent")))
        << other.source;
    EXPECT_TRUE(has(other.source, "only implements copy engines")) << other.source;
  }
}

// The graph apps: the bench's request wins over GPSM_GRAPH_PROACT_CHUNK, which wins over the
// default; what the bench said about a cache miss is kept.
TEST(ProactBench, GraphChunkResolution) {
  using gpsm::apps::graphapps::resolve_chunk;
  const ProactChunk opt = resolve_chunk({1 << 20, "--proact-chunk 1M (1048576 B)"}, "64K");
  EXPECT_EQ(opt.bytes, 1u << 20);
  EXPECT_EQ(opt.source, "--proact-chunk 1M (1048576 B)");
  const ProactChunk env = resolve_chunk({0, "no entry for key (...) in c.json: the app's default chunk"}, "64K");
  EXPECT_EQ(env.bytes, 65536u);
  EXPECT_EQ(env.source, "no entry for key (...) in c.json: the app's default chunk; GPSM_GRAPH_PROACT_CHUNK=64K (65536 B)");
  const ProactChunk def = resolve_chunk({}, nullptr);
  EXPECT_EQ(def.bytes, 0u);
  EXPECT_TRUE(has(def.source, "the default chunk (about 16 per GPU, at least 2048 KiB")) << def.source;
  EXPECT_EQ(resolve_chunk({}, "").bytes, 0u);
  EXPECT_THROW(resolve_chunk({}, "12Q"), gpsm::Error);
}

// A recorded app sweep (fixed numbers): memcpy 100 us, proact 64K 90, 256K 80, 1M 81 per
// iteration. 1M is within 3% of 256K with the same agent and threads, and larger: the choice.
// Then the entry goes into a cache file and back, and the lookup gives 1M to the next run.
TEST(ProactBench, RecordedSweepToChoiceToCacheAndBack) {
  std::vector<RunRecord> runs{run_of(Paradigm::memcpy, 4, 100), run_of(Paradigm::proact, 4, 90, 64 << 10),
                              run_of(Paradigm::proact, 4, 80, 256 << 10), run_of(Paradigm::proact, 4, 81, 1 << 20)};
  // ignored: other GPU counts, other paradigms, failed runs
  runs.push_back(run_of(Paradigm::proact, 2, 10, 4 << 20));
  runs.push_back(run_of(Paradigm::memcpy, 2, 10));
  runs.push_back(run_of(Paradigm::gps, 4, 10));
  RunRecord bad = run_of(Paradigm::proact, 4, 10, 2 << 20);
  bad.out.status = RunStatus::failed;
  bad.out.sec_per_iter.clear();
  runs.push_back(bad);

  const TuneDecision d = tune_decision(graph_setup(), runs);
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  const CacheEntry& e = *d.entry;
  EXPECT_EQ(e.key, (CacheKey{"nvidia-h200-x4", "pagerank:4gpu", 4u << 20}));
  EXPECT_EQ(e.choice.agent, Agent::copy_engine);
  EXPECT_EQ(e.choice.chunk_bytes, 1u << 20);
  EXPECT_EQ(e.choice.threads, 0);
  EXPECT_NEAR(e.choice.time_s, 81e-6, 1e-12);
  EXPECT_NEAR(e.choice.best_time_s, 80e-6, 1e-12);
  EXPECT_EQ(e.records, 4);  // memcpy + 3 proact sizes
  EXPECT_DOUBLE_EQ(e.margin, 0.03);
  EXPECT_TRUE(has(e.choice.why, "within 3% of the fastest")) << e.choice.why;
  EXPECT_EQ(d.line, "proact-tune: (nvidia-h200-x4, pagerank:4gpu, 4194304): " + e.choice.why);

  // into a file that already holds an entry of another key, and one of this key (replaced)
  const std::string path = ::testing::TempDir() + "proact_bench_cache.json";
  std::remove(path.c_str());
  TuneCache c = gpsm::transfer::load_cache(path);  // missing: empty
  c.put(entry("jacobi2d:4gpu", 268435456, Agent::copy_engine, 65536, 50, "fixed"));
  CacheEntry stale = e;
  stale.choice.chunk_bytes = 64 << 10;
  c.put(stale);
  c.put(e);
  gpsm::transfer::save_cache(c, path);
  const TuneCache back = gpsm::transfer::load_cache(path);
  ASSERT_EQ(back.entries().size(), 2u);
  const ProactChunk next = chunk_from_cache(back, path, bench_cache_key("nvidia-h200-x4", "pagerank", 4, 4u << 20));
  EXPECT_EQ(next.bytes, 1u << 20);
  std::remove(path.c_str());

  // memcpy within the margin of the best proact: memcpy is simpler and wins; the lookup says so
  runs[0] = run_of(Paradigm::memcpy, 4, 80.5);
  const TuneDecision m = tune_decision(graph_setup(), runs);
  ASSERT_TRUE(m.entry.has_value());
  EXPECT_EQ(m.entry->choice.agent, Agent::memcpy);
  TuneCache mc;
  mc.put(*m.entry);
  EXPECT_EQ(chunk_from_cache(mc, "f", m.entry->key).bytes, 0u);
}

TEST(ProactBench, NoProactRunNoEntry) {
  std::vector<RunRecord> runs{run_of(Paradigm::memcpy, 4, 100)};
  EXPECT_FALSE(tune_decision(graph_setup(), runs).entry.has_value());
  RunRecord bad = run_of(Paradigm::proact, 4, 10, 1 << 20);
  bad.out.status = RunStatus::failed;
  bad.out.reason = "stream waits unsupported";
  bad.out.sec_per_iter.clear();
  runs.push_back(bad);
  const TuneDecision d = tune_decision(graph_setup(), runs);
  EXPECT_FALSE(d.entry.has_value());
  EXPECT_TRUE(has(d.line, "none of 1 proact run(s) succeeded (first: stream waits unsupported)")) << d.line;
}

// jacobi2d: the decomposition fixes the chunk; the one proact run is the entry, nothing swept.
TEST(ProactBench, FixedChunkEntryIsTheMeasuredRun) {
  TuneSetup s = graph_setup();
  s.app = "jacobi2d";
  s.chunk_is_choice = false;
  RunRecord p = run_of(Paradigm::proact, 4, 55);
  p.label.clear();
  p.out.proact.requested = 0;
  p.out.proact.chunk_bytes = 16384;
  p.out.proact.source = fixed_chunk_source("halo row", 16384);
  p.out.proact.key_size = 16384ull * 16384 * 4;
  const TuneDecision d = tune_decision(s, {run_of(Paradigm::memcpy, 4, 40), p});
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  EXPECT_EQ(d.entry->key, (CacheKey{"nvidia-h200-x4", "jacobi2d:4gpu", 16384ull * 16384 * 4}));
  EXPECT_EQ(d.entry->choice.agent, Agent::copy_engine);
  EXPECT_EQ(d.entry->choice.chunk_bytes, 16384u);
  EXPECT_NEAR(d.entry->choice.time_s, 55e-6, 1e-12);  // the proact run's, though memcpy was faster
  EXPECT_EQ(d.entry->choice.best_time_s, d.entry->choice.time_s);
  EXPECT_EQ(d.entry->records, 1);
  EXPECT_EQ(d.entry->choice.why, "chunk fixed by the decomposition: one halo row of 16384 bytes");
  // and it survives the cache's validation
  TuneCache c;
  c.put(*d.entry);
  EXPECT_NO_THROW(gpsm::transfer::cache_from_json(gpsm::transfer::to_json(c)));
}

TEST(ProactBench, RendersTheTable) {
  TuneCache c;
  c.put(entry("sssp:4gpu", 4194304, Agent::memcpy, 0, 90.04, "memcpy | simpler"));
  CacheEntry pst = entry("synthetic:one_to_all:4gpu", 268435456, Agent::persistent, 1 << 20, 1650, "fastest");
  pst.choice.threads = 1024;
  pst.choice.best_time_s = 1600e-6;
  pst.records = 40;
  c.put(pst);
  c.put(entry("pagerank:4gpu", 4194304, Agent::copy_engine, 1 << 20, 81, "within 3%"));
  const std::string t = gpsm::transfer::render_cache_table(c);
  EXPECT_EQ(t,
            "| machine | app | size | agent | chunk | threads | time | best time | records | why |\n"
            "|---|---|---:|---|---:|---:|---:|---:|---:|---|\n"
            "| m1 | pagerank:4gpu | 4MiB (4194304 B) | copy_engine | 1MiB (1048576 B) | - | 81.0 us | 81.0 us | 3 | "
            "within 3% |\n"
            "| m1 | sssp:4gpu | 4MiB (4194304 B) | memcpy | - | - | 90.0 us | 90.0 us | 3 | memcpy \\| simpler |\n"
            "| m1 | synthetic:one_to_all:4gpu | 256MiB (268435456 B) | persistent | 1MiB (1048576 B) | 1024 | 1650.0 us | "
            "1600.0 us | 40 | fastest |\n");
  EXPECT_TRUE(has(gpsm::transfer::render_cache_table(TuneCache{}), "(no entries)"));
}

TEST(ProactBench, RendersACacheFileAndRefusesOthers) {
  const std::string path = ::testing::TempDir() + "proact_bench_render.json";
  TuneCache c;
  c.put(entry("pagerank:4gpu", 4194304, Agent::copy_engine, 1 << 20, 81, "within 3%"));
  gpsm::transfer::save_cache(c, path);
  const std::string md = gpsm::transfer::render_cache_file(path);
  EXPECT_TRUE(has(md, "## PROACT choices: " + path)) << md;
  EXPECT_TRUE(has(md, "| m1 | pagerank:4gpu |")) << md;
  std::remove(path.c_str());
  EXPECT_THROW(gpsm::transfer::render_cache_file(path), gpsm::Error);  // missing: not an empty table
}

// The results file records the chunk a proact run used.
TEST(ProactBench, ResultsPointRecordsTheChunk) {
  Problem p;
  p.graph = "rmat:20";
  RunRecord r = run_of(Paradigm::proact, 4, 80, 1 << 20);
  r.label.clear();
  r.out.proact.chunk_bytes = (1 << 20) + 1024;
  r.out.proact.source = "chunk 1048576 B from c.json (key (m1, pagerank:4gpu, 4194304))";
  r.out.tolerance = 1e-5;
  const RunRecord m = run_of(Paradigm::memcpy, 4, 100);
  const nlohmann::json j = bench_test_json("pagerank", "d", p, {m, r});
  ASSERT_EQ(j["series"].size(), 2u);
  const auto& mp = j["series"][0]["points"][0];
  EXPECT_FALSE(mp.contains("proact"));
  const auto& pt = j["series"][1]["points"][0];
  ASSERT_TRUE(pt.contains("proact")) << pt.dump();
  EXPECT_EQ(pt["proact"]["chunk_bytes"], (1 << 20) + 1024);
  EXPECT_EQ(pt["proact"]["requested"], 1 << 20);
  EXPECT_EQ(pt["proact"]["key_size"], 4 << 20);
  EXPECT_EQ(pt["proact"]["source"], r.out.proact.source);
}
