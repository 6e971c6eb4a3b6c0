// The ownership map of a distributed array: the checks, the block builders, the physical layout
// (one granularity-aligned region per owner) and the row-major <-> layout copies.
#include "gpsm/ownership_map.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "common/even_parts.hpp"
#include "gpsm/error.hpp"

namespace gpsm {
namespace {

constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 63;
// The lookup table holds per-block words and each GPU holds a copy: far more blocks than this
// means tiles of a few elements, which no kernel would want.
constexpr std::uint64_t kMaxBlocks = std::uint64_t{1} << 24;

[[noreturn]] void fail(const std::string& why, const std::string& todo) {
  throw gpsm::Error("gpsm: distributed array: " + why + "; " + todo);
}

std::uint64_t mul_checked(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxBytes)
    fail(what + " passes 2^63", "use a smaller array");
  return r;
}
std::uint64_t add_checked(std::uint64_t a, std::uint64_t b, const std::string& what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r) || r > kMaxBytes) fail(what + " passes 2^63 bytes", "use a smaller array");
  return r;
}
std::uint64_t round_up_checked(std::uint64_t v, std::uint64_t g, const std::string& what) {
  const std::uint64_t r = add_checked(v, g - 1, what);
  return r / g * g;
}

const char* axis_name(int a) { return a == 0 ? "x" : a == 1 ? "y" : "z"; }

std::uint64_t extent_on(const Extents& e, int a) { return a == 0 ? e.x : a == 1 ? e.y : e.z; }

void require_extents(const Extents& e) {
  for (int a = 0; a < 3; ++a)
    if (extent_on(e, a) == 0)
      fail(std::string("extent along ") + axis_name(a) + " is zero", "give every axis at least one element (1 for unused axes)");
  mul_checked(mul_checked(e.x, e.y, "the element count"), e.z, "the element count");
}

// `parts` ranges over n, as even as possible (the first n % parts one longer).
std::vector<std::uint64_t> even_cuts(std::uint64_t n, int parts, const char* axis) {
  if (parts < 1) fail("cannot split among " + std::to_string(parts) + " owners", "give at least one owner");
  if (n < static_cast<std::uint64_t>(parts))
    fail("cannot split " + std::to_string(n) + " elements along " + axis + " among " + std::to_string(parts) + " owners",
         "use fewer GPUs or a larger array");
  std::vector<std::uint64_t> c(static_cast<std::size_t>(parts) + 1, 0);
  for (int p = 1; p <= parts; ++p) c[p] = even_part_begin(n, parts, p);
  return c;
}

std::vector<int> identity_owners(int n) {
  std::vector<int> o(static_cast<std::size_t>(n));
  std::iota(o.begin(), o.end(), 0);
  return o;
}

}  // namespace

namespace blocks {

BlockSpec contiguous(std::uint64_t n, int owners) {
  BlockSpec s;
  s.extents = {n, 1, 1};
  require_extents(s.extents);
  s.cuts = {even_cuts(n, owners, "x"), {0, 1}, {0, 1}};
  s.owner = identity_owners(owners);
  s.shape = "1D contiguous";
  return s;
}

BlockSpec weighted(std::uint64_t n, const std::vector<double>& weights) {
  BlockSpec s;
  s.extents = {n, 1, 1};
  require_extents(s.extents);
  if (weights.empty()) fail("no weights given", "give one weight per owner");
  double total = 0;
  for (double w : weights) {
    if (!(w > 0) || !std::isfinite(w)) fail("weight " + std::to_string(w) + " is not a positive number", "give every owner a weight > 0");
    total += w;
  }
  const int parts = static_cast<int>(weights.size());
  if (n < weights.size())
    fail("cannot split " + std::to_string(n) + " elements among " + std::to_string(parts) + " owners", "use fewer GPUs or a larger array");
  // Cut at the rounded cumulative share, then keep every range at least one element long.
  std::vector<std::uint64_t> c(weights.size() + 1, 0);
  double acc = 0;
  for (int p = 0; p < parts; ++p) {
    acc += weights[p];
    const auto want = p + 1 == parts ? n : static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * (acc / total)));
    const std::uint64_t lo = c[p] + 1, hi = n - static_cast<std::uint64_t>(parts - 1 - p);
    c[p + 1] = std::min(std::max(want, lo), hi);
  }
  s.cuts = {c, {0, 1}, {0, 1}};
  s.owner = identity_owners(parts);
  s.shape = "1D weighted";
  return s;
}

BlockSpec along(Extents e, Axis axis, int owners) {
  BlockSpec s;
  s.extents = e;
  require_extents(e);
  const int a = static_cast<int>(axis);
  for (int k = 0; k < 3; ++k) s.cuts[k] = k == a ? even_cuts(extent_on(e, k), owners, axis_name(k)) : std::vector<std::uint64_t>{0, extent_on(e, k)};
  s.owner = identity_owners(owners);
  s.shape = std::string("slabs along ") + axis_name(a);
  return s;
}

BlockSpec aligned_slabs(Extents e, int owners, std::uint64_t elem_bytes, std::uint64_t granularity) {
  require_extents(e);
  if (elem_bytes == 0 || granularity == 0) fail("element size or granularity is zero", "pass the array's element size and Context::distributed_granularity()");
  const int a = e.z > 1 ? 2 : e.y > 1 ? 1 : 0;
  // Bytes of one step along the axis (a plane, a row, an element), and how many steps make a
  // whole number of granules: granularity / gcd(granularity, step bytes).
  const std::uint64_t step = mul_checked(a == 2 ? mul_checked(e.x, e.y, "a plane") : a == 1 ? e.x : 1, elem_bytes, "a plane's bytes");
  const std::uint64_t unit = granularity / std::gcd(granularity, step);
  const std::uint64_t n = extent_on(e, a), units = n / unit;  // whole aligned units below the extent
  if (owners < 1) fail("cannot split among " + std::to_string(owners) + " owners", "give at least one owner");
  if (units < static_cast<std::uint64_t>(owners))
    fail("only " + std::to_string(units) + " granule-aligned cut points along " + axis_name(a) + " (every " +
             std::to_string(unit) + " steps) for " + std::to_string(owners) + " owners",
         "use blocks::along (cuts off the granules, a padded layout) or a larger array");
  BlockSpec s;
  s.extents = e;
  for (int k = 0; k < 3; ++k) s.cuts[k] = {0, extent_on(e, k)};
  std::vector<std::uint64_t>& c = s.cuts[a];
  c.assign(static_cast<std::size_t>(owners) + 1, 0);
  const std::uint64_t q = units / owners, r = units % owners;  // the tail past the last unit goes to the last slab
  for (int p = 0; p + 1 < owners; ++p) c[p + 1] = c[p] + (q + (static_cast<std::uint64_t>(p) < r ? 1 : 0)) * unit;
  c[static_cast<std::size_t>(owners)] = n;
  s.owner = identity_owners(owners);
  s.shape = std::string("granule-aligned slabs along ") + axis_name(a);
  return s;
}

BlockSpec owner_grid(Extents e, int gx, int gy, int gz) {
  BlockSpec s;
  s.extents = e;
  require_extents(e);
  const int g[3] = {gx, gy, gz};
  for (int k = 0; k < 3; ++k) s.cuts[k] = even_cuts(extent_on(e, k), g[k], axis_name(k));
  s.owner = identity_owners(gx * gy * gz);
  s.shape = "owner grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" + std::to_string(gz);
  return s;
}

Extents tile_counts(Extents e, Extents tile) {
  require_extents(e);
  for (int a = 0; a < 3; ++a)
    if (extent_on(tile, a) == 0) fail(std::string("tile extent along ") + axis_name(a) + " is zero", "give tiles at least one element per axis");
  return {(e.x + tile.x - 1) / tile.x, (e.y + tile.y - 1) / tile.y, (e.z + tile.z - 1) / tile.z};
}

BlockSpec tiles(Extents e, Extents tile, std::vector<int> owner_of_tile) {
  const Extents k = tile_counts(e, tile);
  BlockSpec s;
  s.extents = e;
  for (int a = 0; a < 3; ++a) {
    const std::uint64_t n = extent_on(e, a), t = extent_on(tile, a);
    std::vector<std::uint64_t>& c = s.cuts[a];
    for (std::uint64_t v = 0; v < n; v += std::min(t, n - v)) c.push_back(v);
    c.push_back(n);
  }
  const std::uint64_t want = k.x * k.y * k.z;
  if (owner_of_tile.size() != want)
    fail("the user map has " + std::to_string(owner_of_tile.size()) + " entries for " + std::to_string(k.x) + "x" +
             std::to_string(k.y) + "x" + std::to_string(k.z) + " = " + std::to_string(want) + " tiles",
         "give one owner per tile (blocks::tile_counts says how many)");
  s.owner = std::move(owner_of_tile);
  s.shape = "tiles " + std::to_string(tile.x) + "x" + std::to_string(tile.y) + "x" + std::to_string(tile.z);
  return s;
}

}  // namespace blocks

OwnershipMap::OwnershipMap(BlockSpec spec, std::uint64_t elem_bytes, std::uint64_t granularity, int owners)
    : spec_(std::move(spec)), elem_(elem_bytes), gran_(granularity), owners_(owners) {
  if (elem_bytes == 0) fail("element size is zero", "use a type of at least one byte");
  if (granularity == 0 || (granularity & (granularity - 1)) != 0)
    fail("allocation granularity " + std::to_string(granularity) + " is not a power of two", "report this driver value as a bug");
  if (granularity % elem_bytes != 0)
    fail("element size " + std::to_string(elem_bytes) + " B does not divide the allocation granularity " +
             std::to_string(granularity) + " B (elements would straddle chunks or lose their alignment)",
         "use an element size that is a power of two up to the granularity (pad the type)");
  if (owners < 1) fail("no owners (" + std::to_string(owners) + ")", "make the array in a context with at least one GPU");
  require_extents(spec_.extents);
  n_ = spec_.extents.x * spec_.extents.y * spec_.extents.z;
  mul_checked(n_, elem_, "the array's size (" + std::to_string(n_) + " elements of " + std::to_string(elem_) + " B)");

  std::uint64_t nb = 1;
  for (int a = 0; a < 3; ++a) {
    const std::vector<std::uint64_t>& c = spec_.cuts[a];
    const std::uint64_t n = extent_on(spec_.extents, a);
    if (c.size() < 2 || c.front() != 0 || c.back() != n)
      fail(std::string("the cuts along ") + axis_name(a) + " do not run from 0 to the extent " + std::to_string(n),
           "start the cuts at 0 and end them at the extent");
    for (std::size_t i = 1; i < c.size(); ++i)
      if (c[i] <= c[i - 1])
        fail(std::string("the cuts along ") + axis_name(a) + " are not strictly increasing (" + std::to_string(c[i - 1]) +
                 " then " + std::to_string(c[i]) + ")",
             "give every block at least one element");
    nb *= c.size() - 1;
    if (nb > kMaxBlocks) fail("more than 2^24 blocks", "use larger tiles");
  }
  if (spec_.owner.size() != nb)
    fail("the owner map has " + std::to_string(spec_.owner.size()) + " entries for " + std::to_string(nb) + " blocks",
         "give one owner per block");
  for (std::size_t b = 0; b < spec_.owner.size(); ++b)
    if (spec_.owner[b] < 0 || spec_.owner[b] >= owners)
      fail("block " + std::to_string(b) + " is owned by rank " + std::to_string(spec_.owner[b]) + ", outside the " +
               std::to_string(owners) + " ranks of the context",
           "name owners 0.." + std::to_string(owners - 1));

  // Regions in rank order, each granularity-aligned; blocks in ascending id inside their region.
  base_.assign(nb, 0);
  regions_.resize(static_cast<std::size_t>(owners));
  std::vector<std::vector<std::uint64_t>> of_owner(static_cast<std::size_t>(owners));
  for (std::uint64_t b = 0; b < nb; ++b) of_owner[static_cast<std::size_t>(spec_.owner[b])].push_back(b);
  std::uint64_t cursor = 0;
  for (int o = 0; o < owners; ++o) {
    Region& r = regions_[static_cast<std::size_t>(o)];
    r.owner = o;
    r.offset = cursor;
    std::uint64_t used = 0;
    for (std::uint64_t b : of_owner[static_cast<std::size_t>(o)]) {
      base_[b] = cursor + used;
      used = add_checked(used, block_elems(b) * elem_, "a region's size");
    }
    r.used_bytes = used;
    r.bytes = round_up_checked(used, gran_, "a region's padded size");
    cursor = add_checked(cursor, r.bytes, "the virtual range");
  }
  range_ = cursor;

  // identity(): every block is one run of row-major indices stored at its own index.
  identity_ = true;
  for (std::uint64_t b = 0; b < nb && identity_; ++b) {
    const std::uint64_t bx = b % (spec_.cuts[0].size() - 1), by = b / (spec_.cuts[0].size() - 1) % (spec_.cuts[1].size() - 1);
    const std::uint64_t bz = b / (spec_.cuts[0].size() - 1) / (spec_.cuts[1].size() - 1);
    const std::uint64_t wx = spec_.cuts[0][bx + 1] - spec_.cuts[0][bx], wy = spec_.cuts[1][by + 1] - spec_.cuts[1][by];
    const std::uint64_t wz = spec_.cuts[2][bz + 1] - spec_.cuts[2][bz];
    const bool linear = (wy * wz == 1 || wx == spec_.extents.x) && (wz == 1 || wy == spec_.extents.y);
    identity_ = linear && base_[b] == block_first(b) * elem_;
  }

  // The lookup table: cuts per axis, then base and owner per block.
  table_.clear();
  for (int a = 0; a < 3; ++a) table_.insert(table_.end(), spec_.cuts[a].begin(), spec_.cuts[a].end());
  table_.insert(table_.end(), base_.begin(), base_.end());
  for (int o : spec_.owner) table_.push_back(static_cast<std::uint64_t>(o));
}

std::uint64_t OwnershipMap::block_elems(std::uint64_t b) const {
  const std::uint64_t kx = spec_.cuts[0].size() - 1, ky = spec_.cuts[1].size() - 1;
  const std::uint64_t bx = b % kx, by = b / kx % ky, bz = b / kx / ky;
  return (spec_.cuts[0][bx + 1] - spec_.cuts[0][bx]) * (spec_.cuts[1][by + 1] - spec_.cuts[1][by]) *
         (spec_.cuts[2][bz + 1] - spec_.cuts[2][bz]);
}

std::uint64_t OwnershipMap::block_first(std::uint64_t b) const {
  const std::uint64_t kx = spec_.cuts[0].size() - 1, ky = spec_.cuts[1].size() - 1;
  const std::uint64_t bx = b % kx, by = b / kx % ky, bz = b / kx / ky;
  return spec_.cuts[0][bx] + spec_.extents.x * (spec_.cuts[1][by] + spec_.extents.y * spec_.cuts[2][bz]);
}

OwnershipLookup OwnershipMap::lookup_over(const std::uint64_t* table) const {
  OwnershipLookup l;
  l.elem_bytes = elem_;
  l.table = table;
  std::uint64_t at = 0;
  for (int a = 0; a < 3; ++a) {
    const std::vector<std::uint64_t>& c = spec_.cuts[a];
    l.extent[a] = extent_on(spec_.extents, a);
    l.nblocks[a] = static_cast<std::uint32_t>(c.size() - 1);
    l.cut_at[a] = at;
    at += c.size();
    // One division finds the block when every block but the last has the first one's size.
    bool uniform = true;
    for (std::size_t i = 1; i + 2 < c.size() && uniform; ++i) uniform = c[i + 1] - c[i] == c[1];
    l.step[a] = uniform ? c[1] : 0;
  }
  l.base_at = at;
  l.owner_at = at + spec_.owner.size();
  return l;
}

template <class F>
void OwnershipMap::for_each_run(F&& f) const {
  const std::uint64_t kx = spec_.cuts[0].size() - 1, ky = spec_.cuts[1].size() - 1, kz = spec_.cuts[2].size() - 1;
  const auto& cx = spec_.cuts[0];
  const auto& cy = spec_.cuts[1];
  const auto& cz = spec_.cuts[2];
  for (std::uint64_t bz = 0; bz < kz; ++bz)
    for (std::uint64_t by = 0; by < ky; ++by)
      for (std::uint64_t bx = 0; bx < kx; ++bx) {
        const std::uint64_t b = bx + kx * (by + ky * bz);
        const std::uint64_t wx = cx[bx + 1] - cx[bx], wy = cy[by + 1] - cy[by];
        for (std::uint64_t z = cz[bz]; z < cz[bz + 1]; ++z)
          for (std::uint64_t y = cy[by]; y < cy[by + 1]; ++y) {
            const std::uint64_t first = cx[bx] + spec_.extents.x * (y + spec_.extents.y * z);
            const std::uint64_t local = wx * ((y - cy[by]) + wy * (z - cz[bz]));
            f(b, first, wx, base_[b] + local * elem_);
          }
      }
}

void OwnershipMap::to_layout(const void* row_major, void* layout) const {
  const auto* src = static_cast<const unsigned char*>(row_major);
  auto* dst = static_cast<unsigned char*>(layout);
  for_each_run([&](std::uint64_t, std::uint64_t first, std::uint64_t len, std::uint64_t off) {
    std::memcpy(dst + off, src + first * elem_, len * elem_);
  });
}

void OwnershipMap::from_layout(const void* layout, void* row_major) const {
  const auto* src = static_cast<const unsigned char*>(layout);
  auto* dst = static_cast<unsigned char*>(row_major);
  for_each_run([&](std::uint64_t, std::uint64_t first, std::uint64_t len, std::uint64_t off) {
    std::memcpy(dst + first * elem_, src + off, len * elem_);
  });
}

std::vector<int> OwnershipMap::page_owners(std::uint64_t page_bytes) const {
  if (page_bytes == 0) fail("GPS page size is zero", "use the GPS array's page_bytes()");
  const std::uint64_t bytes = n_ * elem_, pages = (bytes + page_bytes - 1) / page_bytes;
  const auto P = static_cast<std::uint64_t>(owners_);
  std::vector<std::uint64_t> held(pages * P, 0);  // bytes of page p owned by rank o
  for_each_run([&](std::uint64_t b, std::uint64_t first, std::uint64_t len, std::uint64_t) {
    const auto o = static_cast<std::uint64_t>(spec_.owner[b]);
    std::uint64_t lo = first * elem_;
    const std::uint64_t hi = (first + len) * elem_;
    while (lo < hi) {
      const std::uint64_t p = lo / page_bytes, end = std::min(hi, (p + 1) * page_bytes);
      held[p * P + o] += end - lo;
      lo = end;
    }
  });
  std::vector<int> out(pages, 0);
  for (std::uint64_t p = 0; p < pages; ++p) {
    const auto* h = held.data() + p * P;
    out[p] = static_cast<int>(std::max_element(h, h + P) - h);  // the first maximum: the lowest rank
  }
  return out;
}

std::string OwnershipMap::describe() const {
  std::uint64_t used = 0;
  for (const Region& r : regions_) used += r.used_bytes;
  return spec_.shape + ", " + std::to_string(spec_.extents.x) + "x" + std::to_string(spec_.extents.y) + "x" +
         std::to_string(spec_.extents.z) + " elements of " + std::to_string(elem_) + " B, " + std::to_string(blocks()) +
         " blocks over " + std::to_string(owners_) + " owners, range " + std::to_string(range_) + " B (" +
         std::to_string(range_ - used) + " B padding)";
}

}  // namespace gpsm
