// The combine sweep's host logic (src/runtime/sweep_plan.hpp): the sweeper grid, block ownership,
// the pause between passes, and the receiver's newest-first rule on a block's chain of records.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "runtime/finepack.hpp"
#include "runtime/sweep_plan.hpp"

using namespace gpsm::gps;

TEST(GpsSweepPlan, GridIsBlocksPerSmCappedAtTheBlocksOfLines) {
  EXPECT_EQ(sweep_grid(132, 2, 16384), 264u);  // H200, a 256 MiB array
  EXPECT_EQ(sweep_grid(132, 1, 16384), 132u);
  EXPECT_EQ(sweep_grid(132, 2, 100), 100u);  // no sweeper block without a block of lines
  EXPECT_EQ(sweep_grid(132, 2, 0), 1u);
  EXPECT_EQ(sweep_grid(0, 2, 10), 1u);
}

TEST(GpsSweepPlan, EveryBlockOfLinesHasOneOwnerInEveryPass) {
  for (std::uint32_t grid : {1u, 7u, 264u}) {
    std::vector<int> owned(1000, 0);
    for (std::uint32_t b = 0; b < grid; ++b)
      for (std::uint64_t blk = b; blk < owned.size(); blk += grid) {  // the sweeper kernel's loop
        EXPECT_EQ(sweep_owner(blk, grid), b);
        ++owned[blk];
      }
    for (int n : owned) EXPECT_EQ(n, 1);
  }
}

TEST(GpsSweepPlan, PauseIsNoneWhileBusyAndDoublesWhileIdle) {
  EXPECT_EQ(sweep_pause_ns(64, 64, 0, 1000, 64000), 0u);
  EXPECT_EQ(sweep_pause_ns(1000, 64, 32000, 1000, 64000), 0u);  // busy again: at once
  std::uint64_t p = 0;
  std::vector<std::uint64_t> seen;
  for (int i = 0; i < 10; ++i) seen.push_back(p = sweep_pause_ns(0, 64, p, 1000, 64000));
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{1000, 2000, 4000, 8000, 16000, 32000, 64000, 64000, 64000, 64000}));
  EXPECT_EQ(sweep_pause_ns(63, 64, 0, 1000, 64000), 1000u);  // a few words are an idle pass
}

// Records of one source for one block, sent pass after pass: a word stored again after a pass is
// in a later record. Applying the chain newest first, first value wins, gives what applying the
// records in the order sent gives: the last value stored.
TEST(GpsSweepPlan, NewestFirstChainGivesTheLastValueStored) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const std::uint32_t words = kMaxBlockWords;
    std::vector<SweepRecord> sent;  // oldest first
    for (int pass = 0; pass < 1 + trial % 6; ++pass) {
      SweepRecord r;
      std::vector<bool> in(words, false);  // a record holds a word once (its bit was taken once)
      for (int k = 0; k < 200; ++k) {
        const std::uint32_t o = rng() % words;
        if (in[o]) continue;
        in[o] = true;
        r.offset.push_back(o);
        r.value.push_back(static_cast<std::uint32_t>(rng()));
      }
      sent.push_back(r);
    }
    std::vector<std::uint32_t> in_order(words, 0xDEADBEEFu), chain(words, 0xDEADBEEFu);
    for (const SweepRecord& r : sent)
      for (std::size_t i = 0; i < r.offset.size(); ++i) in_order[r.offset[i]] = r.value[i];
    const std::vector<SweepRecord> newest_first(sent.rbegin(), sent.rend());
    const std::uint64_t wrote = apply_chain_host(newest_first, chain);
    EXPECT_EQ(chain, in_order) << "trial " << trial;
    std::uint64_t touched = 0;
    for (std::uint32_t w = 0; w < words; ++w) touched += in_order[w] != 0xDEADBEEFu;
    EXPECT_EQ(wrote, touched);  // each word written once, however many records held it
  }
}

TEST(GpsSweepPlan, ChainRejectsMalformedRecords) {
  std::vector<std::uint32_t> block(8);
  EXPECT_THROW(apply_chain_host({SweepRecord{{1, 2}, {3}}}, block), std::invalid_argument);
  EXPECT_THROW(apply_chain_host({SweepRecord{{8}, {3}}}, block), std::invalid_argument);
}
