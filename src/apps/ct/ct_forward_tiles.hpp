#pragma once
// How the GPU forward projector cuts a view's detector into row tiles (plain C++, CPU-tested).
// One thread block per (view, row tile) accumulates the tile's detector cells in double in shared
// memory (the CPU sums in double too), so a cell is written to global memory once, as one float,
// with no global atomics. A tile holds as many whole rows as fit the 48 kB of shared memory a
// block gets without opting in, evened out over the tiles: small (16 x 96) is one tile, medium
// (32 x 444) three of 11 rows, the seed's (64 x 888) eleven of 6 rows.
#include <cstddef>
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

}  // namespace gpsm::apps::ct
