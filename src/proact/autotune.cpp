#include "proact/autotune.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "gpsm/error.hpp"

namespace gpsm::proact {

namespace {

std::string describe(const SweepRecord& r) {
  std::string s = agent_name(r.agent);
  if (chunked(r.agent)) s += fmt::format(" chunk {} B", r.chunk_bytes);
  if (uses_threads(r.agent)) s += fmt::format(" {} threads", r.threads);
  return s;
}

}  // namespace

TuneChoice choose_config(const std::vector<SweepRecord>& records, double margin) {
  if (records.empty()) throw Error("gpsm proact: autotuner given no sweep records; run the sweep first");
  if (!(margin >= 0 && margin < 1))
    throw Error(fmt::format("gpsm proact: autotuner margin {} outside [0, 1)", margin));
  const SweepRecord* best = nullptr;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!(r.time_s > 0) || !std::isfinite(r.time_s))
      throw Error(fmt::format("gpsm proact: sweep record {} ({}) has time {} s; times must be positive and finite",
                              i, describe(r), r.time_s));
    if (best == nullptr || r.time_s < best->time_s) best = &r;
  }
  const double limit = best->time_s * (1 + margin);
  const SweepRecord* pick = nullptr;
  for (const auto& r : records) {
    if (r.time_s > limit) continue;
    if (pick == nullptr) {
      pick = &r;
      continue;
    }
    const auto key = [](const SweepRecord& x) {
      return std::make_tuple(simplicity_rank(x.agent), x.threads, -static_cast<double>(x.chunk_bytes), x.time_s);
    };
    if (key(r) < key(*pick)) pick = &r;
  }
  TuneChoice c;
  c.agent = pick->agent;
  c.chunk_bytes = pick->chunk_bytes;
  c.threads = pick->threads;
  c.time_s = pick->time_s;
  c.best_time_s = best->time_s;
  if (pick == best)
    c.why = fmt::format("{}: fastest of {} configurations ({:.1f} us)", describe(*pick), records.size(),
                        pick->time_s * 1e6);
  else
    c.why = fmt::format("{} ({:.1f} us) is within {:.0f}% of the fastest, {} ({:.1f} us), and simpler", describe(*pick),
                        pick->time_s * 1e6, margin * 100, describe(*best), best->time_s * 1e6);
  return c;
}

ChunkPrune prune_chunk_sizes(const model::PiecewiseFit& path, std::uint64_t total_bytes,
                             const std::vector<std::uint64_t>& chunks, double min_efficiency,
                             double max_tail_fraction) {
  if (total_bytes == 0) throw Error("gpsm proact: chunk pruning for a 0-byte transfer");
  if (chunks.empty()) throw Error("gpsm proact: chunk pruning of an empty chunk list");
  const double t_total = model::predict_seconds(path, static_cast<double>(total_bytes));
  if (!(t_total > 0)) throw Error("gpsm proact: the machine model predicts a non-positive time for the whole transfer");
  const double bw_total = static_cast<double>(total_bytes) / t_total;
  ChunkPrune out;
  struct Scored {
    std::uint64_t c;
    double eff, t;
  };
  std::vector<Scored> scored;
  for (std::uint64_t c : chunks) {
    const double t = model::predict_seconds(path, static_cast<double>(c));
    const double eff = t > 0 ? (static_cast<double>(c) / t) / bw_total : 0;
    scored.push_back({c, eff, t});
    if (eff < min_efficiency)
      out.dropped.push_back(
          {c, fmt::format("initiation-bound: predicted {:.0f}% of the bulk bandwidth (< {:.0f}%)", eff * 100,
                          min_efficiency * 100)});
    else if (t > max_tail_fraction * t_total)
      out.dropped.push_back({c, fmt::format("tail-bound: one chunk takes {:.0f}% of the whole transfer (> {:.0f}%)",
                                            t / t_total * 100, max_tail_fraction * 100)});
    else
      out.kept.push_back(c);
  }
  if (out.kept.empty()) {
    const Scored* keep = nullptr;
    for (const auto& s : scored)
      if (s.t <= max_tail_fraction * t_total && (keep == nullptr || s.eff > keep->eff)) keep = &s;
    if (keep == nullptr) keep = &*std::min_element(scored.begin(), scored.end(),
                                                  [](const Scored& a, const Scored& b) { return a.c < b.c; });
    out.kept.push_back(keep->c);
    out.dropped.erase(std::remove_if(out.dropped.begin(), out.dropped.end(),
                                     [&](const ChunkPrune::Dropped& d) { return d.chunk_bytes == keep->c; }),
                      out.dropped.end());
  }
  return out;
}

const model::PathModel* peer_path(const model::MachineModel& m, int src, int dst) {
  return m.find(fmt::format("gpu{}", src), fmt::format("gpu{}", dst), "ce_peer", "uni");
}

// ---- cache ----

std::string machine_key(const char* device_kind, const std::string& hostname, const std::string& gpu_name) {
  if (device_kind != nullptr && *device_kind != '\0') return device_kind;
  return hostname + ":" + gpu_name;
}

const CacheEntry* TuneCache::find(const CacheKey& k) const {
  for (const auto& e : entries_)
    if (e.key == k) return &e;
  return nullptr;
}

void TuneCache::put(const CacheEntry& e) {
  for (auto& x : entries_)
    if (x.key == e.key) {
      x = e;
      return;
    }
  entries_.push_back(e);
}

nlohmann::json to_json(const TuneCache& c) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : c.entries())
    entries.push_back({{"machine", e.key.machine},
                       {"app", e.key.app},
                       {"size", e.key.size},
                       {"agent", agent_name(e.choice.agent)},
                       {"chunk_bytes", e.choice.chunk_bytes},
                       {"threads", e.choice.threads},
                       {"time_us", e.choice.time_s * 1e6},
                       {"best_time_us", e.choice.best_time_s * 1e6},
                       {"why", e.choice.why},
                       {"margin", e.margin},
                       {"records", e.records},
                       {"created", e.created},
                       {"gpsm_commit", e.gpsm_commit}});
  return {{"schema", kCacheSchema}, {"schema_version", kCacheSchemaVersion}, {"entries", entries}};
}

namespace {

template <class T>
T field(const nlohmann::json& o, const std::string& path, const char* name) {
  if (!o.is_object() || !o.contains(name)) throw Error("gpsm proact cache: " + path + "." + name + ": missing");
  const auto& v = o.at(name);
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) throw Error("");
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) throw Error("");
    } else {
      if (!v.is_number_integer() || (std::is_unsigned_v<T> && v.get<long long>() < 0)) throw Error("");
    }
    return v.get<T>();
  } catch (const std::exception&) {
    throw Error("gpsm proact cache: " + path + "." + name + ": expected " +
                (std::is_same_v<T, std::string> ? "string" : std::is_floating_point_v<T> ? "number" : "integer >= 0") +
                ", got " + v.dump());
  }
}

}  // namespace

TuneCache cache_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("schema") || j.at("schema") != kCacheSchema)
    throw Error(std::string("gpsm proact cache: schema: expected \"") + kCacheSchema + "\"");
  if (!j.contains("schema_version") || j.at("schema_version") != kCacheSchemaVersion)
    throw Error(fmt::format("gpsm proact cache: schema_version: expected {} (this gpsm reads version {})",
                            kCacheSchemaVersion, kCacheSchemaVersion));
  if (!j.contains("entries") || !j.at("entries").is_array())
    throw Error("gpsm proact cache: entries: expected an array");
  TuneCache c;
  const auto& es = j.at("entries");
  for (std::size_t i = 0; i < es.size(); ++i) {
    const auto& o = es[i];
    const std::string p = fmt::format("entries[{}]", i);
    CacheEntry e;
    e.key.machine = field<std::string>(o, p, "machine");
    e.key.app = field<std::string>(o, p, "app");
    e.key.size = field<std::uint64_t>(o, p, "size");
    try {
      e.choice.agent = parse_agent(field<std::string>(o, p, "agent"));
    } catch (const Error& err) {
      throw Error("gpsm proact cache: " + p + ".agent: " + err.what());
    }
    e.choice.chunk_bytes = field<std::uint64_t>(o, p, "chunk_bytes");
    e.choice.threads = field<int>(o, p, "threads");
    e.choice.time_s = field<double>(o, p, "time_us") * 1e-6;
    e.choice.best_time_s = field<double>(o, p, "best_time_us") * 1e-6;
    e.choice.why = field<std::string>(o, p, "why");
    e.margin = field<double>(o, p, "margin");
    e.records = field<int>(o, p, "records");
    e.created = field<std::string>(o, p, "created");
    e.gpsm_commit = field<std::string>(o, p, "gpsm_commit");
    if (chunked(e.choice.agent) && e.choice.chunk_bytes == 0)
      throw Error("gpsm proact cache: " + p + ".chunk_bytes: 0 for the chunked agent " + agent_name(e.choice.agent));
    if (c.find(e.key) != nullptr)
      throw Error("gpsm proact cache: " + p + ": a second entry for machine '" + e.key.machine + "', app '" +
                  e.key.app + "', size " + std::to_string(e.key.size));
    c.put(e);
  }
  return c;
}

TuneCache load_cache(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};  // missing: empty cache (--tune writes a new one)
  std::ifstream f(path);
  if (!f) throw Error("gpsm proact: cannot read the cache file " + path + "; check its permissions");
  nlohmann::json j;
  try {
    f >> j;
  } catch (const std::exception& e) {
    throw Error("gpsm proact: cache file " + path + " is not JSON (" + e.what() + "); fix or delete it");
  }
  try {
    return cache_from_json(j);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (in " + path + "; fix or delete the file)");
  }
}

void save_cache(const TuneCache& c, const std::string& path) {
  write_file_atomic(path, to_json(c).dump(2) + "\n");  // a failed write leaves the previous cache whole
}

}  // namespace gpsm::proact
