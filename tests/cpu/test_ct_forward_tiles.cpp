// The GPU forward projector's row tiling (ct_forward_tiles.hpp) and the voxel range a row tile
// visits (tile_z_range, ct_footprint.hpp): plain C++, so checked here without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "apps/ct/ct_footprint.hpp"
#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_geometry.hpp"

using namespace gpsm::apps::ct;

TEST(CtForwardTiles, WholeRowsWithinTheSharedBudgetEvenedOut) {
  EXPECT_EQ(forward_tile_rows(16, 96), 16);   // small: one tile (12 kB)
  EXPECT_EQ(forward_tile_rows(32, 444), 11);  // medium: 13 rows fit, 3 tiles of 11, 11, 10
  EXPECT_EQ(forward_tiles(32, 11), 3);
  EXPECT_EQ(forward_tile_rows(64, 888), 6);   // seed: 6 rows fit (42.6 kB), 11 tiles
  EXPECT_EQ(forward_tiles(64, 6), 11);
  for (int rows : {1, 7, 16, 64})
    for (int ch : {1, 48, 444, 888, 4096}) {
      const int t = forward_tile_rows(rows, ch);
      EXPECT_LE(static_cast<std::size_t>(t) * ch * sizeof(double), kForwardSharedBytes);
      EXPECT_GE(t * forward_tiles(rows, t), rows);
      EXPECT_LT((forward_tiles(rows, t) - 1) * t, rows);  // no empty tile
    }
  EXPECT_THROW(forward_tile_rows(4, 7000), std::invalid_argument);  // one row of doubles > 48 kB
}

// Every voxel with a nonzero row in a tile lies in the tile's z range (the range only skips).
TEST(CtForwardTiles, TileZRangeHoldsEveryVoxelThatReachesTheTile) {
  for (const char* spec : {"small", "32x32x8:48x8x48:circular", "48x48x40:96x16x96:helical"}) {
    const Geometry g = parse_geometry(spec);
    std::mt19937 rng(5);
    ColumnFootprint fp;
    double w[kMaxFootprintCells];
    int checked = 0;
    for (int trial = 0; trial < 200; ++trial) {
      const int v = static_cast<int>(rng() % g.views), ix = static_cast<int>(rng() % g.nx),
                iy = static_cast<int>(rng() % g.ny);
      const ViewPose p = view_pose(g, v);
      if (!column_footprint(g, p, ix, iy, fp)) continue;
      for (int tile = 3; tile <= g.rows; tile += 5)
        for (int l0 = 0; l0 < g.rows; l0 += tile) {
          const int l1 = std::min(g.rows, l0 + tile);
          int a, b;
          tile_z_range(g, p, fp.mag, l0, l1, a, b);
          for (int iz = 0; iz < g.nz; ++iz) {
            int lv;
            const int nl = voxel_rows(g, p, fp, iz, lv, w);
            bool reaches = false;
            for (int i = 0; i < nl; ++i) reaches |= (lv + i >= l0 && lv + i < l1 && w[i] > 0);
            if (!reaches) continue;
            ++checked;
            EXPECT_TRUE(iz >= a && iz < b) << spec << " view " << v << " column " << ix << "," << iy << " iz " << iz
                                           << " rows [" << l0 << "," << l1 << ") range [" << a << "," << b << ")";
          }
        }
    }
    EXPECT_GT(checked, 1000) << spec;
  }
}

// Column splits fill the GPU where views x tiles alone do not (medium on 2 GPUs: 3 tiles x 38
// views = 114 blocks on 132 SMs), stay 1 where they do (every view of medium: 5442 blocks), and
// never give a split fewer than kForwardColumnsPerThread columns a thread.
TEST(CtForwardTiles, ColumnSplitsFillTheGpuAndKeepWorkPerThread) {
  const std::int64_t medium = 256 * 256;
  EXPECT_EQ(forward_splits(3, 38, medium, 132), 10);  // ceil(1056 / 114)
  EXPECT_EQ(forward_splits(3, 76, medium, 132), 5);   // ceil(1056 / 228)
  EXPECT_EQ(forward_splits(3, 1814, medium, 132), 1);
  EXPECT_EQ(forward_splits(11, 76, 512 * 512, 132), 2);  // the seed's subset share on 4 GPUs
  EXPECT_EQ(forward_splits(1, 1, 4096, 132), 4);         // small images: capped by columns
  EXPECT_EQ(forward_splits(1, 1, 100, 132), 1);
  for (int tiles : {1, 3, 11})
    for (int count : {1, 7, 38, 302})
      for (std::int64_t columns : {std::int64_t{64}, std::int64_t{4096}, medium})
        for (int sms : {1, 80, 132}) {
          const int s = forward_splits(tiles, count, columns, sms);
          EXPECT_GE(s, 1);
          if (s > 1) {
            EXPECT_GE(columns / s, kForwardColumnsPerThread * 256);
            EXPECT_LT(std::int64_t{tiles} * count * (s - 1), std::int64_t{kForwardBlocksPerSm} * sms);  // no extra
          }
        }
  EXPECT_EQ(forward_scratch_doubles(1, 38, 14208), 0u);
  EXPECT_EQ(forward_scratch_doubles(10, 38, 14208), 10u * 38 * 14208);
}

// Update and back projection threads: a block holds whole columns with all their z runs.
TEST(CtForwardTiles, ZRunsCoverEveryColumnWithinOneBlock) {
  EXPECT_EQ(z_runs(256), 8);
  EXPECT_EQ(columns_per_block(256), 32);  // medium: a warp is 32 columns at one z run
  EXPECT_EQ(z_runs(512), 16);
  EXPECT_EQ(columns_per_block(512), 16);
  EXPECT_EQ(z_runs(64), 2);
  EXPECT_EQ(z_runs(33), 2);
  EXPECT_EQ(columns_per_block(4096), 2);  // the largest image the geometry parser takes
  EXPECT_EQ(columns_per_block(8193), 0);  // more runs than threads
  for (int nz : {1, 31, 32, 33, 100, 256, 4096}) {
    EXPECT_GE(z_runs(nz) * kZRun, nz);
    EXPECT_LT((z_runs(nz) - 1) * kZRun, nz);
    EXPECT_LE(columns_per_block(nz) * z_runs(nz), 256);
  }
}
