#pragma once
// A multi-GPU graph (common/multi_gpu_graph.hpp) over a GPS context's devices and streams: what
// the host-driven loops of the apps capture (the 3D apps' host loop, the filter's gps passes).
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "common/multi_gpu_graph.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {

inline std::unique_ptr<MultiGpuGraph> context_graph(const gps::Context& ctx) {
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
  for (int r = 0; r < ctx.size(); ++r) {
    devices.push_back(ctx.device(r));
    streams.push_back(ctx.stream(r));
  }
  return std::make_unique<MultiGpuGraph>(devices, streams);
}

}  // namespace gpsm::apps
