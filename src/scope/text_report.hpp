#pragma once
// Terminal rendering of `gpsm scope` results: nvbandwidth-style src x dst matrices for GPU pairs,
// compact per-series tables otherwise.
#include <string>

#include "scope/results.hpp"

namespace gpsm::scope {

// `peak_x`: the sweep position shown in matrices and "peak" columns (the run's peak size).
std::string render_test(const TestResult& t, double peak_x);

// The GPU index in "gpu3" (or -1).
int gpu_index(const std::string& node);

}  // namespace gpsm::scope
