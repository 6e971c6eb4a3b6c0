#include "apps/harness/run_outcome_json.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "gpsm/error.hpp"

namespace gpsm::apps {

namespace {

nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw gpsm::Error("gpsm: run outcome: " + field + " " + what);
}

const nlohmann::json& member(const nlohmann::json& j, const std::string& field) {
  const auto it = j.find(field);
  if (it == j.end()) bad(field, "is missing");
  return *it;
}

double read_number(const nlohmann::json& v, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad(field, "is not a number (nor \"inf\", \"-inf\", \"nan\"): " + v.dump());
}

std::string read_string(const nlohmann::json& j, const std::string& field) {
  const nlohmann::json& v = member(j, field);
  if (!v.is_string()) bad(field, "is not a string: " + v.dump());
  return v.get<std::string>();
}

template <typename Int>
Int read_integer(const nlohmann::json& j, const std::string& field) {
  const nlohmann::json& v = member(j, field);
  if (!v.is_number_integer()) bad(field, "is not an integer: " + v.dump());
  return v.get<Int>();
}

std::vector<double> read_numbers(const nlohmann::json& j, const std::string& field) {
  const nlohmann::json& v = member(j, field);
  if (!v.is_array()) bad(field, "is not an array: " + v.dump());
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) out.push_back(read_number(v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

RunStatus read_status(const nlohmann::json& j) {
  const std::string s = read_string(j, "status");
  for (RunStatus r : {RunStatus::ok, RunStatus::failed, RunStatus::unsupported})
    if (s == to_string(r)) return r;
  bad("status", "is not ok, failed or unsupported: \"" + s + "\"");
}

}  // namespace

nlohmann::json run_outcome_to_json(const RunOutcome& o) {
  nlohmann::json secs = nlohmann::json::array(), pages = nlohmann::json::array(), choices = nlohmann::json::array();
  for (double s : o.sec_per_iter) secs.push_back(number(s));
  for (double p : o.subscriber_pages) pages.push_back(number(p));
  for (const RunChoice& c : o.choices) choices.push_back({{"name", c.name}, {"value", c.value}, {"why", c.why}});
  return {{"format", kRunOutcomeFormat},
          {"status", to_string(o.status)},
          {"reason", o.reason},
          {"sec_per_iter", secs},
          {"iterations", o.iterations},
          {"error", number(o.error)},
          {"tolerance", number(o.tolerance)},
          {"link_bytes_per_iter", number(o.link_bytes_per_iter)},
          {"mem_bytes_per_iter", number(o.mem_bytes_per_iter)},
          {"timing", o.timing},
          {"subscriber_pages", pages},
          {"proact",
           {{"requested", o.proact.requested},
            {"chunk_bytes", o.proact.chunk_bytes},
            {"source", o.proact.source},
            {"key_size", o.proact.key_size},
            {"agent", o.proact.agent}}},
          {"choices", choices}};
}

RunOutcome run_outcome_from_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("document", "is not an object");
  if (read_string(j, "format") != kRunOutcomeFormat)
    bad("format", "is \"" + read_string(j, "format") + "\", not \"" + kRunOutcomeFormat + "\" (another gpsm build?)");
  RunOutcome o;
  o.status = read_status(j);
  o.reason = read_string(j, "reason");
  o.sec_per_iter = read_numbers(j, "sec_per_iter");
  o.iterations = read_integer<int>(j, "iterations");
  o.error = read_number(member(j, "error"), "error");
  o.tolerance = read_number(member(j, "tolerance"), "tolerance");
  o.link_bytes_per_iter = read_number(member(j, "link_bytes_per_iter"), "link_bytes_per_iter");
  o.mem_bytes_per_iter = read_number(member(j, "mem_bytes_per_iter"), "mem_bytes_per_iter");
  o.timing = read_string(j, "timing");
  o.subscriber_pages = read_numbers(j, "subscriber_pages");
  const nlohmann::json& p = member(j, "proact");
  if (!p.is_object()) bad("proact", "is not an object");
  o.proact.requested = read_integer<std::uint64_t>(p, "requested");
  o.proact.chunk_bytes = read_integer<std::uint64_t>(p, "chunk_bytes");
  o.proact.source = read_string(p, "source");
  o.proact.key_size = read_integer<std::uint64_t>(p, "key_size");
  o.proact.agent = read_string(p, "agent");
  const nlohmann::json& c = member(j, "choices");
  if (!c.is_array()) bad("choices", "is not an array");
  for (const auto& e : c) {
    if (!e.is_object()) bad("choices", "holds a non-object: " + e.dump());
    o.choices.push_back({read_string(e, "name"), read_string(e, "value"), read_string(e, "why")});
  }
  return o;
}

}  // namespace gpsm::apps
