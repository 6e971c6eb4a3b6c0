// `gpsm bench`: run apps across GPUs under each paradigm, verified against the CPU reference,
// with a table per (app, size) on stdout, progress on stderr and a results document (--json).
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/harness/bench_report.hpp"
#include "apps/harness/gpu_memory.hpp"
#include "apps/harness/isolated_run.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/harness/run_outcome_json.hpp"
#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/self_exe.hpp"
#include "common/temp_dir.hpp"
#include "bench_proact.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "progress.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "scope/cuda_probe.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"
#include "proact/autotune.hpp"
#include "common/memory_budget.hpp"
#include "common/split.hpp"

namespace gpsm::cli {

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  auto* c = app.add_subcommand("bench",
                               "Run an app across GPUs under each multi-GPU paradigm; per run the time per iteration, "
                               "speedup, percent of opportunity, bytes between GPUs and the verification error");
  c->add_option("--app", a.app, "App name or all (see --list)")->capture_default_str();
  c->add_option("--gpus", a.gpus, "GPU counts to run, comma-separated")->capture_default_str();
  c->add_option("--paradigm", a.paradigm,
                "all, or a comma-separated list of: single, memcpy, um, um_hints, rdl, p2p_inline, gps, gps_all, "
                "gps_pipe, proact, nvshmem, nccl, cpu_free, cpu_ctrl_std, cpu_ctrl_pipe, cpu_free_std, cpu_free_pipe, nvshmem_std, "
                "nvshmem_pipe, infinite (cg: single, cpu_ctrl_*, cpu_free_*, nvshmem_* = cpu_free_*'s kernel in one "
                "NVSHMEM process per GPU, gps = Standard CG on GPS memory, gps_pipe = Pipelined CG on GPS memory, "
                "infinite; --list shows each app's)")
      ->capture_default_str();
  c->add_option("--size", a.sizes,
                "Problem size(s), comma-separated: jacobi2d N or NXxNY (default 4096,16384); 3D apps N or NXxNYxNZ; "
                "graph apps (pagerank, sssp, als) rmat:S[:EF], road:N[xNY], ratings:U[xI[xP]] or a .mtx / SNAP "
                "file, with @nnz (nnz-balanced rows) and @tol=X (PageRank); ct small, medium, seed or "
                "NXxNYxNZ:VIEWSxROWSxCHANNELS[:helical|:circular], with @subsets=M (ordered subsets, default 24); "
                "filter WxH:kK[:constant|replicated|remote] (KxK filter, where its weights live); cg poisson2d:N, "
                "poisson3d:N, poisson27:N, elastic:N, banded:ROWS:NNZ, arrow:ROWS or a .mtx file, or table3.1[:I-J] "
                "(t31): the 18 generated stand-ins for the CPU-free thesis' Table 3.1, docs/cg.md; fd3d N:hR[:AXES], "
                "NXxNYxNZ:hR[:AXES] or table1[:AXES] (GPU-SM's Table 1: halo R = 2, 4, 8 or 16; AXES some of x, y, z, "
                "one run each, winning over --axis), docs/fd3d.md "
                "(default: the app's strong-scaling and large sizes, see --list)");
  c->add_option("--axis", a.axis, "3D apps: the axis the domain is split along (x, y or z; fd3d: where --size names none)")->capture_default_str();
  c->add_option("--iters", a.iters, "Iterations (0: the app's default; jacobi2d 1000; pagerank 20; sssp: the cap, 1000; als: epochs, 5; ct: 3, each visiting every subset once; fd3d: 2^32 cell updates, 10 to 100)")->capture_default_str();
  c->add_option("--nccheck", a.nccheck, "jacobi2d: norm every N iterations")->capture_default_str();
  c->add_option("--reps", a.reps, "Timed repetitions (>= 5 for reported figures)")->capture_default_str();
  c->add_option("--warmup", a.warmup, "Untimed repetitions first")->capture_default_str();
  c->add_option("--devices", a.devices, "Comma-separated CUDA device ids to draw GPUs from (default: all)");
  c->add_option("--json", a.json_path, "Write the results document (schema gpsm.results, tool bench) to FILE");
  c->add_flag("--list", a.list, "List the apps and the paradigms each implements, then exit");
  c->add_option("--pictures", a.pictures,
                "ct: write the central slices of the phantom, first iterate and final image and the cost per "
                "iteration into DIR (ct-<size>.json and .f32, once per size); `gpsm report DIR/ct-*.json` draws them");
  c->add_option("--proact-chunk", a.proact_chunk,
                "proact: bytes per chunk (K, M suffixes) for the apps whose chunk is a choice (pagerank, sssp, als: "
                "rounded up to whole kernel blocks); wins over GPSM_GRAPH_PROACT_CHUNK; jacobi2d's chunk is one halo "
                "row and heat3d's / wave3d's one edge of halo planes whatever this says");
  c->add_option("--proact-cache", a.proact_cache,
                "proact: take each run's agent and chunk from the choice cache FILE (key: machine, <app>:<gpus>gpu, "
                "the bytes the app publishes): memcpy runs the app's memcpy exchange, inline its p2p_inline one, "
                "copy_engine its copy-engine exchange with the entry's chunk; a missing entry, or one choosing an "
                "agent the apps lack (persistent, device_launch), leaves copy engines and the app's default chunk "
                "(said on stdout)");
  c->add_option("--proact-tune", a.proact_tune,
                "proact profiler: per app, size and GPU count run memcpy, p2p_inline and proact once per "
                "--proact-chunks size (apps whose chunk is fixed: proact once), choose the agent and chunk (gpsm "
                "proact's autotuner) and record the choice in the cache FILE (JSON; created or extended)");
  c->add_option("--proact-chunks", a.proact_chunks,
                "--proact-tune's chunk sizes: a power-of-two range LO..HI or a comma list (default 64K..4M)");
  c->add_option("--proact-margin", a.proact_margin,
                "--proact-tune: noise margin; a simpler configuration within it wins (memcpy over inline over copy engines)")
      ->capture_default_str();
  c->add_flag("--isolate", a.isolate,
             "Run every run (paradigm, GPU count, size) in a gpsm process of its own: a fresh CUDA context "
             "and memory each, so no run's time depends on the runs before it in the process (where buffers "
             "land moves a memory-bound kernel by up to ~3 % on H200, docs/bench.md), and a crash fails only its "
             "run. The children share the app's references and generated inputs (graphs, CT's scan) through a "
             "temporary folder under $TMPDIR: each is made once per command, as in one process");
  // The child side of --isolate, hidden from --help.
  c->add_option("--isolated-run", a.isolated_run)->group("");
  c->add_option("--isolated-outcome", a.isolated_outcome)->group("");
  c->add_option("--isolated-references", a.isolated_references)->group("");
  return c;
}

int run_bench(const BenchArgs& a, int argc, char** argv) {
  using namespace gpsm::apps;
  auto apps = make_apps();
  if (a.list) {
    for (const auto& app : apps) {
      std::string has;
      for (int i = 0; i < kParadigmCount; ++i)
        if (app->has(static_cast<Paradigm>(i))) has += std::string(has.empty() ? "" : ", ") + paradigm_name(static_cast<Paradigm>(i));
      std::cout << fmt::format("{:<10} {}\n           paradigms: {}\n           default sizes: {}\n", app->name(),
                               app->description(), has, app->default_sizes());
    }
    return 0;
  }
  // Arguments first: bad ones fail on any machine.
  std::vector<App*> chosen;
  for (const auto& app : apps)
    if (a.app == "all" || a.app == app->name()) chosen.push_back(app.get());
  if (chosen.empty()) throw std::invalid_argument("unknown --app '" + a.app + "' (gpsm bench --list shows the apps)");
  auto paradigms = parse_paradigms(a.paradigm);
  BenchProact proact(a);  // --proact-*: checked (and a cache file read) before any GPU work
  proact.require_paradigms(paradigms, chosen);
  const auto counts = parse_gpu_counts(a.gpus);
  if (a.reps < 1 || a.warmup < 0 || a.nccheck < 1 || a.iters < 0)
    throw std::invalid_argument("--reps must be >= 1, --warmup >= 0, --nccheck >= 1, --iters >= 0");
  // The child of --isolate: both hidden options or neither.
  const bool child = a.isolated_run != 0;
  if (child != !a.isolated_outcome.empty() || a.isolated_run < 0)
    throw std::invalid_argument("--isolated-run K (K >= 1) and --isolated-outcome FILE go together (gpsm bench "
                                "--isolate passes them to its children; use --isolate)");
  if (!a.isolated_references.empty() && (!child || !std::filesystem::is_directory(a.isolated_references)))
    throw std::invalid_argument("--isolated-references " + a.isolated_references +
                                ": an existing folder, given with --isolated-run (gpsm bench --isolate passes it to "
                                "its children; use --isolate)");
  const Axis axis = parse_axis(a.axis);
  std::vector<std::pair<App*, Problem>> problems;
  std::vector<std::string> sizes_run;
  std::vector<std::string> size_values;
  for (App* app : chosen) {
    std::vector<std::string> sizes;
    for (const auto& entry : split_nonempty(a.sizes.empty() ? app->default_sizes() : a.sizes))
      for (auto& member : app->expand_size(entry)) sizes.push_back(std::move(member));
    if (sizes.empty()) throw std::invalid_argument(std::string("--size is needed for ") + app->name());
    for (const auto& sz : sizes) {
      sizes_run.push_back(std::string(app->name()) + ":" + sz);
      size_values.push_back(sz);
      Problem p = app->problem(sz, a.iters);
      p.nccheck = a.nccheck;
      p.axis = axis;
      problems.emplace_back(app, p);
    }
  }
  // The host side of every problem (CPU reference, gathered result, generated graph) checked before
  // any work, so an impossible size is refused with the figure here, not in std::bad_alloc later.
  for (auto& [app, p] : problems)
    gpsm::require_host_memory(app->host_bytes(p), fmt::format("gpsm bench: {} {}", app->name(), p.label()),
                              "use a smaller --size");
  {  // outputs before any GPU work: writable, and none of this command's inputs
    auto inputs = size_file_inputs(size_values);
    inputs.push_back({"--proact-cache", a.proact_cache});
    gpsm::check_outputs({{"--proact-tune", a.proact_tune}}, inputs);
    inputs.push_back({"--proact-tune", a.proact_tune});  // read, then extended: not for --json
    gpsm::check_outputs({{"--json", a.json_path}}, inputs);
    if (!a.pictures.empty()) {
      bool ct = false;
      for (App* app : chosen) ct = ct || std::string(app->name()) == "ct";
      if (!ct)
        throw std::invalid_argument("--pictures " + a.pictures +
                                    ": only the ct app writes pictures; add --app ct or leave --pictures out");
      gpsm::check_output_dir("--pictures", a.pictures, {}, inputs);
    }
  }
  std::vector<int> pool;
  if (!a.devices.empty()) pool = parse_device_list(a.devices);
  std::string why;
  const int ngpu = gpsm::scope::cuda_device_count(&why);
  require_gpus(ngpu, 1, why, "bench", "gpsm bench runs on GPUs; `gpsm sim` simulates the same apps without one");
  if (pool.empty())
    for (int d = 0; d < ngpu; ++d) pool.push_back(d);
  require_devices_exist(pool, ngpu);
  if (counts.back() > static_cast<int>(pool.size())) {
    const std::string msg = fmt::format("gpsm bench: --gpus asks for {} GPUs; {} available{}", counts.back(),
                                        pool.size(), a.devices.empty() ? "" : " in --devices");
    if (a.devices.empty()) throw NoGpu(msg + "; run on a larger node or ask for fewer");
    throw BadInput(msg + "; list more devices or ask for fewer");
  }
  begin_work();
  // --isolate: one folder of references for the whole command, its children writing and reading
  // it (apps/harness/reference_cache.hpp); removed when the command ends.
  // A signal (Ctrl-C, a timeout's SIGTERM) then stops the running child and removes the folders
  // before the process ends by it (common/interrupt.hpp), instead of leaving gigabytes in $TMPDIR.
  std::optional<gpsm::InterruptGuard> interrupts;
  std::optional<gpsm::TempDir> shared_refs;
  if (a.isolate && !child) {
    interrupts.emplace();
    shared_refs.emplace("gpsm-references", "gpsm bench --isolate's shared references");
  }
  std::optional<ReferenceCache> refs;  // a child's view of its parent's folder
  if (!a.isolated_references.empty()) refs.emplace(a.isolated_references);
  const std::string exe = shared_refs ? gpsm::self_exe("bench --isolate") : std::string();  // the children's executable

  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  auto topo = gpsm::scope::discover_topology();
  {
    std::string gpu_name;
    for (const auto& gpu : topo.gpus)
      if (gpu.index == pool.front()) gpu_name = gpu.name;
    proact.set_machine(gpsm::proact::machine_key(std::getenv("GPSM_DEVICE_KIND"), topo.hostname, gpu_name));
  }
  nlohmann::json tests = nlohmann::json::array();
  int failed = 0, total = 0, done = 0;
  for (auto& [app, p] : problems)
    for (int g : counts)
      for (Paradigm par : paradigms) total += static_cast<int>(proact.points(*app, par, g).size());
  if (child && a.isolated_run > total)
    throw std::invalid_argument(fmt::format("--isolated-run {}: this command has {} run(s)", a.isolated_run, total));
  for (auto& [app, p] : problems) {
    std::vector<RunRecord> records;
    for (int g : counts) {
      for (Paradigm par : paradigms)
        for (std::uint64_t point : proact.points(*app, par, g)) {  // point: a --proact-tune chunk size, or 0
          ++done;
          if (child && done != a.isolated_run) continue;
          RunRequest req;
          req.paradigm = par;
          req.devices.assign(pool.begin(), pool.begin() + g);
          req.problem = p;
          req.reps = a.reps;
          req.warmup = a.warmup;
          req.pictures_dir = a.pictures;
          if (refs) req.references = &*refs;
          proact.configure(req, *app, g, point);
          const std::string label = point > 0 ? proact.label(point) : paradigm_name(par);
          const std::string head = fmt::format("[{}/{}] {} {} {} on {} GPU{}", done, total, app->name(), p.label(),
                                               label, g, g == 1 ? "" : "s");
          req.progress = [&](const std::string& s) {
            if (child)  // a line each: the parent shows the newest under its own head
              std::cerr << s << "\n" << std::flush;
            else
              progress_show(fmt::format("{}: {} ({}{})", head, s, elapsed_text(elapsed()),
                                        eta_suffix(elapsed(), done - 1, total)));
          };
          req.progress("setting up");
          RunRecord rec;
          rec.paradigm = par;
          rec.gpus = g;
          rec.label = proact.label(point);
          // A size the GPUs cannot hold fails its run with the figure, not a CUDA out-of-memory error.
          // (A paradigm the app lacks reports `unsupported` from run() as before.)
          if (a.isolate && !child) {
            // The child runs the same enumeration and stops at this run (memory check included).
            std::vector<std::string> args(argv + 1, argv + argc);
            args.insert(args.end(), {"--isolated-run", std::to_string(done), "--isolated-references", shared_refs->path()});
            const IsolatedRun iso{fmt::format("{} {} {} on {} GPU{}", app->name(), p.label(), label, g, g == 1 ? "" : "s"),
                                  exe, args};
            rec.out = run_isolated(iso, [&](const std::string& line) { req.progress("in its own process: " + line); });
          } else if (const std::string no_room = app->has(par) ? gpu_memory_check(*app, p, par, req.devices) : std::string();
                     !no_room.empty()) {
            rec.out.status = RunStatus::failed;
            rec.out.reason = no_room;
          } else {
            rec.out = app->run(req);
          }
          if (child) {  // this run was the child's one job: hand it to the parent, nothing else
            gpsm::write_file_atomic(a.isolated_outcome, run_outcome_to_json(rec.out).dump() + "\n");
            return 0;
          }
          if (rec.out.status == RunStatus::failed) {
            ++failed;
            progress_clear();
            std::cerr << fmt::format("{}: FAILED: {}\n", head, rec.out.reason);
          }
          if (proact.any() && par == Paradigm::proact && !rec.out.proact.source.empty()) {
            progress_clear();
            std::cout << fmt::format("{}: proact: agent {}: {}; chunk as built {}\n", head,
                                     rec.out.proact.agent.empty() ? std::string("?") : rec.out.proact.agent,
                                     rec.out.proact.source,
                                     rec.out.proact.chunk_bytes > 0
                                         ? gpsm::format_size(rec.out.proact.chunk_bytes)
                                         : std::string("(none)"))
                      << std::flush;
          }
          records.push_back(std::move(rec));
        }
      progress_clear();
      if (!child) proact.decide(*app, g, records);  // a child returns at its run; the runs before it are not its
    }
    if (child) continue;
    progress_clear();
    std::cout << format_table(app->name(), p, summarize(records)) << "\n" << std::flush;
    tests.push_back(bench_test_json(app->name(), app->description(), p, records));
  }
  // A child that did not meet its run must not go on to write the parent's results file.
  if (child) throw gpsm::Error(fmt::format("gpsm bench: run {} of {} was not reached", a.isolated_run, total));
  throw_if_interrupted("gpsm bench --isolate");  // a signal after the last child (none without --isolate)
  if (!a.json_path.empty()) {
    scope::RunMeta m;
    for (int i = 0; i < argc; ++i) m.command += (i ? " " : "") + std::string(argv[i]);
    m.created = gpsm::scope::utc_now_iso8601();
    if (const char* k = std::getenv("GPSM_DEVICE_KIND")) m.device_kind = k;
    m.hostname = topo.hostname;
    m.cpu_model = gpsm::scope::cpu_model_name();
    m.logical_cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    m.duration_s = elapsed();
    nlohmann::json j = scope::results_document(m, topo, {}, gpsm::model::MachineModel{});
    j["tool"] = "bench";
    j.erase("model");
    j["tests"] = tests;
    nlohmann::json names = nlohmann::json::array();
    for (Paradigm par : paradigms) names.push_back(paradigm_name(par));
    j["options"] = {{"app", a.app},   {"gpus", counts},        {"paradigms", names},   {"sizes", sizes_run},
                    {"iters", a.iters}, {"nccheck", a.nccheck}, {"axis", a.axis}, {"reps", a.reps},       {"warmup", a.warmup},
                    {"devices", pool}, {"isolate", a.isolate}};
    proact.record_options(j["options"]);
    gpsm::write_file_atomic(a.json_path, j.dump(1) + "\n");
    std::cerr << "gpsm bench: wrote " << a.json_path << "\n";
  }
  std::cout << proact.summary();
  std::cout << fmt::format("gpsm bench: {} run(s), {} failed, in {:.1f} s\n", total, failed, elapsed());
  return failed ? 1 : 0;
}

}  // namespace gpsm::cli
