// gpsm bench's PROACT options in plain C++: the chunk lists, the cache lookup (agent and chunk) and
// its fallbacks, the env fallback of the graph apps, the paradigm a proact run is built with per
// agent and what a fixed-chunk app records, a recorded app sweep -> choice -> cache -> lookup round
// trip (fixed numbers), the agent choices (memcpy, inline, copy engines; chunk a choice or fixed),
// the PROACT dissertation Table 2.2-style rendering, and the agent and chunk recorded in the
// results file and table.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/graph/graph_proact_plan.hpp"
#include "apps/harness/bench_report.hpp"
#include "apps/harness/proact_bench.hpp"
#include "gpsm/error.hpp"
#include "proact/autotune.hpp"

using namespace gpsm::apps;
using gpsm::proact::Agent;
using gpsm::proact::CacheEntry;
using gpsm::proact::CacheKey;
using gpsm::proact::TuneCache;

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
    r.out.proact.agent = "copy_engine";
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
  EXPECT_EQ(gpsm::proact::machine_key("nvidia-h200-x4", "host1", "NVIDIA H200"), "nvidia-h200-x4");
  EXPECT_EQ(gpsm::proact::machine_key(nullptr, "host1", "NVIDIA H200"), "host1:NVIDIA H200");
  EXPECT_EQ(gpsm::proact::machine_key("", "host1", "NVIDIA H200"), "host1:NVIDIA H200");
}

TEST(ProactBench, CacheLookupAndItsFallbacks) {
  TuneCache c;
  c.put(entry("pagerank:4gpu", 4194304, Agent::copy_engine, 1 << 20, 80, "copy_engine chunk 1048576 B: fastest"));
  c.put(entry("sssp:4gpu", 4194304, Agent::memcpy, 0, 90, "memcpy (90.0 us) is within 3% of ... and simpler"));
  c.put(entry("jacobi2d:4gpu", 4194304, Agent::inline_store, 0, 50, "inline: fastest of 3 configurations"));
  c.put(entry("als:4gpu", 4194304, Agent::persistent, 65536, 70, "persistent ..."));
  EXPECT_EQ(bench_cache_key("m1", "pagerank", 4, 4194304), (CacheKey{"m1", "pagerank:4gpu", 4194304}));

  // copy_engine: its chunk
  const ProactChunk hit = chunk_from_cache(c, "cache.json", bench_cache_key("m1", "pagerank", 4, 4194304));
  EXPECT_EQ(hit.bytes, 1u << 20);
  EXPECT_EQ(hit.agent, Agent::copy_engine);
  EXPECT_EQ(hit.source, "the copy_engine agent, chunk 1048576 B, from cache.json (key (m1, pagerank:4gpu, 4194304))");

  // memcpy: the memcpy agent (the app's memcpy exchange), no chunk; the source names file, key and why
  const ProactChunk mc = chunk_from_cache(c, "cache.json", bench_cache_key("m1", "sssp", 4, 4194304));
  EXPECT_EQ(mc.agent, Agent::memcpy);
  EXPECT_EQ(mc.bytes, 0u);
  EXPECT_EQ(mc.source,
            "the memcpy agent from cache.json (key (m1, sssp:4gpu, 4194304): memcpy (90.0 us) is within 3% of ... and "
            "simpler): the app's memcpy exchange (bulk copies after the kernel)");

  // inline: the inline agent (the app's p2p_inline exchange), no chunk
  const ProactChunk in = chunk_from_cache(c, "cache.json", bench_cache_key("m1", "jacobi2d", 4, 4194304));
  EXPECT_EQ(in.agent, Agent::inline_store);
  EXPECT_EQ(in.bytes, 0u);
  EXPECT_TRUE(has(in.source, "the inline agent from cache.json (key (m1, jacobi2d:4gpu, 4194304): inline: fastest"))
      << in.source;
  EXPECT_TRUE(has(in.source, "p2p_inline exchange")) << in.source;

  // an agent the apps do not implement: copy engines with the default chunk (bytes 0), said
  const ProactChunk other = chunk_from_cache(c, "cache.json", bench_cache_key("m1", "als", 4, 4194304));
  EXPECT_EQ(other.agent, Agent::copy_engine);
  EXPECT_EQ(other.bytes, 0u);
  EXPECT_TRUE(has(other.source, "cache.json (key (m1, als:4gpu, 4194304)) chose the persistent agent (persistent ...)"))
      << other.source;
  EXPECT_TRUE(has(other.source, "the copy_engine agent with the app's default chunk")) << other.source;

  // another size, GPU count or machine: no entry, copy engines and the default chunk
  for (const CacheKey& k : {bench_cache_key("m1", "pagerank", 4, 4194308), bench_cache_key("m1", "pagerank", 2, 4194304),
                            bench_cache_key("m2", "sssp", 4, 4194304)}) {
    const ProactChunk miss = chunk_from_cache(c, "cache.json", k);
    EXPECT_EQ(miss.bytes, 0u);
    EXPECT_EQ(miss.agent, Agent::copy_engine);
    EXPECT_TRUE(has(miss.source, "no entry for key " + describe(k) + " in cache.json")) << miss.source;
    EXPECT_TRUE(has(miss.source, "default chunk")) << miss.source;
  }
}

// The paradigm whose exchange a proact run is built with, per agent, and the timing note.
TEST(ProactBench, AgentPicksTheRunsParadigm) {
  EXPECT_EQ(proact_runs_as(Paradigm::proact, Agent::memcpy), Paradigm::memcpy);
  EXPECT_EQ(proact_runs_as(Paradigm::proact, Agent::inline_store), Paradigm::p2p_inline);
  EXPECT_EQ(proact_runs_as(Paradigm::proact, Agent::copy_engine), Paradigm::proact);
  EXPECT_EQ(proact_runs_as(Paradigm::proact, Agent::persistent), Paradigm::proact);
  EXPECT_EQ(proact_runs_as(Paradigm::proact, Agent::device_launch), Paradigm::proact);
  EXPECT_EQ(proact_runs_as(Paradigm::gps, Agent::memcpy), Paradigm::gps);  // only proact follows an agent
  EXPECT_EQ(proact_agent_used(Agent::persistent), Agent::copy_engine);
  EXPECT_EQ(proact_agent_used(Agent::inline_store), Agent::inline_store);
  EXPECT_EQ(proact_agent_note(Paradigm::proact, Agent::memcpy), "; proact ran the memcpy agent: the memcpy paradigm's exchange");
  EXPECT_EQ(proact_agent_note(Paradigm::proact, Agent::inline_store),
            "; proact ran the inline agent: the p2p_inline paradigm's exchange");
  EXPECT_EQ(proact_agent_note(Paradigm::proact, Agent::copy_engine), "");
  EXPECT_EQ(proact_agent_note(Paradigm::memcpy, Agent::memcpy), "");

  // the request is asked for proact only, with the key size
  RunRequest req;
  std::uint64_t asked_with = 0;
  req.proact_chunk = [&](std::uint64_t k) {
    asked_with = k;
    return ProactChunk{0, "test", Agent::memcpy};
  };
  req.paradigm = Paradigm::memcpy;
  EXPECT_EQ(ask_proact_chunk(req, 77).source, "");
  EXPECT_EQ(asked_with, 0u);
  req.paradigm = Paradigm::proact;
  const ProactChunk got = ask_proact_chunk(req, 77);
  EXPECT_EQ(asked_with, 77u);
  EXPECT_EQ(got.agent, Agent::memcpy);
  req.proact_chunk = nullptr;  // no request: copy engines, the default chunk
  EXPECT_EQ(ask_proact_chunk(req, 77).agent, Agent::copy_engine);
  EXPECT_EQ(ask_proact_chunk(req, 77).bytes, 0u);
}

// What a fixed-chunk app (jacobi2d, heat3d, wave3d) records of its proact run, per agent.
TEST(ProactBench, FixedChunkAppRecordsTheAgentItRan) {
  const ProactChunkUse plain = fixed_chunk_use({}, "halo row", 16384, 1u << 26);
  EXPECT_EQ(plain.agent, "copy_engine");
  EXPECT_EQ(plain.chunk_bytes, 16384u);
  EXPECT_EQ(plain.requested, 0u);
  EXPECT_EQ(plain.key_size, 1u << 26);
  EXPECT_EQ(plain.source, "chunk fixed by the decomposition: one halo row of 16384 bytes");

  // a size asked for (--proact-chunk): recorded as asked, not applied
  const ProactChunkUse sized = fixed_chunk_use({1 << 20, "--proact-chunk 1M (1048576 B)"}, "halo row", 16384, 1u << 26);
  EXPECT_EQ(sized.agent, "copy_engine");
  EXPECT_EQ(sized.chunk_bytes, 16384u);
  EXPECT_EQ(sized.requested, 1u << 20);
  EXPECT_EQ(sized.source, "--proact-chunk 1M (1048576 B); chunk fixed by the decomposition: one halo row of 16384 bytes");

  // memcpy / inline from a cache: that agent, no chunk, the cache's source
  const ProactChunkUse mc = fixed_chunk_use({0, "the memcpy agent from c.json", Agent::memcpy}, "halo plane", 262144, 1u << 26);
  EXPECT_EQ(mc.agent, "memcpy");
  EXPECT_EQ(mc.chunk_bytes, 0u);
  EXPECT_EQ(mc.source, "the memcpy agent from c.json");
  EXPECT_EQ(mc.key_size, 1u << 26);
  const ProactChunkUse in = fixed_chunk_use({0, "the inline agent from c.json", Agent::inline_store}, "halo row", 16384, 64);
  EXPECT_EQ(in.agent, "inline");
  EXPECT_EQ(in.chunk_bytes, 0u);
  // an agent the apps lack ran as copy engines (chunk_from_cache never asks for one, but it is said)
  EXPECT_EQ(fixed_chunk_use({0, "", Agent::persistent}, "halo row", 16384, 64).agent, "copy_engine");
}

// The graph apps: the bench's request wins over GPSM_GRAPH_PROACT_CHUNK, which wins over the
// default; what the bench said about a cache miss is kept.
TEST(ProactBench, GraphChunkResolution) {
  using gpsm::apps::graph::resolve_chunk;
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
  // the memcpy and inline agents ship no chunks: the request as it is, the variable not applied
  for (Agent a : {Agent::memcpy, Agent::inline_store}) {
    const ProactChunk r = resolve_chunk({0, "the agent from c.json", a}, "64K");
    EXPECT_EQ(r.agent, a);
    EXPECT_EQ(r.bytes, 0u);
    EXPECT_EQ(r.source, "the agent from c.json");
  }
  EXPECT_EQ(env.agent, Agent::copy_engine);
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
  TuneCache c = gpsm::proact::load_cache(path);  // missing: empty
  c.put(entry("jacobi2d:4gpu", 268435456, Agent::copy_engine, 65536, 50, "fixed"));
  CacheEntry stale = e;
  stale.choice.chunk_bytes = 64 << 10;
  c.put(stale);
  c.put(e);
  gpsm::proact::save_cache(c, path);
  const TuneCache back = gpsm::proact::load_cache(path);
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
  EXPECT_EQ(chunk_from_cache(mc, "f", m.entry->key).agent, Agent::memcpy);  // the next proact run runs memcpy's exchange
}

// memcpy faster than every proact chunk by more than the margin: memcpy (as pagerank measured on
// 2xH200), and a cache lookup then gives the next proact run the memcpy agent.
TEST(ProactBench, MemcpyWinsWhenProactIsSlower) {
  const std::vector<RunRecord> runs{run_of(Paradigm::memcpy, 4, 57), run_of(Paradigm::p2p_inline, 4, 70),
                                    run_of(Paradigm::proact, 4, 66, 64 << 10), run_of(Paradigm::proact, 4, 67, 1 << 20)};
  const TuneDecision d = tune_decision(graph_setup(), runs);
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  EXPECT_EQ(d.entry->choice.agent, Agent::memcpy);
  EXPECT_EQ(d.entry->choice.chunk_bytes, 0u);
  EXPECT_NEAR(d.entry->choice.time_s, 57e-6, 1e-12);
  EXPECT_EQ(d.entry->records, 4);  // memcpy, p2p_inline, two proact sizes
  EXPECT_TRUE(has(d.entry->choice.why, "memcpy: fastest of 4 configurations")) << d.entry->choice.why;
  TuneCache c;
  c.put(*d.entry);
  EXPECT_NO_THROW(gpsm::proact::cache_from_json(gpsm::proact::to_json(c)));
  EXPECT_EQ(chunk_from_cache(c, "f", d.entry->key).agent, Agent::memcpy);
}

// p2p_inline the fastest by more than the margin: the inline agent (chunk 0, threads 0).
TEST(ProactBench, InlineWinsWhenP2pInlineIsFastest) {
  const std::vector<RunRecord> runs{run_of(Paradigm::memcpy, 4, 100), run_of(Paradigm::p2p_inline, 4, 60),
                                    run_of(Paradigm::proact, 4, 80, 256 << 10)};
  const TuneDecision d = tune_decision(graph_setup(), runs);
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  EXPECT_EQ(d.entry->choice.agent, Agent::inline_store);
  EXPECT_EQ(d.entry->choice.chunk_bytes, 0u);
  EXPECT_EQ(d.entry->choice.threads, 0);
  EXPECT_NEAR(d.entry->choice.time_s, 60e-6, 1e-12);
  EXPECT_EQ(d.entry->records, 3);
  // within the margin of a copy-engine chunk, inline is simpler and still wins; memcpy within it beats both
  const TuneDecision close =
      tune_decision(graph_setup(), {run_of(Paradigm::p2p_inline, 4, 80.5), run_of(Paradigm::proact, 4, 80, 256 << 10)});
  ASSERT_TRUE(close.entry.has_value()) << close.line;
  EXPECT_EQ(close.entry->choice.agent, Agent::inline_store);
  TuneCache c;
  c.put(*d.entry);
  const ProactChunk next = chunk_from_cache(c, "f", d.entry->key);
  EXPECT_EQ(next.agent, Agent::inline_store);
  EXPECT_EQ(proact_runs_as(Paradigm::proact, next.agent), Paradigm::p2p_inline);
}

// A proact run that ran another agent (a cache chose it) is not a copy-engine record: skipped.
TEST(ProactBench, AProactRunOfAnotherAgentIsNoCopyEngineRecord) {
  RunRecord as_memcpy = run_of(Paradigm::proact, 4, 50);
  as_memcpy.out.proact.agent = "memcpy";
  as_memcpy.out.proact.chunk_bytes = 0;
  std::vector<RunRecord> runs{run_of(Paradigm::memcpy, 4, 100), as_memcpy, run_of(Paradigm::proact, 4, 80, 256 << 10)};
  const TuneDecision d = tune_decision(graph_setup(), runs);
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  EXPECT_EQ(d.entry->records, 2);  // memcpy and the copy-engine proact run
  EXPECT_EQ(d.entry->choice.agent, Agent::copy_engine);  // not memcpy at 50 us under the proact label
  EXPECT_EQ(d.entry->choice.chunk_bytes, 256u << 10);
  // only runs of another agent: no entry, said
  const TuneDecision none = tune_decision(graph_setup(), {run_of(Paradigm::memcpy, 4, 100), as_memcpy});
  EXPECT_FALSE(none.entry.has_value());
  EXPECT_TRUE(has(none.line, "none of 1 proact run(s) ran copy engines (1 ran the agent a cache chose)")) << none.line;
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

// jacobi2d: the decomposition fixes the chunk; its one proact run is a copy_engine record next to
// memcpy and p2p_inline in the same choice (jacobi2d 4096 on 2xH200, docs/proact.md: proact
// 66.67 us, memcpy 57.02: memcpy).
TEST(ProactBench, FixedChunkAppChoosesAmongTheAgents) {
  TuneSetup s = graph_setup();
  s.app = "jacobi2d";
  s.gpus = 2;
  s.chunk_is_choice = false;
  RunRecord p = run_of(Paradigm::proact, 2, 66.67);
  p.label.clear();
  p.out.proact.requested = 0;
  p.out.proact.chunk_bytes = 16384;
  p.out.proact.source = fixed_chunk_source("halo row", 16384);
  p.out.proact.key_size = 4096ull * 4096 * 4;
  const TuneDecision d = tune_decision(s, {run_of(Paradigm::memcpy, 2, 57.02), run_of(Paradigm::p2p_inline, 2, 60), p});
  ASSERT_TRUE(d.entry.has_value()) << d.line;
  EXPECT_EQ(d.entry->key, (CacheKey{"nvidia-h200-x4", "jacobi2d:2gpu", 4096ull * 4096 * 4}));
  EXPECT_EQ(d.entry->choice.agent, Agent::memcpy);
  EXPECT_NEAR(d.entry->choice.time_s, 57.02e-6, 1e-12);
  EXPECT_EQ(d.entry->records, 3);
  EXPECT_DOUBLE_EQ(d.entry->margin, 0.03);
  TuneCache c;
  c.put(*d.entry);
  EXPECT_NO_THROW(gpsm::proact::cache_from_json(gpsm::proact::to_json(c)));
  EXPECT_EQ(chunk_from_cache(c, "f", d.entry->key).agent, Agent::memcpy);

  // inline fastest: inline
  const TuneDecision in = tune_decision(s, {run_of(Paradigm::memcpy, 2, 57), run_of(Paradigm::p2p_inline, 2, 40), p});
  ASSERT_TRUE(in.entry.has_value()) << in.line;
  EXPECT_EQ(in.entry->choice.agent, Agent::inline_store);

  // copy engines fastest: copy_engine with the fixed chunk (as run), and the why says it is fixed
  RunRecord fast = p;
  fast.out.sec_per_iter = {30e-6, 31e-6, 29e-6};
  const TuneDecision ce = tune_decision(s, {run_of(Paradigm::memcpy, 2, 57), run_of(Paradigm::p2p_inline, 2, 60), fast});
  ASSERT_TRUE(ce.entry.has_value()) << ce.line;
  EXPECT_EQ(ce.entry->choice.agent, Agent::copy_engine);
  EXPECT_EQ(ce.entry->choice.chunk_bytes, 16384u);
  EXPECT_EQ(ce.entry->records, 3);
  EXPECT_NEAR(ce.entry->choice.best_time_s, 30e-6, 1e-12);
  EXPECT_TRUE(has(ce.entry->choice.why, "fastest of 3 configurations")) << ce.entry->choice.why;
  EXPECT_TRUE(has(ce.entry->choice.why, "; chunk fixed by the decomposition: one halo row of 16384 bytes"))
      << ce.entry->choice.why;

  // the proact run alone (memcpy and p2p_inline not run): one record, copy_engine
  const TuneDecision alone = tune_decision(s, {p});
  ASSERT_TRUE(alone.entry.has_value()) << alone.line;
  EXPECT_EQ(alone.entry->records, 1);
  EXPECT_EQ(alone.entry->choice.agent, Agent::copy_engine);

  // a fixed-chunk app that reports no chunk: no entry
  RunRecord nochunk = p;
  nochunk.out.proact.chunk_bytes = 0;
  EXPECT_FALSE(tune_decision(s, {run_of(Paradigm::memcpy, 2, 57), nochunk}).entry.has_value());
  // no key size: no entry
  RunRecord nokey = p;
  nokey.out.proact.key_size = 0;
  const TuneDecision nk = tune_decision(s, {run_of(Paradigm::memcpy, 2, 57), nokey});
  EXPECT_FALSE(nk.entry.has_value());
  EXPECT_TRUE(has(nk.line, "did not report the size of its cache key")) << nk.line;
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
  const std::string t = gpsm::proact::render_cache_table(c);
  EXPECT_EQ(t,
            "| machine | app | size | agent | chunk | threads | time | best time | records | why |\n"
            "|---|---|---:|---|---:|---:|---:|---:|---:|---|\n"
            "| m1 | pagerank:4gpu | 4MiB (4194304 B) | copy_engine | 1MiB (1048576 B) | - | 81.0 us | 81.0 us | 3 | "
            "within 3% |\n"
            "| m1 | sssp:4gpu | 4MiB (4194304 B) | memcpy | - | - | 90.0 us | 90.0 us | 3 | memcpy \\| simpler |\n"
            "| m1 | synthetic:one_to_all:4gpu | 256MiB (268435456 B) | persistent | 1MiB (1048576 B) | 1024 | 1650.0 us | "
            "1600.0 us | 40 | fastest |\n");
  EXPECT_TRUE(has(gpsm::proact::render_cache_table(TuneCache{}), "(no entries)"));
}

TEST(ProactBench, RendersACacheFileAndRefusesOthers) {
  const std::string path = ::testing::TempDir() + "proact_bench_render.json";
  TuneCache c;
  c.put(entry("pagerank:4gpu", 4194304, Agent::copy_engine, 1 << 20, 81, "within 3%"));
  gpsm::proact::save_cache(c, path);
  const std::string md = gpsm::proact::render_cache_file(path);
  EXPECT_TRUE(has(md, "## PROACT choices: " + path)) << md;
  EXPECT_TRUE(has(md, "| m1 | pagerank:4gpu |")) << md;
  std::remove(path.c_str());
  EXPECT_THROW(gpsm::proact::render_cache_file(path), gpsm::Error);  // missing: not an empty table
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
  EXPECT_EQ(pt["proact"]["agent"], "copy_engine");

  // a proact run that ran the memcpy agent: recorded, still in the proact series
  RunRecord asm_ = run_of(Paradigm::proact, 4, 57);
  asm_.label.clear();
  asm_.out.proact = fixed_chunk_use({0, "the memcpy agent from c.json", Agent::memcpy}, "halo row", 16384, 1u << 26);
  asm_.out.tolerance = 1e-6;
  const nlohmann::json k = bench_test_json("jacobi2d", "d", p, {m, asm_});
  ASSERT_EQ(k["series"].size(), 2u);
  EXPECT_EQ(k["series"][1]["label"], "proact");
  const auto& q = k["series"][1]["points"][0];
  EXPECT_EQ(q["proact"]["agent"], "memcpy");
  EXPECT_EQ(q["proact"]["chunk_bytes"], 0);
  EXPECT_EQ(q["proact"]["source"], "the memcpy agent from c.json");

  // the table says which agent ran under such a row (and nothing under a copy-engine one)
  const std::string t = format_table("jacobi2d", p, summarize({m, asm_}));
  EXPECT_TRUE(has(t, "^ proact ran the memcpy agent: the memcpy paradigm's exchange")) << t;
  EXPECT_FALSE(has(format_table("pagerank", p, summarize({m, r})), "^ proact ran")) ;
  RunRecord asi = asm_;
  asi.out.proact.agent = "inline";
  EXPECT_TRUE(has(format_table("jacobi2d", p, summarize({asi})), "^ proact ran the inline agent: the p2p_inline paradigm's exchange"));
}
