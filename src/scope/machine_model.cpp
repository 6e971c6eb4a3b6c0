#include "gpsm/machine_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"

namespace gpsm::model {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One distinct transfer size with the median of its samples.
struct SizePoint {
  double x;  // bytes
  double t;  // seconds (median of the samples at this size)
};

void check_sample(const Sample& s) {
  if (!std::isfinite(s.bytes) || s.bytes < 0)
    throw std::invalid_argument("fit: sample bytes must be finite and >= 0 (got " +
                                std::to_string(s.bytes) + ")");
  if (!std::isfinite(s.seconds) || s.seconds <= 0)
    throw std::invalid_argument("fit: sample seconds must be finite and > 0 (got " +
                                std::to_string(s.seconds) + ")");
}

double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return (v.size() % 2) ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Validates, sorts by size and reduces repeated sizes to their median time.
std::vector<SizePoint> reduce(std::vector<Sample> samples) {
  for (const auto& s : samples) check_sample(s);
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.bytes < b.bytes; });
  std::vector<SizePoint> out;
  std::vector<double> ts;
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    ts.clear();
    while (j < samples.size() && samples[j].bytes == samples[i].bytes) ts.push_back(samples[j++].seconds);
    out.push_back({samples[i].bytes, median_of(ts)});
    i = j;
  }
  if (out.size() < 2)
    throw std::invalid_argument("fit: need at least 2 distinct transfer sizes (got " +
                                std::to_string(out.size()) + ")");
  return out;
}

// Line t = c + s*x (s = 1/bw, s == 0 <=> bw = inf).
struct Line {
  double c = 0, s = 0;
  double at(double x) const { return s > 0 ? c + s * x : c; }
};

double max_rel_err(const Line& l, const SizePoint* p, size_t n) {
  double e = 0;
  for (size_t i = 0; i < n; ++i) e = std::max(e, std::abs(l.at(p[i].x) - p[i].t) / p[i].t);
  return e;
}

// Weighted least squares of t on x with weights 1/t^2 (relative error), constrained to a slope
// s >= 0 and a prediction at x0 that is >= 0: c + s*x0 >= 0. For the segment that starts at 0
// bytes (and for fit_linear) x0 = 0, i.e. c >= 0. For a later segment x0 is its first measured
// size: its line may have a negative intercept (bandwidth dropping past a cache size) as long as
// the times it predicts inside its range are not negative.
Line fit_points(const SizePoint* p, size_t n, double x0) {
  // Weights normalised by the smallest time so that they are <= 1 (times span 6+ decades).
  double tmin = p[0].t;
  for (size_t i = 1; i < n; ++i) tmin = std::min(tmin, p[i].t);
  std::vector<double> w(n), x(n);
  double W = 0, Wx = 0, Wt = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = tmin / p[i].t;
    w[i] = r * r;
    x[i] = p[i].x - x0;  // fit t = c' + s*x' with x' = x - x0 and c' = c + s*x0 >= 0
    W += w[i];
    Wx += w[i] * x[i];
    Wt += w[i] * p[i].t;
  }
  const double xbar = Wx / W, tbar = Wt / W;
  double Sxx = 0, Sxt = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = x[i] - xbar;
    Sxx += w[i] * dx * dx;
    Sxt += w[i] * dx * (p[i].t - tbar);
  }
  auto objective = [&](double c, double s) {
    double o = 0;
    for (size_t i = 0; i < n; ++i) {
      const double r = c + s * x[i] - p[i].t;
      o += w[i] * r * r;
    }
    return o;
  };
  double s = Sxx > 0 ? Sxt / Sxx : 0.0;
  double c = tbar - s * xbar;
  if (!(c >= 0 && s >= 0)) {
    // The unconstrained optimum is infeasible: the constrained one lies on an edge of the
    // feasible quadrant (the objective is convex). Edge s = 0: c' = weighted mean of t.
    const double ca = tbar;
    // Edge c' = 0: s = sum(w x' t) / sum(w x'^2) (> 0: some x' > 0 and every t > 0).
    double Sxt0 = 0, Sxx0 = 0;
    for (size_t i = 0; i < n; ++i) {
      Sxt0 += w[i] * x[i] * p[i].t;
      Sxx0 += w[i] * x[i] * x[i];
    }
    const double sb = Sxx0 > 0 ? Sxt0 / Sxx0 : 0.0;
    if (objective(0.0, sb) < objective(ca, 0.0)) {
      c = 0;
      s = sb;
    } else {
      c = ca;
      s = 0;
    }
  }
  return {c - s * x0, s};
}

double bw_of(const Line& l) { return l.s > 0 ? 1.0 / l.s : kInf; }

}  // namespace

LinearFit fit_linear(const std::vector<Sample>& samples) {
  const auto pts = reduce(samples);
  const Line l = fit_points(pts.data(), pts.size(), 0.0);
  return {l.c, bw_of(l), max_rel_err(l, pts.data(), pts.size())};
}

PiecewiseFit fit_piecewise(std::vector<Sample> samples, int max_segments, double tolerance) {
  if (max_segments < 1) throw std::invalid_argument("fit_piecewise: max_segments must be >= 1");
  if (!(tolerance >= 0)) throw std::invalid_argument("fit_piecewise: tolerance must be >= 0");
  const auto pts = reduce(std::move(samples));
  const int D = static_cast<int>(pts.size());
  const int kmax = std::max(1, std::min(max_segments, D / 2));  // each segment >= 2 sizes

  // Fit and error of every range [i, j) of >= 2 sizes (D is small: sweeps have ~40 sizes).
  std::vector<std::vector<Line>> line(D, std::vector<Line>(D + 1));
  std::vector<std::vector<double>> err(D, std::vector<double>(D + 1, kInf));
  std::vector<std::vector<double>> sse(D, std::vector<double>(D + 1, kInf));
  for (int i = 0; i < D; ++i)
    for (int j = i + 2; j <= D; ++j) {
      if (kmax == 1 && !(i == 0 && j == D)) continue;
      line[i][j] = fit_points(&pts[i], j - i, i == 0 ? 0.0 : pts[i].x);
      err[i][j] = max_rel_err(line[i][j], &pts[i], j - i);
      double s = 0;
      for (int k = i; k < j; ++k) {
        const double r = (line[i][j].at(pts[k].x) - pts[k].t) / pts[k].t;
        s += r * r;
      }
      sse[i][j] = s;
    }

  // Cost of a partition: (max relative error, sum of squared relative errors), compared
  // lexicographically. best[k][j]: the best split of sizes [0, j) into k segments.
  struct Cost {
    double max = kInf, sum = kInf;
    bool operator<(const Cost& o) const { return max < o.max || (max == o.max && sum < o.sum); }
  };
  std::vector<std::vector<Cost>> best(kmax + 1, std::vector<Cost>(D + 1));
  std::vector<std::vector<int>> from(kmax + 1, std::vector<int>(D + 1, -1));
  for (int j = 2; j <= D; ++j) best[1][j] = {err[0][j], sse[0][j]};
  for (int k = 2; k <= kmax; ++k)
    for (int j = 2 * k; j <= D; ++j)
      for (int i = 2 * (k - 1); i <= j - 2; ++i) {
        if (!std::isfinite(best[k - 1][i].max)) continue;
        Cost c{std::max(best[k - 1][i].max, err[i][j]), best[k - 1][i].sum + sse[i][j]};
        if (c < best[k][j]) {
          best[k][j] = c;
          from[k][j] = i;
        }
      }

  // Fewest segments meeting the tolerance, else the smallest error (fewer segments on ties).
  int chosen = -1;
  for (int k = 1; k <= kmax && chosen < 0; ++k)
    if (best[k][D].max <= tolerance) chosen = k;
  if (chosen < 0) {
    chosen = 1;
    for (int k = 2; k <= kmax; ++k)
      if (best[k][D].max < best[chosen][D].max) chosen = k;
  }

  // Recover the split points.
  std::vector<int> starts(chosen);
  for (int k = chosen, j = D; k >= 1; --k) {
    const int i = (k == 1) ? 0 : from[k][j];
    starts[k - 1] = i;
    j = i;
  }
  PiecewiseFit fit;
  for (int k = 0; k < chosen; ++k) {
    const int i = starts[k];
    const int j = (k + 1 < chosen) ? starts[k + 1] : D;
    Segment s;
    s.c_s = line[i][j].c;
    s.bw_Bps = bw_of(line[i][j]);
    s.max_rel_err = err[i][j];
    s.min_bytes = 0;
    s.max_bytes = kInf;
    fit.segments.push_back(s);
    fit.max_rel_err = std::max(fit.max_rel_err, s.max_rel_err);
  }
  // Boundaries: between the last size of one segment (xa) and the first of the next (xb). Where
  // the two lines cross inside [xa, xb] the boundary is the crossing (the prediction is then
  // continuous); otherwise the measured behaviour jumps and the boundary is xb.
  for (int k = 0; k + 1 < chosen; ++k) {
    const int i2 = starts[k + 1];
    const double xa = pts[i2 - 1].x, xb = pts[i2].x;
    const Line& l1 = line[starts[k]][i2];
    const Line& l2 = line[i2][(k + 2 < chosen) ? starts[k + 2] : D];
    double b = xb;
    if (l1.s != l2.s) {
      // A little slack: a crossing exactly at a measured size must not be lost to rounding.
      const double xc = (l2.c - l1.c) / (l1.s - l2.s);
      const double slack = 1e-9 * std::max(std::abs(xa), std::abs(xb));
      if (xc >= xa - slack && xc <= xb + slack) b = std::min(std::max(xc, xa), xb);
    }
    fit.segments[k].max_bytes = b;
    fit.segments[k + 1].min_bytes = b;
  }
  return fit;
}

double predict_seconds(const PiecewiseFit& fit, double bytes) {
  if (fit.segments.empty()) throw std::invalid_argument("predict_seconds: fit has no segments");
  const Segment* seg = &fit.segments.front();
  for (const auto& s : fit.segments)
    if (bytes >= s.min_bytes) seg = &s;
  const double b = std::max(bytes, 0.0);
  return std::isinf(seg->bw_Bps) ? seg->c_s : seg->c_s + b / seg->bw_Bps;
}

const PathModel* MachineModel::find(const std::string& src, const std::string& dst,
                                    const std::string& mechanism,
                                    const std::string& direction) const {
  for (const auto& p : paths)
    if (p.src == src && p.dst == dst && p.mechanism == mechanism && p.direction == direction)
      return &p;
  return nullptr;
}

const GpuInfo* MachineModel::gpu(const std::string& node) const {
  for (const auto& g : gpus)
    if (g.node == node) return &g;
  return nullptr;
}

const LocalCurve* MachineModel::local_curve(const std::string& g, const std::string& mechanism) const {
  for (const auto& c : local)
    if (c.gpu == g && c.mechanism == mechanism) return &c;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

using nlohmann::json;

// Integral values (byte counts) are written as integers, everything else as doubles; +inf as null.
json num(double v) {
  if (std::isinf(v) && v > 0) return nullptr;
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9007199254740992.0)
    return static_cast<std::int64_t>(v);
  return v;
}

[[noreturn]] void fail(const std::string& path, const std::string& msg) {
  throw std::runtime_error("machine model: " + path + ": " + msg);
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

void require_object(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path.empty() ? "(top level)" : path, "expected object");
}

const json* field(const json& j, const std::string& key, const std::string& path, bool required) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) fail(join(path, key), "missing");
    return nullptr;
  }
  return &*it;
}

std::string get_string(const json& j, const std::string& key, const std::string& path,
                       bool required = true) {
  const json* f = field(j, key, path, required);
  if (!f) return "";
  if (!f->is_string()) fail(join(path, key), "expected string");
  return f->get<std::string>();
}

// A finite number; with allow_null, null reads as +inf.
double get_number(const json& j, const std::string& key, const std::string& path,
                  bool allow_null = false, bool required = true, double dflt = 0) {
  const json* f = field(j, key, path, required);
  if (!f) return dflt;
  if (allow_null && f->is_null()) return kInf;
  if (!f->is_number()) fail(join(path, key), allow_null ? "expected number or null" : "expected number");
  const double v = f->get<double>();
  if (!std::isfinite(v)) fail(join(path, key), "expected a finite number");
  return v;
}

const json& get_array(const json& j, const std::string& key, const std::string& path,
                      bool required) {
  static const json empty = json::array();
  const json* f = field(j, key, path, required);
  if (!f) return empty;
  if (!f->is_array()) fail(join(path, key), "expected array");
  return *f;
}

json segment_json(const Segment& s) {
  return {{"min_bytes", num(s.min_bytes)},
          {"max_bytes", num(s.max_bytes)},
          {"c_us", s.c_s * 1e6},
          {"bw_GBps", std::isinf(s.bw_Bps) ? json(nullptr) : json(s.bw_Bps / 1e9)},
          {"max_rel_err", s.max_rel_err}};
}

PiecewiseFit fit_from_json(const json& jp, const std::string& path) {
  PiecewiseFit fit;
  const std::string sp = join(path, "segments");
  const json& segs = get_array(jp, "segments", path, true);
  if (segs.empty()) fail(sp, "expected at least one segment");
  for (size_t i = 0; i < segs.size(); ++i) {
    const std::string p = index(sp, i);
    const json& js = segs[i];
    require_object(js, p);
    Segment s;
    s.min_bytes = get_number(js, "min_bytes", p);
    s.max_bytes = get_number(js, "max_bytes", p, /*allow_null=*/true);
    const double c_us = get_number(js, "c_us", p);
    const double bw = get_number(js, "bw_GBps", p, /*allow_null=*/true);
    s.max_rel_err = get_number(js, "max_rel_err", p, false, /*required=*/false, 0.0);
    if (!(bw > 0)) fail(join(p, "bw_GBps"), "must be > 0 (or null for size-independent time)");
    if (i == 0 && c_us < 0) fail(join(p, "c_us"), "must be >= 0 in the first segment");
    // Later segments may have a negative intercept, but no negative time inside their range.
    if (i > 0 && c_us + (std::isinf(bw) ? 0.0 : s.min_bytes / (bw * 1e3)) < -1e-9 * std::abs(c_us))
      fail(join(p, "c_us"), "predicts a negative time at min_bytes");
    if (s.max_rel_err < 0) fail(join(p, "max_rel_err"), "must be >= 0");
    if (i == 0 && s.min_bytes != 0) fail(join(p, "min_bytes"), "first segment must start at 0");
    if (i > 0 && s.min_bytes != fit.segments.back().max_bytes)
      fail(join(p, "min_bytes"), "must equal the previous segment's max_bytes");
    if (i + 1 == segs.size() && !std::isinf(s.max_bytes))
      fail(join(p, "max_bytes"), "last segment must be open-ended (null)");
    if (i + 1 < segs.size() && std::isinf(s.max_bytes))
      fail(join(p, "max_bytes"), "only the last segment may be open-ended");
    if (!(s.max_bytes > s.min_bytes)) fail(join(p, "max_bytes"), "must be > min_bytes");
    s.c_s = c_us * 1e-6;
    s.bw_Bps = std::isinf(bw) ? kInf : bw * 1e9;
    fit.segments.push_back(s);
    fit.max_rel_err = std::max(fit.max_rel_err, s.max_rel_err);
  }
  return fit;
}

}  // namespace

nlohmann::json to_json(const MachineModel& m) {
  json j;
  j["schema"] = kMachineModelSchema;
  j["schema_version"] = m.schema_version;
  j["created"] = m.created;
  j["machine"] = m.machine;
  j["gpsm_commit"] = m.gpsm_commit;
  j["paths"] = json::array();
  for (const auto& p : m.paths) {
    json jp = {{"src", p.src},
               {"dst", p.dst},
               {"mechanism", p.mechanism},
               {"direction", p.direction},
               {"peak_GBps", p.peak_GBps},
               {"max_rel_err", p.fit.max_rel_err},
               {"segments", json::array()}};
    for (const auto& s : p.fit.segments) jp["segments"].push_back(segment_json(s));
    j["paths"].push_back(std::move(jp));
  }
  j["goodput"] = json::array();
  for (const auto& g : m.goodput) {
    json jg = {{"src", g.src}, {"dst", g.dst}, {"mechanism", g.mechanism}, {"points", json::array()}};
    for (const auto& pt : g.points)
      jg["points"].push_back({{"bytes_per_line", num(pt.bytes_per_line)}, {"GBps", pt.GBps}});
    j["goodput"].push_back(std::move(jg));
  }
  j["saturation"] = json::array();
  for (const auto& s : m.saturation)
    j["saturation"].push_back({{"src", s.src},
                               {"dst", s.dst},
                               {"mechanism", s.mechanism},
                               {"blocks_to_saturate", s.blocks_to_saturate},
                               {"peak_GBps", s.peak_GBps}});
  j["latencies"] = json::array();
  for (const auto& l : m.latencies)
    j["latencies"].push_back({{"name", l.name},
                              {"src", l.src},
                              {"dst", l.dst},
                              {"median_us", l.median_us},
                              {"min_us", l.min_us},
                              {"max_us", l.max_us}});
  j["gpus"] = json::array();
  for (const auto& g : m.gpus)
    j["gpus"].push_back({{"node", g.node},
                         {"name", g.name},
                         {"cc", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                         {"sm_count", g.sm_count},
                         {"sm_clock_max_mhz", num(g.sm_clock_max_mhz)},
                         {"l2_bytes", num(g.l2_bytes)},
                         {"mem_bytes", num(g.mem_bytes)}});
  j["local"] = json::array();
  for (const auto& c : m.local) {
    json jc = {{"gpu", c.gpu}, {"mechanism", c.mechanism}, {"points", json::array()}};
    for (const auto& pt : c.points)
      jc["points"].push_back({{"footprint_bytes", num(pt.footprint_bytes)}, {"GBps", pt.GBps}});
    j["local"].push_back(std::move(jc));
  }
  if (!m.remote_study.empty()) j["remote_study"] = to_json(m.remote_study);
  return j;
}

MachineModel model_from_json(const nlohmann::json& j) {
  require_object(j, "");
  const json* schema = field(j, "schema", "", true);
  if (!schema->is_string() || schema->get<std::string>() != kMachineModelSchema)
    fail("schema", std::string("expected \"") + kMachineModelSchema + "\", got " + schema->dump());
  const json* ver = field(j, "schema_version", "", true);
  if (!ver->is_number_integer()) fail("schema_version", "expected integer");
  if (ver->get<long long>() != kMachineModelSchemaVersion)
    fail("schema_version", "unsupported version " + ver->dump() + " (this gpsm reads version " +
                               std::to_string(kMachineModelSchemaVersion) + ")");
  MachineModel m;
  m.schema_version = kMachineModelSchemaVersion;
  m.created = get_string(j, "created", "", false);
  m.machine = get_string(j, "machine", "", false);
  m.gpsm_commit = get_string(j, "gpsm_commit", "", false);

  const json& paths = get_array(j, "paths", "", true);
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string p = index("paths", i);
    const json& jp = paths[i];
    require_object(jp, p);
    PathModel pm;
    pm.src = get_string(jp, "src", p);
    pm.dst = get_string(jp, "dst", p);
    pm.mechanism = get_string(jp, "mechanism", p);
    pm.direction = get_string(jp, "direction", p);
    pm.peak_GBps = get_number(jp, "peak_GBps", p);
    if (pm.peak_GBps < 0) fail(join(p, "peak_GBps"), "must be >= 0");
    pm.fit = fit_from_json(jp, p);
    // The path-level max_rel_err is derived (max over segments); checked only for its type.
    get_number(jp, "max_rel_err", p, false, false, 0.0);
    m.paths.push_back(std::move(pm));
  }

  const json& goodput = get_array(j, "goodput", "", false);
  for (size_t i = 0; i < goodput.size(); ++i) {
    const std::string p = index("goodput", i);
    const json& jg = goodput[i];
    require_object(jg, p);
    GoodputCurve g;
    g.src = get_string(jg, "src", p);
    g.dst = get_string(jg, "dst", p);
    g.mechanism = get_string(jg, "mechanism", p);
    const std::string pp = join(p, "points");
    const json& pts = get_array(jg, "points", p, true);
    for (size_t k = 0; k < pts.size(); ++k) {
      const std::string q = index(pp, k);
      require_object(pts[k], q);
      GoodputPoint pt;
      pt.bytes_per_line = get_number(pts[k], "bytes_per_line", q);
      pt.GBps = get_number(pts[k], "GBps", q);
      if (!(pt.bytes_per_line > 0)) fail(join(q, "bytes_per_line"), "must be > 0");
      if (pt.GBps < 0) fail(join(q, "GBps"), "must be >= 0");
      g.points.push_back(pt);
    }
    m.goodput.push_back(std::move(g));
  }

  const json& sat = get_array(j, "saturation", "", false);
  for (size_t i = 0; i < sat.size(); ++i) {
    const std::string p = index("saturation", i);
    const json& js = sat[i];
    require_object(js, p);
    Saturation s;
    s.src = get_string(js, "src", p);
    s.dst = get_string(js, "dst", p);
    s.mechanism = get_string(js, "mechanism", p);
    const json* b = field(js, "blocks_to_saturate", p, true);
    if (!b->is_number_integer() || b->get<long long>() < 1 || b->get<long long>() > (1LL << 31) - 1)
      fail(join(p, "blocks_to_saturate"), "expected positive integer");
    s.blocks_to_saturate = b->get<int>();
    s.peak_GBps = get_number(js, "peak_GBps", p);
    if (s.peak_GBps < 0) fail(join(p, "peak_GBps"), "must be >= 0");
    m.saturation.push_back(std::move(s));
  }

  const json& lat = get_array(j, "latencies", "", false);
  for (size_t i = 0; i < lat.size(); ++i) {
    const std::string p = index("latencies", i);
    const json& jl = lat[i];
    require_object(jl, p);
    Latency l;
    l.name = get_string(jl, "name", p);
    l.src = get_string(jl, "src", p, false);
    l.dst = get_string(jl, "dst", p, false);
    l.median_us = get_number(jl, "median_us", p);
    l.min_us = get_number(jl, "min_us", p);
    l.max_us = get_number(jl, "max_us", p);
    // a latency is a time: a negative one is not a measurement (checked at load, for every user)
    if (!(l.min_us >= 0)) fail(join(p, "min_us"), "must be >= 0 (a latency)");
    if (!(l.min_us <= l.median_us && l.median_us <= l.max_us))
      fail(p, "expected min_us <= median_us <= max_us");
    m.latencies.push_back(std::move(l));
  }

  const json& gpus = get_array(j, "gpus", "", false);
  for (size_t i = 0; i < gpus.size(); ++i) {
    const std::string p = index("gpus", i);
    const json& jg = gpus[i];
    require_object(jg, p);
    GpuInfo g;
    g.node = get_string(jg, "node", p);
    g.name = get_string(jg, "name", p, false);
    const std::string cc = get_string(jg, "cc", p);
    const auto dot = cc.find('.');
    try {
      if (dot == std::string::npos) throw std::invalid_argument(cc);
      std::size_t a = 0, b = 0;
      g.cc_major = std::stoi(cc.substr(0, dot), &a);
      g.cc_minor = std::stoi(cc.substr(dot + 1), &b);
      if (a != dot || b != cc.size() - dot - 1 || g.cc_major < 1 || g.cc_minor < 0) throw std::invalid_argument(cc);
    } catch (const std::exception&) {
      fail(join(p, "cc"), "expected \"<major>.<minor>\", got \"" + cc + "\"");
    }
    const double sms = get_number(jg, "sm_count", p);
    if (!(sms >= 1) || sms != std::floor(sms) || sms > 1e6) fail(join(p, "sm_count"), "expected positive integer");
    g.sm_count = static_cast<int>(sms);
    g.sm_clock_max_mhz = get_number(jg, "sm_clock_max_mhz", p, false, false, 0.0);
    g.l2_bytes = get_number(jg, "l2_bytes", p);
    g.mem_bytes = get_number(jg, "mem_bytes", p, false, false, 0.0);
    if (g.sm_clock_max_mhz < 0) fail(join(p, "sm_clock_max_mhz"), "must be >= 0 (0: unknown)");
    if (!(g.l2_bytes > 0)) fail(join(p, "l2_bytes"), "must be > 0");
    if (g.mem_bytes < 0) fail(join(p, "mem_bytes"), "must be >= 0 (0: unknown)");
    if (m.gpu(g.node)) fail(join(p, "node"), "\"" + g.node + "\" appears twice");
    m.gpus.push_back(std::move(g));
  }

  const json& local = get_array(j, "local", "", false);
  for (size_t i = 0; i < local.size(); ++i) {
    const std::string p = index("local", i);
    const json& jc = local[i];
    require_object(jc, p);
    LocalCurve c;
    c.gpu = get_string(jc, "gpu", p);
    c.mechanism = get_string(jc, "mechanism", p);
    const std::string pp = join(p, "points");
    const json& pts = get_array(jc, "points", p, true);
    if (pts.empty()) fail(pp, "expected at least one point");
    for (size_t k = 0; k < pts.size(); ++k) {
      const std::string q = index(pp, k);
      require_object(pts[k], q);
      FootprintPoint pt;
      pt.footprint_bytes = get_number(pts[k], "footprint_bytes", q);
      pt.GBps = get_number(pts[k], "GBps", q);
      if (!(pt.footprint_bytes > 0)) fail(join(q, "footprint_bytes"), "must be > 0");
      if (!(pt.GBps > 0)) fail(join(q, "GBps"), "must be > 0");
      if (!c.points.empty() && !(pt.footprint_bytes > c.points.back().footprint_bytes))
        fail(join(q, "footprint_bytes"), "must ascend");
      c.points.push_back(pt);
    }
    m.local.push_back(std::move(c));
  }
  if (const json* rs = field(j, "remote_study", "", false)) m.remote_study = remote_study_from_json(*rs);
  return m;
}

void save_model(const MachineModel& m, const std::string& path) {
  const std::string text = to_json(m).dump(2) + "\n";
  write_file_atomic(path, text);  // a failed write leaves the previous model whole
}

MachineModel load_model(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("machine model: cannot open '" + path +
                             "' (write one with `gpsm scope`)");
  std::stringstream ss;
  ss << f.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error("machine model: '" + path + "' is not valid JSON: " + e.what());
  }
  try {
    return model_from_json(j);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + " (in '" + path + "')");
  }
}

}  // namespace gpsm::model
