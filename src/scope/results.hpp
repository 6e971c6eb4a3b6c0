#pragma once
// In-memory form of one `gpsm scope` test's measurements and its JSON encoding
// (schema "gpsm.results", documented in docs/results-schema.md).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

#include "common/sizes.hpp"
#include "scope/stats.hpp"

namespace gpsm::scope {

enum class Status { ok, waived, failed };
const char* to_string(Status s);
Status status_from_string(const std::string& s);

// One x position of a sweep: raw per-operation times and the derived value in the test's unit.
struct Point {
  double x = 0;             // the swept parameter (bytes, bytes per line, blocks, ...)
  double bytes = 0;         // payload bytes moved by one timed operation (0 for pure latencies)
  std::vector<double> time_s;  // raw samples: seconds per operation, one per timed repetition
  Summary value;            // median/min/max of the value in the test's unit (GB/s or us)
  bool verified = false;    // data checked after the timed run
};

// A curve: one path/configuration of a test, e.g. "gpu0->gpu1 uni".
struct Series {
  std::string label;
  std::map<std::string, std::string> params;  // src, dst, direction, numa, memory, ...
  std::vector<Point> points;
};

struct TestResult {
  std::string name, group, description;
  std::string unit;     // "GB/s" or "us"
  std::string x_name;   // what Point::x is: "bytes", "bytes_per_line", "blocks", "vector_bytes", "gpus"
  Status status = Status::ok;
  std::string reason;   // why waived or failed
  std::vector<Series> series;
};

// Value of a point from its time samples: GB/s = bytes/time/1e9 for bandwidths, us for latencies.
Point make_point(double x, double bytes, const std::vector<double>& time_s, const std::string& unit,
                 bool verified);

nlohmann::json to_json(const TestResult& t);
TestResult test_result_from_json(const nlohmann::json& j);  // throws std::runtime_error with the path

// Size sweeps: powers of two from lo to hi inclusive, every `step`-th power.
std::vector<std::uint64_t> pow2_sweep(std::uint64_t lo, std::uint64_t hi, int step = 1);
// Sizes: parse_size / format_size (common/sizes.hpp).

}  // namespace gpsm::scope
