#pragma once
// The image filter's kernels (filter_kernels.cu): one pixel per thread through filter_math.hpp's
// filter_point, the rows read from a local buffer, the distributed array or a GPS array.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "apps/filter/filter_pass.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::filter {

// The K x K weights: p == nullptr reads the copy in constant memory (set_constant_weights on
// that GPU), else p (this GPU's replicated copy, or the first GPU's copy read remotely) through
// the read-only cache.
struct KernelWeights {
  const float* p = nullptr;
  int k = 0;
};
// Copies w (k*k floats) into constant memory on the current device.
void set_constant_weights(const std::vector<float>& w);

// The passes of filter_pass.hpp, a thread per pixel of rows [y0, y1).
void launch_local_pass(const LocalPass& a, const KernelWeights& w, cudaStream_t st);

void launch_distributed_pass(const DistributedPass& a, const KernelWeights& w, cudaStream_t st);

// GPS arrays, as a user writes it with the public API: each input row through local_span (this
// GPU's replica when it subscribes to the row's pages, else element loads), each output through
// store (published to the page's other subscribers).
struct GpsPass {
  gps::View<float> in, out;
  std::int64_t width = 0, height = 0, y0 = 0, y1 = 0;
};
void launch_gps_pass(const GpsPass& a, const KernelWeights& w, cudaStream_t st);

}  // namespace gpsm::apps::filter
