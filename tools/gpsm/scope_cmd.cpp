// `gpsm scope`: discover the topology, run the selected microbenchmarks with progress, print
// tables, write the results document, the machine model and the topology graph.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"
#include "common/sizes.hpp"
#include "gpsm/build_info.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/cuda_probe.hpp"
#include "scope/model_build.hpp"
#include "scope/nvml_probe.hpp"
#include "scope/results_file.hpp"
#include "scope/text_report.hpp"

namespace gpsm::cli {

namespace {

// Whole or not at all: a failed write leaves the previous file as it was.
void write_file(const std::string& path, const std::string& text) { gpsm::write_file_atomic(path, text); }

}  // namespace

CLI::App* add_scope_command(CLI::App& app, ScopeArgs& a) {
  auto* c = app.add_subcommand("scope", "Measure the node: topology graph, transfer microbenchmarks, machine model");
  c->add_flag("--quick", a.options.quick, "A useful pass under a minute: coarse sweeps, pairs with GPU 0 only");
  c->add_flag("--list", a.list, "List the tests and exit");
  c->add_option("-t,--test", a.filters, "Run only tests whose name equals or matches this regex (repeatable)");
  c->add_option("--devices", a.devices, "Comma-separated CUDA device ids (default: all)");
  c->add_option("--json", a.json_path, "Write the results document (schema gpsm.results) to FILE");
  c->add_option("--out", a.out_dir, "Write results.json, machine_model.json, topology.json and topology.dot to DIR");
  c->add_option("--reps", a.options.reps, "Timed repetitions per point (>= 5 for reported figures)")
      ->check(CLI::Range(1, 1000));
  c->add_option("--warmup", a.options.warmup, "Untimed runs before timing")->check(CLI::Range(0, 100));
  c->add_option("--min-size", a.min_size, "Smallest transfer of a sweep (e.g. 4, 64K)");
  auto* max_size = c->add_option("--max-size", a.max_size, "Largest transfer of a sweep (e.g. 1G)");
  c->add_option("--peak-size", a.peak_size, "Transfer size of peak figures and matrices (>= 512M recommended)");
  c->parse_complete_callback([&a, max_size] { a.max_size_given = max_size->count() > 0; });
  return c;
}

int run_scope(const ScopeArgs& a, int argc, char** argv) {
  // Sizes first: bad ones fail on any machine.
  gpsm::scope::Options o = a.options;
  o.min_size = gpsm::parse_size(a.min_size);
  o.max_size = gpsm::parse_size(a.max_size);
  // quick: sweeps end at the peak size unless asked otherwise
  if (o.quick && !a.max_size_given) o.max_size = 512ull << 20;
  o.peak_size = gpsm::parse_size(a.peak_size);
  if (o.min_size < 4 || o.min_size % 4)
    throw gpsm::Error("gpsm: --min-size must be a multiple of 4 bytes (got " + a.min_size + ")");
  if (o.max_size < o.min_size)
    throw gpsm::Error("gpsm: --max-size (" + (o.quick && !a.max_size_given ? gpsm::format_size(o.max_size) + ", --quick's" : a.max_size) +
                      ") is below --min-size (" + a.min_size + ")");
  if (o.peak_size > o.max_size) o.peak_size = o.max_size;

  auto all = gpsm::scope::make_all_tests();
  if (a.list) {
    for (const auto& t : all)
      std::cout << fmt::format("{:<25} {:<11} {}\n", t->name(), t->group(), t->description());
    return 0;
  }
  auto selected = gpsm::scope::select_tests(all, a.filters);  // unknown names fail before any GPU work
  // Outputs before anything is measured: a bad path fails now, not after the sweep.
  gpsm::check_outputs({{"--json", a.json_path}}, {});
  gpsm::check_output_dir("--out", a.out_dir, {"results.json", "machine_model.json", "topology.json", "topology.dot"}, {});

  std::string why;
  const int ngpu = gpsm::scope::cuda_device_count(&why);
  require_gpus(ngpu, 1, why, "scope",
               "`gpsm scope` measures real GPUs. Run it on a GPU node; `gpsm scope --list` shows the tests");
  if (a.devices.empty()) {
    for (int d = 0; d < ngpu; ++d) o.devices.push_back(d);
  } else {
    o.devices = parse_device_list(a.devices);
    for (int d : o.devices)
      if (d >= ngpu)
        throw BadInput(fmt::format("gpsm: device {} does not exist; this machine has {} GPU{} (0-{})", d, ngpu,
                                   ngpu == 1 ? "" : "s", ngpu - 1));
  }
  begin_work();
  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };

  std::cerr << "gpsm scope: discovering topology...\n";
  auto topo = gpsm::scope::discover_topology();
  for (const auto& n : topo.notes) std::cerr << "gpsm scope: note: " << n << "\n";
  for (const auto& g : topo.gpus)
    std::cout << fmt::format("GPU {}: {} ({} SMs, {:.0f} GiB, {}, NUMA {}, SM {} MHz / mem {} MHz)\n", g.index, g.name,
                             g.sm_count, g.mem_bytes / double(1ull << 30), g.pci_bus_id, g.numa_node, g.sm_clock_mhz,
                             g.mem_clock_mhz);
  std::cout << fmt::format("driver {}, CUDA driver {} runtime {}, devices under test: {}\n\n", topo.driver_version,
                           topo.cuda_driver_version, topo.cuda_runtime_version, fmt::join(o.devices, ","));

  std::vector<gpsm::scope::TestResult> results;
  int n_ok = 0, n_waived = 0, n_failed = 0;
  const size_t total = selected.size();
  for (size_t i = 0; i < total; ++i) {
    auto* t = selected[i];
    const std::string head = fmt::format("[{}/{}] ", i + 1, total);
    o.progress = [&](const std::string& s) {
      progress_show(fmt::format("{}{} ({:.0f} s)", head, s, elapsed()));
    };
    o.progress(t->name());
    auto r = gpsm::scope::run_test(*t, o, topo);
    progress_clear();
    std::cout << gpsm::scope::render_test(r, double(o.peak_size)) << "\n" << std::flush;
    (r.status == gpsm::scope::Status::ok ? n_ok : r.status == gpsm::scope::Status::waived ? n_waived : n_failed)++;
    results.push_back(std::move(r));
  }
  o.progress = nullptr;
  // clocks after the run, for "are my numbers right?"
  for (auto& g : topo.gpus) gpsm::topo::read_current_clocks(g.pci_bus_id, &g.sm_clock_mhz, &g.mem_clock_mhz);

  gpsm::scope::RunMeta meta;
  for (int i = 0; i < argc; ++i) meta.command += (i ? " " : "") + std::string(argv[i]);
  meta.created = gpsm::scope::utc_now_iso8601();
  if (const char* k = std::getenv("GPSM_DEVICE_KIND")) meta.device_kind = k;
  meta.hostname = topo.hostname;
  meta.cpu_model = gpsm::scope::cpu_model_name();
  meta.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  meta.duration_s = elapsed();
  meta.options = o;
  const std::string machine = meta.device_kind.empty() ? topo.hostname : meta.device_kind;
  auto model = gpsm::scope::build_model(results, machine, meta.created, GPSM_GIT_COMMIT, &topo);
  auto doc = gpsm::scope::results_document(meta, topo, results, model);

  if (!a.json_path.empty()) {
    write_file(a.json_path, doc.dump(1) + "\n");
    std::cerr << "gpsm scope: wrote " << a.json_path << "\n";
  }
  if (!a.out_dir.empty()) {
    std::filesystem::create_directories(a.out_dir);
    const auto graph = gpsm::topo::build_graph(topo);
    write_file(a.out_dir + "/results.json", doc.dump(1) + "\n");
    gpsm::model::save_model(model, a.out_dir + "/machine_model.json");
    write_file(a.out_dir + "/topology.json", gpsm::topo::to_json(topo).dump(1) + "\n");
    write_file(a.out_dir + "/topology.dot", gpsm::topo::to_dot(graph));
    std::cerr << "gpsm scope: wrote results.json, machine_model.json, topology.json, topology.dot to " << a.out_dir
              << "\n";
  }
  std::cout << fmt::format("gpsm scope: {} ok, {} waived, {} failed in {:.1f} s\n", n_ok, n_waived, n_failed,
                           elapsed());
  return n_failed ? 1 : 0;
}

}  // namespace gpsm::cli
