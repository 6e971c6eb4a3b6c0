#include "apps/harness/bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scope/results.hpp"
#include "scope/stats.hpp"

namespace gpsm::apps {

std::string Problem::label() const {
  if (!graph.empty()) return graph;
  if (!spec.empty()) return spec;
  if (n[1] <= 0) return fmt::format("{}", n[0]);  // 1D (gpsm sim's scatter: elements)
  if (n[2] <= 0) return fmt::format("{}x{}", n[0], n[1]);
  return fmt::format("{}x{}x{}", n[0], n[1], n[2]);
}

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::ok: return "ok";
    case RunStatus::failed: return "failed";
    case RunStatus::unsupported: return "unsupported";
  }
  return "?";
}

std::vector<RunSummary> summarize(const std::vector<RunRecord>& records) {
  std::vector<RunSummary> out;
  for (const RunRecord& r : records) {
    RunSummary s;
    s.paradigm = r.paradigm;
    s.gpus = r.gpus;
    s.label = r.label.empty() ? paradigm_name(r.paradigm) : r.label;
    s.status = r.out.status;
    s.reason = r.out.reason;
    s.link_bytes_per_iter = r.out.link_bytes_per_iter;
    s.mem_bytes_per_iter = r.out.mem_bytes_per_iter;
    s.error = r.out.error;
    s.tolerance = r.out.tolerance;
    s.iterations = r.out.iterations;
    s.proact_agent = r.out.proact.agent;
    if (s.status == RunStatus::ok) {
      if (r.out.sec_per_iter.empty()) {  // an ok run must have been timed
        s.status = RunStatus::failed;
        s.reason = "no timed repetition";
      } else {
        const auto m = scope::summarize(r.out.sec_per_iter);
        s.median_us = m.median * 1e6;
        s.min_us = m.min * 1e6;
        s.max_us = m.max * 1e6;
      }
    }
    out.push_back(s);
  }
  const RunSummary* base = best_at(out, 1);
  // On one GPU no run moves anything between GPUs, so every verified 1-GPU run is a
  // transfer-elided run of its own kernel structure: the bound there is the fastest of them
  // (`infinite` included), and no 1-GPU run can beat it. On more GPUs it is `infinite`'s run.
  const RunSummary* inf1 = nullptr;
  for (const RunSummary& x : out)
    if (x.paradigm == Paradigm::infinite && x.gpus == 1 && x.status == RunStatus::ok) inf1 = &x;
  const RunSummary* bound1 = inf1 != nullptr && base != nullptr && base->median_us < inf1->median_us ? base : inf1;
  for (RunSummary& s : out) {
    if (s.status != RunStatus::ok) continue;
    if (base != nullptr) s.speedup = base->median_us / s.median_us;
    if (s.gpus == 1 && bound1 != nullptr) {
      s.bound_ratio = bound1->median_us / s.median_us;
      s.opportunity = std::min(1.0, *s.bound_ratio);
      continue;
    }
    for (const RunSummary& inf : out)
      if (inf.paradigm == Paradigm::infinite && inf.gpus == s.gpus && inf.status == RunStatus::ok) {
        s.bound_ratio = inf.median_us / s.median_us;
        s.opportunity = std::min(1.0, *s.bound_ratio);
        s.beats_bound = beats_bound(s, inf);
      }
  }
  return out;
}

bool beats_bound(const RunSummary& run, const RunSummary& infinite) {
  if (run.median_us <= 0 || infinite.median_us <= 0) return false;
  const double noise = std::max({kBoundNoise, (infinite.max_us - infinite.min_us) / infinite.median_us,
                                 (run.max_us - run.min_us) / run.median_us});
  return infinite.median_us / run.median_us > 1 + noise;
}

const RunSummary* best_at(const std::vector<RunSummary>& s, int gpus) {
  const RunSummary* best = nullptr;
  for (const RunSummary& x : s)
    if (x.gpus == gpus && x.status == RunStatus::ok && x.paradigm != Paradigm::infinite &&
        (best == nullptr || x.median_us < best->median_us))
      best = &x;
  return best;
}

namespace {
std::string bytes_text(double b) {
  if (b < 0) return "?";  // not known (e.g. page migrations)
  if (b == 0) return "0";
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.2f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}
}  // namespace

std::string format_table(const std::string& app, const Problem& p, const std::vector<RunSummary>& s,
                         const std::string& title) {
  std::string t = title.empty()
                      ? fmt::format("{} {}: time per iteration (median of the timed reps; every run verified against "
                                    "the CPU reference)\n",
                                    app, p.label())
                      : fmt::format("{} {}: {}\n", app, p.label(), title);
  t += fmt::format("  {:<11} {:>4} {:>10} {:>10} {:>10} {:>8} {:>7} {:>11} {:>9}\n", "paradigm", "gpus", "median us",
                   "min us", "max us", "speedup", "opport", "link/iter", "error");
  for (const RunSummary& r : s) {
    if (r.status != RunStatus::ok) {
      t += fmt::format("  {:<11} {:>4} {}: {}\n", r.label, r.gpus,
                       r.status == RunStatus::failed ? "FAILED" : "not run", r.reason);
      continue;
    }
    // error NaN: nothing was checked (a simulated run): shown as '-', never as a passing 0
    t += fmt::format("  {:<11} {:>4} {:>10.2f} {:>10.2f} {:>10.2f} {:>8} {:>7} {:>11} {:>9}\n", r.label, r.gpus, r.median_us, r.min_us, r.max_us, r.speedup ? fmt::format("{:.2f}x", *r.speedup) : "-",
                     r.opportunity ? fmt::format("{:.0f}%{}", 100.0 * *r.opportunity, r.beats_bound ? "!" : "") : "-",
                     bytes_text(r.link_bytes_per_iter), std::isnan(r.error) ? std::string("-") : fmt::format("{:.2e}", r.error));
    // Faster than the bound by more than noise: the elided run was not the bound here (its
    // percent is shown as 100 %, never above).
    if (r.beats_bound)
      t += fmt::format("  {:<11} {:>4} ^ beats infinite ({:.2f} us) by {:.0f} %, beyond the reps' spread: the elided "
                       "run is not this run's bound\n",
                       "", "", r.median_us * *r.bound_ratio, 100.0 * (*r.bound_ratio - 1));
    // Memory-bound apps (cg): the modelled bytes per iteration over the time, all GPUs together.
    if (r.mem_bytes_per_iter >= 0 && r.median_us > 0)
      t += fmt::format("  {:<11} {:>4} ^ memory {} per iteration: {:.0f} GB/s achieved ({:.0f} GB/s per GPU)\n", "", "",
                       bytes_text(r.mem_bytes_per_iter), r.mem_bytes_per_iter / r.median_us * 1e-3,
                       r.mem_bytes_per_iter / r.median_us * 1e-3 / r.gpus);
    // A proact run that executed another paradigm's exchange (the agent a cache chose) says so.
    if (!r.proact_agent.empty() && r.proact_agent != "copy_engine")
      t += fmt::format("  {:<11} {:>4} ^ proact ran the {} agent: the {} paradigm's exchange\n", "", "", r.proact_agent,
                       r.proact_agent == "inline" ? "p2p_inline" : r.proact_agent);
  }
  return t;
}

nlohmann::json bench_test_json(const std::string& app, const std::string& description, const Problem& p,
                               const std::vector<RunRecord>& records) {
  const std::vector<RunSummary> sum = summarize(records);
  scope::TestResult t;
  t.name = "bench_" + app + "_" + p.label();
  t.group = "bench";
  t.description = description;
  t.unit = "us";
  t.x_name = "gpus";
  std::map<std::string, std::size_t> series_of;  // paradigm (label) -> index in t.series
  std::vector<std::pair<std::size_t, std::size_t>> where(records.size(), {SIZE_MAX, SIZE_MAX});
  nlohmann::json failed = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RunRecord& r = records[i];
    if (sum[i].status != RunStatus::ok) {
      (sum[i].status == RunStatus::failed ? failed : skipped)
          .push_back({{"paradigm", sum[i].label}, {"gpus", r.gpus}, {"reason", sum[i].reason}});
      continue;
    }
    const std::string key = sum[i].label;
    if (!series_of.count(key)) {
      series_of[key] = t.series.size();
      scope::Series s;
      s.label = key;
      s.params = {{"app", app}, {"paradigm", key}, {"problem", p.label()},
                  {"timing", r.out.timing}};
      t.series.push_back(s);
    }
    auto& s = t.series[series_of[key]];
    where[i] = {series_of[key], s.points.size()};
    // An elided `infinite` run is timed but its result is not checked: verified false.
    s.points.push_back(scope::make_point(r.gpus, 0, r.out.sec_per_iter, "us", std::isfinite(r.out.tolerance)));
  }
  if (t.series.empty()) {
    t.status = failed.empty() ? scope::Status::waived : scope::Status::failed;
    t.reason = failed.empty() ? "no paradigm ran" : "every run failed";
  } else if (!failed.empty()) {
    t.status = scope::Status::failed;
    t.reason = std::to_string(failed.size()) + " run(s) failed";
  }
  nlohmann::json j = scope::to_json(t);
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (where[i].first == SIZE_MAX) continue;
    auto& pt = j["series"][where[i].first]["points"][where[i].second];
    pt["iterations"] = sum[i].iterations;
    pt["error"] = sum[i].error;
    pt["tolerance"] = sum[i].tolerance;
    if (sum[i].link_bytes_per_iter >= 0) pt["link_bytes_per_iter"] = sum[i].link_bytes_per_iter;
    if (sum[i].mem_bytes_per_iter >= 0) {  // the app's traffic model and the bandwidth it implies (median time)
      pt["mem_bytes_per_iter"] = sum[i].mem_bytes_per_iter;
      pt["mem_GBps"] = sum[i].mem_bytes_per_iter / sum[i].median_us * 1e-3;
    }
    // Bytes normalized to the memcpy run at the same GPU count (GPS paper Fig 10), when both are
    // known.
    for (std::size_t k = 0; k < records.size(); ++k)
      if (sum[k].paradigm == Paradigm::memcpy && sum[k].status == RunStatus::ok && sum[k].gpus == sum[i].gpus &&
          sum[k].link_bytes_per_iter > 0 && sum[i].link_bytes_per_iter >= 0)
        pt["link_bytes_vs_memcpy"] = sum[i].link_bytes_per_iter / sum[k].link_bytes_per_iter;
    if (!records[i].out.subscriber_pages.empty()) pt["subscriber_pages"] = records[i].out.subscriber_pages;
    // The chunk a proact run used and what chose it (an option, the choice cache, a tuning sweep
    // point, the default, or the decomposition), so a result can be traced to its configuration.
    if (const ProactChunkUse& u = records[i].out.proact; u.chunk_bytes > 0 || !u.source.empty())
      pt["proact"] = {{"agent", u.agent},       {"chunk_bytes", u.chunk_bytes}, {"requested", u.requested},
                      {"source", u.source},     {"key_size", u.key_size}};
    if (sum[i].speedup) pt["speedup"] = *sum[i].speedup;
    if (sum[i].opportunity) pt["opportunity"] = *sum[i].opportunity;  // at most 1
    if (sum[i].bound_ratio) pt["bound_ratio"] = *sum[i].bound_ratio;  // uncapped
    if (sum[i].beats_bound) pt["beats_bound"] = true;
    // A run timed differently from its series' first one (the 3D `infinite`: which of its two
    // elided runs was faster, with both medians, differs by GPU count) says so on its point.
    const auto& series_timing = j["series"][where[i].first]["params"]["timing"];
    if (!series_timing.is_string() || series_timing.get<std::string>() != records[i].out.timing)
      pt["timing"] = records[i].out.timing;
  }
  j["app"] = app;
  j["problem"] = {{"label", p.label()}, {"n", {p.n[0], p.n[1], p.n[2]}}, {"iters", p.iters},
                  {"nccheck", p.nccheck}, {"tol", p.tol}, {"seed", p.seed}, {"axis", axis_name(p.axis)}};
  if (!p.graph.empty()) {
    j["problem"]["graph"] = p.graph;
    j["problem"]["balance_nnz"] = p.balance_nnz;
  }
  if (!p.spec.empty()) j["problem"]["spec"] = p.spec;
  if (!failed.empty()) j["failed"] = failed;
  if (!skipped.empty()) j["skipped"] = skipped;
  return j;
}

}  // namespace gpsm::apps
