#include "proact/proact_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"
#include "gpsm/gps/settings.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "proact/chunk_math.hpp"
#include "common/split.hpp"

namespace gpsm::proact {

const char* pattern_name(Pattern p) { return p == Pattern::one_to_all ? "one_to_all" : "all_to_all"; }

Pattern parse_pattern(const std::string& s) {
  if (s == "one_to_all") return Pattern::one_to_all;
  if (s == "all_to_all") return Pattern::all_to_all;
  throw Error("gpsm proact: unknown --pattern '" + s + "'; use one_to_all or all_to_all");
}

namespace {

std::uint64_t size_of(const std::string& s, const std::string& what) {
  try {
    return gpsm::parse_size(s);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{} '{}' is not a size ({}); write e.g. 4K, 64K, 1M", what, s, e.what()));
  }
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

std::vector<std::uint64_t> parse_chunk_list(const std::string& s, const std::string& option) {
  std::vector<std::uint64_t> out;
  const auto dots = s.find("..");
  if (dots != std::string::npos) {
    const std::uint64_t lo = size_of(s.substr(0, dots), option + " lower bound");
    const std::uint64_t hi = size_of(s.substr(dots + 2), option + " upper bound");
    if (lo == 0 || (lo & (lo - 1)) || (hi & (hi - 1)) || hi < lo)
      throw Error(fmt::format("{} {}: a range needs powers of two, low <= high (e.g. 4K..16M)", option, s));
    for (std::uint64_t c = lo; c <= hi; c *= 2) out.push_back(c);
    return out;
  }
  for (const auto& t : split_fields(s)) {
    if (t.empty()) throw Error(option + " '" + s + "' has an empty entry; write e.g. 64K,1M or 4K..16M");
    const std::uint64_t v = size_of(t, option + " entry");
    if (v == 0) throw Error(option + " '" + s + "': a chunk of 0 bytes");
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int> parse_int_list(const std::string& s, const char* what) {
  std::vector<int> out;
  for (const auto& t : split_fields(s)) {
    std::size_t pos = 0;
    long v = -1;
    try {
      v = std::stol(t, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (t.empty() || pos != t.size() || v <= 0 || v > 1 << 20)
      throw Error(fmt::format("gpsm proact: {} entry '{}' in '{}' is not a positive integer", what, t, s));
    if (std::find(out.begin(), out.end(), static_cast<int>(v)) == out.end()) out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<Slice> producer_slices(const ProactConfig& c) {
  const auto n = static_cast<std::uint64_t>(c.devices.size());
  std::vector<Slice> out(n);
  if (c.pattern == Pattern::one_to_all) {
    out[0] = {0, c.bytes};
  } else {
    for (std::uint64_t r = 0; r < n; ++r) out[r] = {r * (c.bytes / n), c.bytes / n};
  }
  return out;
}

std::uint64_t useful_bytes(const ProactConfig& c) {
  std::uint64_t u = 0;
  for (const auto& s : producer_slices(c)) u += s.bytes * (c.devices.size() - 1);
  return u;
}

std::uint64_t ce_ops_per_stream(const ProactConfig& c, std::uint64_t chunk_bytes) {
  std::uint64_t most = 0;
  for (const auto& s : producer_slices(c))
    if (s.bytes) most = std::max(most, ceil_div(s.bytes, chunk_bytes));
  return 2 * ceil_div(most, static_cast<std::uint64_t>(std::max(1, c.ce_streams)));
}

void validate(const ProactConfig& c) {
  const auto n = c.devices.size();
  if (n < 2)
    throw Error(fmt::format("gpsm proact: {} GPU(s) selected; the benchmark ships data between GPUs: use --gpus with "
                            "2 or more",
                            n));
  if (n > static_cast<std::size_t>(gps::kMaxDevices))
    throw Error(fmt::format("gpsm proact: {} GPUs selected; at most {}", n, gps::kMaxDevices));
  if (std::set<int>(c.devices.begin(), c.devices.end()).size() != n)
    throw Error("gpsm proact: a GPU is listed twice in --gpus");
  const std::uint64_t unit = c.pattern == Pattern::all_to_all ? kBlockBytes * n : kBlockBytes;
  if (c.bytes == 0 || c.bytes % unit)
    throw Error(fmt::format("gpsm proact: --size {} B is not a positive multiple of {} B ({} B per producer block{})",
                            c.bytes, unit, kBlockBytes, c.pattern == Pattern::all_to_all ? " x GPUs" : ""));
  if (c.agents.empty()) throw Error("gpsm proact: no agent selected; use --agents with at least one");
  bool any_chunked = false, any_threads = false;
  for (Agent a : c.agents) {
    any_chunked |= chunked(a);
    any_threads |= uses_threads(a);
  }
  std::uint64_t slice = 0;
  for (const auto& s : producer_slices(c)) slice = std::max(slice, s.bytes);
  if (any_chunked && c.chunks.empty()) throw Error("gpsm proact: no chunk size; use --chunks (e.g. 4K..16M)");
  for (std::uint64_t ch : c.chunks)
    if (ch < kBlockBytes || ch % kBlockBytes || ch > slice)
      throw Error(fmt::format("gpsm proact: chunk size {} B: chunks are multiples of {} B (a producer block) and at "
                              "most a producer's {} B",
                              ch, kBlockBytes, slice));
  if (any_threads && c.threads.empty()) throw Error("gpsm proact: no transfer thread count; use --threads (e.g. 256,1024)");
  for (int t : c.threads)
    if (t < 32 || t % 32 || t > 65536)
      throw Error(fmt::format("gpsm proact: --threads {}: transfer threads come in warps: 32..65536, a multiple of 32",
                              t));
  if (c.reps < 5) throw Error(fmt::format("gpsm proact: --reps {}: reported figures need a median of >= 5", c.reps));
  if (c.warmup < 0) throw Error("gpsm proact: --warmup must be >= 0");
  if (!(c.compute_ratio > 0) || c.compute_ratio > 100)
    throw Error(fmt::format("gpsm proact: --compute-ratio {} outside (0, 100]", c.compute_ratio));
  if (c.ce_streams < 1 || c.ce_streams > 16) throw Error("gpsm proact: --ce-streams must be 1..16");
  if (c.ce_max_ops < 2) throw Error("gpsm proact: --ce-max-ops must be >= 2 (a wait and a copy)");
  if (c.wait_timeout_ms == 0) throw Error("gpsm proact: the wait timeout must be > 0 ms");
  if (c.wait_timeout_ms > gps::kMaxWaitTimeoutMs)
    throw Error(fmt::format("gpsm proact: --wait-timeout-ms {}: more than a day (at most {} ms); the bound is a guard "
                            "against a hang, use e.g. 60000 for a minute",
                            c.wait_timeout_ms, gps::kMaxWaitTimeoutMs));
  if (c.force_ce_proxy && !c.allow_ce_proxy)
    throw Error("gpsm proact: --ce-proxy and --no-ce-proxy contradict each other; give one");
}

double median_of(const std::vector<double>& v) { return v.empty() ? kNaN : scope::summarize(v).median; }

namespace {
const ConfigResult* memcpy_result(const ProactRun& r) {
  for (const auto& c : r.results)
    if (c.agent == Agent::memcpy && c.status == "ok") return &c;
  return nullptr;
}
}  // namespace

double speedup_over_memcpy(const ProactRun& r, const ConfigResult& c) {
  const ConfigResult* m = memcpy_result(r);
  if (m == nullptr || c.status != "ok") return kNaN;
  return median_of(m->total_s) / median_of(c.total_s);
}

double overlap_fraction(const ProactRun& r, const ConfigResult& c) {
  if (c.status != "ok") return kNaN;
  const double transfer = median_of(r.base.transfer_s);
  return 1.0 - (median_of(c.total_s) - median_of(r.base.compute_s)) / transfer;
}

double tracking_slowdown(const ProactRun& r, std::uint64_t chunk_bytes) {
  for (const auto& [ch, v] : r.base.tracked_s)
    if (ch == chunk_bytes) return median_of(v) / median_of(r.base.compute_s) - 1.0;
  return kNaN;
}

std::vector<SweepRecord> sweep_records(const ProactRun& r) {
  std::vector<SweepRecord> out;
  for (const auto& c : r.results)
    if (c.status == "ok") out.push_back({c.agent, c.chunk_bytes, c.threads, median_of(c.total_s)});
  return out;
}

std::string render_table(const ProactRun& r) {
  std::string s;
  const double compute = median_of(r.base.compute_s), transfer = median_of(r.base.transfer_s);
  s += fmt::format("{} on {} GPUs, {} per producer, work {} iterations/word: compute {:.1f} us, transfer alone {:.1f} "
                   "us (ratio {:.2f})\n",
                   pattern_name(r.cfg.pattern), r.cfg.devices.size(), gpsm::format_size(producer_slices(r.cfg)[0].bytes),
                   r.base.work, compute * 1e6, transfer * 1e6, compute / transfer);
  if (!r.ce_support.empty()) s += "copy_engine: " + r.ce_support + "\n";
  s += fmt::format("{:<14} {:>9} {:>7} {:>11} {:>11} {:>11} {:>10} {:>8} {:>8} {:>9}  {}\n", "agent", "chunk", "threads",
                   "median us", "min us", "max us", "tail us", "speedup", "overlap", "track+%", "note");
  for (const auto& c : r.results) {
    const std::string chunk = chunked(c.agent) ? gpsm::format_size(c.chunk_bytes) : "-";
    const std::string thr = uses_threads(c.agent) ? std::to_string(c.threads) : "-";
    if (c.status != "ok") {
      s += fmt::format("{:<14} {:>9} {:>7} {:>11}  {}\n", agent_name(c.agent), chunk, thr, c.status, c.reason);
      continue;
    }
    const auto tot = scope::summarize(c.total_s);
    const double slow = chunked(c.agent) ? tracking_slowdown(r, c.chunk_bytes) : kNaN;
    s += fmt::format("{:<14} {:>9} {:>7} {:>11.1f} {:>11.1f} {:>11.1f} {:>10.1f} {:>7.2f}x {:>7.0f}% {:>9}  {}\n",
                     agent_name(c.agent), chunk, thr, tot.median * 1e6, tot.min * 1e6, tot.max * 1e6,
                     median_of(c.tail_s) * 1e6, speedup_over_memcpy(r, c), overlap_fraction(r, c) * 100,
                     std::isnan(slow) ? std::string("-") : fmt::format("{:.1f}", slow * 100), c.mechanism);
  }
  return s;
}

namespace {

nlohmann::json point_json(double x, double bytes, const std::vector<double>& t) {
  const auto p = scope::make_point(x, bytes, t, "us", true);
  return {{"x", p.x},           {"bytes", p.bytes},         {"time_s", p.time_s}, {"median", p.value.median},
          {"min", p.value.min}, {"max", p.value.max},       {"verified", true}};
}

nlohmann::json test_json(const std::string& name, const std::string& desc, const std::string& x) {
  return {{"name", name},   {"group", "proact"}, {"description", desc},
          {"unit", "us"},   {"x", x},            {"status", "ok"},
          {"series", nlohmann::json::array()}};
}

}  // namespace

nlohmann::json proact_document(const ProactMeta& meta, const ProactRun& run, const topo::Topology& topo) {
  nlohmann::json j = scope::results_document(meta, topo, {}, model::MachineModel{});
  j["tool"] = "proact";
  j.erase("model");
  const auto& cfg = run.cfg;
  const double useful = static_cast<double>(useful_bytes(cfg));
  std::string gpus;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) gpus += (i ? ",gpu" : "gpu") + std::to_string(cfg.devices[i]);
  const std::map<std::string, std::string> common = {{"pattern", pattern_name(cfg.pattern)},
                                                     {"gpus", gpus},
                                                     {"array_bytes", std::to_string(cfg.bytes)},
                                                     {"useful_bytes", std::to_string(useful_bytes(cfg))},
                                                     {"work", std::to_string(run.base.work)}};

  // baselines: one point per series (x "none")
  auto base = test_json("proact_baselines",
                        "Synthetic producer alone (compute), its copies alone (transfer), producer then bulk copies "
                        "(memcpy) and inline peer stores",
                        "none");
  auto add_flat = [&](const std::string& label, const std::vector<double>& t, const std::string& timing) {
    if (t.empty()) return;
    auto params = common;
    params["timing"] = timing;
    base["series"].push_back({{"label", label}, {"params", params}, {"points", {point_json(0, useful, t)}}});
  };
  add_flat("compute", run.base.compute_s, "producer kernel alone, no tracking, no transfers");
  add_flat("transfer", run.base.transfer_s, "cudaMemcpyPeerAsync of every slice to every destination, alone");

  auto sweep = test_json("proact_sweep",
                         "End-to-end time (producer start to last chunk in every destination) per agent, chunk size "
                         "and transfer threads",
                         "chunk_bytes");
  nlohmann::json skipped = nlohmann::json::array(), failed = nlohmann::json::array();
  std::map<std::string, std::size_t> series_index;
  for (const auto& c : run.results) {
    const nlohmann::json id = {{"agent", agent_name(c.agent)}, {"chunk_bytes", c.chunk_bytes}, {"threads", c.threads}};
    if (c.status != "ok") {
      auto e = id;
      e["reason"] = c.reason;
      (c.status == "failed" ? failed : skipped).push_back(e);
      continue;
    }
    if (!chunked(c.agent)) {
      auto params = common;
      params["agent"] = agent_name(c.agent);
      params["timing"] = "cuda events: producer start -> last copy done (on the timing stream of rank 0)";
      auto pj = point_json(0, useful, c.total_s);
      pj["tail_s"] = c.tail_s;
      pj["speedup_vs_memcpy"] = speedup_over_memcpy(run, c);
      pj["overlap_fraction"] = overlap_fraction(run, c);
      pj["reps_verified"] = c.reps_verified;
      base["series"].push_back({{"label", agent_name(c.agent)}, {"params", params}, {"points", {pj}}});
      continue;
    }
    const std::string label =
        uses_threads(c.agent) ? fmt::format("{}/{}t", agent_name(c.agent), c.threads) : agent_name(c.agent);
    if (!series_index.count(label)) {
      auto params = common;
      params["agent"] = agent_name(c.agent);
      params["threads"] = std::to_string(c.threads);
      params["mechanism"] = c.mechanism;
      params["timing"] = "cuda events: producer start -> last chunk delivered to every destination";
      series_index[label] = sweep["series"].size();
      sweep["series"].push_back({{"label", label}, {"params", params}, {"points", nlohmann::json::array()}});
    }
    auto pj = point_json(static_cast<double>(c.chunk_bytes), useful, c.total_s);
    pj["tail_s"] = c.tail_s;
    pj["tail_median_s"] = median_of(c.tail_s);
    pj["speedup_vs_memcpy"] = speedup_over_memcpy(run, c);
    pj["overlap_fraction"] = overlap_fraction(run, c);
    pj["tracking_slowdown"] = tracking_slowdown(run, c.chunk_bytes);
    pj["reps_verified"] = c.reps_verified;
    sweep["series"][series_index[label]]["points"].push_back(pj);
  }
  for (auto& sr : sweep["series"]) {  // ascending chunk size whatever order the sweep ran in
    auto& pts = sr["points"];
    std::sort(pts.begin(), pts.end(),
              [](const nlohmann::json& a, const nlohmann::json& b) { return a.at("x").get<double>() < b.at("x").get<double>(); });
  }
  if (!skipped.empty()) sweep["skipped"] = skipped;
  if (!failed.empty()) {
    sweep["failed"] = failed;
    sweep["status"] = "failed";
    sweep["reason"] = fmt::format("{} configuration(s) failed (see failed)", failed.size());
  }
  if (sweep["series"].empty() && failed.empty()) sweep["status"] = "waived", sweep["reason"] = "no chunked agent ran";

  auto track = test_json("proact_tracking",
                         "Producer with readiness counters (one atomic per block, flag per chunk), no transfers, per "
                         "chunk size; compare with proact_baselines compute",
                         "chunk_bytes");
  if (!run.base.tracked_s.empty()) {
    auto params = common;
    params["compute_median_s"] = fmt::format("{:.9g}", median_of(run.base.compute_s));
    params["timing"] = "cuda events: producer kernel with tracking";
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& [ch, t] : run.base.tracked_s) {
      auto pj = point_json(static_cast<double>(ch), useful, t);
      pj["slowdown"] = tracking_slowdown(run, ch);
      pts.push_back(pj);
    }
    track["series"].push_back({{"label", "tracked"}, {"params", params}, {"points", pts}});
  } else {
    track["status"] = "waived";
    track["reason"] = "no chunked agent selected";
  }
  j["tests"] = {base, sweep, track};

  nlohmann::json agents = nlohmann::json::array();
  for (Agent a : cfg.agents) agents.push_back(agent_name(a));
  j["options"] = {{"devices", cfg.devices},
                  {"size", cfg.bytes},
                  {"pattern", pattern_name(cfg.pattern)},
                  {"agents", agents},
                  {"chunks", cfg.chunks},
                  {"threads", cfg.threads},
                  {"reps", cfg.reps},
                  {"warmup", cfg.warmup},
                  {"seed", cfg.seed},
                  {"work", run.base.work},
                  {"work_calibrated", cfg.work == 0},
                  {"compute_ratio", cfg.compute_ratio},
                  {"block_bytes", kBlockBytes},
                  {"ce_streams", cfg.ce_streams},
                  {"ce_max_ops", cfg.ce_max_ops},
                  {"ce_support", run.ce_support},
                  {"ce_proxy_forced", cfg.force_ce_proxy},
                  {"timing", "cuda_events_gate_to_last_delivery"}};
  return j;
}

}  // namespace gpsm::proact
