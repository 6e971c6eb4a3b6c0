// The simulated GPU from a machine model's GPU description (sim/model_gpu.hpp).
#include "sim/model_gpu.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "scope/stats.hpp"

namespace gpsm::sim {

int fp32_lanes_per_sm(int major, int minor) {
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : (minor == 6 || minor == 9) ? 128 : 0;
  if (major == 9 || major == 10 || major == 12) return 128;
  return 0;
}

int max_threads_per_sm(int major, int minor) {
  if (major == 6) return 2048;
  if (major == 7) return minor == 5 ? 1024 : 2048;
  if (major == 8) return minor == 0 ? 2048 : (minor == 6 || minor == 9) ? 1536 : 0;
  if (major == 9 || major == 10) return 2048;
  if (major == 12) return 1536;
  return 0;
}

namespace {

double median(const std::vector<double>& v) { return scope::summarize(v).median; }

}  // namespace

GpuParams gpu_from_model(const model::MachineModel& m, const std::set<std::string>& used, GpuParams base,
                         std::string* what) {
  if (what) what->clear();
  std::vector<const model::GpuInfo*> info;
  for (const std::string& node : used)
    if (const model::GpuInfo* g = m.gpu(node)) info.push_back(g);
  if (info.empty()) return base;
  const model::GpuInfo& g = *info.front();
  for (const model::GpuInfo* o : info)
    if (o->name != g.name || o->sm_count != g.sm_count || o->l2_bytes != g.l2_bytes ||
        o->cc_major != g.cc_major || o->cc_minor != g.cc_minor)
      throw Error("the simulator models identical GPUs; " + g.node + " is " + g.name + " (" +
                  std::to_string(g.sm_count) + " SMs) and " + o->node + " is " + o->name + " (" +
                  std::to_string(o->sm_count) + " SMs)");

  // SMs x clock against the preset's GPU: what its rates that the model does not give scale with
  const double base_sm_clocks = double(base.sms) * base.clock_GHz;
  base.name = g.name.empty() ? base.name : g.name;
  base.sms = g.sm_count;
  if (g.sm_clock_max_mhz > 0) base.clock_GHz = g.sm_clock_max_mhz / 1000;
  base.l2_bytes = g.l2_bytes;
  const double scale = double(base.sms) * base.clock_GHz / base_sm_clocks;
  const int lanes = fp32_lanes_per_sm(g.cc_major, g.cc_minor);
  base.flops_G = lanes > 0 ? double(base.sms) * lanes * 2 * base.clock_GHz : base.flops_G * scale;
  const int threads = max_threads_per_sm(g.cc_major, g.cc_minor);
  if (threads > 0) base.blocks_per_sm = threads / 256;
  std::string w = fmt::format("{} (cc {}.{}, {} SMs, {:.2f} GHz{}, {:.0f} MiB L2)", g.name, g.cc_major, g.cc_minor,
                              g.sm_count, base.clock_GHz,
                              g.sm_clock_max_mhz > 0 ? "" : " (the preset's: no clock in the model)",
                              g.l2_bytes / (1 << 20));

  // HBM: the copy loop at its largest footprint, when that is beyond the L2 (at least twice it),
  // times the apps' share of a copy; the L2: the best footprint of sm_l2_local's reads; the L2's
  // gather rate: random loads over at most half the L2. Each the median over the GPUs.
  std::vector<double> copy, gather, l2;
  for (const model::GpuInfo* o : info) {
    if (const model::LocalCurve* c = m.local_curve(o->node, "sm_l2_local:read")) {
      double best = 0;
      for (const model::FootprintPoint& p : c->points) best = std::max(best, p.GBps);
      l2.push_back(best);
    }
    if (const model::LocalCurve* c = m.local_curve(o->node, "sm_stream_local"))
      if (c->points.back().footprint_bytes >= 2 * o->l2_bytes) copy.push_back(c->points.back().GBps);
    if (const model::LocalCurve* c = m.local_curve(o->node, "sm_gather_local"))
      if (c->points.front().footprint_bytes <= o->l2_bytes / 2) gather.push_back(c->points.front().GBps);
  }
  if (!copy.empty()) {
    const double loop = median(copy);
    base.hbm_GBps = loop * kAppShareOfCopy;
    w += fmt::format("; HBM {:.0f} GB/s (sm_stream_local {:.0f} x {:.3f})", base.hbm_GBps, loop, kAppShareOfCopy);
  } else {
    w += fmt::format("; HBM {:.0f} GB/s (the preset's: no sm_stream_local beyond the L2)", base.hbm_GBps);
  }
  if (!l2.empty()) {
    base.l2_GBps = median(l2);
    w += fmt::format("; L2 {:.0f} GB/s (sm_l2_local reads)", base.l2_GBps);
  } else {
    base.l2_GBps *= scale;
    w += fmt::format("; L2 {:.0f} GB/s (the preset's, scaled to these SMs: no sm_l2_local)", base.l2_GBps);
  }
  if (!gather.empty()) {
    base.gather_GBps = median(gather);
    w += fmt::format("; L2 gathers {:.0f} GB/s (sm_gather_local)", base.gather_GBps);
  }
  if (what) *what = w;
  return base;
}

}  // namespace gpsm::sim
