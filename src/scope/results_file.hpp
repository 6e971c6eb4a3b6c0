#pragma once
// The results document `gpsm scope --json` writes (schema "gpsm.results" v1, docs/results-schema.md):
// run metadata + topology + every test's raw samples + the fitted machine model.
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "gpsm/machine_model.hpp"
#include "gpsm/topology.hpp"
#include "scope/registry.hpp"
#include "scope/results.hpp"

namespace gpsm::scope {

constexpr int kResultsSchemaVersion = 1;

struct RunMeta {
  std::string command, created, device_kind;
  std::string hostname, cpu_model;
  int logical_cpus = 0;
  double duration_s = 0;
  Options options;
};

nlohmann::json results_document(const RunMeta& meta, const gpsm::topo::Topology& topo,
                                const std::vector<TestResult>& tests, const gpsm::model::MachineModel& model);

// Reads the tests back (validates schema and version; errors name the file's problem).
std::vector<TestResult> tests_from_document(const nlohmann::json& doc);

// UTC timestamp "2026-11-21T19:50:00Z".
std::string utc_now_iso8601();
// /proc/cpuinfo's first "model name" ("unknown" if absent).
std::string cpu_model_name();

}  // namespace gpsm::scope
