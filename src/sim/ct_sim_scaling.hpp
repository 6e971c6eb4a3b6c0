#pragma once
// The trace-driven simulator's own prediction for the CT app (sim/trace_ct.hpp replayed by the
// engine, as `gpsm sim --app ct` does), for the CT scalability report (sim/ct_scaling.hpp) to
// print beside the analytic model: the same systems, the same H200 compute, so the two differ
// only in what the simulator models and the model does not (launch shapes and partial waves,
// the helix's uneven views, per-kernel copies and chunks, the host loop). Plain C++.
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/system.hpp"
#include "sim/trace.hpp"

namespace gpsm::sim {

// Preset `name` at `gpus` GPUs with h200x4's GPU (the trace's compute was measured on H200s; on
// the PCIe presets only the link, latency and egress change, as in the analytic model).
System ct_sim_system(const std::string& preset_name, int gpus);
// The trace of a gpsm bench --app ct size on `gpus` GPUs: one iteration, auto sampling, H200 SMs.
Trace ct_sim_trace(const std::string& size, int gpus);
// ms per iteration of `t` under `p` on `s`.
double ct_sim_ms(const Trace& t, const System& s, SimParadigm p);

// A system of the report: its label and preset.
struct CtSimLink {
  std::string label, preset;
};
// The report's systems: the measured NVLink node (h200x4) and the PCIe 3, 4, 5 presets' links.
std::vector<CtSimLink> ct_sim_links();

// ms per iteration for every size x link x paradigm (memcpy, proact, infinite) x GPU count,
// indexed [size][link][paradigm][count]; each trace made once and replayed on every system.
using CtSimTable = std::vector<std::vector<std::vector<std::vector<double>>>>;
CtSimTable ct_sim_table(const std::vector<std::string>& sizes, const std::vector<CtSimLink>& links,
                        const std::vector<SimParadigm>& paradigms, const std::vector<int>& gpu_counts);

}  // namespace gpsm::sim
