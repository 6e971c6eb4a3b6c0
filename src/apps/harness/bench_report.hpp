#pragma once
// What `gpsm bench` prints and writes (plain C++, CPU-tested): per (paradigm, GPU count) the
// median/min/max time per iteration, the speedup over the best single-GPU run of the same
// problem, the percent of opportunity (the `infinite` run at the same GPU count over this one),
// bytes between GPUs and the verification error. Failed runs are listed as failed, untimed.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "apps/harness/app.hpp"

namespace gpsm::apps {

struct RunRecord {
  Paradigm paradigm = Paradigm::single;
  int gpus = 1;
  RunOutcome out;
  std::string label;  // shown (table, series) instead of paradigm_name(paradigm) when set: `gpsm sim`'s
                      // hardware paradigms (gps_hw, finepack, proact) ride on the nearest bench one
};

struct RunSummary {
  Paradigm paradigm = Paradigm::single;
  int gpus = 1;
  std::string label;  // RunRecord::label, or paradigm_name(paradigm)
  RunStatus status = RunStatus::ok;
  std::string reason;
  double median_us = 0, min_us = 0, max_us = 0;  // per iteration (ok runs only)
  std::optional<double> speedup;      // best 1-GPU median / this median
  // The percent of the bound: infinite's median over this one's at the same GPU count, at most 1
  // (bound_ratio holds the uncapped value). A run faster than `infinite` by more than noise
  // (beats_bound) says the elided run was not the bound there; it is flagged in the table and the
  // JSON, and its opportunity shown as 100 %, never above.
  std::optional<double> opportunity;
  std::optional<double> bound_ratio;
  bool beats_bound = false;
  double link_bytes_per_iter = 0;
  double mem_bytes_per_iter = -1;  // RunOutcome::mem_bytes_per_iter (< 0: not known)
  double error = 0, tolerance = 0;
  int iterations = 0;
  std::string proact_agent;  // RunOutcome::proact.agent (proact runs; empty elsewhere)
  std::vector<RunChoice> choices;  // RunOutcome::choices
};

// What counts as noise when a run beats `infinite`: the larger of kBoundNoise and either run's
// spread over its reps ((max - min) / median). Within it a ratio above 1 is the same time.
constexpr double kBoundNoise = 0.02;
bool beats_bound(const RunSummary& run, const RunSummary& infinite);

// One summary per record, in record order. The single-GPU baseline is the fastest ok run at one
// GPU, whatever its paradigm; without one (or without an ok `infinite` run at that GPU count) the
// ratio is absent.
std::vector<RunSummary> summarize(const std::vector<RunRecord>& records);
// The fastest ok run at `gpus` (nullptr when none).
const RunSummary* best_at(const std::vector<RunSummary>& s, int gpus);

// Terminal table: one line per run, failed and unsupported ones with their reason; under an ok
// proact run that ran the memcpy or inline agent, a line saying so; under an ok run whose app
// models its memory traffic, the bytes per iteration and the bandwidth they imply. `title`, when
// given, replaces the parenthesis of the first line (gpsm sim: "simulated on <system>").
std::string format_table(const std::string& app, const Problem& p, const std::vector<RunSummary>& s,
                         const std::string& title = "");

// The `tests[]` entry of a gpsm.results file (tool "bench") for one (app, problem):
// series per paradigm, a point per GPU count (x = gpus, time_s = seconds per iteration of each
// timed rep, value in us), plus bench fields (docs/results-schema.md).
nlohmann::json bench_test_json(const std::string& app, const std::string& description, const Problem& p,
                               const std::vector<RunRecord>& records);

}  // namespace gpsm::apps
