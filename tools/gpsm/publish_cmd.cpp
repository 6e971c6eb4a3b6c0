// `gpsm publish`: the GPS publish microbenchmark. Arguments are checked before any GPU work;
// then the run (src/publish/publish_bench.cu) with progress on stderr, the tables on stdout and the
// results document (--json).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "publish/publish_bench.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"
#include "scope/cuda_probe.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"

namespace gpsm::cli {

CLI::App* add_publish_command(CLI::App& app, PublishArgs& a) {
  auto* c = app.add_subcommand(
      "publish",
      "GPS publish microbenchmark: every GPU stores its share of one replicated array all GPUs subscribe to; "
      "time until the stores are in every replica, per store pattern and publish mode");
  c->add_option("--devices", a.devices, "Comma-separated CUDA device ids, at least 2 (default: all)");
  c->add_option("--pattern", a.pattern,
                "coalesced (a block per GPU), strided (one word per 128 B line), random (seeded word lists), "
                "or all; a comma-separated list is fine")
      ->capture_default_str();
  c->add_option("--mode", a.mode,
                "inline, combine, bulk, decoupled (gps::PublishMode; decoupled first learns each chunk's store count "
                "from two untimed reps under tracking), local (same stores into a plain per-GPU buffer: the "
                "no-communication bound) or all; a comma-separated list is fine")
      ->capture_default_str();
  c->add_option("--size", a.size, "Array bytes, a multiple of 128 (e.g. 64M, 1G)")->capture_default_str();
  c->add_option("--stores", a.stores, "Stores per GPU of the random pattern (default: array words / GPUs / 4)")
      ->check(kNonNegative);
  c->add_option("--reps", a.reps, "Timed repetitions (>= 5)")->capture_default_str();
  c->add_option("--warmup", a.warmup, "Untimed repetitions before the timed ones")->capture_default_str();
  c->add_option("--seed", a.seed, "Seed of the random word lists and the stored values")
      ->check(kNonNegative)
      ->capture_default_str();
  c->add_option("--bulk-max-copies", a.bulk_max_copies,
                "Skip bulk where one fence would issue more copy-engine copies than this (scattered stores make one "
                "per word; 0: no limit)")
      ->check(kNonNegative)
      ->capture_default_str();
  c->add_option("--json", a.json_path, "Write the results document (schema gpsm.results, tool publish) to FILE");
  return c;
}

int run_publish(const PublishArgs& a, int argc, char** argv) {
  using namespace gpsm::bench;
  PublishConfig cfg;
  cfg.patterns = parse_patterns(a.pattern);
  cfg.modes = parse_modes(a.mode);
  cfg.bytes = gpsm::parse_size(a.size);
  cfg.random_stores = a.stores;
  cfg.reps = a.reps;
  cfg.warmup = a.warmup;
  cfg.seed = a.seed;
  cfg.bulk_max_copies = a.bulk_max_copies;
  validate_options(cfg);  // bad arguments fail here, on any machine
  std::vector<int> asked;
  if (!a.devices.empty()) asked = parse_device_list(a.devices);
  gpsm::check_outputs({{"--json", a.json_path}}, {});  // before any GPU work

  std::string why;
  const int ngpu = gpsm::scope::cuda_device_count(&why);
  require_gpus(ngpu, 2, why, "publish", "the publish benchmark needs 2 or more GPUs with peer access");
  cfg.devices = context_devices(asked, ngpu, "publish");
  if (cfg.devices.size() < 2)
    throw BadInput("gpsm publish: --devices selects 1 GPU; the publish benchmark needs 2 or more (every store goes "
                   "to the other GPUs' replicas)");
  validate_config(cfg);
  begin_work();

  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  std::cerr << "gpsm publish: discovering topology...\n";
  auto topo = gpsm::scope::discover_topology();
  for (int d : cfg.devices)
    for (const auto& g : topo.gpus)
      if (g.index == d) std::cout << fmt::format("GPU {}: {} ({})\n", g.index, g.name, g.pci_bus_id);
  std::cout << fmt::format("devices under test: {}; array {}, {} timed reps after {} warm-up{}, each verified\n\n",
                           fmt::join(cfg.devices, ","), gpsm::format_size(cfg.bytes), cfg.reps, cfg.warmup,
                           cfg.warmup == 1 ? "" : "s")
            << std::flush;

  cfg.progress = [&](const std::string& s) {
    progress_show(fmt::format("{} ({:.0f} s)", s, elapsed()));
  };
  const auto results = gpsm::bench::run_publish(cfg);
  progress_clear();
  cfg.progress = nullptr;

  std::cout << render_table(results) << std::flush;
  int n_ok = 0, n_skipped = 0, n_failed = 0;
  for (const auto& r : results) (r.ok() ? n_ok : r.failed() ? n_failed : n_skipped)++;

  if (!a.json_path.empty()) {
    PublishMeta meta;
    for (int i = 0; i < argc; ++i) meta.command += (i ? " " : "") + std::string(argv[i]);
    meta.created = gpsm::scope::utc_now_iso8601();
    if (const char* k = std::getenv("GPSM_DEVICE_KIND")) meta.device_kind = k;
    meta.hostname = topo.hostname;
    meta.cpu_model = gpsm::scope::cpu_model_name();
    meta.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    meta.duration_s = elapsed();
    const auto doc = publish_document(meta, cfg, topo, results);
    gpsm::write_file_atomic(a.json_path, doc.dump(1) + "\n");
    std::cerr << "gpsm publish: wrote " << a.json_path << "\n";
  }
  std::cout << fmt::format("gpsm publish: {} ok, {} skipped, {} failed (pattern x mode) in {:.1f} s\n", n_ok,
                           n_skipped, n_failed, elapsed());
  return n_failed ? 1 : 0;
}

}  // namespace gpsm::cli
