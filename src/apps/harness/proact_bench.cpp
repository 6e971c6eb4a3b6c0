#include "apps/harness/proact_bench.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "scope/results.hpp"
#include "scope/stats.hpp"
#include "proact/proact_plan.hpp"

namespace gpsm::apps {

namespace {

std::string short_size(std::uint64_t bytes) {
  std::string s = gpsm::format_size(bytes);  // "64KiB", "1MiB", "1000B"
  if (s.size() > 3 && s.compare(s.size() - 2, 2, "iB") == 0) s.erase(s.size() - 2);
  return s;
}

double median_s(const RunOutcome& o) { return scope::summarize(o.sec_per_iter).median; }

bool ok_run(const RunRecord& r) { return r.out.status == RunStatus::ok && !r.out.sec_per_iter.empty(); }

}  // namespace

std::uint64_t parse_proact_chunk(const std::string& text) {
  try {
    return gpsm::parse_size(text);
  } catch (const std::exception& e) {
    throw std::invalid_argument("gpsm bench: --proact-chunk '" + text + "' is not a chunk size (" + e.what() +
                                "); write e.g. 65536, 256K or 1M");
  }
}

std::vector<std::uint64_t> parse_proact_chunks(const std::string& text) {
  try {
    return proact::parse_chunk_list(text, "gpsm bench: --proact-chunks");
  } catch (const gpsm::Error& e) {
    // the bench reports bad arguments as std::invalid_argument (before any GPU is looked for)
    throw std::invalid_argument(e.what());
  }
}

proact::CacheKey bench_cache_key(const std::string& machine, const std::string& app, int gpus,
                                   std::uint64_t key_size) {
  proact::CacheKey k;
  k.machine = machine;
  k.app = fmt::format("{}:{}gpu", app, gpus);
  k.size = key_size;
  return k;
}

std::string describe(const proact::CacheKey& k) { return fmt::format("({}, {}, {})", k.machine, k.app, k.size); }

ProactChunk chunk_from_cache(const proact::TuneCache& cache, const std::string& file, const proact::CacheKey& key) {
  using proact::Agent;
  const proact::CacheEntry* e = cache.find(key);
  if (e == nullptr)
    return {0, fmt::format("no entry for key {} in {}: the copy_engine agent with the app's default chunk",
                           describe(key), file)};
  switch (e->choice.agent) {
    case Agent::copy_engine:
      return {e->choice.chunk_bytes,
              fmt::format("the copy_engine agent, chunk {} B, from {} (key {})", e->choice.chunk_bytes, file,
                          describe(key))};
    case Agent::memcpy:
    case Agent::inline_store: {
      const Agent a = e->choice.agent;
      return {0,
              fmt::format("the {} agent from {} (key {}: {}): the app's {} exchange ({})", proact::agent_name(a), file,
                          describe(key), e->choice.why, paradigm_name(proact_runs_as(Paradigm::proact, a)),
                          a == Agent::memcpy ? "bulk copies after the kernel" : "peer stores during the kernel"),
              a};
    }
    default:
      // A `gpsm proact` synthetic choice stored under this key: the apps' proact runs cannot follow
      // it, and a chunk tuned for another mechanism says nothing about copy engines.
      return {0, fmt::format("{} (key {}) chose the {} agent ({}); the apps do not implement it, so this run uses "
                             "the copy_engine agent with the app's default chunk",
                             file, describe(key), proact::agent_name(e->choice.agent), e->choice.why)};
  }
}

proact::Agent proact_agent_used(proact::Agent asked) {
  using proact::Agent;
  return asked == Agent::memcpy || asked == Agent::inline_store ? asked : Agent::copy_engine;
}

Paradigm proact_runs_as(Paradigm requested, proact::Agent asked) {
  if (requested != Paradigm::proact) return requested;
  switch (proact_agent_used(asked)) {
    case proact::Agent::memcpy: return Paradigm::memcpy;
    case proact::Agent::inline_store: return Paradigm::p2p_inline;
    default: return Paradigm::proact;
  }
}

std::string proact_agent_note(Paradigm requested, proact::Agent asked) {
  const Paradigm ran = proact_runs_as(requested, asked);
  if (requested != Paradigm::proact || ran == Paradigm::proact) return "";
  return fmt::format("; proact ran the {} agent: the {} paradigm's exchange", proact::agent_name(proact_agent_used(asked)),
                     paradigm_name(ran));
}

ProactChunk ask_proact_chunk(const RunRequest& req, std::uint64_t key_size) {
  if (req.paradigm != Paradigm::proact || !req.proact_chunk) return {};
  return req.proact_chunk(key_size);
}

std::string fixed_chunk_source(const std::string& what, std::uint64_t bytes) {
  return fmt::format("chunk fixed by the decomposition: one {} of {} bytes", what, bytes);
}

ProactChunkUse fixed_chunk_use(const ProactChunk& asked, const std::string& what, std::uint64_t bytes,
                               std::uint64_t key_size) {
  ProactChunkUse u;
  const proact::Agent used = proact_agent_used(asked.agent);
  u.agent = proact::agent_name(used);
  u.requested = asked.bytes;
  u.key_size = key_size;
  if (used != proact::Agent::copy_engine) {
    u.source = asked.source;
    return u;
  }
  u.chunk_bytes = bytes;
  u.source = (asked.source.empty() ? "" : asked.source + "; ") + fixed_chunk_source(what, bytes);
  return u;
}

std::string sweep_label(std::uint64_t chunk_bytes) { return "proact@" + short_size(chunk_bytes); }

TuneDecision tune_decision(const TuneSetup& s, const std::vector<RunRecord>& runs) {
  using proact::Agent;
  TuneDecision d;
  const std::string head = fmt::format("proact-tune: {} on {} GPUs", s.app, s.gpus);
  std::vector<proact::SweepRecord> records;
  const RunRecord* first_proact = nullptr;  // the first ok proact run that ran copy engines
  int proact_runs = 0, other_agent = 0;
  std::string proact_reason;  // the first proact run's, when none succeeded
  for (const RunRecord& r : runs) {
    if (r.gpus != s.gpus ||
        (r.paradigm != Paradigm::proact && r.paradigm != Paradigm::memcpy && r.paradigm != Paradigm::p2p_inline))
      continue;
    if (r.paradigm == Paradigm::proact && ++proact_runs == 1) proact_reason = r.out.reason;
    if (!ok_run(r)) continue;
    proact::SweepRecord x;
    x.time_s = median_s(r.out);
    if (r.paradigm == Paradigm::memcpy) {
      x.agent = Agent::memcpy;
    } else if (r.paradigm == Paradigm::p2p_inline) {
      x.agent = Agent::inline_store;
    } else {
      const ProactChunkUse& u = r.out.proact;
      if (u.agent != proact::agent_name(Agent::copy_engine)) {  // ran memcpy or inline: that paradigm's record
        ++other_agent;
        continue;
      }
      if (first_proact == nullptr) first_proact = &r;
      x.agent = Agent::copy_engine;
      x.chunk_bytes = s.chunk_is_choice && u.requested != 0 ? u.requested : u.chunk_bytes;
    }
    records.push_back(x);
  }
  if (first_proact == nullptr) {
    std::string why;
    if (proact_runs == 0)
      why = "no proact run";
    else if (other_agent > 0)
      why = fmt::format("none of {} proact run(s) ran copy engines ({} ran the agent a cache chose)", proact_runs,
                        other_agent);
    else
      why = fmt::format("none of {} proact run(s) succeeded (first: {})", proact_runs,
                        proact_reason.empty() ? "no timed rep" : proact_reason);
    d.line = head + ": no entry: " + why;
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
  proact::CacheEntry e;
  e.key = bench_cache_key(s.machine, s.app, s.gpus, use.key_size);
  e.created = s.created;
  e.gpsm_commit = s.gpsm_commit;
  e.choice = proact::choose_config(records, s.margin);
  e.margin = s.margin;
  e.records = static_cast<int>(records.size());
  // The decomposition fixes the chunk: nothing was swept, and the why says so.
  if (!s.chunk_is_choice && e.choice.agent == Agent::copy_engine) e.choice.why += "; " + use.source;
  d.line = fmt::format("proact-tune: {}: {}", describe(e.key), e.choice.why);
  d.entry = e;
  return d;
}

}  // namespace gpsm::apps
