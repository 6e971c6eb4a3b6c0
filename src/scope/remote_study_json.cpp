// The machine model's "remote_study" object: written whole, read back with every field checked.
#include <cmath>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "gpsm/remote_study.hpp"

namespace gpsm::model {

namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error("machine model: remote_study" + (path.empty() ? "" : "." + path) + ": " + why);
}

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

void require_object(const json& j, const std::string& path) {
  if (!j.is_object()) fail(path, "expected object");
}

// A finite number >= 0 (every figure of the study is a rate, a share, a ratio or a time);
// absent reads as 0 (not measured) unless required.
double number(const json& j, const std::string& key, const std::string& path, bool required = false) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) fail(join(path, key), "missing");
    return 0;
  }
  if (!it->is_number()) fail(join(path, key), "expected number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) fail(join(path, key), "expected a finite number >= 0");
  return v;
}

std::string text(const json& j, const std::string& key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (!it->is_string()) fail(join(path, key), "expected string");
  return it->get<std::string>();
}

const json& array(const json& j, const std::string& key, const std::string& path) {
  static const json empty = json::array();
  auto it = j.find(key);
  if (it == j.end()) return empty;
  if (!it->is_array()) fail(join(path, key), "expected array");
  return *it;
}

std::string index(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

}  // namespace

bool RemoteStudy::empty() const {
  return read_GBps == 0 && write_GBps == 0 && read_write_GBps == 0 && copy_GBps == 0 &&
         concurrent_read_GBps == 0 && concurrent_write_GBps == 0 && batch_peak_remote_GBps == 0 &&
         spread_peak_remote_GBps == 0 && curves.empty() && cache.empty();
}

json to_json(const RemoteStudy& s) {
  json j = {{"src", s.src},
            {"dst", s.dst},
            {"tolerance", s.tolerance},
            {"read_GBps", s.read_GBps},
            {"write_GBps", s.write_GBps},
            {"read_write_GBps", s.read_write_GBps},
            {"copy_GBps", s.copy_GBps},
            {"concurrent_gpus", s.concurrent_gpus},
            {"concurrent_read_GBps", s.concurrent_read_GBps},
            {"concurrent_write_GBps", s.concurrent_write_GBps},
            {"batch_peak_remote_GBps", s.batch_peak_remote_GBps},
            {"spread_peak_remote_GBps", s.spread_peak_remote_GBps},
            {"batch_timeline_slowdown", s.batch_timeline_slowdown},
            {"spread_timeline_slowdown", s.spread_timeline_slowdown},
            {"batch_hidden_percent", s.batch_hidden_percent},
            {"spread_hidden_percent", s.spread_hidden_percent},
            {"occupancy_to_hide", s.occupancy_to_hide},
            {"cache_speedup_smallest", s.cache_speedup_smallest},
            {"cache_helps_up_to_bytes", s.cache_helps_up_to_bytes},
            {"curves", json::array()},
            {"cache", json::array()}};
  for (const auto& c : s.curves) {
    json jc = {{"test", c.test},
               {"distribution", c.distribution},
               {"flops_per_datum", c.flops_per_datum},
               {"occupancy", c.occupancy},
               {"hidden_percent", c.hidden_percent},
               {"points", json::array()}};
    for (const auto& p : c.points) jc["points"].push_back({{"remote_percent", p.remote_percent}, {"slowdown", p.slowdown}});
    j["curves"].push_back(std::move(jc));
  }
  for (const auto& c : s.cache)
    j["cache"].push_back({{"structure_bytes", c.structure_bytes},
                          {"occupancy", c.occupancy},
                          {"remote_ldg_us", c.remote_ldg_us},
                          {"remote_ldcg_us", c.remote_ldcg_us},
                          {"local_ldg_us", c.local_ldg_us}});
  return j;
}

RemoteStudy remote_study_from_json(const json& j) {
  require_object(j, "");
  RemoteStudy s;
  s.src = text(j, "src", "");
  s.dst = text(j, "dst", "");
  s.tolerance = number(j, "tolerance", "", true);
  if (!(s.tolerance > 0 && s.tolerance < 1)) fail("tolerance", "expected a fraction in (0, 1)");
  s.read_GBps = number(j, "read_GBps", "");
  s.write_GBps = number(j, "write_GBps", "");
  s.read_write_GBps = number(j, "read_write_GBps", "");
  s.copy_GBps = number(j, "copy_GBps", "");
  const double g = number(j, "concurrent_gpus", "");
  if (g != std::floor(g) || g > 1e6) fail("concurrent_gpus", "expected a whole number");
  s.concurrent_gpus = static_cast<int>(g);
  s.concurrent_read_GBps = number(j, "concurrent_read_GBps", "");
  s.concurrent_write_GBps = number(j, "concurrent_write_GBps", "");
  s.batch_peak_remote_GBps = number(j, "batch_peak_remote_GBps", "");
  s.spread_peak_remote_GBps = number(j, "spread_peak_remote_GBps", "");
  s.batch_timeline_slowdown = number(j, "batch_timeline_slowdown", "");
  s.spread_timeline_slowdown = number(j, "spread_timeline_slowdown", "");
  s.batch_hidden_percent = number(j, "batch_hidden_percent", "");
  s.spread_hidden_percent = number(j, "spread_hidden_percent", "");
  if (s.batch_hidden_percent > 100) fail("batch_hidden_percent", "expected a percent (0-100)");
  if (s.spread_hidden_percent > 100) fail("spread_hidden_percent", "expected a percent (0-100)");
  s.occupancy_to_hide = number(j, "occupancy_to_hide", "");
  if (s.occupancy_to_hide > 1) fail("occupancy_to_hide", "expected a fraction (0-1)");
  s.cache_speedup_smallest = number(j, "cache_speedup_smallest", "");
  s.cache_helps_up_to_bytes = number(j, "cache_helps_up_to_bytes", "");
  const json& curves = array(j, "curves", "");
  for (size_t i = 0; i < curves.size(); ++i) {
    const std::string p = index("curves", i);
    require_object(curves[i], p);
    RemoteSlowdownCurve c;
    c.test = text(curves[i], "test", p);
    c.distribution = text(curves[i], "distribution", p);
    if (c.distribution != "batch" && c.distribution != "spread")
      fail(join(p, "distribution"), "expected \"batch\" or \"spread\", got \"" + c.distribution + "\"");
    c.flops_per_datum = number(curves[i], "flops_per_datum", p, true);
    c.occupancy = number(curves[i], "occupancy", p, true);
    if (!(c.occupancy > 0 && c.occupancy <= 1)) fail(join(p, "occupancy"), "expected a fraction in (0, 1]");
    c.hidden_percent = number(curves[i], "hidden_percent", p, true);
    if (c.hidden_percent > 100) fail(join(p, "hidden_percent"), "expected a percent (0-100)");
    const json& pts = array(curves[i], "points", p);
    const std::string pp = join(p, "points");
    if (pts.empty()) fail(pp, "expected at least one point");
    for (size_t k = 0; k < pts.size(); ++k) {
      const std::string q = index(pp, k);
      require_object(pts[k], q);
      RemoteSlowdownPoint pt;
      pt.remote_percent = number(pts[k], "remote_percent", q, true);
      pt.slowdown = number(pts[k], "slowdown", q, true);
      if (pt.remote_percent > 100) fail(join(q, "remote_percent"), "expected a percent (0-100)");
      if (!(pt.slowdown > 0)) fail(join(q, "slowdown"), "must be > 0");
      if (!c.points.empty() && !(pt.remote_percent > c.points.back().remote_percent))
        fail(join(q, "remote_percent"), "must ascend");
      c.points.push_back(pt);
    }
    s.curves.push_back(std::move(c));
  }
  const json& cache = array(j, "cache", "");
  for (size_t i = 0; i < cache.size(); ++i) {
    const std::string p = index("cache", i);
    require_object(cache[i], p);
    RemoteCachePoint c;
    c.structure_bytes = number(cache[i], "structure_bytes", p, true);
    c.occupancy = number(cache[i], "occupancy", p, true);
    c.remote_ldg_us = number(cache[i], "remote_ldg_us", p, true);
    c.remote_ldcg_us = number(cache[i], "remote_ldcg_us", p, true);
    c.local_ldg_us = number(cache[i], "local_ldg_us", p);
    if (!(c.structure_bytes > 0)) fail(join(p, "structure_bytes"), "must be > 0");
    if (!(c.occupancy > 0 && c.occupancy <= 1)) fail(join(p, "occupancy"), "expected a fraction in (0, 1]");
    if (!(c.remote_ldg_us > 0 && c.remote_ldcg_us > 0)) fail(p, "remote_ldg_us and remote_ldcg_us must be > 0");
    s.cache.push_back(c);
  }
  return s;
}

}  // namespace gpsm::model
