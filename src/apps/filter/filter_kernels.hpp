#pragma once
// The image filter's kernels (filter_kernels.cu): one pixel per thread through filter_math.hpp's
// filter_point, the rows read from a local buffer, the distributed array or a GPS array.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "gpsm/distributed_array.hpp"
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

// Buffers addressed by image row: row gy of `in` / `out` starts at (gy - row_base) * width.
// Computes rows [y0, y1). p2p_inline: the rows [y0, y0 + push_rows) are also stored at
// push_top + (gy - y0) * width, the rows [y1 - push_rows, y1) at push_bottom + (gy - y1 + push_rows) * width.
struct LocalPass {
  const float* in = nullptr;
  float* out = nullptr;
  std::int64_t width = 0, height = 0, row_base = 0, y0 = 0, y1 = 0;
  float* push_top = nullptr;
  float* push_bottom = nullptr;
  std::int64_t push_rows = 0;
};
void launch_local_pass(const LocalPass& a, const KernelWeights& w, cudaStream_t st);

// The distributed array (one pointer): rows [y0, y1) are this GPU's block; rows outside it (the
// halo) are loaded from their owner's memory through the same view.
struct DistributedPass {
  DistributedView<float> in, out;
  std::int64_t width = 0, height = 0, y0 = 0, y1 = 0;
};
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
