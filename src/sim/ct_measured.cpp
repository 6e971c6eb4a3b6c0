#include "sim/ct_measured.hpp"

namespace gpsm::sim {

CtMeasured ct_measured_h200x2_medium() {
  // results/nvidia-h200-x2/2026-11-27_f188d90_ct-round2-cg-gps-plain/ct.json, the series' timing
  // strings (CUDA events between the phases, last rep) and medians.
  CtMeasured m;
  m.one_gpu = {211.86, 195.00};                                // single, GPU 0
  m.two_gpus = {(111.40 + 113.91) / 2, (100.12 + 98.40) / 2};  // infinite, GPUs 0 and 1
  m.one_gpu_ms = 406.797840;
  m.memcpy2_ms = 218.997203;
  m.proact2_ms = 218.003644;
  m.infinite2_ms = 212.434834;
  return m;
}

CtMeasuredTotals ct_measured_h200x2_seed() {
  // results/nvidia-h200-x2/2026-11-28_e3990ed_fd3d-remote-study-ct-seed/call7: ct-seed-1.json
  // (single) and ct-seed-2.json (memcpy, proact, infinite), microseconds per iteration.
  CtMeasuredTotals m;
  m.one_gpu_ms = 10100.900065;
  m.memcpy2_ms = 5344.99252;
  m.proact2_ms = 5317.3254229999995;
  m.infinite2_ms = 5315.664814;
  return m;
}

}  // namespace gpsm::sim
