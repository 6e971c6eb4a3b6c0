#include "scope/remote_study.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace gpsm::scope::remote {

const char* to_string(Distribution d) { return d == Distribution::batch ? "batch" : "spread"; }

std::uint32_t cut_for_percent(std::uint32_t n, double percent) {
  if (!(percent >= 0 && percent <= 100)) throw std::invalid_argument("cut_for_percent: percent outside 0-100");
  return static_cast<std::uint32_t>(std::lround(double(n) * percent / 100.0));
}

// Sizes: large enough that the all-local kernel runs for well over its launch cost (8192^2 floats:
// 256 MiB in and out, ~0.1 ms on an H200), small enough that the whole study stays under a minute.
std::uint64_t bandwidth_bytes(bool quick) { return quick ? (64ull << 20) : (256ull << 20); }

MixSweep intensity_sweep(bool quick) {
  MixSweep s;
  s.n = quick ? 4096 : 8192;
  s.percents = quick ? std::vector<double>{0, 10, 50, 100} : std::vector<double>{0, 1, 2, 5, 10, 20, 40, 60, 80, 100};
  s.flops = quick ? std::vector<int>{0, 100} : std::vector<int>{0, 10, 100, 1000};
  s.blocks_per_sm = {2048 / kThreads};  // full occupancy on every GPU since Volta (2048 threads per SM)
  return s;
}

MixSweep occupancy_sweep(bool quick) {
  MixSweep s;
  s.n = quick ? 4096 : 8192;
  s.percents = quick ? std::vector<double>{0, 20, 100} : std::vector<double>{0, 5, 10, 20, 40, 60, 80, 100};
  s.flops = {10};
  s.blocks_per_sm = quick ? std::vector<int>{2, 8} : std::vector<int>{1, 2, 4, 8};  // 12.5 % .. 100 %
  return s;
}

TimelineConfig timeline_config(bool quick) {
  TimelineConfig c;
  c.n = quick ? 4096 : 8192;
  for (int k = 1; k <= 10; ++k) c.fractions.push_back(k / 10.0);
  return c;
}

CacheSweep cache_sweep(bool quick) {
  CacheSweep s;
  s.n = quick ? 2048 : 4096;
  s.structure_bytes = quick ? std::vector<std::uint64_t>{64, 4096, 1u << 20}
                            : std::vector<std::uint64_t>{64, 256, 1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20};
  s.blocks_per_sm = quick ? std::vector<int>{8} : std::vector<int>{2, 8};
  return s;
}

std::uint64_t smem_for_blocks(int blocks, int max_by_threads, std::uint64_t smem_per_sm,
                              std::uint64_t reserved_per_block, std::uint64_t max_per_block) {
  if (blocks < 1) throw std::invalid_argument("smem_for_blocks: blocks must be >= 1");
  if (blocks >= max_by_threads) return 0;
  const std::uint64_t share = smem_per_sm / std::uint64_t(blocks);
  const std::uint64_t s = share > reserved_per_block ? share - reserved_per_block : 0;
  return std::min(s, max_per_block);
}

std::vector<BlockBytes> block_bytes(std::uint32_t n, Distribution d, std::uint32_t read_cut, std::uint32_t write_cut) {
  const std::uint32_t gx = (n + kBlockX - 1) / kBlockX, gy = (n + kBlockY - 1) / kBlockY;
  std::vector<BlockBytes> out(std::size_t(gx) * gy);
  for (std::uint32_t by = 0; by < gy; ++by)
    for (std::uint32_t bx = 0; bx < gx; ++bx) {
      BlockBytes b;
      const std::uint32_t x1 = std::min(n, (bx + 1) * kBlockX), y1 = std::min(n, (by + 1) * kBlockY);
      const std::uint32_t x0 = bx * kBlockX, y0 = by * kBlockY;
      // a rectangle: count its remote elements per access instead of visiting each one
      auto remote_in = [&](std::uint32_t cut) {
        if (d == Distribution::batch) return double(x1 - x0) * double(std::min(y1, std::max(y0, cut)) - y0);
        return double(y1 - y0) * double(std::min(x1, std::max(x0, cut)) - x0);
      };
      b.all = 2.0 * 4 * double(x1 - x0) * double(y1 - y0);
      b.remote = 4 * (remote_in(read_cut) + remote_in(write_cut));
      out[std::size_t(by) * gx + bx] = b;
    }
  return out;
}

std::vector<double> fraction_times(const std::vector<unsigned long long>& start_ns,
                                   const std::vector<unsigned long long>& end_ns,
                                   const std::vector<double>& bytes, const std::vector<double>& fractions) {
  if (start_ns.size() != end_ns.size() || end_ns.size() != bytes.size() || bytes.empty())
    throw std::invalid_argument("fraction_times: start, end and bytes must have one entry per block");
  const unsigned long long t0 = *std::min_element(start_ns.begin(), start_ns.end());
  std::vector<std::size_t> order(end_ns.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return end_ns[a] < end_ns[b]; });
  const double total = std::accumulate(bytes.begin(), bytes.end(), 0.0);
  std::vector<double> out;
  double done = 0;
  std::size_t k = 0;
  for (double f : fractions) {
    if (!(f > 0 && f <= 1)) throw std::invalid_argument("fraction_times: fractions must lie in (0, 1]");
    const double want = f * total * (1 - 1e-12);
    while (k < order.size() && done < want) done += bytes[order[k++]];
    const std::size_t last = order[k == 0 ? 0 : k - 1];
    out.push_back(double(end_ns[last] - t0) * 1e-9);
  }
  return out;
}

double link_peak_GBps(const gpsm::topo::Topology& t, int a, int b) {
  const auto g = gpsm::topo::build_graph(t);
  const std::string na = "gpu" + std::to_string(a), nb = "gpu" + std::to_string(b);
  auto edge = [&](const std::string& x, const std::string& y, const std::string& kind) -> double {
    for (const auto& e : g.edges)
      if (e.kind == kind && ((e.a == x && e.b == y) || (e.a == y && e.b == x))) return e.est_GBps;
    return -1;
  };
  if (const double direct = edge(na, nb, "nvlink"); direct > 0) return direct;
  const double sa = edge(na, "nvswitch", "nvlink"), sb = edge(nb, "nvswitch", "nvlink");
  if (sa > 0 && sb > 0) return std::min(sa, sb);
  double pa = -1, pb = -1;
  for (const auto& e : g.edges) {
    if (e.kind != "pcie") continue;
    if (e.a == na || e.b == na) pa = std::max(pa, e.est_GBps);
    if (e.a == nb || e.b == nb) pb = std::max(pb, e.est_GBps);
  }
  return pa > 0 && pb > 0 ? std::min(pa, pb) : 0;
}

// ---- reduction ----

namespace {

std::string param(const Series& s, const std::string& k) {
  auto it = s.params.find(k);
  return it == s.params.end() ? std::string() : it->second;
}

double param_number(const Series& s, const std::string& k) {
  const std::string v = param(s, k);
  if (v.empty()) return 0;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    return 0;
  }
}

const TestResult* find_ok(const std::vector<TestResult>& tests, const char* name) {
  for (const auto& t : tests)
    if (t.name == name && t.status == Status::ok) return &t;
  return nullptr;
}

// The median of the series' single verified point (H1's bars), or 0.
double bar(const Series& s) {
  for (const auto& p : s.points)
    if (p.verified) return p.value.median;
  return 0;
}

void from_bandwidth(const TestResult& t, model::RemoteStudy& st) {
  for (const auto& s : t.series) {
    const std::string access = param(s, "access"), pattern = param(s, "pattern");
    const double v = bar(s);
    if (pattern == "one") {
      if (st.src.empty()) {
        st.src = param(s, "initiator");
        st.dst = param(s, "target");
      }
      if (access == "read") st.read_GBps = v;
      if (access == "write") st.write_GBps = v;
      if (access == "read+write") st.read_write_GBps = v;
      if (access == "copy") st.copy_GBps = v;
    } else if (pattern == "ring") {
      st.concurrent_gpus = static_cast<int>(param_number(s, "gpus"));
      if (access == "read") st.concurrent_read_GBps = v;
      if (access == "write") st.concurrent_write_GBps = v;
    }
  }
}

// The fastest rate over one step of the fractions: (bytes done - before) / (time - before).
double peak_rate_GBps(const Series& s) {
  double best = 0, b0 = 0, t0 = 0;
  for (const auto& p : s.points) {
    if (!p.verified) return 0;
    const double t = p.value.median * 1e-6;
    if (t > t0 && p.bytes > b0) best = std::max(best, (p.bytes - b0) / (t - t0) / 1e9);
    b0 = p.bytes;
    t0 = std::max(t0, t);
  }
  return best;
}

double last_median(const Series& s) { return s.points.empty() ? 0 : s.points.back().value.median; }

void from_timeline(const TestResult& t, model::RemoteStudy& st) {
  double local_us = 0;
  for (const auto& s : t.series)
    if (param(s, "distribution") == "none") local_us = last_median(s);
  for (const auto& s : t.series) {
    const std::string d = param(s, "distribution");
    if (param(s, "traffic") == "remote") {
      (d == "batch" ? st.batch_peak_remote_GBps : st.spread_peak_remote_GBps) = peak_rate_GBps(s);
    } else if (param(s, "traffic") == "all" && local_us > 0 && (d == "batch" || d == "spread")) {
      (d == "batch" ? st.batch_timeline_slowdown : st.spread_timeline_slowdown) = last_median(s) / local_us;
    }
  }
}

void from_slowdowns(const TestResult& t, model::RemoteStudy& st) {
  for (const auto& s : t.series) {
    const auto sl = slowdowns(s);
    if (sl.empty()) continue;
    model::RemoteSlowdownCurve c;
    c.test = t.name;
    c.distribution = param(s, "distribution");
    c.flops_per_datum = param_number(s, "flops_per_datum");
    c.occupancy = param_number(s, "occupancy");
    for (std::size_t i = 0; i < s.points.size(); ++i)
      if (s.points[i].verified) c.points.push_back({s.points[i].x, sl[i]});
    std::sort(c.points.begin(), c.points.end(),
              [](const auto& a, const auto& b) { return a.remote_percent < b.remote_percent; });
    c.hidden_percent = hidden_percent(c.points, st.tolerance);
    if (c.occupancy > 0 && (c.distribution == "batch" || c.distribution == "spread")) st.curves.push_back(std::move(c));
  }
}


void from_cache(const TestResult& t, model::RemoteStudy& st) {
  // (occupancy, bytes) -> point
  std::map<std::pair<double, double>, model::RemoteCachePoint> at;
  for (const auto& s : t.series) {
    const double occ = param_number(s, "occupancy");
    const std::string read = param(s, "read"), where = param(s, "where");
    for (const auto& p : s.points) {
      if (!p.verified) continue;
      auto& c = at[{occ, p.x}];
      c.structure_bytes = p.x;
      c.occupancy = occ;
      if (where == "remote" && read == "ldg") c.remote_ldg_us = p.value.median;
      if (where == "remote" && read == "ldcg") c.remote_ldcg_us = p.value.median;
      if (where == "local" && read == "ldg") c.local_ldg_us = p.value.median;
    }
  }
  double top = 0;
  for (const auto& [k, c] : at)
    if (c.remote_ldg_us > 0 && c.remote_ldcg_us > 0 && c.occupancy > 0) top = std::max(top, c.occupancy);
  // local-only entries (the local series runs at one occupancy) fold into the matching remote one
  for (auto& [k, c] : at) {
    if (c.remote_ldg_us > 0 && c.remote_ldcg_us > 0 && c.occupancy > 0) st.cache.push_back(c);
  }
  bool first = true;
  for (const auto& c : st.cache) {
    if (c.occupancy != top) continue;
    const double ratio = c.remote_ldcg_us / c.remote_ldg_us;
    if (first) st.cache_speedup_smallest = ratio;  // st.cache is in ascending bytes per occupancy
    first = false;
    if (ratio >= 1 + st.tolerance) st.cache_helps_up_to_bytes = c.structure_bytes;
  }
}

}  // namespace

void summarize_curves(model::RemoteStudy& st) {
  // H3: over the FLOPs measured at the highest occupancy, the share hidden at every one of them
  double top = 0;
  for (const auto& c : st.curves)
    if (c.test == kIntensity) top = std::max(top, c.occupancy);
  for (const char* d : {"batch", "spread"}) {
    double hidden = -1;
    for (const auto& c : st.curves)
      if (c.test == kIntensity && c.distribution == d && c.occupancy == top)
        hidden = hidden < 0 ? c.hidden_percent : std::min(hidden, c.hidden_percent);
    (std::string(d) == "batch" ? st.batch_hidden_percent : st.spread_hidden_percent) = std::max(0.0, hidden);
  }
  // H4: the lowest occupancy whose spread curve hides as much as the highest occupancy's
  std::map<double, double> hidden_at;  // occupancy -> spread hidden %
  for (const auto& c : st.curves)
    if (c.test == kOccupancy && c.distribution == "spread") hidden_at[c.occupancy] = c.hidden_percent;
  st.occupancy_to_hide = 0;
  if (!hidden_at.empty() && hidden_at.rbegin()->second > 0) {
    const double target = hidden_at.rbegin()->second;
    for (const auto& [occ, h] : hidden_at)
      if (h >= target) {
        st.occupancy_to_hide = occ;
        break;
      }
  }
}

std::vector<double> slowdowns(const Series& s) {
  double base = 0;
  for (const auto& p : s.points)
    if (p.x == 0 && p.verified) base = p.value.median;
  if (!(base > 0)) return {};
  std::vector<double> out;
  for (const auto& p : s.points) out.push_back(p.value.median / base);
  return out;
}

double hidden_percent(const std::vector<model::RemoteSlowdownPoint>& pts, double tolerance) {
  std::vector<model::RemoteSlowdownPoint> v = pts;
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.remote_percent < b.remote_percent; });
  double hidden = 0;
  for (const auto& p : v) {
    if (!(p.slowdown < 1 + tolerance)) break;
    hidden = p.remote_percent;
  }
  return hidden;
}

model::RemoteStudy derive_study(const std::vector<TestResult>& tests, double tolerance) {
  model::RemoteStudy st;
  st.tolerance = tolerance;
  if (const auto* t = find_ok(tests, kBandwidth)) from_bandwidth(*t, st);
  if (const auto* t = find_ok(tests, kTimeline)) from_timeline(*t, st);
  if (const auto* t = find_ok(tests, kIntensity)) from_slowdowns(*t, st);
  if (const auto* t = find_ok(tests, kOccupancy)) from_slowdowns(*t, st);
  summarize_curves(st);
  if (const auto* t = find_ok(tests, kCache)) from_cache(*t, st);
  // the study's GPUs when H1 did not run: the kernels' own params
  for (const auto& t : tests)
    if (st.src.empty() && t.group == kGroup && t.status == Status::ok)
      for (const auto& s : t.series)
        if (!param(s, "initiator").empty() && !param(s, "target").empty()) {
          st.src = param(s, "initiator");
          st.dst = param(s, "target");
          break;
        }
  return st;
}

}  // namespace gpsm::scope::remote
