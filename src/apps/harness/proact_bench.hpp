#pragma once
// `gpsm bench`'s PROACT options (docs/proact.md, "In gpsm bench"), in plain C++ (CPU-tested):
// the chunk an app's proact exchange is asked to use (--proact-chunk, or a --proact-cache lookup
// by (machine, "<app>:<gpus>gpu", key size)), and how the runs of a --proact-tune sweep become a
// choice-cache entry (transfer::choose_config over memcpy and one proact run per chunk size).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/harness/bench_report.hpp"
#include "transfer/autotune.hpp"

namespace gpsm::apps {

// --proact-chunk: one positive size ("65536", "256K", "1M"). Throws std::invalid_argument
// naming the option.
std::uint64_t parse_proact_chunk(const std::string& text);
// --proact-chunks: the forms of `gpsm proact --chunks` (transfer::parse_chunk_list: "64K..4M"
// powers of two, or "64K,1M"). Throws std::invalid_argument naming the option.
std::vector<std::uint64_t> parse_proact_chunks(const std::string& text);

// The cache key of an app's run on `gpus` GPUs: app "<app>:<gpus>gpu", size the app's key size
// (ProactChunkUse::key_size: the bytes it publishes).
transfer::CacheKey bench_cache_key(const std::string& machine, const std::string& app, int gpus,
                                   std::uint64_t key_size);
std::string describe(const transfer::CacheKey& k);  // "(machine, app, size)"

// The chunk the cache gives an app's proact exchange: a copy_engine entry's chunk; a missing
// entry, or an entry choosing another agent (the apps' exchanges only implement copy engines),
// gives the app's default (bytes 0) with a source saying why.
ProactChunk chunk_from_cache(const transfer::TuneCache& cache, const std::string& file, const transfer::CacheKey& key);

// The source of a chunk the decomposition fixes (jacobi2d: what = "halo row"; the 3D apps would
// say "halo plane"): "chunk fixed by the decomposition: one <what> of N bytes".
std::string fixed_chunk_source(const std::string& what, std::uint64_t bytes);

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
  std::optional<transfer::CacheEntry> entry;  // none: nothing to record (line says why)
  std::string line;                           // one line for stdout: the decision, or why there is none
};
// From the runs at s.gpus (others ignored). Chunk a choice: a SweepRecord per ok run (memcpy:
// Agent::memcpy; proact: Agent::copy_engine, its requested chunk, threads 0; time: the median
// seconds per iteration), chosen by transfer::choose_config(records, s.margin); needs an ok
// proact run. Chunk fixed: the ok proact run alone (records 1, margin 0, best time = its time,
// why = its ProactChunkUse::source); no sweep is made up. Either way the key's size is the proact
// run's key_size (none: no entry).
TuneDecision tune_decision(const TuneSetup& s, const std::vector<RunRecord>& runs);

}  // namespace gpsm::apps
