#include "sim/explain.hpp"

#include <cstdio>

namespace gpsm::sim {
namespace {

std::string us(double s) {
  if (!(s > 0)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  return b;
}

std::string mb(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f MB", bytes / 1e6);
  return b;
}

// " (406.33 M warp inst)", or nothing when the kernel gives none
std::string insts(double n) {
  if (!(n > 0)) return "";
  char b[48];
  std::snprintf(b, sizeof b, " (%.2f M warp inst)", n / 1e6);
  return b;
}

// "; hot word 272.00 us (383.10 K requests)": what the hottest word's requests added, when it is
// 1 % of the kernel and 5 ns or more (a large array's few requests a sector add nanoseconds)
std::string hot(const KernelBound& k) {
  if (!(k.hot_s >= 5e-9) || k.hot_s < 0.01 * k.time_s) return "";
  char b[64];
  std::snprintf(b, sizeof b, " (%.2f K requests)", k.hot_requests / 1e3);
  return "; hot word " + us(k.hot_s) + b;
}

}  // namespace

std::string explain_kernels(const SimResult& r) {
  std::string out;
  for (const KernelBound& k : r.kernels) {
    char wave[32];
    std::snprintf(wave, sizeof wave, "x%.2f", k.wave_factor);
    out += "gpu" + std::to_string(k.gpu) + " " + k.name + ": " + us(k.time_s) + ", " + k.bound + " bound; roofline " +
           us(k.roofline_s()) + " " + wave + " wave (dram " + us(k.dram_s) + " / " + mb(k.dram_bytes) + ", l2 " + us(k.l2_s) +
           " / " + mb(k.l2_bytes) + ", flops " + us(k.flops_s) +
           (k.compute_s > 0 ? ", compute " + us(k.compute_s) : std::string()) + "); serial " + us(k.serial_s) + "; chain " +
           us(k.chain_s) + "; issue " + us(k.issue_s) + insts(k.warp_insts) + hot(k) + "\n";
  }
  return out;
}

std::string explain_loop(const SimResult& r) {
  const LoopBound& l = r.loop;
  return "loop: " + us(l.time_s) + ", " + l.bound + " bound; GPUs " + us(l.gpus_s) + " + hop " + us(l.hop_s) +
         ", host " + us(l.host_s) + (l.host_s > 0 ? (l.named ? " (calls named)" : " (issue_us per GPU)") : "") +
         ", read-back " + us(l.readback_s) + "\n";
}

}  // namespace gpsm::sim
