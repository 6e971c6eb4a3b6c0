#include "apps/harness/proact_bench.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "scope/results.hpp"
#include "scope/stats.hpp"
#include "transfer/proact_plan.hpp"

namespace gpsm::apps {

namespace {

std::string short_size(std::uint64_t bytes) {
  std::string s = scope::format_size(bytes);  // "64KiB", "1MiB", "1000B"
  if (s.size() > 3 && s.compare(s.size() - 2, 2, "iB") == 0) s.erase(s.size() - 2);
  return s;
}

double median_s(const RunOutcome& o) { return scope::summarize(o.sec_per_iter).median; }

bool ok_run(const RunRecord& r) { return r.out.status == RunStatus::ok && !r.out.sec_per_iter.empty(); }

}  // namespace

std::uint64_t parse_proact_chunk(const std::string& text) {
  try {
    return scope::parse_size(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument("gpsm bench: --proact-chunk '" + text + "' is not a chunk size (" + e.what() +
                                "); write e.g. 65536, 256K or 1M");
  }
}

std::vector<std::uint64_t> parse_proact_chunks(const std::string& text) {
  try {
    return transfer::parse_chunk_list(text, "gpsm bench: --proact-chunks");
  } catch (const gpsm::Error& e) {
    // the bench reports bad arguments as std::invalid_argument (before any GPU is looked for)
    throw std::invalid_argument(e.what());
  }
}

transfer::CacheKey bench_cache_key(const std::string& machine, const std::string& app, int gpus,
                                   std::uint64_t key_size) {
  transfer::CacheKey k;
  k.machine = machine;
  k.app = fmt::format("{}:{}gpu", app, gpus);
  k.size = key_size;
  return k;
}

std::string describe(const transfer::CacheKey& k) { return fmt::format("({}, {}, {})", k.machine, k.app, k.size); }

ProactChunk chunk_from_cache(const transfer::TuneCache& cache, const std::string& file, const transfer::CacheKey& key) {
  using transfer::Agent;
  const transfer::CacheEntry* e = cache.find(key);
  if (e == nullptr)
    return {0, fmt::format("no entry for key {} in {}: the app's default chunk", describe(key), file)};
  if (e->choice.agent == Agent::copy_engine)
    return {e->choice.chunk_bytes,
            fmt::format("chunk {} B from {} (key {})", e->choice.chunk_bytes, file, describe(key))};
  // memcpy chosen: proact did not beat the bulk copies by more than the margin; another chunked
  // agent: a `gpsm proact` synthetic choice stored under this key. Either way the app's exchange
  // cannot follow it, and a chunk tuned for another mechanism says nothing about copy engines.
  return {0, fmt::format("{} (key {}) chose the {} agent ({}); the apps' proact exchange only implements copy "
                         "engines, so this run uses the app's default chunk",
                         file, describe(key), transfer::agent_name(e->choice.agent), e->choice.why)};
}

std::string fixed_chunk_source(const std::string& what, std::uint64_t bytes) {
  return fmt::format("chunk fixed by the decomposition: one {} of {} bytes", what, bytes);
}

std::string sweep_label(std::uint64_t chunk_bytes) { return "proact@" + short_size(chunk_bytes); }

TuneDecision tune_decision(const TuneSetup& s, const std::vector<RunRecord>& runs) {
  using transfer::Agent;
  TuneDecision d;
  const std::string head = fmt::format("proact-tune: {} on {} GPUs", s.app, s.gpus);
  std::vector<transfer::SweepRecord> records;
  const RunRecord* first_proact = nullptr;
  int proact_runs = 0;
  std::string proact_reason;  // the first proact run's, when none succeeded
  for (const RunRecord& r : runs) {
    if (r.gpus != s.gpus || (r.paradigm != Paradigm::proact && r.paradigm != Paradigm::memcpy)) continue;
    if (r.paradigm == Paradigm::proact && ++proact_runs == 1) proact_reason = r.out.reason;
    if (!ok_run(r)) continue;
    if (r.paradigm == Paradigm::proact && first_proact == nullptr) first_proact = &r;
    transfer::SweepRecord x;
    x.time_s = median_s(r.out);
    if (r.paradigm == Paradigm::memcpy) {
      x.agent = Agent::memcpy;
    } else {
      x.agent = Agent::copy_engine;
      x.chunk_bytes = r.out.proact.requested != 0 ? r.out.proact.requested : r.out.proact.chunk_bytes;
    }
    if (s.chunk_is_choice) records.push_back(x);
  }
  if (first_proact == nullptr) {
    d.line = head + ": no entry: " +
             (proact_runs == 0 ? std::string("no proact run")
                               : fmt::format("none of {} proact run(s) succeeded (first: {})", proact_runs,
                                             proact_reason.empty() ? "no timed rep" : proact_reason));
    return d;
  }
  const ProactChunkUse& use = first_proact->out.proact;
  if (use.key_size == 0) {
    d.line = head + ": no entry: the app did not report the size of its cache key";
    return d;
  }
  if (!s.chunk_is_choice && use.chunk_bytes == 0) {
    d.line = head + ": no entry: the app did not report the chunk its decomposition fixes";
    return d;
  }
  transfer::CacheEntry e;
  e.key = bench_cache_key(s.machine, s.app, s.gpus, use.key_size);
  e.created = s.created;
  e.gpsm_commit = s.gpsm_commit;
  if (s.chunk_is_choice) {
    e.choice = transfer::choose_config(records, s.margin);
    e.margin = s.margin;
    e.records = static_cast<int>(records.size());
  } else {
    // The decomposition fixes the chunk: one measured configuration, recorded as it ran.
    e.choice.agent = Agent::copy_engine;
    e.choice.chunk_bytes = use.chunk_bytes;
    e.choice.threads = 0;
    e.choice.time_s = median_s(first_proact->out);
    e.choice.best_time_s = e.choice.time_s;
    e.choice.why = use.source;
    e.margin = 0;
    e.records = 1;
  }
  d.line = fmt::format("proact-tune: {}: {}", describe(e.key), e.choice.why);
  d.entry = e;
  return d;
}

}  // namespace gpsm::apps
