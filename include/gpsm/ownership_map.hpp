#pragma once
// Who owns which element of a distributed array, and where each element lives in its one virtual
// range. Plain C++ (CPU-tested); the device half (OwnershipLookup) is the same code compiled by
// nvcc, so the CPU tests cover the index math the kernels run.
//
// GPU-SM programs a multi-GPU node as a NUMA shared memory: an array is cut into blocks, each
// block lives in its owner GPU's memory and any GPU loads and stores any element (GPU-SM paper
// §5.1, §6.1). The index space is row-major over extents (x, y, z), x fastest:
// i = x + X * (y + Y * z). It is cut along each axis at `cuts` into a grid of blocks (contiguous
// 1D ranges, 2D tiles, 3D bricks), and each block has an owner (a rank of the context).
//
// The physical layout. Every piece of the virtual range that the driver maps is a whole number of
// its allocation granularity (2 MiB on Hopper), and each piece is backed by one GPU. So each owner
// gets one region of the range, backed by one chunk on that GPU: regions follow each other in
// rank order, each starting on a granularity boundary. Inside its owner's region a block is
// stored whole, row-major in its own extents, blocks in ascending block id. A region's size is
// its blocks' bytes rounded up to the granularity: the padding lives at the end of each region,
// after the owner's last block, and no element index ever maps into it (offset(i) lies inside
// its block, and blocks lie inside the used part of their region). A slab decomposition along the
// slowest axis (or a 1D split) keeps the global row-major order inside each region; when every
// cut falls on a granularity boundary there is no padding before the last region and
// offset(i) == i * elem_bytes (identity()).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpsm/gps/config.hpp"

namespace gpsm {

struct Extents {
  std::uint64_t x = 1, y = 1, z = 1;
};
enum class Axis : int { x = 0, y = 1, z = 2 };

// How the index space is cut into blocks and who owns each block. Build one with the functions
// in `blocks` below, or fill it by hand (checked by OwnershipMap).
struct BlockSpec {
  Extents extents;
  // Per axis: 0 = c0 < c1 < ... < ck = extent; block b covers [c_b, c_b+1) on that axis.
  std::array<std::vector<std::uint64_t>, 3> cuts;
  // Per block, its owner's rank; block id = bx + kx * (by + ky * bz), k = blocks per axis.
  std::vector<int> owner;
  std::string shape;  // what it is, for messages ("2D tiles 64x64")
};

namespace blocks {
// n elements in `owners` contiguous ranges as even as possible (the first n % owners one longer),
// block r owned by rank r.
BlockSpec contiguous(std::uint64_t n, int owners);
// n elements in contiguous ranges proportional to the weights (each > 0), block r owned by rank r;
// every range gets at least one element.
BlockSpec weighted(std::uint64_t n, const std::vector<double>& weights);
// `owners` slabs along one axis, as even as possible, slab r owned by rank r.
BlockSpec along(Extents e, Axis axis, int owners);
// `owners` slabs along the slowest axis that has more than one element (z, else y, else x), every
// cut on a multiple of `granularity` bytes (as even as that allows), slab r owned by rank r: the
// map of these is the identity (OwnershipMap::identity(), kernels index data()[i] with no lookup).
// Fails when the slowest axis has fewer granule-aligned cut points than owners (use along()).
BlockSpec aligned_slabs(Extents e, int owners, std::uint64_t elem_bytes, std::uint64_t granularity);
// A grid of gx * gy * gz owners, each axis split as even as possible; the block at grid position
// (ox, oy, oz) is owned by rank ox + gx * (oy + gy * oz).
BlockSpec owner_grid(Extents e, int gx, int gy, int gz = 1);
// Tiles (or bricks) of `tile` elements (the last along each axis may be smaller), owned as the
// user says: owner_of_tile[tx + kx * (ty + ky * tz)] (a user map: block -> owner).
BlockSpec tiles(Extents e, Extents tile, std::vector<int> owner_of_tile);
// How many tiles of `tile` cover `e` along each axis (the length of a user map is their product).
Extents tile_counts(Extents e, Extents tile);
}  // namespace blocks

// The lookup kernels run: extents, cuts and per-block base offsets and owners, read from one
// table of 64-bit words (OwnershipMap::table(), uploaded per GPU). Plain data, host and device.
// One block as a kernel sees it: its first element's coordinates, its widths, and the byte offset
// of its first element; inside it element (x, y, z) is at
// base + ((x - x0) + wx * ((y - y0) + wy * (z - z0))) * elem_bytes. A kernel working on one tile
// finds it once and indexes it locally, keeping the full lookup for the halo outside it.
struct BlockBox {
  std::uint64_t x0 = 0, y0 = 0, z0 = 0, wx = 0, wy = 0, wz = 0, base = 0;
  int owner = 0;
  GPSM_HD bool contains(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    return x - x0 < wx && y - y0 < wy && z - z0 < wz;  // unsigned: below the origin wraps high
  }
  GPSM_HD std::uint64_t local(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    return (x - x0) + wx * ((y - y0) + wy * (z - z0));
  }
};

struct OwnershipLookup {
  std::uint64_t extent[3] = {1, 1, 1};
  std::uint32_t nblocks[3] = {1, 1, 1};
  // Size of every block but the last along the axis when they are all equal (tiles, even splits
  // with no remainder): the block is then one division away; 0: binary search over the cuts.
  std::uint64_t step[3] = {0, 0, 0};
  std::uint64_t elem_bytes = 1;
  const std::uint64_t* table = nullptr;  // cuts x (kx+1), cuts y, cuts z, base per block, owner per block
  std::uint64_t cut_at[3] = {0, 0, 0};   // where each axis's cuts start in the table
  std::uint64_t base_at = 0, owner_at = 0;

  GPSM_HD std::uint64_t size() const { return extent[0] * extent[1] * extent[2]; }
  GPSM_HD std::uint32_t block_on_axis(int a, std::uint64_t c) const {
    const std::uint64_t* cuts = table + cut_at[a];
    if (step[a] != 0) {
      const std::uint64_t b = c / step[a];
      return static_cast<std::uint32_t>(b < nblocks[a] ? b : nblocks[a] - 1);
    }
    std::uint32_t lo = 0, hi = nblocks[a];  // the block b with cuts[b] <= c < cuts[b + 1]
    while (hi - lo > 1) {
      const std::uint32_t mid = (lo + hi) / 2;
      if (cuts[mid] <= c) lo = mid; else hi = mid;
    }
    return lo;
  }
  GPSM_HD std::uint64_t block_id(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    return block_on_axis(0, x) + std::uint64_t{nblocks[0]} * (block_on_axis(1, y) + std::uint64_t{nblocks[1]} * block_on_axis(2, z));
  }
  // Byte offset of element (x, y, z) in the virtual range.
  GPSM_HD std::uint64_t offset(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    const std::uint32_t bx = block_on_axis(0, x), by = block_on_axis(1, y), bz = block_on_axis(2, z);
    const std::uint64_t* cx = table + cut_at[0];
    const std::uint64_t* cy = table + cut_at[1];
    const std::uint64_t* cz = table + cut_at[2];
    const std::uint64_t wx = cx[bx + 1] - cx[bx], wy = cy[by + 1] - cy[by];
    const std::uint64_t b = bx + std::uint64_t{nblocks[0]} * (by + std::uint64_t{nblocks[1]} * bz);
    const std::uint64_t local = (x - cx[bx]) + wx * ((y - cy[by]) + wy * (z - cz[bz]));
    return table[base_at + b] + local * elem_bytes;
  }
  GPSM_HD std::uint64_t offset(std::uint64_t i) const {
    const std::uint64_t x = i % extent[0], yz = i / extent[0];
    return offset(x, yz % extent[1], yz / extent[1]);
  }
  // The block holding element (x, y, z).
  GPSM_HD BlockBox box(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    const std::uint32_t bx = block_on_axis(0, x), by = block_on_axis(1, y), bz = block_on_axis(2, z);
    const std::uint64_t* cx = table + cut_at[0];
    const std::uint64_t* cy = table + cut_at[1];
    const std::uint64_t* cz = table + cut_at[2];
    const std::uint64_t b = bx + std::uint64_t{nblocks[0]} * (by + std::uint64_t{nblocks[1]} * bz);
    BlockBox k;
    k.x0 = cx[bx];
    k.y0 = cy[by];
    k.z0 = cz[bz];
    k.wx = cx[bx + 1] - k.x0;
    k.wy = cy[by + 1] - k.y0;
    k.wz = cz[bz + 1] - k.z0;
    k.base = table[base_at + b];
    k.owner = static_cast<int>(table[owner_at + b]);
    return k;
  }
  GPSM_HD int owner(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    return static_cast<int>(table[owner_at + block_id(x, y, z)]);
  }
  GPSM_HD int owner(std::uint64_t i) const {
    const std::uint64_t x = i % extent[0], yz = i / extent[0];
    return owner(x, yz % extent[1], yz / extent[1]);
  }
};

class OwnershipMap {
 public:
  // Where one owner's blocks live: [offset, offset + bytes) of the range, backed by one chunk on
  // the owner's GPU; the first used_bytes hold its blocks, the rest is padding.
  struct Region {
    int owner = 0;
    std::uint64_t offset = 0, bytes = 0, used_bytes = 0;
  };

  OwnershipMap() = default;
  // Checks every rule and throws gpsm::Error ("gpsm: distributed array: <why>; <what to do>"):
  // zero extents or element size, a granularity that is not a power of two, an element size
  // that does not divide it, cuts that do not cover an axis in increasing order, an owner map of
  // the wrong length or naming a rank outside [0, owners), sizes past 2^63 bytes.
  OwnershipMap(BlockSpec spec, std::uint64_t elem_bytes, std::uint64_t granularity, int owners);

  const BlockSpec& spec() const { return spec_; }
  std::uint64_t size() const { return n_; }  // elements
  std::uint64_t elem_bytes() const { return elem_; }
  std::uint64_t granularity() const { return gran_; }
  int owners() const { return owners_; }
  std::uint64_t blocks() const { return spec_.owner.size(); }
  std::uint64_t range_bytes() const { return range_; }  // the whole virtual range, padding included
  // One region per rank (empty, bytes == 0, for a rank that owns no block).
  const std::vector<Region>& regions() const { return regions_; }
  std::uint64_t block_base(std::uint64_t b) const { return base_.at(b); }
  std::uint64_t block_elems(std::uint64_t b) const;
  // The element index of the block's first element (its lowest x, y, z).
  std::uint64_t block_first(std::uint64_t b) const;
  // True when offset(i) == i * elem_bytes for every i: a kernel may index data() directly.
  bool identity() const { return identity_; }

  int owner(std::uint64_t i) const { return lookup().owner(i); }
  std::uint64_t offset(std::uint64_t i) const { return lookup().offset(i); }
  // The lookup over this object's table (host use; the runtime uploads table() for devices).
  OwnershipLookup lookup() const { return lookup_over(table_.data()); }
  OwnershipLookup lookup_over(const std::uint64_t* table) const;
  const std::vector<std::uint64_t>& table() const { return table_; }

  // Row-major elements <-> the physical layout (range_bytes; padding left untouched / unread).
  void to_layout(const void* row_major, void* layout) const;
  void from_layout(const void* layout, void* row_major) const;

  // GPS interoperation: for each page of page_bytes of a GPS array holding the same elements in
  // row-major order (page p = bytes [p * page_bytes, (p + 1) * page_bytes) of it), the rank owning
  // the most of its bytes here (ties: the lowest rank). Used as the page's home, a GPS array's
  // loads from non-subscribers and its atomics go to where this array keeps that data.
  std::vector<int> page_owners(std::uint64_t page_bytes) const;

  std::string describe() const;  // one line: shape, elements, element size, range, padding

 private:
  // Calls f(block, first row-major index, run length, byte offset) for every x-run of every block.
  template <class F>
  void for_each_run(F&& f) const;
  BlockSpec spec_;
  std::uint64_t n_ = 0, elem_ = 0, gran_ = 0, range_ = 0;
  int owners_ = 0;
  bool identity_ = false;
  std::vector<Region> regions_;
  std::vector<std::uint64_t> base_;   // per block
  std::vector<std::uint64_t> table_;  // see OwnershipLookup
};

}  // namespace gpsm
