#include "scope/results.hpp"

#include <cctype>
#include <cmath>
#include <stdexcept>
#include <nlohmann/json.hpp>

namespace gpsm::scope {

const char* to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::waived: return "waived";
    case Status::failed: return "failed";
  }
  return "failed";
}

Status status_from_string(const std::string& s) {
  if (s == "ok") return Status::ok;
  if (s == "waived") return Status::waived;
  if (s == "failed") return Status::failed;
  throw std::runtime_error("unknown status '" + s + "'");
}

Point make_point(double x, double bytes, const std::vector<double>& time_s, const std::string& unit,
                 bool verified) {
  Point p;
  p.x = x;
  p.bytes = bytes;
  p.time_s = time_s;
  p.verified = verified;
  std::vector<double> v;
  v.reserve(time_s.size());
  for (double t : time_s) {
    if (unit == "GB/s")
      v.push_back(t > 0 ? bytes / t / 1e9 : 0.0);
    else if (unit == "us")
      v.push_back(t * 1e6);
    else
      throw std::invalid_argument("make_point: unknown unit '" + unit + "'");
  }
  p.value = summarize(v);
  return p;
}

nlohmann::json to_json(const TestResult& t) {
  nlohmann::json j;
  j["name"] = t.name;
  j["group"] = t.group;
  j["description"] = t.description;
  j["unit"] = t.unit;
  j["x"] = t.x_name;
  j["status"] = to_string(t.status);
  if (!t.reason.empty()) j["reason"] = t.reason;
  j["series"] = nlohmann::json::array();
  for (const auto& s : t.series) {
    nlohmann::json js;
    js["label"] = s.label;
    js["params"] = s.params;
    js["points"] = nlohmann::json::array();
    for (const auto& p : s.points) {
      js["points"].push_back({{"x", p.x},
                              {"bytes", p.bytes},
                              {"time_s", p.time_s},
                              {"median", p.value.median},
                              {"min", p.value.min},
                              {"max", p.value.max},
                              {"verified", p.verified}});
    }
    j["series"].push_back(std::move(js));
  }
  return j;
}

TestResult test_result_from_json(const nlohmann::json& j) {
  TestResult t;
  try {
    t.name = j.at("name").get<std::string>();
    t.group = j.value("group", "");
    t.description = j.value("description", "");
    t.unit = j.at("unit").get<std::string>();
    t.x_name = j.value("x", "");
    t.status = status_from_string(j.at("status").get<std::string>());
    t.reason = j.value("reason", "");
    for (const auto& js : j.at("series")) {
      Series s;
      s.label = js.at("label").get<std::string>();
      s.params = js.value("params", std::map<std::string, std::string>{});
      for (const auto& jp : js.at("points")) {
        Point p = make_point(jp.at("x").get<double>(), jp.at("bytes").get<double>(),
                             jp.at("time_s").get<std::vector<double>>(), t.unit,
                             jp.value("verified", false));
        s.points.push_back(std::move(p));
      }
      t.series.push_back(std::move(s));
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("results: test '" + t.name + "': " + e.what());
  }
  return t;
}

std::vector<std::uint64_t> pow2_sweep(std::uint64_t lo, std::uint64_t hi, int step) {
  if (lo == 0 || hi < lo || step < 1) throw std::invalid_argument("pow2_sweep: bad range");
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = lo; s <= hi; s <<= step) {
    out.push_back(s);
    if (s > (hi >> step)) break;
  }
  if (out.back() != hi && (hi & (hi - 1)) == 0) out.push_back(hi);
  return out;
}

}  // namespace gpsm::scope
