#include "scope/results_file.hpp"

#include <ctime>
#include <fstream>
#include <stdexcept>
#include <thread>
#include <nlohmann/json.hpp>

#include "gpsm/build_info.hpp"

namespace gpsm::scope {

nlohmann::json results_document(const RunMeta& m, const gpsm::topo::Topology& topo,
                                const std::vector<TestResult>& tests, const gpsm::model::MachineModel& model) {
  nlohmann::json j;
  j["schema"] = "gpsm.results";
  j["schema_version"] = kResultsSchemaVersion;
  j["tool"] = "scope";
  j["created"] = m.created;
  j["command"] = m.command;
  if (!m.device_kind.empty()) j["device_kind"] = m.device_kind;
  j["gpsm"] = {{"version", GPSM_VERSION_STRING},
               {"commit", GPSM_GIT_COMMIT},
               {"cuda_arch", GPSM_CUDA_ARCHITECTURES},
               {"build_type", GPSM_BUILD_TYPE}};
  j["host"] = {{"hostname", m.hostname}, {"cpu_model", m.cpu_model}, {"logical_cpus", m.logical_cpus}};
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : topo.gpus)
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"uuid", g.uuid},
                    {"pci_bus_id", g.pci_bus_id},
                    {"sm_clock_mhz", g.sm_clock_mhz},
                    {"mem_clock_mhz", g.mem_clock_mhz},
                    {"sm_clock_max_mhz", g.sm_clock_max_mhz},
                    {"mem_clock_max_mhz", g.mem_clock_max_mhz}});
  j["system"] = {{"driver_version", topo.driver_version},
                 {"cuda_driver_version", topo.cuda_driver_version},
                 {"cuda_runtime_version", topo.cuda_runtime_version},
                 {"gpus", gpus}};
  const auto& o = m.options;
  j["options"] = {{"quick", o.quick},         {"reps", o.reps},         {"warmup", o.warmup},
                  {"devices", o.devices},     {"min_size", o.min_size}, {"max_size", o.max_size},
                  {"peak_size", o.peak_size}, {"target_rep_s", o.target_rep_s}};
  j["topology"] = gpsm::topo::to_json(topo);
  j["tests"] = nlohmann::json::array();
  for (const auto& t : tests) j["tests"].push_back(to_json(t));
  j["model"] = gpsm::model::to_json(model);
  j["duration_s"] = m.duration_s;
  return j;
}

std::vector<TestResult> tests_from_document(const nlohmann::json& doc) {
  // Types are checked before values are taken: json's value() and at() throw the JSON library's
  // own exceptions on a field of another type, which callers do not expect from a reader.
  const auto schema = doc.is_object() ? doc.find("schema") : doc.end();
  if (!doc.is_object() || schema == doc.end() || !schema->is_string() || *schema != "gpsm.results")
    throw std::runtime_error("not a gpsm results file (schema is not \"gpsm.results\")");
  const auto ver = doc.find("schema_version");
  if (ver == doc.end() || !ver->is_number_integer())
    throw std::runtime_error("results: schema_version: expected an integer");
  if (*ver != kResultsSchemaVersion)
    throw std::runtime_error("unsupported results schema_version " + ver->dump() + " (this gpsm reads " +
                             std::to_string(kResultsSchemaVersion) + ")");
  const auto tests = doc.find("tests");
  if (tests == doc.end() || !tests->is_array()) throw std::runtime_error("results: tests: expected an array");
  std::vector<TestResult> out;
  for (const auto& t : *tests) out.push_back(test_result_from_json(t));
  return out;
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  return "unknown";
}

}  // namespace gpsm::scope
