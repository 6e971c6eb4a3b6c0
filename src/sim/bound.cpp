// The opportunity bound over every kernel structure (sim/bound.hpp).
#include "sim/bound.hpp"

#include <stdexcept>

namespace gpsm::sim {

std::vector<std::string> bound_layouts() {
  std::vector<std::string> out;
  for (SimParadigm p : parse_sim_paradigms("all")) {
    const std::string l = sim_trace_layout(p);
    bool seen = false;
    for (const auto& x : out) seen = seen || x == l;
    if (!seen) out.push_back(l);
  }
  return out;
}

SimResult simulate_bound(const std::vector<BoundInput>& in, const System& s) {
  SimResult best;
  std::string best_layout;
  bool any = false;
  for (const BoundInput& b : in) {
    if (b.trace == nullptr || b.trace->iterations.empty()) continue;
    SimResult r = simulate(*b.trace, s, SimParadigm::infinite, b.opt);
    if (!any || r.sec_per_iter < best.sec_per_iter) {
      best = std::move(r);
      best_layout = b.trace->layout;
      any = true;
    }
  }
  if (!any) throw std::invalid_argument("the transfers-elided bound has no trace to run");
  if (in.size() > 1)
    best.model += "; the fastest of every kernel structure's elided run (" + best_layout + " kernels)";
  return best;
}

}  // namespace gpsm::sim
