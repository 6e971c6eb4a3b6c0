#pragma once
// The simulator's opportunity bound (`infinite`): the app with its transfers elided. Paradigms
// replay different kernels of one app (sim_trace_layout: the slabs kernel with its pushes, the
// whole-grid marching step of um and gps_hw, rdl's boxes loading their halos), and each kernel's
// own transfers-elided run is a bound only for the paradigms that replay it: on heat3d 256^3
// (h200x4, 2 GPUs) gps_hw's grid plan ran at 115 % of the slabs kernel's elided run. The bound is
// therefore the fastest transfers-elided run over every kernel structure the app has: the same
// iterations and work, each kernel with an infinitely fast link (GPS paper §6, PROACT dissertation
// §2.4: the opportunity is what an ideal interconnect leaves). Plain C++.
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

// The layouts whose kernels some paradigm replays (every value sim_trace_layout returns).
std::vector<std::string> bound_layouts();

// One kernel structure's trace and the options its run takes (run_iters may differ: a trace that
// converged stands for itself).
struct BoundInput {
  const Trace* trace = nullptr;  // nullptr or no iterations: skipped (that layout cannot run here)
  SimOptions opt;
};

// The transfers-elided run of each input, and the fastest of them (SimParadigm::infinite on each
// trace). The result's model line names the layout that set the bound. Throws
// std::invalid_argument when no input has a trace.
SimResult simulate_bound(const std::vector<BoundInput>& in, const System& s);

}  // namespace gpsm::sim
