// gpsm: GPU publish-subscribe memory — CLI entry point. Registers every subcommand the same way
// (commands.hpp), runs the one given and maps exceptions to exit codes.
#include <functional>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "commands.hpp"
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
      make_command(app, cli::add_info_command, cli::run_info),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    for (const auto& c : commands)
      if (*c.app) return c.run(argc, argv);
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
