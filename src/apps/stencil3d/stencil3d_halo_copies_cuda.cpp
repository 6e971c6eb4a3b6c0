#include "apps/stencil3d/stencil3d_halo_copies.hpp"

#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {

HaloCopies::HaloCopies(gps::Context& ctx, const Slabs& slabs, bool on)
    : slabs_(slabs), on_(on && slabs.ranks() > 1), packed_(on_ && slabs.slab(0).axis != Axis::z) {
  const int n = slabs.ranks();
  send_.resize(n);
  recv_.resize(n);
  if (!packed_) return;
  for (int r = 0; r < n; ++r) {
    const auto cells = slabs.halo_cells(r);
    for (auto& s : send_[r]) s.alloc(ctx.device(r), cells);
    for (auto& b : recv_[r])
      for (auto& s : b) s.alloc(ctx.device(r), cells);
  }
}

void HaloCopies::send(int r, int b, cudaStream_t st) const {
  const Slab3D& s = slabs_.slab(r);
  const std::size_t bytes = slabs_.halo_cells(r) * sizeof(float);
  for (int side = 0; side < 2; ++side) {
    if (side == 0 ? !s.has_lower() : !s.has_upper()) continue;
    const int nb = side == 0 ? r - 1 : r + 1;
    const std::int64_t from = slabs_.edge_planes(r, side);
    if (packed_) {
      launch_box_copy(slabs_.region(r, b, from, send_[r][side].p, true), st);
      // The lower neighbour receives into its upper halo's buffer and vice versa.
      GPSM_CUDA(cudaMemcpyAsync(recv_[nb][b][1 - side].p, send_[r][side].p, bytes, cudaMemcpyDefault, st));
    } else {
      GPSM_CUDA(cudaMemcpyAsync(slabs_.planes(nb, b, slabs_.halo_planes(nb, 1 - side)), slabs_.planes(r, b, from),
                                bytes, cudaMemcpyDefault, st));
    }
  }
}

void HaloCopies::unpack(int r, int c, cudaStream_t st) const {
  const Slab3D& s = slabs_.slab(r);
  for (int side = 0; side < 2; ++side)
    if (side == 0 ? s.has_lower() : s.has_upper())
      launch_box_copy(slabs_.region(r, c, slabs_.halo_planes(r, side), recv_[r][c][side].p, false), st);
}

}  // namespace gpsm::apps::stencil3d
