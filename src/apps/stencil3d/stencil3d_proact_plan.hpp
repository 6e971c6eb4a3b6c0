#pragma once
// heat3d / wave3d proact paradigm, its plain C++ half (tested on the CPU): how many work items of
// a step mark each edge ready per iteration (what the copy stream waits for) and the copy-engine
// copies that ship a rank's edge planes into its neighbours' halos. The CUDA half:
// stencil3d_proact_cuda.cpp; the kernel side: stencil3d_kernels.cu (Step::ready).
#include <cstdint>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"

namespace gpsm::apps::stencil3d {

// Items of plan p (a box owning `count` planes, radius r) that write edge side `side`'s planes
// (chunk_touches_edge): each adds 1 to that side's counter after writing its tile, so after
// iteration t (0-based) of a solve the counter holds (t + 1) * ready_target. Every (x tile,
// other tile) pair of a touching chunk is an item, so the count is tiles[0] * tiles[1] per
// touching chunk: with edge chunks exactly one chunk per side. Throws std::invalid_argument for a
// plan split along x (its edge columns are not chunks of the march).
std::int64_t ready_target(const Plan& p, std::int64_t count, int r, int side);

// One copy of rank `from`'s edge planes into a neighbour's halo planes, as `height` rows of
// `width` contiguous cells, rows src_pitch / dst_pitch cells apart in the two local boxes; src
// and dst are cell offsets into the two boxes' buffers. Along z the R planes are one contiguous
// row; along y a row holds R x-rows at one z (height = the z extent); along x a row is R cells
// (height = y extent x z extent).
struct HaloCopy {
  int side = 0;  // 0: `from`'s first R owned planes into from - 1's upper halo; 1: its last R into from + 1's lower
  int to = 0;    // the neighbour's rank
  std::int64_t src = 0, dst = 0;
  std::int64_t width = 0, height = 0, src_pitch = 0, dst_pitch = 0;
  std::int64_t cells() const { return width * height; }
};
// The copies of rank `from` (0, 1 or 2: one per neighbour), lower side first. The same planes
// the memcpy paradigm ships (whole planes, boundary cells of the other axes included), so the
// bytes add up to slab3d_halo_bytes(..., true). Throws std::invalid_argument when `slabs` is not
// one decomposition's ranks in order.
std::vector<HaloCopy> proact_copies(const std::vector<Slab3D>& slabs, int from);

}  // namespace gpsm::apps::stencil3d
