#pragma once
// How the GPU forward projector cuts a view's detector into row tiles (plain C++, CPU-tested).
// One thread block per (view, row tile) accumulates the tile's detector cells in double in shared
// memory (the CPU sums in double too), so a cell is written to global memory once, as one float,
// with no global atomics. A tile holds as many whole rows as fit the 48 kB of shared memory a
// block gets without opting in, evened out over the tiles: small (16 x 96) is one tile, medium
// (32 x 444) three of 11 rows, the seed's (64 x 888) eleven of 6 rows.
//
// Column splits: a (view, row tile) block walks every voxel column of the image, so a launch has
// only tiles x views blocks: 114 for medium's 38 views a GPU on 2 GPUs, fewer than an H200's 132
// SMs, and the blocks that run side by side each take as long as one block alone (the forward
// projection stopped scaling with GPUs). forward_splits cuts the columns into runs so the launch
// has enough blocks to fill the GPU several times over; each split's block sums its tile in
// double in shared memory and stores the doubles, and a second pass adds the splits in split
// order and rounds once to float (the same one float rounding of a double sum as one block).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpsm::apps::ct {

inline constexpr std::size_t kForwardSharedBytes = 48 * 1024;

// Rows per tile for a detector of rows x channels doubles within `budget` bytes; the last tile
// may be shorter. Throws std::invalid_argument when one row alone does not fit.
inline int forward_tile_rows(int rows, int channels, std::size_t budget = kForwardSharedBytes) {
  const std::size_t row_bytes = static_cast<std::size_t>(channels) * sizeof(double);
  if (rows < 1 || channels < 1 || row_bytes > budget)
    throw std::invalid_argument("ct forward projection: a detector row of " + std::to_string(channels) +
                                " channels does not fit " + std::to_string(budget) + " bytes of shared memory");
  const int fit = static_cast<int>(budget / row_bytes);
  const int tiles = (rows + fit - 1) / fit;
  return (rows + tiles - 1) / tiles;
}

inline int forward_tiles(int rows, int tile_rows) { return (rows + tile_rows - 1) / tile_rows; }

// Blocks a forward launch aims for per SM: 48 kB tiles allow 4 resident blocks an SM on an H100
// or H200 (228 kB of shared memory), and twice that keeps the last wave short.
inline constexpr int kForwardBlocksPerSm = 8;
// A split keeps at least this many columns a thread (a split's fixed cost, zeroing and storing
// its tile, stays small beside its columns).
inline constexpr std::int64_t kForwardColumnsPerThread = 4;

// Column splits for `count` views of `tiles` row tiles each on a GPU of `sms` SMs, blocks of
// `threads`: enough that tiles x count x splits reaches kForwardBlocksPerSm x sms, at most one
// split per kForwardColumnsPerThread x threads columns, at least 1.
inline int forward_splits(int tiles, int count, std::int64_t columns, int sms, int threads = 256) {
  if (tiles < 1 || count < 1 || sms < 1) return 1;
  const std::int64_t blocks = std::int64_t{tiles} * count;
  const std::int64_t want = (std::int64_t{kForwardBlocksPerSm} * sms + blocks - 1) / blocks;
  const std::int64_t most = columns / (kForwardColumnsPerThread * threads);
  return static_cast<int>(std::max<std::int64_t>(1, std::min(want, most)));
}

// Doubles of the partial-sum scratch a split launch of `count` views needs (0 for one split).
inline std::size_t forward_scratch_doubles(int splits, int count, std::int64_t cells_per_view) {
  return splits > 1 ? static_cast<std::size_t>(splits) * static_cast<std::size_t>(count) *
                          static_cast<std::size_t>(cells_per_view)
                    : 0;
}

// The back projection and the PWLS update run one thread per (voxel column, run of kZRun voxels
// of it): one thread per column gave 128 blocks a GPU at medium on 2 GPUs, again fewer than the
// SMs. A block holds threads / zruns columns with all their runs, the column index fastest (a
// warp's threads take neighbouring columns at the same z, whose views reach alike), so a block
// still finishes whole columns, which the readiness counting needs (ct_ready.hpp).
inline constexpr int kZRun = 32;
inline int z_runs(int nz) { return (nz + kZRun - 1) / kZRun; }
// Columns a block of `threads` holds; 0 when a column has more runs than the block has threads.
inline int columns_per_block(int nz, int threads = 256) { return threads / z_runs(nz); }

}  // namespace gpsm::apps::ct
