#pragma once
// The subcommands of the `gpsm` CLI.
#include <cstdint>
#include <string>
#include <vector>

#include "scope/registry.hpp"

namespace CLI {
class App;
}

namespace gpsm::cli {

struct ScopeArgs {
  gpsm::scope::Options options;
  std::vector<std::string> filters;  // -t
  std::string devices;               // --devices "0,1,2" (empty: all)
  std::string json_path;             // --json FILE
  std::string out_dir;               // --out DIR: results.json, machine_model.json, topology.json/.dot
  bool list = false;
  std::string command_line;
};

int run_scope(ScopeArgs& a);
int run_report(const std::vector<std::string>& files, const std::string& out_dir, const std::vector<std::string>& filters,
               const std::string& argv0);
int run_info();

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

// "0,1,3" -> {0,1,3}; throws gpsm::Error on a malformed list.
std::vector<int> parse_device_list(const std::string& s);
// Throws std::invalid_argument naming the first device id this machine (ngpu GPUs) lacks.
void require_devices_exist(const std::vector<int>& devices, int ngpu);
// The GPUs a command on one GPS context runs on: the asked ones (checked to exist), or when none
// were asked every GPU up to gps::kMaxDevices, with a note on stderr (naming `cmd`) when that
// leaves some out.
std::vector<int> context_devices(const std::vector<int>& asked, int ngpu, const char* cmd);

}  // namespace gpsm::cli
