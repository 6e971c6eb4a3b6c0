#include "scope/model_build.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "scope/remote_study.hpp"

namespace gpsm::scope {

namespace {

std::string param(const Series& s, const std::string& key, const std::string& dflt = "") {
  auto it = s.params.find(key);
  return it == s.params.end() ? dflt : it->second;
}

std::string mechanism_of(const TestResult& t, const Series& s) {
  auto it = s.params.find("mechanism");
  return it == s.params.end() ? t.name : t.name + ":" + it->second;
}

std::vector<const Point*> verified_points(const Series& s) {
  std::vector<const Point*> out;
  for (const auto& p : s.points)
    if (p.verified) out.push_back(&p);
  return out;
}

}  // namespace

gpsm::model::MachineModel build_model(const std::vector<TestResult>& tests,
                                      const std::string& machine, const std::string& created,
                                      const std::string& commit, const gpsm::topo::Topology* topo) {
  namespace m = gpsm::model;
  m::MachineModel model;
  model.machine = machine;
  model.created = created;
  model.gpsm_commit = commit;
  if (topo != nullptr)
    for (const auto& g : topo->gpus) {
      if (g.sm_count < 1 || g.l2_bytes <= 0) continue;  // CUDA could not describe it: nothing to model
      m::GpuInfo gi;
      gi.node = "gpu" + std::to_string(g.index);
      gi.name = g.name;
      gi.cc_major = g.cc_major;
      gi.cc_minor = g.cc_minor;
      gi.sm_count = g.sm_count;
      gi.sm_clock_max_mhz = std::max(0, g.sm_clock_max_mhz);
      gi.l2_bytes = double(g.l2_bytes);
      gi.mem_bytes = double(std::max<int64_t>(0, g.mem_bytes));
      model.gpus.push_back(std::move(gi));
    }

  for (const auto& t : tests) {
    if (t.status != Status::ok) continue;
    if (t.group == remote::kGroup) continue;  // the study's times are not latencies: derived below
    const size_t first_latency = model.latencies.size();
    std::vector<std::string> latency_labels;  // series label of each latency of this test
    for (const auto& s : t.series) {
      const auto pts = verified_points(s);
      if (pts.empty()) continue;
      if (t.unit == "GB/s" && t.x_name == "bytes") {
        // aggregates without a path (e.g. all-to-all "gpu0 egress", "total") are not paths
        if (param(s, "src").empty() || param(s, "dst").empty()) continue;
        std::vector<m::Sample> samples;
        std::set<double> sizes;
        double peak = 0;
        for (const Point* p : pts) {
          peak = std::max(peak, p->value.median);
          for (double ts : p->time_s)
            if (std::isfinite(ts) && ts > 0 && std::isfinite(p->bytes) && p->bytes >= 0) {
              samples.push_back({p->bytes, ts});
              sizes.insert(p->bytes);
            }
        }
        if (sizes.size() < 2) continue;
        m::PathModel pm;
        pm.src = param(s, "src");
        pm.dst = param(s, "dst");
        pm.direction = param(s, "direction", "uni");
        pm.mechanism = mechanism_of(t, s);
        pm.fit = m::fit_piecewise(std::move(samples));
        pm.peak_GBps = peak;
        model.paths.push_back(std::move(pm));
      } else if (t.unit == "GB/s" && t.x_name == "bytes_per_line") {
        m::GoodputCurve g;
        g.src = param(s, "src");
        g.dst = param(s, "dst");
        g.mechanism = mechanism_of(t, s);
        for (const Point* p : pts) g.points.push_back({p->x, p->value.median});
        std::sort(g.points.begin(), g.points.end(),
                  [](const m::GoodputPoint& a, const m::GoodputPoint& b) {
                    return a.bytes_per_line < b.bytes_per_line;
                  });
        model.goodput.push_back(std::move(g));
      } else if (t.unit == "GB/s" && t.x_name == "blocks") {
        std::vector<const Point*> sorted = pts;
        std::sort(sorted.begin(), sorted.end(),
                  [](const Point* a, const Point* b) { return a->x < b->x; });
        double peak = 0;
        for (const Point* p : sorted) peak = std::max(peak, p->value.median);
        m::Saturation sat;
        sat.src = param(s, "src");
        sat.dst = param(s, "dst");
        sat.mechanism = mechanism_of(t, s);
        sat.peak_GBps = peak;
        for (const Point* p : sorted)
          if (p->value.median >= 0.95 * peak) {
            sat.blocks_to_saturate = static_cast<int>(std::lround(p->x));
            break;
          }
        if (sat.blocks_to_saturate < 1) continue;  // no positive block count: not a usable curve
        model.saturation.push_back(std::move(sat));
      } else if (t.unit == "GB/s" && t.x_name == "footprint_bytes") {
        // the GPU's own memory (src == dst) per footprint: where the L2 holds it, where HBM serves it
        if (param(s, "src").empty() || param(s, "src") != param(s, "dst")) continue;
        m::LocalCurve c;
        c.gpu = param(s, "src");
        c.mechanism = mechanism_of(t, s);
        for (const Point* p : pts)
          if (p->x > 0 && p->value.median > 0) c.points.push_back({p->x, p->value.median});
        std::sort(c.points.begin(), c.points.end(), [](const m::FootprintPoint& a, const m::FootprintPoint& b) {
          return a.footprint_bytes < b.footprint_bytes;
        });
        if (c.points.empty()) continue;
        model.local.push_back(std::move(c));
      } else if (t.unit == "us") {
        const Point* p = pts.front();
        m::Latency l;
        l.name = mechanism_of(t, s);
        l.src = param(s, "src");
        l.dst = param(s, "dst");
        l.median_us = p->value.median;
        l.min_us = p->value.min;
        l.max_us = p->value.max;
        model.latencies.push_back(std::move(l));
        latency_labels.push_back(s.label);
      }
    }
    // Two series of one test with the same (name, src, dst) (e.g. "launch (back-to-back)" and
    // "launch+sync") would be indistinguishable: name those "<name>:<series label>".
    std::vector<size_t> latency_dups;
    for (size_t i = first_latency; i < model.latencies.size(); ++i) {
      bool dup = false;
      for (size_t k = first_latency; k < model.latencies.size() && !dup; ++k)
        dup = k != i && model.latencies[k].name == model.latencies[i].name &&
              model.latencies[k].src == model.latencies[i].src &&
              model.latencies[k].dst == model.latencies[i].dst;
      if (dup) latency_dups.push_back(i);
    }
    for (size_t i : latency_dups)
      model.latencies[i].name += ":" + latency_labels[i - first_latency];
  }
  model.remote_study = remote::derive_study(tests);
  return model;
}

}  // namespace gpsm::scope
