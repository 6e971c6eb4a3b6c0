// `gpsm filter`: filter a PNG across the GPUs (image filtering of the GPU-SM paper, §3.3.2): read it
// (8/16-bit gray, gray+alpha, RGB or RGBA, made gray float: apps/filter/png_io.hpp), apply a named
// filter `--iters` times with clamp-to-edge borders on `--gpus` GPUs in one paradigm (default:
// rdl, the distributed array), check the result against the CPU reference bit for bit, write an
// 8-bit gray PNG.
#include <chrono>
#include <iostream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "apps/filter/filter_reference.hpp"
#include "apps/filter/filter_runs.hpp"
#include "apps/filter/filter_spec.hpp"
#include "apps/filter/png_io.hpp"
#include "commands.hpp"
#include "common/atomic_file.hpp"
#include "common/memory_budget.hpp"
#include "exit_codes.hpp"
#include "gpsm/gps/context.hpp"
#include "scope/cuda_probe.hpp"

namespace gpsm::cli {

CLI::App* add_filter_command(CLI::App& app, FilterArgs& a) {
  auto* c = app.add_subcommand("filter",
                               "Filter a PNG across the GPUs (8/16-bit gray or colour in, made gray; 8-bit gray out), "
                               "checked against the CPU reference bit for bit");
  c->add_option("--in", a.in, "The PNG to filter")->required();
  c->add_option("--out", a.out, "Where to write the filtered image (8-bit gray PNG)")->required();
  c->add_option("--kernel", a.kernel, std::string("The filter: ") + apps::filter::kFilterNames)->capture_default_str();
  c->add_option("--iters", a.iters, "How many times to apply it (each pass filters the previous output)")
      ->capture_default_str();
  c->add_option("--gpus", a.gpus, "all, or how many GPUs (the first of --devices)")->capture_default_str();
  c->add_option("--devices", a.devices, "Comma-separated CUDA device ids to draw GPUs from (default: all)");
  c->add_option("--paradigm", a.paradigm,
                "rdl (the distributed array: one pointer, halo rows loaded from the neighbour), single, memcpy, um, "
                "p2p_inline or gps")
      ->capture_default_str();
  c->add_option("--weights", a.weights, "Where the kernels read the weights: constant, replicated or remote")
      ->capture_default_str();
  c->add_flag("--no-check", a.no_check, "Skip the CPU reference (large images, many passes)");
  return c;
}

int run_filter(const FilterArgs& a, int argc, char** argv) {
  (void)argc, (void)argv;
  using namespace gpsm::apps;
  int k = 0;
  std::vector<float> w;
  try {
    w = filter::named_filter(a.kernel, k);
  } catch (const std::invalid_argument& e) {
    throw BadInput(std::string("gpsm: filter: --kernel: ") + e.what());
  }
  if (a.iters < 1 || a.iters > 100000) throw BadInput("gpsm: filter: --iters must be from 1 to 100000; give a count of passes");
  const auto ps = parse_paradigms(a.paradigm);
  if (ps.size() != 1 || !filter::filter_has(ps[0]) || ps[0] == Paradigm::infinite)
    throw BadInput("gpsm: filter: --paradigm '" + a.paradigm + "' is not one filter runs; use rdl, single, memcpy, um, "
                   "p2p_inline or gps");
  const Paradigm par = ps[0];
  filter::FilterJob job;
  if (a.weights == "constant") job.at = filter::WeightsAt::constant;
  else if (a.weights == "replicated") job.at = filter::WeightsAt::replicated;
  else if (a.weights == "remote") job.at = filter::WeightsAt::remote;
  else throw BadInput("gpsm: filter: --weights '" + a.weights + "' is not a place; use constant, replicated or remote");
  job.k = k;
  job.weights = w;
  gpsm::check_outputs({{"--out", a.out}}, {{"--in", a.in}});
  filter::PngInfo info;
  const filter::Image img = filter::read_png_gray(a.in, &info);  // bad files: invalid_argument, exit 2
  gpsm::require_host_memory(4.0 * static_cast<double>(img.px.size()) * sizeof(float),
                            fmt::format("gpsm filter: a {}x{} image", img.width, img.height), "use a smaller image");
  std::string why;
  const int ngpu = gpsm::scope::cuda_device_count(&why);
  require_gpus(ngpu, 1, why, "filter", "gpsm filter runs on GPUs");
  std::vector<int> devices = context_devices(parse_device_list(a.devices), ngpu, "filter");
  if (a.gpus != "all") {
    int n = 0;
    try {
      std::size_t used = 0;
      n = std::stoi(a.gpus, &used);
      if (used != a.gpus.size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n < 1) throw BadInput("gpsm: filter: --gpus '" + a.gpus + "' is not all or a positive count");
    if (n > static_cast<int>(devices.size()))
      throw NoGpu(fmt::format("gpsm filter: --gpus {} but {} GPU(s) to draw from; use --gpus all or fewer", n, devices.size()));
    devices.resize(static_cast<std::size_t>(n));
  }
  if (par == Paradigm::single) devices.resize(1);
  if (const std::string s = filter::split_problem(img.height, k, static_cast<int>(devices.size())); !s.empty())
    throw BadInput("gpsm: filter: " + s + "; use fewer GPUs or a smaller filter");
  job.input = &img;
  begin_work();
  gps::Context ctx(devices, gps::Settings::from_env());
  auto run = filter::make_filter_run(ctx, par, job);
  run->init();
  const double sec = run->solve(a.iters);
  const filter::Image got = run->gather();
  std::string check = "not checked (--no-check)";
  if (!a.no_check) {
    const std::string diff = filter::compare_bits(got, filter::filter_repeated(img, w, k, a.iters));
    if (!diff.empty()) {
      std::cerr << "gpsm filter: " << diff << "\n";
      return kExitRunFailed;
    }
    check = "equal to the CPU reference bit for bit";
  }
  filter::write_png_gray8(a.out, got);
  std::cout << fmt::format(
      "gpsm filter: {} ({}x{}, {}-bit, {} channel(s), made gray) {} x{} on {} GPU(s), {} ({} weights): {:.3f} ms per "
      "pass; {}; wrote {}\n",
      a.in, img.width, img.height, info.bits, info.channels, a.kernel, a.iters, devices.size(), paradigm_name(par),
      filter::weights_at_name(job.at), 1e3 * sec / a.iters, check, a.out);
  return kExitOk;
}

}  // namespace gpsm::cli
