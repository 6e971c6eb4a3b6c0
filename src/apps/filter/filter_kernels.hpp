#pragma once
// The image filter's kernels (filter_kernels.cu): tiles of 32 x 64 pixels loaded once into shared
// memory, 8 outputs per thread by filter_math.hpp's filter_tile_column (filter_point's float
// order), the rows read from a local buffer, the distributed array or a GPS array.
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

// The passes of filter_pass.hpp over rows [y0, y1).
void launch_local_pass(const LocalPass& a, const KernelWeights& w, cudaStream_t st);

void launch_distributed_pass(const DistributedPass& a, const KernelWeights& w, cudaStream_t st);

// GPS arrays, as a user writes it with the public API: each tile's input rows through one span
// (this GPU's replica when it subscribes to their pages, or the home's when they share one set of
// subscribers; else a span per row, else element loads), its output rows through one span and put
// (the other subscribers written with no mask read), store() where the span is not uniform. A GPU
// that alone holds both arrays (Array::sole) runs launch_local_pass on View::local() instead.
struct GpsPass {
  gps::View<float> in, out;
  std::int64_t width = 0, height = 0, y0 = 0, y1 = 0;
};
void launch_gps_pass(const GpsPass& a, const KernelWeights& w, cudaStream_t st);

}  // namespace gpsm::apps::filter
