#include "apps/stencil3d/stencil3d_proact_plan.hpp"

#include <stdexcept>
#include <string>

namespace gpsm::apps::stencil3d {

std::int64_t ready_target(const Plan& p, std::int64_t count, int r, int side) {
  if (p.x_first)
    throw std::invalid_argument("gpsm: ready_target: the plan splits along x, where edge columns are not march chunks");
  std::int64_t chunks = 0;
  for (std::int64_t ch = 0; ch < p.tiles[2]; ++ch) chunks += chunk_touches_edge(p, count, r, ch, side) ? 1 : 0;
  return p.tiles[0] * p.tiles[1] * chunks;
}

std::vector<HaloCopy> proact_copies(const std::vector<Slab3D>& slabs, int from) {
  if (from < 0 || from >= static_cast<int>(slabs.size()))
    throw std::invalid_argument("gpsm: proact_copies: rank " + std::to_string(from) + " of " +
                                std::to_string(slabs.size()));
  for (int k = 0; k < static_cast<int>(slabs.size()); ++k)
    if (slabs[k].rank != k || slabs[k].ranks != static_cast<int>(slabs.size()) || slabs[k].axis != slabs[0].axis)
      throw std::invalid_argument("gpsm: proact_copies: the slabs are not one decomposition's ranks in order");
  const Slab3D& s = slabs[from];
  const int a = static_cast<int>(s.axis);
  const std::int64_t r = s.radius;
  // Cells between consecutive planes along the split axis in a box.
  auto plane_stride = [a](const Slab3D& b) { return a == 0 ? 1 : a == 1 ? b.local[0] : b.local[0] * b.local[1]; };
  std::vector<HaloCopy> out;
  for (int side = 0; side < 2; ++side) {
    if (side == 0 ? !s.has_lower() : !s.has_upper()) continue;
    const Slab3D& t = slabs[side == 0 ? from - 1 : from + 1];
    HaloCopy c;
    c.side = side;
    c.to = t.rank;
    // From the first (last) R owned planes into the lower (upper) neighbour's upper (lower) halo.
    c.src = (side == 0 ? r : s.count) * plane_stride(s);
    c.dst = (side == 0 ? r + t.count : 0) * plane_stride(t);
    if (a == 2) {
      c.width = r * s.local[0] * s.local[1];
      c.height = 1;
      c.src_pitch = c.dst_pitch = c.width;
    } else if (a == 1) {
      c.width = r * s.local[0];
      c.height = s.local[2];
      c.src_pitch = s.local[0] * s.local[1];
      c.dst_pitch = t.local[0] * t.local[1];
    } else {
      c.width = r;
      c.height = s.local[1] * s.local[2];
      c.src_pitch = s.local[0];
      c.dst_pitch = t.local[0];
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace gpsm::apps::stencil3d
