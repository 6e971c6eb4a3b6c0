#pragma once
// Summary statistics of repeated measurements: every figure gpsm reports carries its spread.
#include <vector>

namespace gpsm::scope {

struct Summary {
  double median = 0, min = 0, max = 0, mean = 0;
  int n = 0;
};

// Throws std::invalid_argument on an empty sample set (a figure with no run behind it is a bug).
Summary summarize(std::vector<double> samples);

}  // namespace gpsm::scope
