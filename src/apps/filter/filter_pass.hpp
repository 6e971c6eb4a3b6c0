#pragma once
// One output pixel of each kind of pass: where its input rows are and where its value goes. The
// kernels (filter_kernels.cu) are a thread per pixel around these; the CPU tests run the same code
// over host memory (local buffers with their halo exchanges, a distributed array's layout), so the
// index math of every paradigm but gps is checked without a GPU. Plain C++ with GPSM_HD.
#include <cstdint>
#include <string>

#include "apps/filter/filter_math.hpp"
#include "gpsm/distributed_array.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::filter {

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

// The distributed array (one pointer): rows [y0, y1) are this GPU's block `box` (found once per
// pass through the map, see distributed_pass_of; both images have the same map, so the same box),
// its rows indexed locally from own_in / own_out; rows outside it (the halo) are looked up through
// the view and loaded from their owner's memory.
struct DistributedPass {
  DistributedView<float> in, out;
  std::int64_t width = 0, height = 0, y0 = 0, y1 = 0;
  BlockBox box;
  const float* own_in = nullptr;
  float* own_out = nullptr;
};

// Rank's pass over rows [y0, y1) of a width x height image from `in` to `out` (views of two
// distributed arrays with the same map, whose block holding row y0 holds rows [y0, y1)).
inline DistributedPass distributed_pass_of(const DistributedView<float>& in, const DistributedView<float>& out,
                                           std::int64_t width, std::int64_t height, std::int64_t y0, std::int64_t y1,
                                           const OwnershipLookup& host_lookup) {
  DistributedPass a;
  a.in = in;
  a.out = out;
  a.width = width;
  a.height = height;
  a.y0 = y0;
  a.y1 = y1;
  a.box = host_lookup.box(0, static_cast<std::uint64_t>(y0), 0);
  // A slab of whole rows: row gy of it is at (gy - y0) * width from its start.
  if (a.box.x0 != 0 || a.box.wx != static_cast<std::uint64_t>(width) || a.box.y0 != static_cast<std::uint64_t>(y0) ||
      a.box.wy < static_cast<std::uint64_t>(y1 - y0) || a.box.wz != 1)
    throw gpsm::Error("gpsm: filter: the distributed array's block at row " + std::to_string(y0) +
                      " is not a slab of whole rows from it; split the image with blocks::along(..., Axis::y, n)");
  a.own_in = in.block_data(a.box);
  a.own_out = out.block_data(a.box);
  return a;
}

struct LocalRows {
  const float* in;
  std::int64_t width, row_base;
  GPSM_HD const float* operator()(std::int64_t gy) const { return in + (gy - row_base) * width; }
};

template <int KT, class Weights>
GPSM_HD void local_pixel(const LocalPass& a, const Weights& w, int k, std::int64_t x, std::int64_t y) {
  const std::int64_t W = a.width;
  const float v = filter_point<KT>(LocalRows{a.in, W, a.row_base}, w, k, x, y, W, a.height);
  a.out[(y - a.row_base) * W + x] = v;
  if (a.push_top != nullptr && y < a.y0 + a.push_rows) a.push_top[(y - a.y0) * W + x] = v;
  if (a.push_bottom != nullptr && y >= a.y1 - a.push_rows) a.push_bottom[(y - a.y1 + a.push_rows) * W + x] = v;
}

// A row of the image: this GPU's block's rows with no lookup, a halo row's block looked up. Held
// by value (inlined, its fields stay in registers; a pointer to a kernel parameter would copy the
// parameter to local memory).
struct DistributedRows {
  DistributedView<float> in;
  BlockBox mine;
  const float* own;
  GPSM_HD const float* operator()(std::int64_t gy) const {
    const std::uint64_t r = static_cast<std::uint64_t>(gy);
    const std::uint64_t d = r - mine.y0;  // below the slab wraps high
    if (d < mine.wy) return own + d * mine.wx;  // a slab of whole rows (distributed_pass_of checks)
    const BlockBox b = in.block(0, r);
    return in.block_data(b) + b.local(0, r, 0);
  }
};

template <int KT, class Weights>
GPSM_HD void distributed_pixel(const DistributedPass& a, const Weights& w, int k, std::int64_t x, std::int64_t y) {
  const float v = filter_point<KT>(DistributedRows{a.in, a.box, a.own_in}, w, k, x, y, a.width, a.height);
  a.own_out[static_cast<std::uint64_t>(y - a.y0) * a.box.wx + static_cast<std::uint64_t>(x)] = v;
}

}  // namespace gpsm::apps::filter
