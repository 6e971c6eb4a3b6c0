// gpsm: GPU publish-subscribe memory — CLI entry point.
#include <iostream>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gpsm/build_info.hpp"
#include "gpsm/error.hpp"
#include "scope/results.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gpsm: GPU publish-subscribe memory — characterize a multi-GPU node (scope), publish microbenchmark (publish), PROACT transfer agents (proact), apps on every paradigm (bench), simulate them without a GPU (sim), render plots (report)"};
  app.set_version_flag("--version", std::string("gpsm ") + GPSM_VERSION_STRING + " (" + GPSM_GIT_COMMIT + ")");
  app.require_subcommand(1);

  gpsm::cli::ScopeArgs sa;
  std::string min_size = "4", max_size = "1G", peak_size = "512M";
  auto* scope = app.add_subcommand("scope", "Measure the node: topology graph, transfer microbenchmarks, machine model");
  scope->add_flag("--quick", sa.options.quick, "A useful pass under a minute: coarse sweeps, pairs with GPU 0 only");
  scope->add_flag("--list", sa.list, "List the tests and exit");
  scope->add_option("-t,--test", sa.filters, "Run only tests whose name equals or matches this regex (repeatable)");
  scope->add_option("--devices", sa.devices, "Comma-separated CUDA device ids (default: all)");
  scope->add_option("--json", sa.json_path, "Write the results document (schema gpsm.results) to FILE");
  scope->add_option("--out", sa.out_dir, "Write results.json, machine_model.json, topology.json and topology.dot to DIR");
  scope->add_option("--reps", sa.options.reps, "Timed repetitions per point (>= 5 for reported figures)")
      ->check(CLI::Range(1, 1000));
  scope->add_option("--warmup", sa.options.warmup, "Untimed runs before timing")->check(CLI::Range(0, 100));
  scope->add_option("--min-size", min_size, "Smallest transfer of a sweep (e.g. 4, 64K)");
  scope->add_option("--max-size", max_size, "Largest transfer of a sweep (e.g. 1G)");
  scope->add_option("--peak-size", peak_size, "Transfer size of peak figures and matrices (>= 512M recommended)");

  std::vector<std::string> report_files, report_filters;
  std::string report_out = "gpsm-report";
  auto* report = app.add_subcommand(
      "report", "Render PNG plots and an index from results files; a PROACT choice cache (gpsm proact --tune, gpsm bench "
                "--proact-tune) as a table of the chosen configuration per app");
  report->add_option("files", report_files, "Results JSON files (several are overlaid) or choice-cache files")->required();
  report->add_option("--out", report_out, "Output directory");
  report->add_option("-t,--test", report_filters, "Only tests matching this regex");

  gpsm::cli::PublishArgs pa;
  auto* publish = gpsm::cli::add_publish_command(app, pa);

  gpsm::cli::ProactArgs pra;
  auto* proact = gpsm::cli::add_proact_command(app, pra);

  gpsm::cli::BenchArgs ba;
  auto* bench = gpsm::cli::add_bench_command(app, ba);

#if GPSM_HAVE_SIM
  gpsm::cli::SimArgs sma;
  auto* sim = gpsm::cli::add_sim_command(app, sma);
#endif

  auto* info = app.add_subcommand("info", "Print the build configuration, settings and GPUs found (paste into bug reports)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (*scope) {
      sa.options.min_size = gpsm::parse_size(min_size);
      sa.options.max_size = gpsm::parse_size(max_size);
      // quick: sweeps end at the peak size unless asked otherwise
      if (sa.options.quick && scope->get_option("--max-size")->count() == 0) sa.options.max_size = 512ull << 20;
      sa.options.peak_size = gpsm::parse_size(peak_size);
      if (sa.options.min_size < 4 || sa.options.min_size % 4)
        throw gpsm::Error("gpsm: --min-size must be a multiple of 4 bytes (got " + min_size + ")");
      if (sa.options.max_size < sa.options.min_size)
        throw gpsm::Error("gpsm: --max-size (" + max_size + ") is below --min-size (" + min_size + ")");
      if (sa.options.peak_size > sa.options.max_size) sa.options.peak_size = sa.options.max_size;
      for (int i = 0; i < argc; ++i) sa.command_line += (i ? " " : "") + std::string(argv[i]);
      return gpsm::cli::run_scope(sa);
    }
    if (*report) return gpsm::cli::run_report(report_files, report_out, report_filters, argv[0]);
    if (*info) return gpsm::cli::run_info();
    if (*publish) return gpsm::cli::run_publish(pa, argc, argv);
    if (*bench) return gpsm::cli::run_bench(ba, argc, argv);
    if (*proact) return gpsm::cli::run_proact(pra, argc, argv);
#if GPSM_HAVE_SIM
    if (*sim) return gpsm::cli::run_sim(sma, argc, argv);
#endif
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();  // library messages may carry the prefix already
    std::cerr << (what.rfind("gpsm: ", 0) == 0 ? "" : "gpsm: ") << what << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
