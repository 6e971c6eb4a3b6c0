// Long rows cut into block segments (apps/graph/row_segments.hpp): which rows split, the
// segment bounds, each row's partial range and finish counter, and that the segments cover every
// edge of the split rows exactly once.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "apps/graph/graph_proact_plan.hpp"
#include "apps/graph/row_segments.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps::graph;

TEST(GraphRowSegments, HandCase) {
  // degrees 3, 2500, 10, 1025, 0, 1024
  const std::vector<std::int64_t> rp{0, 3, 2503, 2513, 3538, 3538, 4562};
  const auto s = split_long_rows(rp, 1024, 1024);
  ASSERT_EQ(s.size(), 5u);
  const std::int64_t want[5][6] = {
      {1, 3, 1027, 0, 3, 0}, {1, 1027, 2051, 0, 3, 0}, {1, 2051, 2503, 0, 3, 0}, {3, 2513, 3537, 3, 2, 1},
      {3, 3537, 3538, 3, 2, 1}};
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(s[k].row, want[k][0]);
    EXPECT_EQ(s[k].begin, want[k][1]);
    EXPECT_EQ(s[k].end, want[k][2]);
    EXPECT_EQ(s[k].first, want[k][3]);
    EXPECT_EQ(s[k].count, want[k][4]);
    EXPECT_EQ(s[k].split, want[k][5]);
  }
  EXPECT_EQ(split_rows(s), 2);  // row 5 has exactly 1024 edges: not longer, not split
  EXPECT_TRUE(split_long_rows(rp, 2500).empty());
  EXPECT_EQ(split_rows({}), 0);
}

TEST(GraphRowSegments, ShortSplitRowIsOneSegment) {
  // lanes 1: rows of more than kChainEdges edges split, a row of 100 edges is one block's segment
  const auto s = split_long_rows({0, 100, 101}, kChainEdges * 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].begin, 0);
  EXPECT_EQ(s[0].end, 100);
  EXPECT_EQ(s[0].count, 1);
  EXPECT_EQ(kSegmentEdges % kGraphThreads, 0);  // the kernel gives every thread the same number of edges
}

TEST(GraphRowSegments, RandomRowsCoveredOnce) {
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> rp{0};
  for (int r = 0; r < 2000; ++r) rp.push_back(rp.back() + (rng() % 10 == 0 ? rng() % 5000 : rng() % 40));
  const std::int64_t longer = 256, seg = 300;
  const auto s = split_long_rows(rp, longer, seg);
  std::vector<int> covered(static_cast<std::size_t>(rp.back()), 0);
  std::int64_t rows = 0;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const RowSegment& g = s[k];
    ASSERT_GT(rp[g.row + 1] - rp[g.row], longer);
    EXPECT_GT(g.end, g.begin);
    EXPECT_LE(g.end - g.begin, seg);
    EXPECT_LE(static_cast<std::int64_t>(g.first), static_cast<std::int64_t>(k));
    EXPECT_LT(static_cast<std::int64_t>(k), static_cast<std::int64_t>(g.first) + g.count);
    EXPECT_EQ(s[g.first].row, g.row);
    EXPECT_EQ(s[g.first + g.count - 1].row, g.row);
    for (std::int64_t e = g.begin; e < g.end; ++e) ++covered[e];
    if (g.first == static_cast<std::int32_t>(k)) EXPECT_EQ(g.split, rows++);
  }
  EXPECT_EQ(split_rows(s), rows);
  for (std::size_t r = 0; r + 1 < rp.size(); ++r)
    for (std::int64_t e = rp[r]; e < rp[r + 1]; ++e)
      ASSERT_EQ(covered[e], rp[r + 1] - rp[r] > longer ? 1 : 0) << "row " << r << " edge " << e;
}

TEST(GraphRowSegments, BadInput) {
  EXPECT_THROW(split_long_rows({0, 5}, 0), gpsm::Error);
  EXPECT_THROW(split_long_rows({0, 5}, 4, 0), gpsm::Error);
  EXPECT_THROW(split_long_rows({0, 5, 3}, 1), gpsm::Error);
}

TEST(GraphRowSegments, SplitSetting) {
  EXPECT_EQ(chain_edges_setting(nullptr), kChainEdges);
  EXPECT_EQ(chain_edges_setting(""), kChainEdges);
  EXPECT_EQ(chain_edges_setting("off"), 0);
  EXPECT_EQ(chain_edges_setting("128"), 128);
  for (const char* bad : {"0", "-3", "12x", "on", " 5"}) EXPECT_THROW(chain_edges_setting(bad), gpsm::Error) << bad;
}
