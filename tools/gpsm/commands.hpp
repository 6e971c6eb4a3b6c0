#pragma once
// The subcommands of the `gpsm` CLI. Each lives in its own file <name>_cmd.cpp and has the same
// two entry points: add_<name>_command registers the subcommand and its options on the app, bound
// to an <Name>Args, and run_<name> runs it once the command line is parsed (argc/argv: the command
// line recorded in results files, argv[0] to find files installed next to the binary). main.cpp
// registers them all in one table and maps exceptions to exit codes (exit_codes.hpp: 0 ok, 1 a
// run failed, 2 bad usage or input, 3 no GPU); a command returns 0 or 1 itself, throws BadInput or
// NoGpu, and calls begin_work() once its arguments are checked.
#include <cstdint>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "scope/registry.hpp"

namespace CLI {
class App;
}

namespace gpsm::cli {

// `gpsm scope` (scope_cmd.cpp): measure the node.
struct ScopeArgs {
  gpsm::scope::Options options;      // --quick, --reps, --warmup; sizes and devices are set by the run
  std::vector<std::string> filters;  // -t
  std::string devices;               // --devices "0,1,2" (empty: all)
  std::string json_path;             // --json FILE
  std::string out_dir;               // --out DIR: results.json, machine_model.json, topology.json/.dot
  std::string min_size = "4", max_size = "1G", peak_size = "512M";  // as given, parsed by the run
  bool max_size_given = false;       // --quick ends the sweeps at 512M unless --max-size says otherwise
  bool list = false;
};
CLI::App* add_scope_command(CLI::App& app, ScopeArgs& a);
int run_scope(const ScopeArgs& a, int argc, char** argv);

// `gpsm report` (report_cmd.cpp): plots from results files, tables from PROACT choice caches.
struct ReportArgs {
  std::vector<std::string> files, filters;
  std::string out_dir = "gpsm-report";
};
CLI::App* add_report_command(CLI::App& app, ReportArgs& a);
int run_report(const ReportArgs& a, int argc, char** argv);

// `gpsm info` (info_cmd.cpp): build configuration, settings and GPUs found; no options.
struct InfoArgs {};
CLI::App* add_info_command(CLI::App& app, InfoArgs& a);
int run_info(const InfoArgs& a, int argc, char** argv);

// `gpsm publish` (publish_cmd.cpp): its options, registered on `app`, and the run.
struct PublishArgs {
  std::string devices, pattern = "all", mode = "all", size = "256M", json_path;
  std::uint64_t stores = 0;  // random pattern, per GPU; 0: array words / N / 4
  int reps = 7, warmup = 2;
  std::uint32_t seed = 1;
  std::uint64_t bulk_max_copies = 250000;
};
CLI::App* add_publish_command(CLI::App& app, PublishArgs& a);
int run_publish(const PublishArgs& a, int argc, char** argv);

// `gpsm bench` (bench_cmd.cpp).
struct BenchArgs {
  std::string app = "jacobi2d", gpus = "1,2,4", paradigm = "all", sizes, devices, json_path;  // sizes: app default
  std::string axis = "z";  // 3D apps: the decomposed axis
  int iters = 0, nccheck = 1, reps = 5, warmup = 1;
  bool list = false;
  // proact (docs/proact.md, "In gpsm bench"): a fixed chunk, a choice cache to read, or one to
  // write from a sweep of chunk sizes (proact_chunks; empty: the default list); at most one of the three.
  std::string proact_chunk, proact_cache, proact_tune, proact_chunks;
  double proact_margin = 0.03;
  std::string pictures;  // ct: the folder for the slices and cost curve `gpsm report` draws
  // --isolate: every run in a child gpsm of its own (apps/harness/isolated_run.hpp). The child is
  // this command again with the hidden --isolated-run K (run only the K-th run, 1-based, in the
  // order the command enumerates them) and --isolated-outcome FILE (write its RunOutcome there),
  // plus --isolated-references DIR: the parent's folder of references its children share
  // (apps/harness/reference_cache.hpp).
  bool isolate = false;
  int isolated_run = 0;
  std::string isolated_outcome;
  std::string isolated_references;
};
CLI::App* add_bench_command(CLI::App& app, BenchArgs& a);
int run_bench(const BenchArgs& a, int argc, char** argv);

// `gpsm sim` (sim_cmd.cpp): the simulator, no GPU needed.
struct SimArgs {
  std::string app = "all", gpus = "1,2,4", system = "h200x4", paradigm = "all", sizes, json_path;
  std::string sample = "auto", gps_page = "64K", proact_chunk = "1M";
  std::string host_loop = "graph";  // graph | stream: how host-driven loops without a read-back launch
  std::string axis = "z";          // 3D apps: the split axis (x, y, z), as gpsm bench --axis
  std::vector<std::string> sweep;  // {param} or {param, values}
  int iters = 10, queue = 64, subheader = 5;
  int run_iters = -1;  // -1: the app's gpsm bench default (jacobi2d 1000, 3D 100); 0: the traced ones
  bool list = false;
  bool explain = false;  // after each table, what set each kernel's time (sim/explain.hpp)
  bool remote_study = false;  // GPU-SM's remote-access study priced on --system (sim/remote_study_sim.hpp)
  bool ct_scaling = false;  // print the CT scalability model instead of running apps
};
CLI::App* add_sim_command(CLI::App& app, SimArgs& a);
int run_sim(const SimArgs& a, int argc, char** argv);

// `gpsm proact` (proact_cmd.cpp): the PROACT engine's synthetic-producer sweep.
struct ProactArgs {
  std::string gpus, size = "256M", pattern = "one_to_all", agents = "all", chunks = "4K..16M", threads = "1024";
  std::string json_path, tune_path, model_path, app, show_cache;
  int reps = 5, warmup = 1, ce_streams = 4;
  std::uint32_t work = 0, seed = 1;
  double compute_ratio = 1.0, margin = 0.03;
  std::uint64_t ce_max_ops = 1024, wait_timeout_ms = 10000;
  bool no_ce_proxy = false, ce_proxy = false;
};
CLI::App* add_proact_command(CLI::App& app, ProactArgs& a);
int run_proact(const ProactArgs& a, int argc, char** argv);

// `gpsm filter` (filter_cmd.cpp): a PNG filtered across the GPUs.
struct FilterArgs {
  std::string in, out, kernel = "gauss5", gpus = "all", devices, paradigm = "rdl", weights = "constant";
  int iters = 1;
  bool no_check = false;
};
CLI::App* add_filter_command(CLI::App& app, FilterArgs& a);
int run_filter(const FilterArgs& a, int argc, char** argv);

// The device arguments the GPU commands share (devices.cpp).
// "0,1,3" -> {0,1,3}; throws gpsm::Error on a malformed list.
std::vector<int> parse_device_list(const std::string& s);
// Throws std::invalid_argument naming the first device id this machine (ngpu GPUs) lacks.
void require_devices_exist(const std::vector<int>& devices, int ngpu);
// The GPUs a command on one GPS context runs on: the asked ones (checked to exist), or when none
// were asked every GPU up to gps::kMaxDevices, with a note on stderr (naming `cmd`) when that
// leaves some out.
std::vector<int> context_devices(const std::vector<int>& asked, int ngpu, const char* cmd);

// The files named by --size values (graph and matrix files, before any '@' options) and their
// graph caches, as inputs for the output checks (outputs.cpp).
std::vector<gpsm::InputPath> size_file_inputs(const std::vector<std::string>& sizes);

}  // namespace gpsm::cli
