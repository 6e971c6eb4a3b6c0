#include "apps/harness/gpu_memory.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "apps/harness/memory_estimate.hpp"

namespace gpsm::apps {

double gpu_free_bytes(const std::vector<int>& devices) {
  int prev = 0;
  if (devices.empty() || cudaGetDevice(&prev) != cudaSuccess) return 0;
  double least = 0;
  bool first = true;
  for (int d : devices) {
    std::size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(d) != cudaSuccess || cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      (void)cudaGetLastError();  // not sticky: the run reports the device's own error
      least = 0;
      break;
    }
    least = first ? double(free_b) : std::min(least, double(free_b));
    first = false;
  }
  (void)cudaSetDevice(prev);
  return least;
}

std::string gpu_memory_check(const App& app, const Problem& p, Paradigm par, const std::vector<int>& devices) {
  const int gpus = static_cast<int>(devices.size());
  const double need = app.gpu_bytes_per_gpu(p, gpus, par);
  if (!(need > 0)) return "";
  return gpu_memory_refusal(app.name(), p.label(), gpus, need, gpu_free_bytes(devices));
}

}  // namespace gpsm::apps
