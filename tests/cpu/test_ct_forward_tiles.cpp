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
