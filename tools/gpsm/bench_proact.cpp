#include "bench_proact.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/harness/proact_bench.hpp"
#include "gpsm/build_info.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"

namespace gpsm::cli {

namespace {
constexpr const char* kDefaultSweep = "64K..4M";
}

BenchProact::BenchProact(const BenchArgs& a)
    : chunk_text_(a.proact_chunk), cache_path_(a.proact_cache), tune_path_(a.proact_tune), margin_(a.proact_margin) {
  const int given = !a.proact_chunk.empty() + !a.proact_cache.empty() + !a.proact_tune.empty();
  if (given > 1)
    throw std::invalid_argument(
        "gpsm bench: --proact-chunk, --proact-cache and --proact-tune exclude each other (a fixed chunk, the cached "
        "choice, or a sweep that makes the choice)");
  if (!a.proact_chunks.empty() && a.proact_tune.empty())
    throw std::invalid_argument("gpsm bench: --proact-chunks is the sweep of --proact-tune FILE; give that too");
  if (!(a.proact_margin >= 0 && a.proact_margin < 1))
    throw std::invalid_argument(fmt::format("gpsm bench: --proact-margin {} outside [0, 1)", a.proact_margin));
  if (!a.proact_chunk.empty()) chunk_ = apps::parse_proact_chunk(a.proact_chunk);
  if (tuning()) sweep_ = apps::parse_proact_chunks(a.proact_chunks.empty() ? kDefaultSweep : a.proact_chunks);
  // Read (and so validate) the file before any run: a bad one fails now, not after hours of runs.
  const std::string& file = tuning() ? tune_path_ : cache_path_;
  if (!file.empty()) {
    std::error_code ec;
    if (!tuning() && !std::filesystem::exists(file, ec))
      std::cerr << "gpsm bench: --proact-cache " << file
                << " does not exist: every proact run uses copy engines with the app's default chunk\n";
    cache_ = proact::load_cache(file);
  }
}

void BenchProact::require_paradigms(std::vector<apps::Paradigm>& ps, const std::vector<apps::App*>& apps) const {
  if (!tuning()) return;
  const bool inline_store = std::any_of(apps.begin(), apps.end(), [](const apps::App* a) {
    return a->has(apps::Paradigm::p2p_inline);
  });
  for (apps::Paradigm need : {apps::Paradigm::memcpy, apps::Paradigm::p2p_inline, apps::Paradigm::proact})
    if ((need != apps::Paradigm::p2p_inline || inline_store) && std::find(ps.begin(), ps.end(), need) == ps.end()) {
      std::cerr << "gpsm bench: --proact-tune: adding the " << apps::paradigm_name(need)
                << " paradigm (the choice is made between the memcpy agent, the inline agent (p2p_inline) and "
                   "copy engines at each proact chunk size)\n";
      ps.push_back(need);
    }
  std::sort(ps.begin(), ps.end());  // the canonical order parse_paradigms gives
}

std::vector<std::uint64_t> BenchProact::points(const apps::App& app, apps::Paradigm p, int gpus) const {
  if (tuning() && p == apps::Paradigm::proact && app.proact_chunk_is_choice() && gpus > 1) return sweep_;
  return {0};
}

std::string BenchProact::label(std::uint64_t point) const { return point == 0 ? "" : apps::sweep_label(point); }

void BenchProact::configure(apps::RunRequest& req, const apps::App& app, int gpus, std::uint64_t point) const {
  if (req.paradigm != apps::Paradigm::proact) return;
  if (point > 0) {
    req.proact_chunk = [point](std::uint64_t) {
      return apps::ProactChunk{point, fmt::format("--proact-tune sweep point {} B", point)};
    };
  } else if (chunk_ > 0) {
    req.proact_chunk = [c = chunk_, t = chunk_text_](std::uint64_t) {
      return apps::ProactChunk{c, fmt::format("--proact-chunk {} ({} B)", t, c)};
    };
  } else if (!cache_path_.empty()) {
    // The key's size is the app's (known once it has built its problem), so the lookup runs inside.
    req.proact_chunk = [this, name = std::string(app.name()), gpus](std::uint64_t size) {
      return apps::chunk_from_cache(cache_, cache_path_, apps::bench_cache_key(machine_, name, gpus, size));
    };
  }
}

void BenchProact::decide(const apps::App& app, int gpus, const std::vector<apps::RunRecord>& records) {
  if (!tuning()) return;
  if (gpus < 2) {
    std::cout << fmt::format("proact-tune: {} on 1 GPU: nothing moves between GPUs; no entry\n", app.name());
    return;
  }
  apps::TuneSetup s;
  s.machine = machine_;
  s.app = app.name();
  s.gpus = gpus;
  s.chunk_is_choice = app.proact_chunk_is_choice();
  s.margin = margin_;
  s.created = scope::utc_now_iso8601();
  s.gpsm_commit = GPSM_GIT_COMMIT;
  const apps::TuneDecision d = apps::tune_decision(s, records);
  std::cout << d.line << "\n" << std::flush;
  if (!d.entry) return;
  cache_.put(*d.entry);
  proact::save_cache(cache_, tune_path_);
  ++decided_;
}

std::string BenchProact::summary() const {
  if (!tuning()) return "";
  return fmt::format("gpsm bench: --proact-tune: {} decision(s) written to {}\n\n{}\n", decided_, tune_path_,
                     proact::render_cache_table(cache_));
}

void BenchProact::record_options(nlohmann::json& o) const {
  if (chunk_ > 0) o["proact_chunk"] = chunk_;
  if (!cache_path_.empty()) o["proact_cache"] = cache_path_;
  if (tuning()) {
    o["proact_tune"] = tune_path_;
    o["proact_chunks"] = sweep_;
    o["proact_margin"] = margin_;
  }
  if (!machine_.empty() && (tuning() || !cache_path_.empty())) o["proact_machine"] = machine_;
}

}  // namespace gpsm::cli
