// The filter's gps pass runs its plain band with no checks (split_rows), so the band must never
// hold a row whose stores a neighbour needs or whose input rows this GPU lacks; and it should be
// the slab's whole interior when the subscriptions are what tracking learns.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "apps/filter/filter_gps_rows.hpp"

using namespace gpsm::apps::filter;
using gpsm::gps::Reach;
using i64 = std::int64_t;

namespace {
// Reach over rows from per-row masks (one page per row), rank 0's view.
struct Rows {
  std::vector<std::uint32_t> mask;
  Reach operator()(i64 lo, i64 hi) const {
    Reach r = Reach::sole;
    for (i64 y = lo; y < hi; ++y) {
      if (!(mask[y] & 1u)) return Reach::checked;
      if (mask[y] != 1u) r = Reach::shared;
    }
    return r;
  }
};
}  // namespace

TEST(FilterGpsRows, LearnedHaloRowsLeaveTheInteriorPlain) {
  // 40 rows; rank 0 owns [0, 20), radius 2: it reads rows [0, 22), rank 1 reads [18, 40).
  for (i64 r : {1, 2, 3}) {
    Rows rows{std::vector<std::uint32_t>(40)};
    for (i64 y = 0; y < 40; ++y) rows.mask[y] = (y < 20 + r ? 1u : 0u) | (y >= 20 - r ? 2u : 0u);
    const RowSplit s = split_rows(0, 20, r, 40, rows, rows);
    EXPECT_EQ(s.plain_lo, 0) << "radius " << r;
    EXPECT_EQ(s.plain_hi, 20 - r) << "radius " << r;  // rows [20 - r, 20) are rank 1's halo: published
  }
}

TEST(FilterGpsRows, AMissingInputRowKeepsItsReadersOutOfTheBand) {
  Rows in{std::vector<std::uint32_t>(30, 1u)}, out{std::vector<std::uint32_t>(30, 1u)};
  in.mask[8] = 2u;  // rank 0 lacks row 8: rows [6, 11) read it with radius 2
  const RowSplit s = split_rows(0, 30, 2, 30, in, out);
  EXPECT_EQ(s.plain_lo, 11);
  EXPECT_EQ(s.plain_hi, 30);
  for (i64 y = s.plain_lo; y < s.plain_hi; ++y) EXPECT_FALSE(y >= 6 && y < 11);
}

TEST(FilterGpsRows, EverythingSharedOrEverythingSole) {
  Rows all{std::vector<std::uint32_t>(16, 3u)}, mine{std::vector<std::uint32_t>(16, 1u)};
  RowSplit s = split_rows(4, 12, 1, 16, all, all);
  EXPECT_EQ(s.plain_lo, 12);  // no plain row: every row through the GPS pass
  EXPECT_EQ(s.plain_hi, 12);
  s = split_rows(4, 12, 1, 16, mine, mine);
  EXPECT_EQ(s.plain_lo, 4);
  EXPECT_EQ(s.plain_hi, 12);
  s = split_rows(4, 12, 1, 16, all, mine);  // input shared (held), output sole: plain
  EXPECT_EQ(s.plain_lo, 4);
  EXPECT_EQ(s.plain_hi, 12);
  // The image's edges clamp the input rows asked for.
  s = split_rows(0, 16, 4, 16, mine, mine);
  EXPECT_EQ(s.plain_lo, 0);
  EXPECT_EQ(s.plain_hi, 16);
}
