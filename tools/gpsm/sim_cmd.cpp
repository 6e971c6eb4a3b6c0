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
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/harness/bench_report.hpp"
#include "apps/stencil/decomp.hpp"  // parse_axis
#include "commands.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "sim/engine.hpp"
#include "sim/explain.hpp"
#include "sim/system.hpp"
#include "sim/trace_gen.hpp"
#include "common/split.hpp"

namespace gpsm::cli {

CLI::App* add_sim_command(CLI::App& app, SimArgs& a) {
  auto* c = app.add_subcommand("sim",
                               "Simulate apps on a multi-GPU system (no GPU needed): trace-driven, every paradigm "
                               "including the GPS and FinePack hardware; prints gpsm bench's table, marked simulated");
  c->add_option("--app", a.app,
                "jacobi2d, heat3d, wave3d, scatter (synthetic 4-B scattered stores, 25 % to other GPUs), pagerank, "
                "sssp (--size a graph spec as gpsm bench: rmat:20, road:1024, @nnz) or all (the three stencils)")
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
  c->add_flag("--explain", a.explain,
              "After each table, per run and kernel of the last traced iteration: the bound that set its time "
              "(dram, l2, flops, serial march steps, chained loads, instruction issue or chain+issue) and every "
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
}  // namespace

int run_sim(const SimArgs& a, int argc, char** argv) {
  using namespace gpsm::apps;
  if (a.list) {
    std::cout << "system presets (--system; or a gpsm scope machine_model.json):\n";
    for (const auto& n : sim::preset_names()) {
      const sim::System s = sim::preset(n);
      std::cout << fmt::format("  {:<12} {}\n", n, s.description);
    }
    std::cout << "paradigms (--paradigm):";
    for (auto p : sim::parse_sim_paradigms("all")) std::cout << " " << sim::sim_paradigm_name(p);
    std::cout << "\napps (--app): jacobi2d, heat3d, wave3d, scatter (default size " << kScatterDefaultSize
              << " elements), pagerank, sssp (graph specs as gpsm bench)\nsweeps (--sweep): link_bw [GB/s list], queue [entries], page [bytes], subheader "
                 "[bytes 2..6]\n";
    return 0;
  }
  // ---- arguments (bad ones fail before any work) ----
  auto apps_all = make_apps();
  std::vector<SimApp> chosen;
  for (const auto& app : apps_all) {
    const std::string n = app->name();
    if ((a.app == "all" && (n == "jacobi2d" || n == "heat3d" || n == "wave3d")) || a.app == n)
      chosen.push_back({n, app->description(), app.get()});
  }
  if (a.app == "scatter") chosen.push_back({"scatter", kScatterDescription, nullptr});
  if (chosen.empty())
    throw std::invalid_argument("unknown --app '" + a.app + "' (jacobi2d, heat3d, wave3d, scatter, pagerank, sssp or all)");
  const auto paradigms = sim::parse_sim_paradigms(a.paradigm);
  const auto counts = parse_gpu_counts(a.gpus);
  const Axis axis = parse_axis(a.axis);
  if (a.iters < 1) throw std::invalid_argument("--iters must be >= 1");
  double sample_fixed = 0;  // 0: auto
  if (a.sample != "auto") {
    try {
      std::size_t pos = 0;
      sample_fixed = std::stod(a.sample, &pos);
      if (pos != a.sample.size()) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw std::invalid_argument("--sample must be auto or a fraction in (0, 1], got '" + a.sample + "'");
    }
    if (!(sample_fixed > 0 && sample_fixed <= 1))
      throw std::invalid_argument("--sample must be in (0, 1], got '" + a.sample + "'");
  }
  if (a.subheader < 2 || a.subheader > 6) throw std::invalid_argument("--subheader must be 2..6");
  if (a.queue < 1) throw std::invalid_argument("--queue must be >= 1");
  if (a.host_loop != "graph" && a.host_loop != "stream")
    throw std::invalid_argument("--host-loop must be graph or stream, got '" + a.host_loop + "'");
  sim::SimOptions base;
  base.graph_launch = a.host_loop == "graph";
  base.write_queue_entries = a.queue;
  base.finepack_subheader = a.subheader;
  base.gps_page_bytes = double(gpsm::scope::parse_size(a.gps_page));
  base.proact_chunk_bytes = double(gpsm::scope::parse_size(a.proact_chunk));

  const bool from_file = a.system.size() > 5 && a.system.substr(a.system.size() - 5) == ".json";
  auto system_for = [&](int gpus) {
    sim::System s = from_file ? sim::from_machine_model(a.system) : sim::preset(a.system, gpus);
    if (from_file) s.gpus = gpus;
    return s;
  };
  const sim::System sys0 = system_for(counts.back());  // fails early on an unknown preset

  // sweep points
  std::vector<SweepPoint> points;
  std::string sweep_param;
  if (a.sweep.empty()) {
    points.push_back({"", 0, base});
  } else {
    sweep_param = a.sweep[0];
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
        x = sweep_param == "page" ? double(gpsm::scope::parse_size(v)) : std::stod(v);
      } catch (const std::exception&) {
        throw std::invalid_argument("--sweep " + sweep_param + ": bad value '" + v + "'");
      }
      if (!(x > 0)) throw std::invalid_argument("--sweep " + sweep_param + ": values must be > 0 (got '" + v + "')");
      if (sweep_param == "subheader" && !(x >= 2 && x <= 6 && x == std::floor(x)))
        throw std::invalid_argument("--sweep subheader: values must be whole bytes 2..6 (got '" + v + "')");
      pt.value = x;
      pt.label = sweep_param + "=" + v;
      if (sweep_param == "link_bw") pt.opt.link_scale = x / sys0.link.raw_GBps;  // each run rescales its system's link
      if (sweep_param == "queue") pt.opt.write_queue_entries = x;
      if (sweep_param == "page") pt.opt.gps_page_bytes = x;
      if (sweep_param == "subheader") pt.opt.finepack_subheader = int(x);
      points.push_back(pt);
    }
    if (points.empty()) throw std::invalid_argument("--sweep " + sweep_param + ": no values");
  }

  std::vector<std::pair<const SimApp*, Problem>> problems;
  std::vector<std::string> sizes_run;
  for (const SimApp& app : chosen) {
    const auto sizes = split_nonempty(a.sizes.empty() ? (app.app ? app.app->default_sizes() : kScatterDefaultSize) : a.sizes);
    if (sizes.empty()) throw std::invalid_argument("--size is needed for " + app.name);
    for (const auto& sz : sizes) {
      sizes_run.push_back(app.name + ":" + sz);
      if (app.app != nullptr) {
        Problem p = app.app->problem(sz, a.iters);
        p.axis = axis;
        problems.emplace_back(&app, p);
        continue;
      }
      Problem p;  // scatter: n[0] elements
      std::uint64_t n = 0;
      try {
        n = gpsm::scope::parse_size(sz);
      } catch (const std::exception&) {
        throw std::invalid_argument("--size for scatter: bad element count '" + sz + "'");
      }
      if (n < 1 || n > (std::uint64_t(1) << 34))
        throw std::invalid_argument("--size for scatter: element count must be 1..2^34 (got '" + sz + "')");
      p.n[0] = std::int64_t(n);
      p.iters = a.iters;
      problems.emplace_back(&app, p);
    }
  }

  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  nlohmann::json tests = nlohmann::json::array();
  const int total = int(problems.size() * counts.size() * paradigms.size());
  int done = 0;
  // records[point][problem]
  std::vector<std::vector<std::vector<RunRecord>>> records(points.size(),
                                                           std::vector<std::vector<RunRecord>>(problems.size()));
  // useful (payload) bytes per iteration of each run, [point][problem][label@gpus], for the JSON
  std::vector<std::vector<std::map<std::string, double>>> useful(points.size(),
                                                                 std::vector<std::map<std::string, double>>(problems.size()));
  // what set each kernel's and the iteration's time (the last traced iteration), per
  // [point][problem][label@gpus]: the point's kernel_bounds and loop fields in the JSON
  std::vector<std::vector<std::map<std::string, nlohmann::json>>> bounds(
      points.size(), std::vector<std::map<std::string, nlohmann::json>>(problems.size()));
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    const SimApp* app = problems[pi].first;
    const Problem& p = problems[pi].second;
    double cells = double(p.n[0]) * double(std::max<std::int64_t>(p.n[1], 1)) * double(p.n[2] > 0 ? p.n[2] : 1);
    // graph apps (p.graph set): 0 = auto, by edges (sim/trace_graph.hpp kGraphAutoEdges)
    const double sample = sample_fixed > 0 ? sample_fixed : !p.graph.empty() ? 0.0 : std::min(1.0, double(1 << 24) / cells);
    // The length of the run the bench would make, so UM's start-up faults weigh as there;
    // scatter (no bench app): the traced iterations alone.
    const int run_iters = a.run_iters >= 0 ? a.run_iters : app->app != nullptr ? app->app->problem(p.label(), 0).iters : 0;
    std::vector<std::string> explained(points.size());  // --explain: this problem's lines per point
    for (int g : counts) {
      const sim::System sys = system_for(g);
      std::map<std::string, sim::Trace> traces;  // by layout
      for (auto par : paradigms) {
        ++done;
        const std::string layout = sim::sim_trace_layout(par);
        const std::string head = fmt::format("[{}/{}] {} {} {} on {} GPU{}", done, total, app->name, p.label(),
                                             sim::sim_paradigm_name(par), g, g == 1 ? "" : "s");
        std::string fail;
        if (!traces.count(layout)) {
          std::cerr << fmt::format("\r\033[K{}: tracing ({} layout, sample {:.3g}) ({:.0f} s)", head, layout, sample,
                                   elapsed())
                    << std::flush;
          sim::TraceRequest req;
          req.app = app->name;
          req.problem = p;
          req.gpus = g;
          req.layout = layout;
          req.sample = sample;
          req.sms = sys.gpu.sms;  // the 3D step plans for the simulated GPU, as the launcher for its device
          try {
            traces[layout] = sim::make_trace(req);
          } catch (const std::invalid_argument& e) {
            traces[layout] = sim::Trace{};  // remembered: this layout cannot run here
            fail = e.what();
          }
        }
        const sim::Trace& tr = traces[layout];
        if (fail.empty() && tr.iterations.empty()) fail = "no trace for this problem and GPU count";
        std::cerr << fmt::format("\r\033[K{}: simulating ({:.0f} s)", head, elapsed()) << std::flush;
        for (std::size_t k = 0; k < points.size(); ++k) {
          RunRecord rec;
          rec.paradigm = bench_paradigm(par);
          rec.label = sim::sim_paradigm_name(par);
          rec.gpus = g;
          if (!fail.empty()) {
            rec.out.status = RunStatus::unsupported;
            rec.out.reason = fail;
          } else {
            sim::SimOptions opt = points[k].opt;
            // A trace shorter than asked converged (sssp): it is the whole run, as the bench's.
            opt.run_iters = int(tr.iterations.size()) < p.iters ? int(tr.iterations.size()) : run_iters;
            const sim::SimResult r = sim::simulate(tr, sys, par, opt);
            rec.out.status = RunStatus::ok;
            rec.out.sec_per_iter = {r.sec_per_iter};
            rec.out.iterations = int(tr.iterations.size());
            rec.out.error = std::numeric_limits<double>::quiet_NaN();  // nothing checked: the table shows '-'
            rec.out.tolerance = std::numeric_limits<double>::quiet_NaN();  // not verified: simulated
            rec.out.link_bytes_per_iter = r.link_bytes_per_iter;
            rec.out.timing = "simulated: " + r.model;
            useful[k][pi][fmt::format("{}@{}", rec.label, g)] = r.useful_bytes_per_iter;
            nlohmann::json kb = nlohmann::json::array();
            for (const sim::KernelBound& b : r.kernels)
              kb.push_back({{"gpu", b.gpu}, {"name", b.name}, {"bound", b.bound}, {"time_us", b.time_s * 1e6},
                            {"dram_us", b.dram_s * 1e6}, {"l2_us", b.l2_s * 1e6}, {"flops_us", b.flops_s * 1e6},
                            {"wave_factor", b.wave_factor}, {"serial_us", b.serial_s * 1e6},
                            {"chain_us", b.chain_s * 1e6}, {"issue_us", b.issue_s * 1e6}, {"warp_insts", b.warp_insts},
                            {"hot_word_us", b.hot_s * 1e6}, {"hot_requests", b.hot_requests},
                            {"dram_bytes", b.dram_bytes}, {"l2_bytes", b.l2_bytes}});
            bounds[k][pi][fmt::format("{}@{}", rec.label, g)] = {
                {"kernel_bounds", std::move(kb)},
                {"loop",
                 {{"bound", r.loop.bound},        {"named", r.loop.named},           {"time_us", r.loop.time_s * 1e6},
                  {"gpus_us", r.loop.gpus_s * 1e6}, {"host_us", r.loop.host_s * 1e6}, {"hop_us", r.loop.hop_s * 1e6},
                  {"readback_us", r.loop.readback_s * 1e6}}}};
            if (a.explain)
              explained[k] += fmt::format("{} {} on {} GPU{}:\n{}{}", p.label(), rec.label, g, g == 1 ? "" : "s",
                                          sim::explain_kernels(r), sim::explain_loop(r));
          }
          records[k][pi].push_back(std::move(rec));
        }
      }
    }
    std::cerr << "\r\033[K";
    for (std::size_t k = 0; k < points.size(); ++k) {
      const std::string title = fmt::format("SIMULATED on {} ({}), time per iteration{}", sys0.name, sys0.description,
                                            points[k].label.empty() ? "" : ", " + points[k].label);
      std::cout << format_table(app->name, p, summarize(records[k][pi]), title) << "\n" << std::flush;
      if (a.explain && !explained[k].empty())
        std::cout << "what set each kernel's and each iteration's time (the last traced iteration):\n" << explained[k]
                  << "\n" << std::flush;
      nlohmann::json j = bench_test_json(app->name, app->description, p, records[k][pi]);
      j["simulated"] = true;
      // payload the app needed moved, and link efficiency (payload / wire bytes), per point
      if (j.contains("series"))
        for (auto& se : j["series"])
          for (auto& pt : se["points"]) {
            const std::string key =
                fmt::format("{}@{}", se["label"].get<std::string>(), int(std::lround(pt["x"].get<double>())));
            if (const auto b = bounds[k][pi].find(key); b != bounds[k][pi].end()) pt.update(b->second);
            const auto u = useful[k][pi].find(key);
            if (u == useful[k][pi].end()) continue;
            pt["useful_bytes_per_iter"] = u->second;
            const double wire = pt.value("link_bytes_per_iter", 0.0);
            if (wire > 0) pt["link_efficiency"] = u->second / wire;
          }
      if (!points[k].label.empty()) {
        j["name"] = j["name"].get<std::string>() + "_" + points[k].label;
        j["sweep"] = {{"param", sweep_param}, {"value", points[k].value}};
      }
      tests.push_back(j);
    }
  }
  if (!a.json_path.empty()) {
    scope::RunMeta m;
    for (int i = 0; i < argc; ++i) m.command += (i ? " " : "") + std::string(argv[i]);
    m.created = gpsm::scope::utc_now_iso8601();
    m.cpu_model = gpsm::scope::cpu_model_name();
    m.duration_s = elapsed();
    gpsm::topo::Topology topo;
    topo.notes.push_back("simulated: no GPU was used");
    nlohmann::json j = scope::results_document(m, topo, {}, gpsm::model::MachineModel{});
    j["tool"] = "sim";
    j["simulated"] = true;
    j.erase("model");
    j["system"] = system_json(sys0);
    j["tests"] = tests;
    nlohmann::json names = nlohmann::json::array();
    for (auto par : paradigms) names.push_back(sim::sim_paradigm_name(par));
    j["options"] = {{"app", a.app},
                    {"gpus", counts},
                    {"system", a.system},
                    {"paradigms", names},
                    {"sizes", sizes_run},
                    {"iters", a.iters},
                    {"axis", a.axis},
                    {"host_loop", a.host_loop},
                    {"sample", a.sample},
                    {"queue", a.queue},
                    {"gps_page", a.gps_page},
                    {"subheader", a.subheader},
                    {"proact_chunk", a.proact_chunk},
                    {"sweep", a.sweep}};
    std::ofstream f(a.json_path);
    if (!f) throw gpsm::Error("gpsm: cannot write " + a.json_path);
    f << j.dump(1) << "\n";
    if (!f) throw gpsm::Error("gpsm: error writing " + a.json_path);
    std::cerr << "gpsm sim: wrote " << a.json_path << "\n";
  }
  std::cout << fmt::format("gpsm sim: {} simulated run(s){} in {:.1f} s (simulated results, not measured)\n", total,
                           points.size() > 1 ? fmt::format(" x {} sweep values", points.size()) : "", elapsed());
  return 0;
}

}  // namespace gpsm::cli
