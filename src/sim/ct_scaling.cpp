#include "sim/ct_scaling.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "apps/ct/ct_bench_spec.hpp"
#include "apps/ct/ct_partition.hpp"
#include "sim/ct_sim_scaling.hpp"
#include "sim/trace_ct.hpp"
#include "sim/engine.hpp"
#include "sim/link.hpp"

namespace gpsm::sim {

CtComputeFit fit_ct_compute(const CtPhaseMs& one, const CtPhaseMs& two) {
  if (one.forward <= 0 || one.update <= 0 || two.forward <= 0 || two.update <= 0)
    throw std::invalid_argument("fit_ct_compute: phase times must be > 0");
  // T(G) = split / G + fixed through T(1) and T(2). A 2-GPU time at or below half the 1-GPU one
  // (superlinear) leaves fixed = 0 and the phase linear, as §3.4 assumes.
  CtComputeFit f;
  f.fixed.forward = std::max(0.0, 2 * two.forward - one.forward);
  f.fixed.update = std::max(0.0, 2 * two.update - one.update);
  f.split.forward = one.forward - f.fixed.forward;
  f.split.update = one.update - f.fixed.update;
  return f;
}

CtComputeFit scale_ct_compute(const CtComputeFit& f, double k) {
  CtComputeFit s = f;
  s.split.forward *= k;
  s.split.update *= k;
  s.fixed.forward *= k;
  s.fixed.update *= k;
  return s;
}

const char* ct_paradigm_name(CtParadigm p) {
  switch (p) {
    case CtParadigm::memcpy: return "memcpy";
    case CtParadigm::proact: return "proact";
    case CtParadigm::infinite: return "infinite";
  }
  return "?";
}

double ct_exchange_s(const System& sys, double bytes, int peers, CtFabric fabric, int senders) {
  if (bytes <= 0 || peers <= 0) return 0;
  double lat_ns = sys.link.latency_ns + (sys.topology != Topology::direct ? sys.switch_ns : 0);
  const double fixed_s = std::max(lat_ns * 1e-9, sys.copy_fixed_us * 1e-6);
  // Wire bytes per copy (headers, flits), the peers' copies side by side (a stream per peer).
  double wire = peers * wire_bytes_write(sys.link, bytes / peers);
  double rate = sys.link.raw_GBps;
  if (peers > 1 && sys.egress_GBps > 0) rate = std::min(rate, sys.egress_GBps);
  if (fabric == CtFabric::shared) wire *= senders;
  return fixed_s + wire / (rate * 1e9);
}

CtIteration model_ct_iteration(const apps::ct::Geometry& g, int subsets, const CtComputeFit& fit, const System& sys,
                               int gpus, CtParadigm p, CtFabric fabric, std::int64_t chunk_bytes) {
  const apps::ct::CtPartition part(g, gpus, subsets);
  const double fwd_ms = fit.forward_ms(gpus), upd_ms = fit.update_ms(gpus);
  // Slab sizes differ by at most a plane, larger first: GPU 0 sends the most and owns the last
  // chunk that is at least as large as anyone's.
  const double image_bytes = static_cast<double>(part.image_bytes_sent(0));
  double last_chunk_bytes = 0, n_chunks = 1;
  if (gpus > 1) {
    const auto chunks = part.image_chunks(0, chunk_bytes);
    if (!chunks.empty()) last_chunk_bytes = static_cast<double>(chunks.back().bytes) * (gpus - 1);
    n_chunks = std::max<double>(1, static_cast<double>(chunks.size()));
  }
  const double image_ms = 1e3 * ct_exchange_s(sys, image_bytes, gpus - 1, fabric, gpus);
  const double last_ms = 1e3 * ct_exchange_s(sys, last_chunk_bytes, gpus - 1, fabric, gpus);
  CtIteration it;
  for (int m = 0; m < subsets; ++m) {
    const double f = fwd_ms * static_cast<double>(part.subset_size(m)) / g.views;
    const double u = upd_ms / subsets;
    double res_bytes = 0;
    for (int r = 0; r < gpus; ++r) res_bytes = std::max(res_bytes, static_cast<double>(part.residual_bytes_sent(m, r)));
    const double res_ms = 1e3 * ct_exchange_s(sys, res_bytes, gpus - 1, fabric, gpus);
    it.compute_ms += f + u;
    switch (p) {
      case CtParadigm::memcpy: it.total_ms += f + res_ms + u + image_ms; break;
      // A pipeline of chunks: compute-bound, the update then the last chunk's copy; copy-bound,
      // the first chunk's update then every copy. Never above memcpy's u + image.
      case CtParadigm::proact: it.total_ms += f + res_ms + std::max(u + last_ms, u / n_chunks + image_ms); break;
      case CtParadigm::infinite: it.total_ms += f + u; break;
    }
  }
  it.exchange_ms = it.total_ms - it.compute_ms;
  return it;
}

namespace {

void add(std::string& out, const char* fmt, double a = 0, double b = 0, double c = 0, double d = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  out += buf;
}

// The model's speedup over one GPU at `gpus`.
double model_speedup(const apps::ct::CtBenchSpec& spec, const CtComputeFit& f, const System& s, CtParadigm p,
                     CtFabric fabric, int gpus) {
  return model_ct_iteration(spec.g, spec.subsets, f, s, 1, p, fabric).total_ms /
         model_ct_iteration(spec.g, spec.subsets, f, s, gpus, p, fabric).total_ms;
}

// gpsm sim's own prediction (sim/ct_sim_scaling.hpp): its 2-GPU check against both measured sizes,
// then its speedups at every count beside the model's (per-GPU egress) at the counts from 8 up.
std::string sim_section(const std::vector<int>& gpu_counts, const apps::ct::CtBenchSpec (&specs)[2],
                        const CtComputeFit (&fits)[2]) {
  std::vector<int> counts = gpu_counts;  // the check needs 1 and 2 GPUs
  for (int need : {1, 2})
    if (std::find(counts.begin(), counts.end(), need) == counts.end()) counts.push_back(need);
  std::sort(counts.begin(), counts.end());
  const auto at = [&](int g) { return std::size_t(std::find(counts.begin(), counts.end(), g) - counts.begin()); };
  const std::vector<std::string> sizes = {"medium", "seed"};
  const std::vector<CtSimLink> links = ct_sim_links();
  const std::vector<SimParadigm> sps = {SimParadigm::memcpy, SimParadigm::proact, SimParadigm::infinite};
  const CtParadigm ps[] = {CtParadigm::memcpy, CtParadigm::proact, CtParadigm::infinite};
  const CtSimTable tab = ct_sim_table(sizes, links, sps, counts);

  const CtMeasured mm = ct_measured_h200x2_medium();
  const CtMeasuredTotals ms = ct_measured_h200x2_seed();
  const double measured[2][3] = {{mm.memcpy2_ms, mm.proact2_ms, mm.infinite2_ms},
                                 {ms.memcpy2_ms, ms.proact2_ms, ms.infinite2_ms}};
  const double one[2] = {mm.one_gpu_ms, ms.one_gpu_ms};
  const CtCompute c = ct_compute_for(specs[0].g);
  std::string out = "\ngpsm sim (trace-driven: gpsm sim --app ct, sim/trace_ct.hpp)\n";
  char cal[256];
  std::snprintf(cal, sizeof cal, "compute per voxel-view pair, every size: forward %.2f ps, update %.2f ps (%s)\n",
                c.forward_s * 1e12, c.update_s * 1e12, c.source.c_str());
  out += cal;
  out += "2-GPU check (h200x4), ms per iteration; seed: a prediction (calibrated on medium alone):\n";
  out += "size   paradigm        sim   measured  error\n";
  for (std::size_t z = 0; z < 2; ++z) {
    for (std::size_t p = 0; p < 3; ++p) {
      const double t = tab[z][0][p][at(2)];
      char row[160];
      std::snprintf(row, sizeof row, "%-6s %-9s %9.1f  %9.1f  %+5.1f%%\n", sizes[z].c_str(), sim_paradigm_name(sps[p]), t,
                    measured[z][p], 100 * (t / measured[z][p] - 1));
      out += row;
    }
    char row[160];
    std::snprintf(row, sizeof row, "%-6s one GPU (memcpy) %9.1f  %9.1f  %+5.1f%%\n", sizes[z].c_str(), tab[z][0][0][at(1)],
                  one[z], 100 * (tab[z][0][0][at(1)] / one[z] - 1));
    out += row;
  }

  std::vector<int> model_counts;
  for (int gc : gpu_counts)
    if (gc >= 8) model_counts.push_back(gc);
  if (model_counts.empty()) model_counts.push_back(gpu_counts.back());
  out += "\nspeedup over one GPU: gpsm sim, and the model above (per-GPU egress) beside it (H200 compute on every link)\n";
  char head[512];
  int n = std::snprintf(head, sizeof head, "%-6s %-12s %-8s", "size", "system", "paradigm");
  for (int gc : gpu_counts) n += std::snprintf(head + n, sizeof head - n, " %6s", ("sim" + std::to_string(gc)).c_str());
  n += std::snprintf(head + n, sizeof head - n, "  |");
  for (int gc : model_counts) n += std::snprintf(head + n, sizeof head - n, " %7s", ("model" + std::to_string(gc)).c_str());
  out += head;
  out += "\n";
  for (std::size_t z = 0; z < 2; ++z)
    for (std::size_t l = 0; l < links.size(); ++l)
      for (std::size_t p = 0; p < 3; ++p) {
        char row[512];
        int w = std::snprintf(row, sizeof row, "%-6s %-12s %-8s", sizes[z].c_str(), links[l].label.c_str(),
                              sim_paradigm_name(sps[p]));
        for (int gc : gpu_counts)
          w += std::snprintf(row + w, sizeof row - w, " %6.2f", tab[z][l][p][at(1)] / tab[z][l][p][at(gc)]);
        w += std::snprintf(row + w, sizeof row - w, "  |");
        const System s = preset(links[l].preset);
        for (int gc : model_counts)
          w += std::snprintf(row + w, sizeof row - w, " %7.2f",
                             model_speedup(specs[z], fits[z], s, ps[p], CtFabric::per_gpu_egress, gc));
        out += row;
        out += "\n";
      }
  return out;
}

}  // namespace

std::string ct_scaling_report(const std::vector<int>& gpu_counts) {
  const CtMeasured meas = ct_measured_h200x2_medium();
  const CtComputeFit fit = fit_ct_compute(meas.one_gpu, meas.two_gpus);
  const auto medium = apps::ct::parse_bench_spec("medium");
  const auto seed = apps::ct::parse_bench_spec("seed");
  // Work per iteration ~ voxels x views (every view's footprint over every voxel it meets).
  const double seed_k = (double(seed.g.nx) * seed.g.ny * seed.g.nz * seed.g.views) /
                        (double(medium.g.nx) * medium.g.ny * medium.g.nz * medium.g.views);
  const System nv = preset("h200x4");
  std::string out;
  out += "CT scalability model (PROACT dissertation sec. 3.4), calibrated on 2x H200, medium\n";
  add(out, "compute fit, ms per iteration: forward %.2f / G + %.2f, update %.2f / G + %.2f\n", fit.split.forward,
      fit.fixed.forward, fit.split.update, fit.fixed.update);
  add(out, "seed size compute = medium x %.0f (voxels x views)\n\n", seed_k);
  out += "2-GPU check (h200x4 link, medium), ms per iteration:\n";
  out += "paradigm   model  measured  error\n";
  const CtParadigm ps[] = {CtParadigm::memcpy, CtParadigm::proact, CtParadigm::infinite};
  const double measured[] = {meas.memcpy2_ms, meas.proact2_ms, meas.infinite2_ms};
  for (int i = 0; i < 3; ++i) {
    const double t = model_ct_iteration(medium.g, medium.subsets, fit, nv, 2, ps[i]).total_ms;
    char row[128];
    std::snprintf(row, sizeof row, "%-9s %6.1f  %8.1f  %+5.1f%%\n", ct_paradigm_name(ps[i]), t, measured[i],
                  100 * (t / measured[i] - 1));
    out += row;
  }
  add(out, "one GPU: model %.1f, measured %.1f ms\n\n", fit.forward_ms(1) + fit.update_ms(1), meas.one_gpu_ms);

  struct Sys {
    const char* label;
    System s;
    CtFabric fabric;
  };
  const std::vector<Sys> systems = {{"nvlink-h200 egress", nv, CtFabric::per_gpu_egress},
                                    {"pcie3 egress", preset("v100-pcie3"), CtFabric::per_gpu_egress},
                                    {"pcie4 egress", preset("v100-pcie4"), CtFabric::per_gpu_egress},
                                    {"pcie5 egress", preset("v100-pcie5"), CtFabric::per_gpu_egress},
                                    {"pcie3 shared", preset("v100-pcie3"), CtFabric::shared},
                                    {"pcie5 shared", preset("v100-pcie5"), CtFabric::shared}};
  out += "speedup over one GPU (H200 compute; link, latency and egress from the system)\n";
  char head[256];
  int n = std::snprintf(head, sizeof head, "%-6s %-19s %-8s", "size", "system", "paradigm");
  for (int gc : gpu_counts) n += std::snprintf(head + n, sizeof head - n, " %6s", ("G=" + std::to_string(gc)).c_str());
  out += head;
  out += "\n";
  for (int k = 0; k < 2; ++k) {
    const auto& spec = k == 0 ? medium : seed;
    const CtComputeFit f = k == 0 ? fit : scale_ct_compute(fit, seed_k);
    for (const auto& sy : systems)
      for (CtParadigm p : ps) {
        char row[256];
        int w = std::snprintf(row, sizeof row, "%-6s %-19s %-8s", k == 0 ? "medium" : "seed", sy.label,
                              ct_paradigm_name(p));
        for (int gc : gpu_counts)
          w += std::snprintf(row + w, sizeof row - w, " %6.2f", model_speedup(spec, f, sy.s, p, sy.fabric, gc));
        out += row;
        out += "\n";
      }
  }
  const apps::ct::CtBenchSpec specs[2] = {medium, seed};
  const CtComputeFit fits[2] = {fit, scale_ct_compute(fit, seed_k)};
  return out + sim_section(gpu_counts, specs, fits);
}

}  // namespace gpsm::sim
