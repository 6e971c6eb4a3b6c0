#include "apps/harness/memory_estimate.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace gpsm::apps {
namespace {

constexpr double kCell = 4.0;  // float

std::string gib(double bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

double jacobi2d_host_bytes(std::int64_t nx, std::int64_t ny) { return 2.0 * kCell * double(nx) * double(ny); }

double jacobi2d_gpu_bytes(std::int64_t nx, std::int64_t ny, int gpus) {
  double most = 0;
  try {
    for (int r = 0; r < gpus; ++r)
      most = std::max(most, 2.0 * kCell * double(jacobi_slab(nx, ny, gpus, r).local_rows()) * double(nx));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  return most;
}

double stencil3d_host_bytes(const std::int64_t n[3]) { return 2.0 * kCell * double(n[0]) * double(n[1]) * double(n[2]); }

double stencil3d_gpu_bytes(const std::int64_t n[3], Axis axis, int radius, int gpus) {
  double most = 0;
  try {
    for (int r = 0; r < gpus; ++r)
      most = std::max(most, 2.0 * kCell * double(slab3d(n, axis, radius, gpus, r).local_cells()));
  } catch (const std::invalid_argument&) {
    return 0;
  }
  return most;
}

double gps_replica_bytes(double cells) { return 2.0 * kCell * cells; }

std::string gpu_memory_refusal(const std::string& app, const std::string& size, int gpus, double need,
                               double free_bytes) {
  if (!(need > 0) || !(free_bytes > 0) || !(need > free_bytes)) return "";
  return "gpsm: " + app + " " + size + " on " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") + " needs " +
         gib(need) + " GiB per GPU, the GPU has " + gib(free_bytes) +
         " GiB free; use a smaller size or more GPUs";
}

}  // namespace gpsm::apps
