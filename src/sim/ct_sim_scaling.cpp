// gpsm sim's CT prediction for the scalability report (sim/ct_sim_scaling.hpp).
#include "sim/ct_sim_scaling.hpp"

#include "sim/trace_ct.hpp"
#include "sim/trace_gen.hpp"

namespace gpsm::sim {

System ct_sim_system(const std::string& preset_name, int gpus) {
  System s = preset(preset_name, gpus);
  if (preset_name != "h200x4") s.gpu = preset("h200x4", gpus).gpu;
  return s;
}

Trace ct_sim_trace(const std::string& size, int gpus) {
  TraceRequest r;
  r.app = "ct";
  r.problem.graph = size;
  r.problem.iters = 1;  // every iteration alike
  r.gpus = gpus;
  r.layout = "slabs";
  r.sample = 0;  // auto
  r.sms = kCtMeasuredSms;
  return ct_trace(r);
}

double ct_sim_ms(const Trace& t, const System& s, SimParadigm p) { return simulate(t, s, p, SimOptions{}).sec_per_iter * 1e3; }

std::vector<CtSimLink> ct_sim_links() {
  return {{"nvlink-h200", "h200x4"}, {"pcie3", "v100-pcie3"}, {"pcie4", "v100-pcie4"}, {"pcie5", "v100-pcie5"}};
}

CtSimTable ct_sim_table(const std::vector<std::string>& sizes, const std::vector<CtSimLink>& links,
                        const std::vector<SimParadigm>& paradigms, const std::vector<int>& gpu_counts) {
  CtSimTable out(sizes.size(), std::vector<std::vector<std::vector<double>>>(
                                   links.size(), std::vector<std::vector<double>>(paradigms.size(),
                                                                                  std::vector<double>(gpu_counts.size()))));
  for (std::size_t z = 0; z < sizes.size(); ++z)
    for (std::size_t c = 0; c < gpu_counts.size(); ++c) {
      const Trace t = ct_sim_trace(sizes[z], gpu_counts[c]);
      for (std::size_t l = 0; l < links.size(); ++l) {
        const System s = ct_sim_system(links[l].preset, gpu_counts[c]);
        for (std::size_t p = 0; p < paradigms.size(); ++p) out[z][l][p][c] = ct_sim_ms(t, s, paradigms[p]);
      }
    }
  return out;
}

}  // namespace gpsm::sim
