#pragma once
// The host's split of a gps step's items (classify_gps_items) in device memory, and how a GpsStep
// takes it: published then plain items in one list (two kernels, published_listed_kernel and
// plain_listed_kernel, each take their part),
// the checked gps items after them, one subscriber mask per published item. Shared by the 3D apps'
// gps paradigm and its GPU test, so both launch the split the same way.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "apps/stencil3d/stencil3d_gps_items.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "common/fork_join.hpp"

namespace gpsm::apps::stencil3d {

struct GpsItemLists {
  gpsm::DevBuf<std::int32_t> items;   // published, plain, gps
  gpsm::DevBuf<std::uint32_t> masks;  // per published item
  int n_published = 0, n_plain = 0, n_gps = 0;

  // Copies g to `device` (synchronously: the lists change only when the subscriptions do).
  void upload(int device, const GpsItems& g) {
    std::vector<std::int32_t> all = g.published;
    all.insert(all.end(), g.plain.begin(), g.plain.end());
    all.insert(all.end(), g.gps.begin(), g.gps.end());
    items.alloc(device, all.size());
    masks.alloc(device, g.published_mask.size());
    GPSM_CUDA(cudaMemcpy(items.p, all.data(), all.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
    if (!g.published_mask.empty())
      GPSM_CUDA(cudaMemcpy(masks.p, g.published_mask.data(), g.published_mask.size() * sizeof(std::uint32_t),
                           cudaMemcpyHostToDevice));
    n_published = static_cast<int>(g.published.size());
    n_plain = static_cast<int>(g.plain.size());
    n_gps = static_cast<int>(g.gps.size());
  }
  // Points s at the lists; the gps items run on side's stream.
  void apply(GpsStep& s, const gpsm::ForkJoin* side) const {
    s.split_items = items.p;
    s.published_masks = masks.p;
    s.gps_items = items.p + n_published + n_plain;
    s.n_published = n_published;
    s.n_plain = n_plain;
    s.n_gps = n_gps;
    s.side = side;
  }
};

}  // namespace gpsm::apps::stencil3d
