// `gpsm sim`: the trace-driven simulator (docs/sim.md). Generates each app's trace on the CPU,
// replays it on a simulated system under each paradigm and prints `gpsm bench`'s table, marked
// simulated; --json writes the same results schema with tool "sim"; --sweep repeats it over link
// bandwidth, write queue entries, GPS page size or FinePack sub-header bytes. Apps: the stencils
// of gpsm bench and the synthetic small-store app `scatter` (simulator only).
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/harness/bench_report.hpp"
#include "apps/stencil/decomp.hpp"  // parse_axis
#include "commands.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "sim/bound.hpp"
#include "sim/engine.hpp"
#include "sim/explain.hpp"
#include "sim/ct_scaling.hpp"
#include "sim/remote_study_sim.hpp"
#include "sim/system.hpp"
#include "sim/trace_ct.hpp"
#include "sim/trace_gen.hpp"
#include "common/memory_budget.hpp"
#include "common/split.hpp"

namespace gpsm::cli {

CLI::App* add_sim_command(CLI::App& app, SimArgs& a) {
  auto* c = app.add_subcommand("sim",
                               "Simulate apps on a multi-GPU system (no GPU needed): trace-driven, every paradigm "
                               "including the GPS and FinePack hardware; prints gpsm bench's table, marked simulated");
  c->add_option("--app", a.app,
                "jacobi2d, heat3d, wave3d, scatter (synthetic 4-B scattered stores, 25 % to other GPUs), pagerank, "
                "sssp (--size a graph spec as gpsm bench: rmat:20, road:1024, @nnz), ct (--size as gpsm bench: medium, seed, "
                "@subsets=M; under memcpy, proact, p2p_inline, infinite) or all (the three stencils)")
      ->capture_default_str();
  c->add_option("--gpus", a.gpus, "GPU counts, comma-separated")->capture_default_str();
  c->add_option("--system", a.system, "A preset (see --list) or a gpsm scope machine_model.json")->capture_default_str();
  c->add_option("--paradigm", a.paradigm,
                "all, or a comma-separated list of: memcpy, um, um_hints, rdl, p2p_inline, gps_hw, finepack, proact, "
                "infinite")
      ->capture_default_str();
  c->add_option("--size", a.sizes,
                "Problem size(s), comma-separated, as gpsm bench (default: the app's defaults); scatter: elements "
                "(e.g. 1M = 2^20)");
  c->add_option("--axis", a.axis, "3D apps: the axis the domain is split along (x, y or z), as gpsm bench --axis")
      ->capture_default_str();
  c->add_option("--iters", a.iters, "Iterations traced and simulated (sssp stops earlier where no distance falls, as gpsm bench)")->capture_default_str();
  c->add_option("--run-iters", a.run_iters,
                "Iterations of the run a result stands for: the last traced iteration stands for the ones beyond "
                "--iters (-1: the app's gpsm bench default, jacobi2d 1000, 3D apps 100; 0: only the traced ones); a trace "
                "that converged (sssp) stands for itself")
      ->capture_default_str();
  c->add_option("--sample", a.sample,
                "Fraction of thread blocks traced (each stands for 1/F blocks); auto: all up to 2^24 cells, then fewer")
      ->capture_default_str();
  c->add_option("--json", a.json_path, "Write the results document (schema gpsm.results, tool sim) to FILE");
  c->add_option("--sweep", a.sweep,
                "link_bw|queue|page|subheader [values]: one table per value (link_bw in GB/s per link, queue in "
                "entries, page in bytes, e.g. 4K,64K,2M, subheader in bytes 2..6)")
      ->expected(1, 2);
  c->add_option("--queue", a.queue, "GPS / FinePack write queue entries per destination")->capture_default_str();
  c->add_option("--gps-page", a.gps_page, "GPS subscription page size (4K, 64K, 2M)")->capture_default_str();
  c->add_option("--subheader", a.subheader, "FinePack sub-header bytes (2..6)")->capture_default_str();
  c->add_option("--proact-chunk", a.proact_chunk, "PROACT chunk size")->capture_default_str();
  c->add_option("--host-loop", a.host_loop,
                "graph: host-driven iterations without a host read-back run as one CUDA graph (gpsm bench's "
                "default for the 3D apps, GPSM_HOST_LOOP); stream: one host thread issues every GPU's work each "
                "iteration. pagerank and sssp always run their own stream loop, as gpsm bench does")
      ->check(CLI::IsMember({"graph", "stream"}))
      ->capture_default_str();
  c->add_flag("--list", a.list, "List the system presets and paradigms, then exit");
  c->add_flag("--remote-study", a.remote_study,
              "Price GPU-SM's remote-access study (gpsm scope's remote.* tests: H1 rates, H3/H4 slowdown curves) on "
              "--system instead of running apps, and print it");
  c->add_flag("--ct-scaling", a.ct_scaling,
              "Print the CT scalability model (PROACT dissertation sec. 3.4, Fig 3.6; docs/ct.md): speedup over one "
              "GPU of memcpy, proact and infinite at G = 1, 2, 4, 8, 16 on the NVLink node and the PCIe presets, "
              "medium and seed sizes, calibrated on the committed 2xH200 runs, with the trace-driven simulator's own "
              "speedups (gpsm sim --app ct) beside it, instead of running apps");
  c->add_flag("--explain", a.explain,
              "After each table, per run and kernel of the last traced iteration: the bound that set its time "
              "(dram, l2, flops, measured compute, serial march steps, chained loads, instruction issue or chain+issue) "
              "and every "
              "bound's value");
  return c;
}

namespace {
// The simulator's paradigms in the bench table: the bench paradigm of the same name, the hardware
// ones on their nearest (the label carries the name).
apps::Paradigm bench_paradigm(sim::SimParadigm p) {
  switch (p) {
    case sim::SimParadigm::memcpy: return apps::Paradigm::memcpy;
    case sim::SimParadigm::um: return apps::Paradigm::um;
    case sim::SimParadigm::um_hints: return apps::Paradigm::um_hints;
    case sim::SimParadigm::rdl: return apps::Paradigm::rdl;
    case sim::SimParadigm::p2p_inline: return apps::Paradigm::p2p_inline;
    case sim::SimParadigm::gps_hw:
    case sim::SimParadigm::finepack: return apps::Paradigm::gps;
    case sim::SimParadigm::proact: return apps::Paradigm::memcpy;
    case sim::SimParadigm::infinite: return apps::Paradigm::infinite;
  }
  return apps::Paradigm::single;
}

struct SweepPoint {
  std::string label;  // "link_bw=64" or "" (no sweep)
  double value = 0;
  sim::SimOptions opt;
};

// The synthetic small-store app (sim/trace_gen.cpp `scatter`): not a gpsm bench app.
constexpr const char* kScatterDescription =
    "synthetic scatter: N 4-B elements split over the GPUs; each GPU stores every owned element to a "
    "pseudo-random element, 25 % of them in other GPUs' partitions (simulator only)";
constexpr const char* kScatterDefaultSize = "1M";

struct SimApp {
  std::string name, description;
  apps::App* app = nullptr;  // nullptr: scatter
};

nlohmann::json system_json(const sim::System& s) {
  return {{"name", s.name},
          {"description", s.description},
          {"gpus", s.gpus},
          {"gpu", {{"name", s.gpu.name}, {"sms", s.gpu.sms}, {"clock_GHz", s.gpu.clock_GHz}, {"hbm_GBps", s.gpu.hbm_GBps},
                   {"l2_bytes", s.gpu.l2_bytes}, {"l2_GBps", s.gpu.l2_GBps}, {"flops_G", s.gpu.flops_G},
                   {"blocks_per_sm", s.gpu.blocks_per_sm}, {"launch_us", s.gpu.launch_us}, {"sync_us", s.gpu.sync_us},
                   {"fault_us", s.gpu.fault_us}, {"page_bytes", s.gpu.page_bytes},
                   {"serial_step_us", s.gpu.serial_step_us}}},
          {"topology", s.topology == sim::Topology::direct     ? "direct"
                       : s.topology == sim::Topology::nvswitch ? "nvswitch"
                                                               : "switch_tree"},
          {"link", {{"kind", sim::link_name(s.link.kind)}, {"raw_GBps", s.link.raw_GBps}, {"latency_ns", s.link.latency_ns},
                    {"max_payload", s.link.max_payload}}}};
}

// `gpsm sim --list`: the presets, paradigms, apps and sweeps.
void print_list() {
  std::cout << "system presets (--system; or a gpsm scope machine_model.json):\n";
  for (const auto& n : sim::preset_names()) {
    const sim::System s = sim::preset(n);
    std::cout << fmt::format("  {:<12} {}\n", n, s.description);
  }
  std::cout << "paradigms (--paradigm):";
  for (auto p : sim::parse_sim_paradigms("all")) std::cout << " " << sim::sim_paradigm_name(p);
  std::cout << "\napps (--app): jacobi2d, heat3d, wave3d, scatter (default size " << kScatterDefaultSize
            << " elements), pagerank, sssp (graph specs as gpsm bench), ct (sizes as gpsm bench)\nsweeps (--sweep): link_bw [GB/s list], queue [entries], page [bytes], subheader "
               "[bytes 2..6]\n";
}

// What gpsm sim runs, from its arguments (parse_run: bad ones fail before any work).
struct SimRun {
  std::vector<std::unique_ptr<apps::App>> all_apps;  // the bench's apps (chosen points into them)
  std::vector<SimApp> chosen;
  std::vector<sim::SimParadigm> paradigms;
  std::vector<int> counts;  // GPU counts
  double sample_fixed = 0;  // --sample; 0: auto
  std::string system;       // --system: a preset or a machine_model.json
  bool from_file = false;
  sim::System sys0;         // at the largest GPU count: the tables' title and the JSON's system
  std::string sweep_param;  // "" without --sweep
  std::vector<SweepPoint> points;
  std::vector<std::pair<std::size_t, apps::Problem>> problems;  // (index in chosen, problem)
  std::vector<std::string> sizes_run;                           // "app:size" of each problem

  sim::System system_for(int gpus) const {
    sim::System s = from_file ? sim::from_machine_model(system) : sim::preset(system, gpus);
    if (from_file) {
      // A model describes the GPUs it measured; more would be invented, not simulated.
      if (gpus > s.gpus)
        throw BadInput(fmt::format("gpsm sim: --gpus {} exceeds the {} GPUs of the machine model {}; ask for at most {} "
                                   "or use a preset (gpsm sim --list)",
                                   gpus, s.gpus, system, s.gpus));
      s.gpus = gpus;
    }
    return s;
  }
  int total_runs() const { return int(problems.size() * counts.size() * paradigms.size()); }
};

// --app: the bench apps it names ("all": the three stencils) or scatter.
std::vector<SimApp> chosen_apps(const std::string& name, const std::vector<std::unique_ptr<apps::App>>& all) {
  // The apps the trace generator has a model of (sim/trace_gen.cpp, sim/trace_graph.hpp); the
  // other bench apps (als, cg) are refused by name, not simulated into per-run failures.
  const auto modelled = [](const std::string& n) {
    return n == "jacobi2d" || n == "heat3d" || n == "wave3d" || n == "pagerank" || n == "sssp" || sim::is_ct_app(n);
  };
  std::vector<SimApp> chosen;
  for (const auto& app : all) {
    const std::string n = app->name();
    if (name == n && !modelled(n))
      throw std::invalid_argument("--app " + n + ": the simulator has no model of " + n +
                                  " (it simulates jacobi2d, heat3d, wave3d, pagerank, sssp, ct and scatter); "
                                  "measure it with gpsm bench on GPUs");
    if ((name == "all" && (n == "jacobi2d" || n == "heat3d" || n == "wave3d")) || name == n)
      chosen.push_back({n, app->description(), app.get()});
  }
  if (name == "scatter") chosen.push_back({"scatter", kScatterDescription, nullptr});
  if (chosen.empty())
    throw std::invalid_argument("unknown --app '" + name +
                                "' (jacobi2d, heat3d, wave3d, scatter, pagerank, sssp, ct or all)");
  return chosen;
}

// --sample: a fraction in (0, 1], or 0 for auto.
double parse_sample(const std::string& s) {
  if (s == "auto") return 0;
  double x = 0;
  try {
    std::size_t pos = 0;
    x = std::stod(s, &pos);
    if (pos != s.size()) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw std::invalid_argument("--sample must be auto or a fraction in (0, 1], got '" + s + "'");
  }
  if (!(x > 0 && x <= 1)) throw std::invalid_argument("--sample must be in (0, 1], got '" + s + "'");
  return x;
}

// The simulated values an option and its --sweep share, checked the same way for both (opt: how
// the user gave it, "--queue" or "--sweep queue"; given: the text).
// Write queue entries per destination: the simulator holds every entry, and hardware write
// queues hold tens to hundreds, so 65536 is far past any design point and still cheap.
constexpr int kMaxQueueEntries = 1 << 16;
int checked_queue(double x, const std::string& opt, const std::string& given) {
  if (!(x >= 1 && x <= kMaxQueueEntries && x == std::floor(x)))
    throw BadInput(fmt::format("gpsm sim: {} {}: must be a whole number of entries, 1..{}; the simulator holds every "
                               "entry (hardware queues hold tens to hundreds)",
                               opt, given, kMaxQueueEntries));
  return int(x);
}
// GPS subscription pages: a power of two from one 128-B line (the unit a store marks dirty) to 1 GiB.
double checked_page(std::uint64_t bytes, const std::string& opt, const std::string& given) {
  if (bytes < 128 || bytes > (std::uint64_t(1) << 30) || (bytes & (bytes - 1)) != 0)
    throw BadInput(fmt::format("gpsm sim: {} {}: a GPS page must be a power of two from 128 B (one line) to 1G, "
                               "e.g. 4K, 64K, 2M",
                               opt, given));
  return double(bytes);
}
int checked_subheader(double x, const std::string& opt, const std::string& given) {
  if (!(x >= 2 && x <= 6 && x == std::floor(x)))
    throw BadInput(fmt::format("gpsm sim: {} {}: FinePack sub-headers are whole bytes 2..6", opt, given));
  return int(x);
}
// Link bandwidth in GB/s per link: positive and below 1 PB/s (a typo, not a link).
double checked_link_bw(double x, const std::string& opt, const std::string& given) {
  if (!(x > 0 && x <= 1e6))
    throw BadInput(fmt::format("gpsm sim: {} {}: link bandwidth must be > 0 and <= 1e6 GB/s", opt, given));
  return x;
}
// Traced iterations are held in memory, each a full trace of the app's kernels; --run-iters,
// not --iters, sets how long a run a result stands for.
constexpr int kMaxTracedIters = 10000;

// The simulator's options every sweep point starts from.
sim::SimOptions base_options(const SimArgs& a) {
  checked_subheader(a.subheader, "--subheader", std::to_string(a.subheader));
  checked_queue(a.queue, "--queue", std::to_string(a.queue));
  if (a.host_loop != "graph" && a.host_loop != "stream")
    throw std::invalid_argument("--host-loop must be graph or stream, got '" + a.host_loop + "'");
  sim::SimOptions base;
  base.graph_launch = a.host_loop == "graph";
  base.write_queue_entries = a.queue;
  base.finepack_subheader = a.subheader;
  base.gps_page_bytes = checked_page(gpsm::parse_size(a.gps_page), "--gps-page", a.gps_page);
  base.proact_chunk_bytes = double(gpsm::parse_size(a.proact_chunk));
  return base;
}

// --sweep param [values]: one point per value (default values per param); no sweep: one point.
std::vector<SweepPoint> sweep_points(const SimArgs& a, const sim::SimOptions& base, const sim::System& sys0) {
  std::vector<SweepPoint> points;
  if (a.sweep.empty()) {
    points.push_back({"", 0, base});
    return points;
  }
  const std::string& sweep_param = a.sweep[0];
  std::string values = a.sweep.size() > 1 ? a.sweep[1] : "";
  if (sweep_param == "link_bw") {
    if (values.empty()) values = "8,16,32,64,128,256";
  } else if (sweep_param == "queue") {
    if (values.empty()) values = "16,32,64,128,256,512";
  } else if (sweep_param == "page") {
    if (values.empty()) values = "4K,64K,2M";
  } else if (sweep_param == "subheader") {
    if (values.empty()) values = "2,3,4,5,6";
  } else {
    throw std::invalid_argument("unknown --sweep '" + sweep_param + "' (link_bw, queue, page or subheader)");
  }
  for (const auto& v : split_nonempty(values)) {
    SweepPoint pt;
    pt.opt = base;
    double x = 0;
    try {
      std::size_t used = 0;
      x = sweep_param == "page" ? double(gpsm::parse_size(v)) : std::stod(v, &used);
      if (sweep_param != "page" && used != v.size()) throw std::invalid_argument(v);
    } catch (const std::exception&) {
      throw BadInput("gpsm sim: --sweep " + sweep_param + ": bad value '" + v + "' (a number" +
                     (sweep_param == "page" ? std::string(" of bytes, e.g. 64K") : std::string()) + ")");
    }
    // each value checked as the option it sweeps
    const std::string opt = "--sweep " + sweep_param;
    if (sweep_param == "link_bw") checked_link_bw(x, opt, v);
    if (sweep_param == "queue") checked_queue(x, opt, v);
    if (sweep_param == "page") checked_page(std::uint64_t(x), opt, v);
    if (sweep_param == "subheader") checked_subheader(x, opt, v);
    pt.value = x;
    pt.label = sweep_param + "=" + v;
    if (sweep_param == "link_bw") pt.opt.link_scale = x / sys0.link.raw_GBps;  // each run rescales its system's link
    if (sweep_param == "queue") pt.opt.write_queue_entries = x;
    if (sweep_param == "page") pt.opt.gps_page_bytes = x;
    if (sweep_param == "subheader") pt.opt.finepack_subheader = int(x);
    points.push_back(pt);
  }
  if (points.empty()) throw std::invalid_argument("--sweep " + sweep_param + ": no values");
  return points;
}

// scatter's problem of --size sz: n[0] elements.
apps::Problem scatter_problem(const std::string& sz, int iters) {
  apps::Problem p;
  std::uint64_t n = 0;
  try {
    n = gpsm::parse_size(sz);
  } catch (const std::exception&) {
    throw std::invalid_argument("--size for scatter: bad element count '" + sz + "'");
  }
  if (n < 1 || n > (std::uint64_t(1) << 34))
    throw std::invalid_argument("--size for scatter: element count must be 1..2^34 (got '" + sz + "')");
  p.n[0] = std::int64_t(n);
  p.iters = iters;
  return p;
}

// Every (app, size) to simulate, in --app then --size order.
void add_problems(const SimArgs& a, apps::Axis axis, SimRun& run) {
  for (std::size_t ai = 0; ai < run.chosen.size(); ++ai) {
    const SimApp& app = run.chosen[ai];
    const auto sizes = split_nonempty(a.sizes.empty() ? (app.app ? app.app->default_sizes() : kScatterDefaultSize) : a.sizes);
    if (sizes.empty()) throw std::invalid_argument("--size is needed for " + app.name);
    for (const auto& sz : sizes) {
      run.sizes_run.push_back(app.name + ":" + sz);
      if (app.app == nullptr) {
        run.problems.emplace_back(ai, scatter_problem(sz, a.iters));
        continue;
      }
      apps::Problem p = app.app->problem(sz, a.iters);
      p.axis = axis;
      run.problems.emplace_back(ai, p);
    }
  }
}

// The arguments checked and resolved, in the order their errors are reported.
void parse_run(const SimArgs& a, SimRun& run) {
  run.all_apps = apps::make_apps();
  run.chosen = chosen_apps(a.app, run.all_apps);
  run.paradigms = sim::parse_sim_paradigms(a.paradigm);
  run.counts = apps::parse_gpu_counts(a.gpus);
  const apps::Axis axis = apps::parse_axis(a.axis);
  if (a.iters < 1 || a.iters > kMaxTracedIters)
    throw BadInput(fmt::format("gpsm sim: --iters {}: traced iterations must be 1..{} (each is held in memory); "
                               "--run-iters sets how long a run a result stands for",
                               a.iters, kMaxTracedIters));
  if (a.run_iters < -1)
    throw BadInput(fmt::format("gpsm sim: --run-iters {}: must be -1 (the app's default), 0 (the traced ones) or more",
                               a.run_iters));
  run.sample_fixed = parse_sample(a.sample);
  const sim::SimOptions base = base_options(a);
  run.system = a.system;
  run.from_file = a.system.size() > 5 && a.system.substr(a.system.size() - 5) == ".json";
  run.sys0 = run.system_for(run.counts.back());  // fails early on an unknown preset
  run.points = sweep_points(a, base, run.sys0);
  if (!a.sweep.empty()) run.sweep_param = a.sweep[0];
  add_problems(a, axis, run);
  // The trace generator computes the stencils' and scatter's values on the CPU: two buffers of
  // 4-B cells, one copy per GPU in the replicas layout (gps_hw, finepack). That lower bound,
  // checked here, refuses an impossible size before any work instead of in std::bad_alloc.
  // Graph apps: a generated graph's build is checked here (App::host_bytes, the same estimate
  // gpsm bench checks); a file's readers check its header themselves.
  bool replicas = false;
  // (infinite traces every layout, replicas included: sim/bound.hpp)
  for (auto par : run.paradigms)
    replicas = replicas || std::string(sim::sim_trace_layout(par)) == "replicas" || par == sim::SimParadigm::infinite;
  for (const auto& [ai, p] : run.problems) {
    if (sim::is_ct_app(run.chosen[ai].name)) continue;  // built from the partition: no image or scan is held
    if (!p.graph.empty()) {
      if (run.chosen[ai].app != nullptr)
        require_host_memory(run.chosen[ai].app->host_bytes(p),
                            fmt::format("gpsm sim: {} {}", run.chosen[ai].name, p.label()), "use a smaller --size");
      continue;
    }
    const double cells = double(p.n[0]) * double(std::max<std::int64_t>(p.n[1], 1)) * double(std::max<std::int64_t>(p.n[2], 1));
    const double bytes = cells * 4.0 * 2.0 * (replicas ? double(run.counts.back()) : 1.0);
    require_host_memory(bytes,
                        fmt::format("gpsm sim: {} {}: tracing {} cells{}", run.chosen[ai].name, p.label(), cells,
                                    replicas ? fmt::format(" (a replica on each of {} GPUs)", run.counts.back()) : ""),
                        "use a smaller --size");
  }
}

// The progress line on stderr and the run's wall time.
struct Progress {
  int done = 0, total = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
};

// One problem's results at every sweep point, as the tables and the JSON want them; the maps are
// by run, "label@gpus".
struct ProblemResults {
  explicit ProblemResults(std::size_t points) : records(points), useful(points), bounds(points), explained(points) {}
  std::vector<std::vector<apps::RunRecord>> records;  // [point]
  std::vector<std::map<std::string, double>> useful;  // [point]: payload bytes per iteration
  // [point]: what set each kernel's and the iteration's time (the last traced iteration): the
  // point's kernel_bounds and loop fields in the JSON
  std::vector<std::map<std::string, nlohmann::json>> bounds;
  std::vector<std::string> explained;  // [point]: --explain's lines
  std::vector<std::string> failed;     // "<run>: <why>" of each run whose trace could not be made
};

// The JSON of a result's bounds: kernel_bounds and loop.
nlohmann::json bounds_json(const sim::SimResult& r) {
  nlohmann::json kb = nlohmann::json::array();
  for (const sim::KernelBound& b : r.kernels)
    kb.push_back({{"gpu", b.gpu}, {"name", b.name}, {"bound", b.bound}, {"time_us", b.time_s * 1e6},
                  {"dram_us", b.dram_s * 1e6}, {"l2_us", b.l2_s * 1e6}, {"flops_us", b.flops_s * 1e6}, {"compute_us", b.compute_s * 1e6},
                  {"wave_factor", b.wave_factor}, {"serial_us", b.serial_s * 1e6},
                  {"chain_us", b.chain_s * 1e6}, {"issue_us", b.issue_s * 1e6}, {"warp_insts", b.warp_insts},
                  {"hot_word_us", b.hot_s * 1e6}, {"hot_requests", b.hot_requests},
                  {"dram_bytes", b.dram_bytes}, {"l2_bytes", b.l2_bytes}});
  return {{"kernel_bounds", std::move(kb)},
          {"loop",
           {{"bound", r.loop.bound},        {"named", r.loop.named},           {"time_us", r.loop.time_s * 1e6},
            {"gpus_us", r.loop.gpus_s * 1e6}, {"host_us", r.loop.host_s * 1e6}, {"hop_us", r.loop.hop_s * 1e6},
            {"readback_us", r.loop.readback_s * 1e6}}}};
}

// The trace a paradigm replays (its layout's), made on first use and kept in `traces`; "" or
// why it cannot be made (then remembered as an empty trace: the layout cannot run here).
std::string make_trace_once(std::map<std::string, sim::Trace>& traces, const std::string& layout, const SimApp& app,
                            const apps::Problem& p, int g, double sample, const sim::System& sys,
                            const std::string& head, const Progress& pr) {
  if (traces.count(layout)) return "";
  progress_show(fmt::format("{}: tracing ({} layout, sample {:.3g}) ({}{})", head, layout, sample,
                            elapsed_text(pr.elapsed()), eta_suffix(pr.elapsed(), pr.done, pr.total)));
  sim::TraceRequest req;
  req.app = app.name;
  req.problem = p;
  req.gpus = g;
  req.layout = layout;
  req.sample = sample;
  req.sms = sys.gpu.sms;  // the 3D step plans for the simulated GPU, as the launcher for its device
  try {
    traces[layout] = sim::make_trace(req);
  } catch (const std::invalid_argument& e) {
    traces[layout] = sim::Trace{};
    return e.what();
  }
  return "";
}

// One run (paradigm on g GPUs) at sweep point k: its record, and its useful bytes, bounds and
// --explain lines in res. fail: why it could not run; failed: whether that is a failed run (its
// trace could not be made: a bad graph file, an impossible size) rather than one that does not apply.
// trs: the paradigm's trace, or for infinite every kernel structure's (sim/bound.hpp).
void simulate_point(const SimArgs& a, const std::vector<const sim::Trace*>& trs, const sim::System& sys,
                    sim::SimParadigm par, int g, const apps::Problem& p, const sim::SimOptions& opt, int run_iters,
                    const std::string& fail, bool failed, ProblemResults& res, std::size_t k) {
  apps::RunRecord rec;
  rec.paradigm = bench_paradigm(par);
  rec.label = sim::sim_paradigm_name(par);
  rec.gpus = g;
  if (!fail.empty()) {
    rec.out.status = failed ? apps::RunStatus::failed : apps::RunStatus::unsupported;
    rec.out.reason = fail;
    res.records[k].push_back(std::move(rec));
    return;
  }
  // A trace shorter than asked converged (sssp): it is the whole run, as the bench's.
  auto options_for = [&](const sim::Trace& tr) {
    sim::SimOptions o = opt;
    o.run_iters = int(tr.iterations.size()) < p.iters ? int(tr.iterations.size()) : run_iters;
    return o;
  };
  sim::SimResult r;
  if (par == sim::SimParadigm::infinite) {
    std::vector<sim::BoundInput> in;
    for (const sim::Trace* tr : trs) in.push_back({tr, options_for(*tr)});
    r = sim::simulate_bound(in, sys);
  } else {
    r = sim::simulate(*trs.front(), sys, par, options_for(*trs.front()));
  }
  rec.out.status = apps::RunStatus::ok;
  rec.out.sec_per_iter = {r.sec_per_iter};
  rec.out.iterations = int(trs.front()->iterations.size());
  rec.out.error = std::numeric_limits<double>::quiet_NaN();      // nothing checked: the table shows '-'
  rec.out.tolerance = std::numeric_limits<double>::quiet_NaN();  // not verified: simulated
  rec.out.link_bytes_per_iter = r.link_bytes_per_iter;
  rec.out.timing = "simulated: " + r.model;
  const std::string key = fmt::format("{}@{}", rec.label, g);
  res.useful[k][key] = r.useful_bytes_per_iter;
  res.bounds[k][key] = bounds_json(r);
  if (a.explain)
    res.explained[k] += fmt::format("{} {} on {} GPU{}:\n{}{}", p.label(), rec.label, g, g == 1 ? "" : "s",
                                    sim::explain_kernels(r), sim::explain_loop(r));
  res.records[k].push_back(std::move(rec));
}

// Simulates one problem: every GPU count, paradigm and sweep point.
ProblemResults simulate_problem(const SimArgs& a, const SimRun& run, const SimApp& app, const apps::Problem& p,
                                Progress& pr) {
  ProblemResults res(run.points.size());
  const double cells = double(p.n[0]) * double(std::max<std::int64_t>(p.n[1], 1)) * double(p.n[2] > 0 ? p.n[2] : 1);
  // graph apps (p.graph set): 0 = auto, by edges (sim/trace_graph.hpp kGraphAutoEdges)
  const double sample =
      run.sample_fixed > 0 ? run.sample_fixed : !p.graph.empty() ? 0.0 : std::min(1.0, double(1 << 24) / cells);
  // The length of the run the bench would make, so UM's start-up faults weigh as there;
  // scatter (no bench app): the traced iterations alone.
  const int run_iters = a.run_iters >= 0 ? a.run_iters : app.app != nullptr ? app.app->problem(p.label(), 0).iters : 0;
  for (int g : run.counts) {
    const sim::System sys = run.system_for(g);
    std::map<std::string, sim::Trace> traces;        // by layout
    std::map<std::string, std::string> trace_errors;  // by layout: why its trace could not be made
    for (auto par : run.paradigms) {
      const std::string head = fmt::format("[{}/{}] {} {} {} on {} GPU{}", pr.done + 1, pr.total, app.name,
                                           p.label(), sim::sim_paradigm_name(par), g, g == 1 ? "" : "s");
      // The paradigm's kernels, or for the bound every kernel structure's (sim/bound.hpp): the
      // first layout is the paradigm's own (infinite: slabs), the others join where they trace.
      std::vector<std::string> layouts = {sim::sim_trace_layout(par)};
      if (par == sim::SimParadigm::infinite)
        for (const std::string& l : sim::bound_layouts())
          if (l != layouts.front()) layouts.push_back(l);
      std::string fail;
      std::vector<const sim::Trace*> trs;
      for (const std::string& layout : layouts) {
        std::string why = make_trace_once(traces, layout, app, p, g, sample, sys, head, pr);
        if (!why.empty()) trace_errors[layout] = why;
        else if (const auto e = trace_errors.find(layout); e != trace_errors.end()) why = e->second;
        if (layout == layouts.front()) fail = why;
        if (why.empty() && !traces[layout].iterations.empty()) trs.push_back(&traces[layout]);
      }
      const bool failed = !fail.empty();
      if (failed)
        res.failed.push_back(fmt::format("{} {} {} on {} GPU{}: {}", app.name, p.label(), sim::sim_paradigm_name(par), g,
                                         g == 1 ? "" : "s", fail));
      if (fail.empty() && (trs.empty() || trs.front() != &traces[layouts.front()]))
        fail = "no trace for this problem and GPU count";
      progress_show(fmt::format("{}: simulating ({}{})", head, elapsed_text(pr.elapsed()),
                                eta_suffix(pr.elapsed(), pr.done, pr.total)));
      for (std::size_t k = 0; k < run.points.size(); ++k)
        simulate_point(a, trs, sys, par, g, p, run.points[k].opt, run_iters, fail, failed, res, k);
      ++pr.done;
    }
  }
  progress_clear();
  return res;
}

// Sweep point k of one problem: its table (and --explain lines) on stdout, and its test's JSON.
nlohmann::json report_point(const SimArgs& a, const SimRun& run, const SimApp& app, const apps::Problem& p,
                            const ProblemResults& res, std::size_t k) {
  const SweepPoint& pt = run.points[k];
  const std::string title = fmt::format("SIMULATED on {} ({}), time per iteration{}", run.sys0.name,
                                        run.sys0.description, pt.label.empty() ? "" : ", " + pt.label);
  std::cout << apps::format_table(app.name, p, apps::summarize(res.records[k]), title) << "\n" << std::flush;
  if (a.explain && !res.explained[k].empty())
    std::cout << "what set each kernel's and each iteration's time (the last traced iteration):\n" << res.explained[k]
              << "\n" << std::flush;
  nlohmann::json j = apps::bench_test_json(app.name, app.description, p, res.records[k]);
  j["simulated"] = true;
  // payload the app needed moved, and link efficiency (payload / wire bytes), per point
  if (j.contains("series"))
    for (auto& se : j["series"])
      for (auto& jp : se["points"]) {
        const std::string key =
            fmt::format("{}@{}", se["label"].get<std::string>(), int(std::lround(jp["x"].get<double>())));
        if (const auto b = res.bounds[k].find(key); b != res.bounds[k].end()) jp.update(b->second);
        const auto u = res.useful[k].find(key);
        if (u == res.useful[k].end()) continue;
        jp["useful_bytes_per_iter"] = u->second;
        const double wire = jp.value("link_bytes_per_iter", 0.0);
        if (wire > 0) jp["link_efficiency"] = u->second / wire;
      }
  if (!pt.label.empty()) {
    j["name"] = j["name"].get<std::string>() + "_" + pt.label;
    j["sweep"] = {{"param", run.sweep_param}, {"value", pt.value}};
  }
  return j;
}

// --json: the results document (schema gpsm.results, tool sim).
void write_results(const SimArgs& a, const SimRun& run, nlohmann::json tests, int argc, char** argv, double elapsed) {
  scope::RunMeta m;
  for (int i = 0; i < argc; ++i) m.command += (i ? " " : "") + std::string(argv[i]);
  m.created = gpsm::scope::utc_now_iso8601();
  m.cpu_model = gpsm::scope::cpu_model_name();
  m.duration_s = elapsed;
  gpsm::topo::Topology topo;
  topo.notes.push_back("simulated: no GPU was used");
  nlohmann::json j = scope::results_document(m, topo, {}, gpsm::model::MachineModel{});
  j["tool"] = "sim";
  j["simulated"] = true;
  j.erase("model");
  j["system"] = system_json(run.sys0);
  j["tests"] = std::move(tests);
  nlohmann::json names = nlohmann::json::array();
  for (auto par : run.paradigms) names.push_back(sim::sim_paradigm_name(par));
  j["options"] = {{"app", a.app},
                  {"gpus", run.counts},
                  {"system", a.system},
                  {"paradigms", names},
                  {"sizes", run.sizes_run},
                  {"iters", a.iters},
                  {"axis", a.axis},
                  {"host_loop", a.host_loop},
                  {"sample", a.sample},
                  {"queue", a.queue},
                  {"gps_page", a.gps_page},
                  {"subheader", a.subheader},
                  {"proact_chunk", a.proact_chunk},
                  {"sweep", a.sweep}};
  gpsm::write_file_atomic(a.json_path, j.dump(1) + "\n");
  std::cerr << "gpsm sim: wrote " << a.json_path << "\n";
}
// --remote-study: GPU-SM's remote-access study priced on --system; --json: its H3 and H4 kernels
// as `gpsm scope`'s tests (tool sim, simulated), for `gpsm report` to overlay on a measured run.
int run_remote_study(const SimArgs& a, int argc, char** argv) {
  const bool from_file = a.system.size() > 5 && a.system.substr(a.system.size() - 5) == ".json";
  std::vector<gpsm::InputPath> inputs;
  if (from_file) inputs.push_back({"--system", a.system});
  gpsm::check_outputs({{"--json", a.json_path}}, inputs);  // before any work
  const sim::System sys = from_file ? sim::from_machine_model(a.system) : sim::preset(a.system);
  std::cout << sim::render_remote_study(sim::predict_remote_study(sys), sys.name);
  if (a.json_path.empty()) return kExitOk;
  scope::RunMeta m;
  for (int i = 0; i < argc; ++i) m.command += (i ? " " : "") + std::string(argv[i]);
  m.created = gpsm::scope::utc_now_iso8601();
  m.cpu_model = gpsm::scope::cpu_model_name();
  gpsm::topo::Topology topo;
  topo.notes.push_back("simulated: no GPU was used");
  nlohmann::json j = scope::results_document(m, topo, sim::predict_remote_study_tests(sys), gpsm::model::MachineModel{});
  j["tool"] = "sim";
  j["simulated"] = true;
  j.erase("model");
  j["system"] = system_json(sys);
  j["options"] = {{"remote_study", true}, {"system", a.system}};
  gpsm::write_file_atomic(a.json_path, j.dump(1) + "\n");
  std::cerr << "gpsm sim: wrote " << a.json_path << "\n";
  return kExitOk;
}
}  // namespace

int run_sim(const SimArgs& a, int argc, char** argv) {
  if (a.list) {
    print_list();
    return 0;
  }
  if (a.remote_study) return run_remote_study(a, argc, argv);
  if (a.ct_scaling) {
    std::cout << sim::ct_scaling_report();
    return kExitOk;
  }
  SimRun run;
  parse_run(a, run);  // bad arguments fail before any work
  {  // and the output: writable, and neither the machine model nor a graph file it reads
    auto inputs = size_file_inputs(split_nonempty(a.sizes));
    if (run.from_file) inputs.push_back({"--system", a.system});
    gpsm::check_outputs({{"--json", a.json_path}}, inputs);
  }
  begin_work();
  Progress pr;
  std::vector<std::string> failed;
  pr.total = run.total_runs();
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& [ai, p] : run.problems) {
    const SimApp& app = run.chosen[ai];
    const ProblemResults res = simulate_problem(a, run, app, p, pr);
    failed.insert(failed.end(), res.failed.begin(), res.failed.end());
    for (std::size_t k = 0; k < run.points.size(); ++k) tests.push_back(report_point(a, run, app, p, res, k));
  }
  if (!a.json_path.empty()) write_results(a, run, std::move(tests), argc, argv, pr.elapsed());
  std::cout << fmt::format("gpsm sim: {} simulated run(s){} in {:.1f} s (simulated results, not measured)\n",
                           pr.total, run.points.size() > 1 ? fmt::format(" x {} sweep values", run.points.size()) : "",
                           pr.elapsed());
  if (failed.empty()) return kExitOk;
  std::cerr << fmt::format("gpsm sim: {} of {} run(s) failed:\n", failed.size(), pr.total);
  for (const auto& f : failed) std::cerr << "  " << f << "\n";
  return kExitRunFailed;
}

}  // namespace gpsm::cli
