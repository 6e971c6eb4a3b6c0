#include "sim/remote_study_sim.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "scope/remote_study.hpp"
#include "sim/link.hpp"

namespace gpsm::sim {

namespace {

constexpr double kLine = 128;             // a warp's 32 consecutive 4-B accesses
constexpr double kThreadsPerBlock = 256;  // the study's blocks (scope/remote_layout.hpp)
constexpr double kLocalLoadNs = 600;      // a load from the GPU's own memory where the preset has none

// Wire bytes per remote line, per direction: a->b carries the stores and the load requests,
// b->a the load completions (a read's bytes less a write's, approximately its request).
struct LineWire {
  double store = 0, request = 0, completion = 0;
};
LineWire line_wire(const LinkParams& l) {
  LineWire w;
  w.store = wire_bytes_write(l, kLine);
  w.completion = wire_bytes_write(l, kLine);
  w.request = std::max(0.0, wire_bytes_read(l, kLine) - w.completion);
  return w;
}

}  // namespace

RemoteKernelCost remote_kernel_cost(const System& s, double n, double remote, int flops, int blocks_per_sm,
                                    bool batch) {
  if (!(remote >= 0 && remote <= 1)) throw std::invalid_argument("remote_kernel_cost: remote must lie in [0, 1]");
  if (!(n > 0) || flops < 0 || blocks_per_sm < 1)
    throw std::invalid_argument("remote_kernel_cost: n > 0, flops >= 0 and blocks_per_sm >= 1");
  if (batch && remote > 0 && remote < 1) {
    // the remote blocks first, then the local ones: two kernels' worth of the two extremes
    const RemoteKernelCost r = remote_kernel_cost(s, n * remote, 1, flops, blocks_per_sm, false);
    const RemoteKernelCost l = remote_kernel_cost(s, n * (1 - remote), 0, flops, blocks_per_sm, false);
    RemoteKernelCost c;
    c.hbm_s = r.hbm_s + l.hbm_s;
    c.link_s = r.link_s + l.link_s;
    c.flops_s = r.flops_s + l.flops_s;
    c.latency_s = r.latency_s + l.latency_s;
    c.total_s = r.total_s + l.total_s;
    return c;
  }
  RemoteKernelCost c;
  c.hbm_s = 8 * n * (1 - remote) / (s.gpu.hbm_GBps * 1e9);
  const LineWire w = line_wire(s.link);
  const double lines = n * remote / (kLine / 4);
  c.link_s = std::max(lines * (w.store + w.request), lines * w.completion) / (s.link.raw_GBps * 1e9);
  c.flops_s = n * flops / (s.gpu.flops_G * 1e9);
  const double resident = double(s.gpu.sms) * blocks_per_sm * kThreadsPerBlock;
  const double local_ns = s.gpu.load_latency_ns > 0 ? s.gpu.load_latency_ns : kLocalLoadNs;
  const double remote_ns = 2 * (s.link.latency_ns + s.switch_ns);
  c.latency_s = n * (remote * remote_ns + (1 - remote) * local_ns) * 1e-9 / resident;
  c.total_s = std::max({c.hbm_s, c.link_s, c.flops_s, c.latency_s});
  return c;
}

model::RemoteStudy predict_remote_study(const System& s, bool quick) {
  using namespace gpsm::scope::remote;
  model::RemoteStudy st;
  st.src = "gpu0";
  st.dst = "gpu1";
  // H1: a stream of whole lines one way (loads: their completions; stores), both ways, and two GPUs
  const LineWire w = line_wire(s.link);
  const double raw = s.link.raw_GBps;
  st.read_GBps = raw * kLine / w.completion;
  st.write_GBps = raw * kLine / w.store;
  st.copy_GBps = st.write_GBps;  // a copy engine's writes: the same packets
  // one GPU loading and storing: a->b carries stores and requests, b->a completions
  st.read_write_GBps = 2 * kLine * raw / std::max(w.store + w.request, w.completion);
  // two GPUs each loading from the other: each direction carries one's completions and the other's requests
  st.concurrent_gpus = 2;
  st.concurrent_read_GBps = 2 * kLine * raw / (w.completion + w.request);
  st.concurrent_write_GBps = 2 * st.write_GBps;
  auto curves = [&](const char* test, const MixSweep& sw) {
    const double n = double(sw.n) * sw.n;
    const int full = 2048 / kThreads;
    for (bool batch : {true, false})
      for (int k : sw.blocks_per_sm)
        for (int f : sw.flops) {
          model::RemoteSlowdownCurve c;
          c.test = test;
          c.distribution = batch ? "batch" : "spread";
          c.flops_per_datum = f;
          c.occupancy = double(std::min(k, full)) / full;
          const double base = remote_kernel_cost(s, n, 0, f, k, batch).total_s;
          for (double p : sw.percents)
            c.points.push_back({p, remote_kernel_cost(s, n, p / 100, f, k, batch).total_s / base});
          c.hidden_percent = hidden_percent(c.points, st.tolerance);
          st.curves.push_back(std::move(c));
        }
  };
  curves(kIntensity, intensity_sweep(quick));
  curves(kOccupancy, occupancy_sweep(quick));
  summarize_curves(st);
  return st;
}

std::vector<scope::TestResult> predict_remote_study_tests(const System& s, bool quick) {
  using namespace gpsm::scope::remote;
  std::vector<scope::TestResult> out;
  auto test = [&](const char* name, const char* description, const MixSweep& sw) {
    scope::TestResult t;
    t.name = name;
    t.group = kGroup;
    t.description = description;
    t.unit = "us";
    t.x_name = "remote_percent";
    const double n = double(sw.n) * sw.n;
    const int full = 2048 / kThreads;
    for (bool batch : {true, false})
      for (int k : sw.blocks_per_sm)
        for (int f : sw.flops) {
          const double occ = double(std::min(k, full)) / full;
          scope::Series se;
          se.label = fmt::format("{}, {} FLOPs/datum, occupancy {:g}", batch ? "batch" : "spread", f, occ);
          se.params = {{"distribution", batch ? "batch" : "spread"},
                       {"flops_per_datum", std::to_string(f)},
                       {"occupancy", fmt::format("{:g}", occ)},
                       {"blocks_per_sm", std::to_string(k)},
                       {"n", std::to_string(sw.n)},
                       {"system", s.name}};
          for (double p : sw.percents) {
            const double t_s = remote_kernel_cost(s, n, p / 100, f, k, batch).total_s;
            se.points.push_back(scope::make_point(p, 8 * n, {t_s}, "us", false));
          }
          t.series.push_back(std::move(se));
        }
    out.push_back(std::move(t));
  };
  test(kIntensity, "GPU-SM H2-H3 (Fig 7), simulated: kernel time vs % remote, batch and spread, per FLOPs per datum",
       intensity_sweep(quick));
  test(kOccupancy, "GPU-SM H4 (Fig 8), simulated: kernel time vs % remote at 10 FLOPs/datum per occupancy",
       occupancy_sweep(quick));
  return out;
}

std::string render_remote_study(const model::RemoteStudy& st, const std::string& system_name) {
  std::string out = fmt::format(
      "GPU-SM's remote-access study on {} (simulated: docs/remote-study.md)\n"
      "  H1 GB/s: read {:.1f}, write {:.1f}, read+write {:.1f}, copy {:.1f}; {} GPUs at once: read {:.1f}, write {:.1f}\n",
      system_name, st.read_GBps, st.write_GBps, st.read_write_GBps, st.copy_GBps, st.concurrent_gpus,
      st.concurrent_read_GBps, st.concurrent_write_GBps);
  std::string test;
  for (const auto& c : st.curves) {
    if (c.test != test) {
      test = c.test;
      out += fmt::format("  {}: slowdown by % of remote accesses (* = below {:.0f} %)\n", test, st.tolerance * 100);
      out += fmt::format("    {:<42}", "");
      for (const auto& p : c.points) out += fmt::format("{:>8}", fmt::format("{:g}%", p.remote_percent));
      out += fmt::format("{:>9}\n", "hidden");
    }
    out += fmt::format("    {:<42}", fmt::format("{}, {:g} FLOPs/datum, occupancy {:g}", c.distribution, c.flops_per_datum,
                                                 c.occupancy));
    for (const auto& p : c.points)
      out += fmt::format("{:>8}", fmt::format("{:.2f}{}", p.slowdown, p.slowdown < 1 + st.tolerance ? "*" : " "));
    out += fmt::format("{:>8g}%\n", c.hidden_percent);
  }
  out += fmt::format("  hidden: spread {:g} %, batch {:g} % (every FLOPs per datum, full occupancy); {}\n",
                     st.spread_hidden_percent, st.batch_hidden_percent,
                     st.occupancy_to_hide > 0
                         ? fmt::format("spread needs occupancy {:g} to hide as much as at full", st.occupancy_to_hide)
                         : std::string("at full occupancy spread hides nothing at 10 FLOPs/datum"));
  return out;
}

}  // namespace gpsm::sim
