#pragma once
// The GPS page size of a 3D grid split in slabs (heat3d, wave3d and fd3d's gps paradigms): pages
// of one plane of the split axis where that is a power of two of at least a line (along z a whole
// plane, along y a row), so a neighbour subscribes to exactly the planes it reads; else pages of
// about one halo piece (`radius` planes), a power of two from 4 KiB to 2 MiB.
#include <cstdint>

#include "gpsm/gps/page_math.hpp"

namespace gpsm::apps::stencil3d {

// n: the grid's extents (x fastest); axis: the split one (0 = x, 1 = y, 2 = z).
inline std::uint64_t gps_page_bytes(const std::int64_t n[3], int axis, int radius) {
  const auto unit = static_cast<std::uint64_t>(axis == 0 ? 1 : axis == 1 ? n[0] : n[0] * n[1]);
  if (const std::uint64_t page = gps::page_bytes_for_runs(unit * sizeof(float)); page == unit * sizeof(float))
    return page;
  const std::uint64_t piece = static_cast<std::uint64_t>(radius) * unit * sizeof(float);
  std::uint64_t page = 4096;
  while (page * 2 <= piece && page < (2u << 20)) page *= 2;
  return page;
}

}  // namespace gpsm::apps::stencil3d
