#include "apps/fd3d/fd3d_layout.hpp"

#include <string>

#include <fmt/format.h>

#include "apps/stencil3d/stencil3d_cells.hpp"  // span_of
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {

namespace {

using i64 = std::int64_t;

i64 stride_along(int a, i64 sy, i64 sz) { return a == 0 ? 1 : a == 1 ? sy : sz; }

// The block holding global plane g along s's split axis, as memory for s's box coordinates.
struct BlockAt {
  const char* p;
  i64 sy, sz, off;
  i64 lo, hi;  // the block's global planes [lo, hi) along the split axis
};
BlockAt block_at(const Slab3D& s, const OwnershipLookup& host, const void* base, i64 g) {
  const int a = static_cast<int>(s.axis);
  std::uint64_t c[3] = {0, 0, 0};
  c[a] = static_cast<std::uint64_t>(g);
  const BlockBox b = host.box(c[0], c[1], c[2]);
  const std::uint64_t origin[3] = {b.x0, b.y0, b.z0}, width[3] = {b.wx, b.wy, b.wz};
  for (int d = 0; d < 3; ++d)
    if (d != a && (origin[d] != 0 || width[d] != static_cast<std::uint64_t>(s.n[d])))
      throw gpsm::Error(fmt::format("gpsm: fd3d: the distributed array's block holding plane {} along {} is not a "
                                    "whole slab (axis {} covers [{}, {}) of {}); build the map with slab_blocks",
                                    g, axis_name(s.axis), d, origin[d], origin[d] + width[d], s.n[d]));
  BlockAt k;
  k.p = static_cast<const char*>(base) + b.base;
  k.sy = static_cast<i64>(b.wx);
  k.sz = static_cast<i64>(b.wx * b.wy);
  k.lo = static_cast<i64>(origin[a]);
  k.hi = k.lo + static_cast<i64>(width[a]);
  // Box coordinate l is global plane first - R + l, which is plane (first - R + l - lo) of the block.
  k.off = (s.first - s.radius - k.lo) * stride_along(a, k.sy, k.sz);
  return k;
}

// The block holding global planes [g0, g1), which must all be in it.
BlockAt block_holding(const Slab3D& s, const OwnershipLookup& host, const void* base, i64 g0, i64 g1,
                      const char* what) {
  const BlockAt k = block_at(s, host, base, g0);
  if (g0 < k.lo || g1 > k.hi)
    throw gpsm::Error(fmt::format("gpsm: fd3d: rank {}'s {} planes [{}, {}) along {} are not in one block of the "
                                  "distributed array (the block holds [{}, {})); build the map with slab_blocks",
                                  s.rank, what, g0, g1, axis_name(s.axis), k.lo, k.hi));
  return k;
}

Piece piece_of(const BlockAt& k) { return Piece{reinterpret_cast<const float*>(k.p), k.sy, k.sz, k.off}; }

}  // namespace

Box box_of(const Slab3D& s) {
  Box b;
  for (int d = 0; d < 3; ++d) b.n[d] = s.local[d];
  b.axis = static_cast<int>(s.axis);
  b.count = s.count;
  return b;
}

Piece box_piece(const Slab3D& s, const float* buf) { return Piece{buf, s.local[0], s.local[0] * s.local[1], 0}; }

Sink box_sink(const Slab3D& s, float* buf) { return Sink{buf, s.local[0], s.local[0] * s.local[1], 0}; }

Sink push_sink(const Slab3D& from, const Slab3D& to, float* dst) {
  Sink k{dst, to.local[0], to.local[0] * to.local[1], 0};
  const i64 shift = to.rank < from.rank ? to.count : -from.count;
  k.off = shift * stride_along(static_cast<int>(from.axis), k.sy, k.sz);
  return k;
}

BlockSpec slab_blocks(const Slab3D& any_rank) {
  const int a = static_cast<int>(any_rank.axis);
  const int ranks = any_rank.ranks;
  BlockSpec spec;
  spec.extents = Extents{static_cast<std::uint64_t>(any_rank.n[0]), static_cast<std::uint64_t>(any_rank.n[1]),
                         static_cast<std::uint64_t>(any_rank.n[2])};
  for (int d = 0; d < 3; ++d)
    if (d != a) spec.cuts[d] = {0, static_cast<std::uint64_t>(any_rank.n[d])};
  spec.cuts[a].push_back(0);
  for (int r = 0; r < ranks; ++r) {
    const Slab3D s = slab3d(any_rank.n, any_rank.axis, any_rank.radius, ranks, r);
    spec.cuts[a].push_back(static_cast<std::uint64_t>(stencil3d::span_of(s).end));
    spec.owner.push_back(r);
  }
  spec.shape = fmt::format("{} slabs along {} (fd3d, halo {})", ranks, axis_name(any_rank.axis), any_rank.radius);
  return spec;
}

Sources distributed_sources(const Slab3D& s, const OwnershipLookup& host, const void* base) {
  Sources src;
  const Range own = stencil3d::span_of(s);
  src.mid = piece_of(block_holding(s, host, base, own.begin, own.end, "own"));
  // Which of the box's coordinates come from where: the halo planes below its first owned plane
  // (global [first - R, first)) from the lower neighbour, those above its last from the upper one.
  if (s.has_lower()) {
    src.lo = piece_of(block_holding(s, host, base, s.first - s.radius, s.first, "lower halo"));
    src.lo_end = s.radius;
  }
  if (s.has_upper()) {
    src.hi = piece_of(block_holding(s, host, base, s.first + s.count, s.first + s.count + s.radius, "upper halo"));
    src.hi_begin = s.radius + s.count;
  }
  return src;
}

Sink distributed_sink(const Slab3D& s, const OwnershipLookup& host, void* base) {
  const Range own = stencil3d::span_of(s);
  const BlockAt k = block_holding(s, host, base, own.begin, own.end, "own");
  return Sink{reinterpret_cast<float*>(const_cast<char*>(k.p)), k.sy, k.sz, k.off};
}

}  // namespace gpsm::apps::fd3d
