// gpsm sim's marching-step costs (src/sim/march.cpp) on hand-computed numbers.
#include <gtest/gtest.h>

#include "sim/march.hpp"

using namespace gpsm::sim;

// The union of byte ranges: overlapping and touching ranges count once, gaps do not count.
TEST(SimMarch, DistinctBytesCountEachByteOnce) {
  ByteRanges r;
  add_range(r, 1000, 2000);
  add_range(r, 1500, 2500);  // overlaps the last: merged on the way in
  add_range(r, 0, 100);      // out of order: merged by the sort
  add_range(r, 2500, 2600);  // touches [1000, 2500)
  add_range(r, 50, 150);
  EXPECT_DOUBLE_EQ(distinct_bytes(r), 150 + 1600);
  ByteRanges none;
  EXPECT_DOUBLE_EQ(distinct_bytes(none), 0);
}

// The union as disjoint ranges, ascending (a marching block's remote loads, charged once each).
TEST(SimMarch, MergedRangesAreTheUnion) {
  ByteRanges r = {{1000, 2000}, {0, 100}, {1500, 2500}, {2500, 2600}, {50, 150}, {3000, 3001}};
  const ByteRanges m = merged(r);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], std::make_pair(std::uint64_t{0}, std::uint64_t{150}));
  EXPECT_EQ(m[1], std::make_pair(std::uint64_t{1000}, std::uint64_t{2600}));
  EXPECT_EQ(m[2], std::make_pair(std::uint64_t{3000}, std::uint64_t{3001}));
  ByteRanges none;
  EXPECT_TRUE(merged(none).empty());
}

// A step: resident blocks x bytes per block-step / HBM. docs/sim.md's numbers: 132 SMs x 4 blocks
// x 8 KiB at 3.53 TB/s = 1.2253 us (the 1.18 us fitted on that kernel), at 5 blocks 1.5316 us.
TEST(SimMarch, StepTimeFollowsTheResidency) {
  EXPECT_NEAR(march_step_seconds(132 * 4, 8192, 3530), 132.0 * 4 * 8192 / 3.53e12, 1e-15);
  EXPECT_NEAR(march_step_seconds(132 * 4, 8192, 3530), 1.2253e-6, 1e-10);
  EXPECT_NEAR(march_step_seconds(132 * 5, 8192, 3530), 1.5316e-6, 1e-10);
  EXPECT_DOUBLE_EQ(march_step_seconds(0, 8192, 3530), 0);
  EXPECT_DOUBLE_EQ(march_step_seconds(528, 0, 3530), 0);
}
