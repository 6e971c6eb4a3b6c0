// `gpsm proact`: the PROACT synthetic-producer benchmark (PROACT dissertation §2.4.3, Fig 2.6/2.8/2.9): a
// producer kernel whose compute matches the copy time, its data shipped to the other GPUs by each
// transfer agent at each chunk size and transfer-thread count, every run verified at every
// destination. Arguments are checked before any GPU work; progress on stderr, the table on stdout,
// the results document (--json) and the autotuner's choice cache (--tune).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "gpsm/build_info.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/cuda_probe.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "proact/autotune.hpp"
#include "proact/engine.hpp"
#include "proact/proact_plan.hpp"

namespace gpsm::cli {

CLI::App* add_proact_command(CLI::App& app, ProactArgs& a) {
  auto* c = app.add_subcommand(
      "proact",
      "PROACT benchmark: a synthetic producer (compute tuned to the copy time) whose output each transfer agent ships "
      "to the other GPUs, per chunk size and transfer threads; speedup over memcpy, overlap, tracking cost, tail");
  c->add_option("--gpus", a.gpus, "Comma-separated CUDA device ids, at least 2 (default: all, up to 8)");
  c->add_option("--size", a.size, "Bytes produced per run (a multiple of 4 KiB; e.g. 256M)")->capture_default_str();
  c->add_option("--pattern", a.pattern, "one_to_all (GPU 0 to the others) or all_to_all (a slice each)")
      ->capture_default_str();
  c->add_option("--agents", a.agents,
                "all, or a comma-separated list of memcpy, inline, copy_engine (ce), persistent (pst), device_launch "
                "(cdp); memcpy always runs (the reference)")
      ->capture_default_str();
  c->add_option("--chunks", a.chunks, "Chunk sizes: a power-of-two range LO..HI or a comma list")->capture_default_str();
  c->add_option("--threads", a.threads,
                "Transfer threads (persistent: polling threads in all; device_launch: threads per copy kernel), list")
      ->capture_default_str();
  c->add_option("--reps", a.reps, "Timed repetitions per configuration (>= 5; median, min, max)")->capture_default_str();
  c->add_option("--warmup", a.warmup, "Untimed (still verified) repetitions first")->capture_default_str();
  c->add_option("--work", a.work, "Compute iterations per word (0: calibrate to --compute-ratio x the copy time)")
      ->check(kNonNegative)->capture_default_str();
  c->add_option("--compute-ratio", a.compute_ratio, "Calibration target: producer time / copy time")
      ->capture_default_str();
  c->add_option("--seed", a.seed, "Seed of the produced values")->check(kNonNegative)->capture_default_str();
  c->add_option("--ce-streams", a.ce_streams, "copy_engine: streams per destination")->capture_default_str();
  c->add_option("--ce-max-ops", a.ce_max_ops, "copy_engine: most stream operations enqueued up front per stream")
      ->check(kNonNegative)->capture_default_str();
  c->add_flag("--no-ce-proxy", a.no_ce_proxy,
              "copy_engine: skip it instead of using a host proxy where stream waits are unsupported");
  c->add_flag("--ce-proxy", a.ce_proxy,
              "copy_engine: issue each ready chunk's copies from the host (the fallback path) even where stream "
              "waits work");
  c->add_option("--wait-timeout-ms", a.wait_timeout_ms, "Bound of every device and host wait")->check(kNonNegative)->capture_default_str();
  c->add_option("--model", a.model_path,
                "Machine model (gpsm scope --out DIR/machine_model.json): drop chunk sizes it predicts to be "
                "initiation- or tail-bound before sweeping");
  c->add_option("--json", a.json_path, "Write the results document (schema gpsm.results, tool proact) to FILE");
  c->add_option("--tune", a.tune_path, "Pick the best configuration and record it in the choice cache FILE (JSON)");
  c->add_option("--margin", a.margin, "Autotuner noise margin: prefer a simpler agent within this fraction")
      ->capture_default_str();
  c->add_option("--app", a.app, "Cache key's app name (default synthetic:<pattern>:<N>gpu)");
  c->add_option("--show-cache", a.show_cache,
                "Print the choice cache FILE as a markdown table (PROACT dissertation Table 2.2 style: the configuration chosen per "
                "machine, app and size) and exit; no GPU needed");
  return c;
}

int run_proact(const ProactArgs& a, int argc, char** argv) {
  using namespace gpsm::proact;
  if (!a.show_cache.empty()) {
    std::cout << render_cache_file(a.show_cache);
    return 0;
  }
  ProactConfig cfg;
  cfg.bytes = gpsm::parse_size(a.size);
  cfg.pattern = parse_pattern(a.pattern);
  cfg.agents = parse_agents(a.agents);
  cfg.chunks = parse_chunk_list(a.chunks);
  cfg.threads = parse_int_list(a.threads, "--threads");
  cfg.reps = a.reps;
  cfg.warmup = a.warmup;
  cfg.work = a.work;
  cfg.compute_ratio = a.compute_ratio;
  cfg.seed = a.seed;
  cfg.ce_streams = a.ce_streams;
  cfg.ce_max_ops = a.ce_max_ops;
  cfg.allow_ce_proxy = !a.no_ce_proxy;
  cfg.force_ce_proxy = a.ce_proxy;
  cfg.wait_timeout_ms = a.wait_timeout_ms;
  if (!(a.margin >= 0 && a.margin < 1)) throw gpsm::Error(fmt::format("gpsm proact: --margin {} outside [0, 1)", a.margin));
  std::vector<int> asked;
  if (!a.gpus.empty()) {
    asked = parse_device_list(a.gpus);
    cfg.devices = asked;
    validate(cfg);  // bad arguments fail here, on any machine
  } else {
    cfg.devices = {0, 1};
    validate(cfg);
    cfg.devices.clear();
  }
  if (!a.model_path.empty()) {
    const auto m = gpsm::model::load_model(a.model_path);
    const int src = asked.empty() ? 0 : asked[0], dst = asked.size() > 1 ? asked[1] : 1;
    const auto* path = peer_path(m, src, dst);
    if (path == nullptr)
      throw gpsm::Error(fmt::format("gpsm proact: the machine model {} has no ce_peer path gpu{} -> gpu{}; run gpsm "
                                    "scope on this machine or drop --model",
                                    a.model_path, src, dst));
    const auto pr = prune_chunk_sizes(path->fit, cfg.bytes, cfg.chunks);
    for (const auto& d : pr.dropped)
      std::cerr << fmt::format("gpsm proact: --model drops chunk {}: {}\n", gpsm::format_size(d.chunk_bytes),
                               d.reason);
    cfg.chunks = pr.kept;
  }
  // Outputs before any GPU work: writable, and none of this command's inputs (--tune is read and
  // extended, so it may not be --json either); the cache is read now so a bad one fails here too.
  gpsm::check_outputs({{"--tune", a.tune_path}}, {{"--model", a.model_path}});
  gpsm::check_outputs({{"--json", a.json_path}}, {{"--model", a.model_path}, {"--tune", a.tune_path}});
  if (!a.tune_path.empty()) (void)load_cache(a.tune_path);

  // Before any CUDA context exists: enough hardware queues that the copy streams' waits on chunk
  // flags do not share a queue with (and hold back) other streams' work. An explicit setting wins.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  std::string why;
  const int ngpu = gpsm::scope::cuda_device_count(&why);
  require_gpus(ngpu, 2, why, "proact", "the benchmark needs 2 or more GPUs with peer access");
  cfg.devices = context_devices(asked, ngpu, "proact");
  validate(cfg);
  begin_work();

  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  std::cerr << "gpsm proact: discovering topology...\n";
  auto topo = gpsm::scope::discover_topology();
  std::string gpu_name;
  for (int d : cfg.devices)
    for (const auto& g : topo.gpus)
      if (g.index == d) {
        std::cout << fmt::format("GPU {}: {} ({})\n", g.index, g.name, g.pci_bus_id);
        if (gpu_name.empty()) gpu_name = g.name;
      }
  std::cout << fmt::format("{} of {} over GPUs {}; {} timed reps after {} warm-up(s), every rep verified at every "
                           "destination\n\n",
                           pattern_name(cfg.pattern), gpsm::format_size(cfg.bytes), fmt::join(cfg.devices, ","),
                           cfg.reps, cfg.warmup)
            << std::flush;
  cfg.progress = [&](const std::string& s) { std::cerr << fmt::format("gpsm proact: [{:.0f} s] {}\n", elapsed(), s); };
  ProactRun run = run_proact(cfg);
  run.cfg.progress = nullptr;
  std::cout << render_table(run) << std::flush;

  int failed = 0, ok = 0;
  for (const auto& r : run.results) (r.status == "failed" ? failed : r.status == "ok" ? ok : ok) += r.status != "skipped";
  if (!a.json_path.empty()) {
    ProactMeta meta;
    for (int i = 0; i < argc; ++i) meta.command += (i ? " " : "") + std::string(argv[i]);
    meta.created = gpsm::scope::utc_now_iso8601();
    if (const char* k = std::getenv("GPSM_DEVICE_KIND")) meta.device_kind = k;
    meta.hostname = topo.hostname;
    meta.cpu_model = gpsm::scope::cpu_model_name();
    meta.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    meta.duration_s = elapsed();
    gpsm::write_file_atomic(a.json_path, proact_document(meta, run, topo).dump(1) + "\n");
    std::cerr << "gpsm proact: wrote " << a.json_path << "\n";
  }
  if (!a.tune_path.empty()) {
    const auto records = sweep_records(run);
    if (records.empty()) throw gpsm::Error("gpsm proact: --tune: no configuration ran successfully; nothing to choose");
    TuneCache cache = load_cache(a.tune_path);
    CacheEntry e;
    e.key.machine = machine_key(std::getenv("GPSM_DEVICE_KIND"), topo.hostname, gpu_name);
    e.key.app = a.app.empty() ? fmt::format("synthetic:{}:{}gpu", pattern_name(cfg.pattern), cfg.devices.size()) : a.app;
    e.key.size = cfg.bytes;
    e.choice = choose_config(records, a.margin);
    e.margin = a.margin;
    e.records = static_cast<int>(records.size());
    e.created = gpsm::scope::utc_now_iso8601();
    e.gpsm_commit = GPSM_GIT_COMMIT;
    cache.put(e);
    save_cache(cache, a.tune_path);
    std::cout << fmt::format("gpsm proact: tuned ({}, {}, {}): {}\ngpsm proact: wrote {}\n", e.key.machine, e.key.app,
                             e.key.size, e.choice.why, a.tune_path);
  }
  std::cout << fmt::format("gpsm proact: {} configuration(s) ran, {} failed, in {:.1f} s\n", ok, failed, elapsed());
  return failed ? 1 : 0;
}

}  // namespace gpsm::cli
