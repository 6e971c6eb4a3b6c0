// gpsm: GPU publish-subscribe memory — CLI entry point. Registers every subcommand the same way
// (commands.hpp), runs the one given and maps exceptions to exit codes (exit_codes.hpp: 0 ok, 1 a run
// failed, 2 bad usage or input, 3 no GPU).
#include <signal.h>

#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common/interrupt.hpp"
#include "common/memory_budget.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"
#include "gpsm/build_info.hpp"

namespace {

// One subcommand: its CLI11 node (set once the command line names it) and its run, bound to its
// own arguments.
struct Command {
  CLI::App* app;
  std::function<int(int, char**)> run;
};

template <class Args>
Command make_command(CLI::App& app, CLI::App* (*add)(CLI::App&, Args&), int (*run)(const Args&, int, char**)) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = add(app, *args);
  return {sub, [args, run](int argc, char** argv) { return run(*args, argc, argv); }};
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = gpsm::cli;
  CLI::App app{"gpsm: GPU publish-subscribe memory — characterize a multi-GPU node (scope), publish microbenchmark (publish), PROACT transfer agents (proact), apps on every paradigm (bench), simulate them without a GPU (sim), render plots (report)"};
  app.set_version_flag("--version", std::string("gpsm ") + GPSM_VERSION_STRING + " (" + GPSM_GIT_COMMIT + ")");
  app.require_subcommand(1);

  // In the order `gpsm --help` lists them.
  const std::vector<Command> commands = {
      make_command(app, cli::add_scope_command, cli::run_scope),
      make_command(app, cli::add_report_command, cli::run_report),
      make_command(app, cli::add_publish_command, cli::run_publish),
      make_command(app, cli::add_proact_command, cli::run_proact),
      make_command(app, cli::add_bench_command, cli::run_bench),
      make_command(app, cli::add_sim_command, cli::run_sim),
      make_command(app, cli::add_filter_command, cli::run_filter),
      make_command(app, cli::add_info_command, cli::run_info),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (100+) would break the scheme: every parse error is bad usage.
    std::string sub;
    for (const auto& c : commands)
      if (*c.app) sub = c.app->get_name();
    if (sub.empty() && argc > 1 && argv[1][0] != '-') {
      std::cerr << "gpsm: unknown subcommand '" << argv[1]
                << "'; `gpsm --help` lists them (scope, report, publish, proact, bench, sim, info)\n";
      return cli::kExitBadInput;
    }
    std::cerr << "gpsm" << (sub.empty() ? "" : " " + sub) << ": " << e.what() << "; `gpsm "
              << (sub.empty() ? "" : sub + " ") << "--help` lists the options\n";
    return cli::kExitBadInput;
  }
  for (const auto& c : commands) {
    if (!*c.app) continue;
    try {
      gpsm::host_memory_budget();  // a malformed GPSM_MEMORY_LIMIT is bad input, found before any work
      return c.run(argc, argv);
    } catch (const gpsm::Interrupted& e) {
      // Cleaned up on the way here; end by the signal itself, as the shell expects (130 for ^C).
      cli::progress_clear();  // a progress line may be on screen
      std::cerr << e.what() << "\n" << std::flush;
      signal(e.signal(), SIG_DFL);
      raise(e.signal());
      return 128 + e.signal();
    } catch (...) {
      const cli::Verdict v = cli::classify_exception(std::current_exception(), c.app->get_name());
      std::cerr << v.message << "\n";
      return v.code;
    }
  }
  return 0;
}
