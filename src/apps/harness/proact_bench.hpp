#pragma once
// `gpsm bench`'s PROACT options (docs/proact.md, "In gpsm bench"), in plain C++ (CPU-tested):
// the agent and chunk an app's proact run is asked to use (--proact-chunk, or a --proact-cache
// lookup by (machine, "<app>:<gpus>gpu", key size)), what the run then executes and records, and
// how the runs of a --proact-tune sweep become a choice-cache entry (proact::choose_config over
// memcpy, p2p_inline and one proact run per chunk size).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/harness/bench_report.hpp"
#include "proact/autotune.hpp"

namespace gpsm::apps {

// --proact-chunk: one positive size ("65536", "256K", "1M"). Throws std::invalid_argument
// naming the option.
std::uint64_t parse_proact_chunk(const std::string& text);
// --proact-chunks: the forms of `gpsm proact --chunks` (proact::parse_chunk_list: "64K..4M"
// powers of two, or "64K,1M"). Throws std::invalid_argument naming the option.
std::vector<std::uint64_t> parse_proact_chunks(const std::string& text);

// The cache key of an app's run on `gpus` GPUs: app "<app>:<gpus>gpu", size the app's key size
// (ProactChunkUse::key_size: the bytes it publishes).
proact::CacheKey bench_cache_key(const std::string& machine, const std::string& app, int gpus,
                                   std::uint64_t key_size);
std::string describe(const proact::CacheKey& k);  // "(machine, app, size)"

// What the cache gives an app's proact run: a memcpy entry the memcpy agent, an inline entry the
// inline agent (bytes 0 both); a copy_engine entry copy engines with its chunk; a missing entry, or
// an entry choosing an agent the apps do not implement (persistent, device_launch: a `gpsm proact`
// synthetic choice), copy engines with the app's default chunk (bytes 0). The source says what was
// chosen, from which file and key, and why.
ProactChunk chunk_from_cache(const proact::TuneCache& cache, const std::string& file, const proact::CacheKey& key);

// The agent a proact run asked for `asked` runs: memcpy and inline_store as asked, any other
// (copy_engine, and the agents the apps do not implement) copy_engine.
proact::Agent proact_agent_used(proact::Agent asked);
// The paradigm whose exchange an app builds its run with: `requested` unless it is proact; proact
// with the memcpy agent: memcpy; with inline_store: p2p_inline; else proact (copy engines).
Paradigm proact_runs_as(Paradigm requested, proact::Agent asked);
// The timing text's note on a proact run that executed another paradigm's exchange ("; ..."),
// else empty.
std::string proact_agent_note(Paradigm requested, proact::Agent asked);
// proact: RunRequest::proact_chunk asked with the key size ({} when it is empty: copy engines, the
// app's default chunk); other paradigms: {} (not asked).
ProactChunk ask_proact_chunk(const RunRequest& req, std::uint64_t key_size);

// The source of a chunk the decomposition fixes (jacobi2d: what = "halo row"; heat3d: "halo
// plane"): "chunk fixed by the decomposition: one <what> of N bytes".
std::string fixed_chunk_source(const std::string& what, std::uint64_t bytes);
// What a proact run of an app whose chunk the decomposition fixes used, asked `asked`: the agent
// (proact_agent_used, by name), requested = asked.bytes (not applied), key_size; copy engines:
// chunk_bytes = `bytes`, source = asked.source (when given) then fixed_chunk_source; another agent:
// chunk_bytes 0 (no chunks), source = asked.source.
ProactChunkUse fixed_chunk_use(const ProactChunk& asked, const std::string& what, std::uint64_t bytes,
                               std::uint64_t key_size);

// The table label of one point of a --proact-tune sweep: "proact@<size>" (e.g. proact@256K).
std::string sweep_label(std::uint64_t chunk_bytes);

// One --proact-tune decision, for one (app, problem, GPU count).
struct TuneSetup {
  std::string machine, app;
  int gpus = 0;
  bool chunk_is_choice = false;  // App::proact_chunk_is_choice()
  double margin = 0.03;
  std::string created, gpsm_commit;
};
struct TuneDecision {
  std::optional<proact::CacheEntry> entry;  // none: nothing to record (line says why)
  std::string line;                           // one line for stdout: the decision, or why there is none
};
// From the runs at s.gpus (others ignored): a SweepRecord per ok run (time: the median seconds per
// iteration) of memcpy (Agent::memcpy), p2p_inline (Agent::inline_store, chunk 0, threads 0) and
// proact that ran copy engines (ProactChunkUse::agent "copy_engine"; Agent::copy_engine, threads
// 0, chunk: apps whose chunk is a choice its requested size (else its chunk as built), fixed-chunk
// apps their one chunk as built), chosen by proact::choose_config(records, s.margin). A proact
// run that ran another agent (a cache chose it) is skipped: it repeats that agent's own paradigm,
// whose run is the record. Fixed-chunk apps: a copy_engine choice's why ends with the run's
// source. No entry without an ok copy-engine proact run, or when it reports key size 0 (or, chunk
// fixed, chunk 0). The key's size is that run's key_size.
TuneDecision tune_decision(const TuneSetup& s, const std::vector<RunRecord>& runs);

}  // namespace gpsm::apps
