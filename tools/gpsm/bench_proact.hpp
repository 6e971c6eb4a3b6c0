#pragma once
// `gpsm bench`'s --proact-chunk / --proact-cache / --proact-tune (docs/proact.md, "In gpsm bench"):
// checked before any GPU is looked for, then asked per run for the chunk request and per
// (problem, GPU count) for the tuning decision. The logic is apps/harness/proact_bench.hpp's.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "apps/harness/app.hpp"
#include "apps/harness/bench_report.hpp"
#include "commands.hpp"
#include "proact/autotune.hpp"

namespace gpsm::cli {

class BenchProact {
 public:
  // Throws std::invalid_argument for bad or conflicting options, gpsm::Error for an unreadable
  // or invalid cache file (the one to read, or the one --proact-tune would extend).
  explicit BenchProact(const BenchArgs& a);

  bool any() const { return chunk_ > 0 || !cache_path_.empty() || tuning(); }
  bool tuning() const { return !tune_path_.empty(); }
  // --proact-tune needs memcpy (the memcpy agent), proact (copy engines) and, when one of `apps`
  // has it, p2p_inline (the inline agent): added when missing, said on stderr.
  void require_paradigms(std::vector<apps::Paradigm>& ps, const std::vector<apps::App*>& apps) const;
  void set_machine(const std::string& machine) { machine_ = machine; }

  // The proact runs of (app, GPU count): one per sweep size when tuning an app whose chunk is a
  // choice on more than one GPU; else one run (point 0: the chunk left to configure()).
  std::vector<std::uint64_t> points(const apps::App& app, apps::Paradigm p, int gpus) const;
  std::string label(std::uint64_t point) const;  // the table label of a sweep point ("" for 0)
  // Sets req.proact_chunk for one run: the sweep point, --proact-chunk, or the cache lookup.
  void configure(apps::RunRequest& req, const apps::App& app, int gpus, std::uint64_t point) const;

  // After every paradigm of (problem, GPU count) ran: the tuning decision, one line on stdout, the
  // entry saved into the --proact-tune file at once (a later failure keeps it).
  void decide(const apps::App& app, int gpus, const std::vector<apps::RunRecord>& records);
  // The end of a tuning invocation: the file's Table 2.2-style table (empty when not tuning).
  std::string summary() const;
  // The options as recorded in the results file's "options".
  void record_options(nlohmann::json& options) const;

 private:
  std::uint64_t chunk_ = 0;
  std::string chunk_text_, cache_path_, tune_path_;
  std::vector<std::uint64_t> sweep_;
  double margin_ = 0.03;
  proact::TuneCache cache_;  // --proact-cache's, or the --proact-tune file being extended
  std::string machine_;
  int decided_ = 0;
};

}  // namespace gpsm::cli
