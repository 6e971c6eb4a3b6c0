// PROACT chunk mapping: which producer blocks write which chunk, the counters' start values (host
// plan and the device formula agree), the per-phase counter model, destinations, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "gpsm/error.hpp"
#include "gpsm/gps/subscription.hpp"
#include "proact/chunk_math.hpp"
#include "proact/chunks.hpp"
#include "proact/destinations.hpp"

using namespace gpsm::proact;

TEST(ProactChunks, UniformBlocksOnePerChunk) {
  const ChunkPlan p(64 * 1024, 4096, uniform_block_ranges(64 * 1024, 4096));
  EXPECT_EQ(p.chunks(), 16u);
  EXPECT_EQ(p.blocks(), 16u);
  for (std::uint64_t c = 0; c < 16; ++c) EXPECT_EQ(p.initial()[c], 1u);
  EXPECT_EQ(p.chunks_of_block(5), std::vector<std::uint64_t>{5});
}

TEST(ProactChunks, ChunkOfManyBlocksAndRaggedTail) {
  // 10 blocks of 4 KiB, chunks of 16 KiB: 4, 4, 2 writers
  const std::uint64_t bytes = 10 * 4096;
  const ChunkPlan p(bytes, 16384, uniform_block_ranges(bytes, 4096));
  ASSERT_EQ(p.chunks(), 3u);
  EXPECT_EQ(p.initial(), (std::vector<std::uint32_t>{4, 4, 2}));
  EXPECT_EQ(p.chunk_range(2).begin, 32768u);
  EXPECT_EQ(p.chunk_range(2).end, bytes);
  EXPECT_EQ(p.chunks_of_block(9), std::vector<std::uint64_t>{2});
}

TEST(ProactChunks, BlockStraddlingChunksDecrementsEach) {
  // blocks of 6 KiB over chunks of 4 KiB: block 0 writes chunks 0-1, block 1 chunks 1-2
  const std::uint64_t bytes = 12 * 1024;
  const ChunkPlan p(bytes, 4096, uniform_block_ranges(bytes, 6144));
  EXPECT_EQ(p.initial(), (std::vector<std::uint32_t>{1, 2, 1}));
  EXPECT_EQ(p.chunks_of_block(0), (std::vector<std::uint64_t>{0, 1}));
  EXPECT_EQ(p.chunks_of_block(1), (std::vector<std::uint64_t>{1, 2}));
}

TEST(ProactChunks, DeviceFormulaMatchesPlan) {
  for (std::uint64_t bytes : {4096ull, 40960ull, 1ull << 20, (1ull << 20) + 4096 * 3})
    for (std::uint64_t chunk : {4096ull, 8192ull, 65536ull, 1ull << 20})
      for (std::uint64_t block : {4096ull, 12288ull}) {
        const ChunkPlan p(bytes, chunk, uniform_block_ranges(bytes, block));
        const ChunkGeometry g{bytes, chunk, block};
        ASSERT_EQ(g.chunks(), p.chunks());
        ASSERT_EQ(g.blocks(), p.blocks());
        for (std::uint64_t c = 0; c < p.chunks(); ++c) ASSERT_EQ(g.writers(c), p.initial()[c]) << bytes << " " << chunk;
        for (std::uint64_t b = 0; b < p.blocks(); ++b) {
          const auto cs = p.chunks_of_block(b);
          ASSERT_EQ(g.first_chunk(b), cs.front());
          ASSERT_EQ(g.last_chunk(b), cs.back());
        }
      }
}

TEST(ProactChunks, CountersReadyExactlyWhenLastWriterDoneAndResetPerPhase) {
  const std::uint64_t bytes = 64 * 4096;
  const ChunkPlan p(bytes, 16384, uniform_block_ranges(bytes, 4096));
  ReadyTracker t(p);
  std::vector<std::uint64_t> order(p.blocks());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(7);
  for (int phase = 0; phase < 3; ++phase) {
    std::shuffle(order.begin(), order.end(), rng);
    t.reset();
    std::vector<int> done_in_chunk(p.chunks(), 0);
    std::vector<bool> became_ready(p.chunks(), false);
    for (std::uint64_t b : order) {
      for (std::uint64_t c : p.chunks_of_block(b)) ++done_in_chunk[c];
      for (std::uint64_t c : t.block_done(b)) {
        EXPECT_FALSE(became_ready[c]) << "chunk " << c << " ready twice";
        became_ready[c] = true;
        EXPECT_EQ(static_cast<std::uint32_t>(done_in_chunk[c]), p.initial()[c]) << "chunk " << c << " ready early";
      }
    }
    EXPECT_EQ(t.ready_count(), p.chunks());
    EXPECT_TRUE(std::all_of(became_ready.begin(), became_ready.end(), [](bool b) { return b; }));
  }
  t.reset();
  t.block_done(3);
  EXPECT_THROW(t.block_done(3), gpsm::Error);  // twice in one phase
}

TEST(ProactChunks, GeneralRangesAndBadInput) {
  // irregular mapping: block 0 writes [0, 100), block 1 nothing, block 2 [100, 8192)
  const ChunkPlan p(8192, 4096, {{0, 100}, {0, 0}, {100, 8192}});
  EXPECT_EQ(p.initial(), (std::vector<std::uint32_t>{2, 1}));
  EXPECT_TRUE(p.chunks_of_block(1).empty());
  EXPECT_THROW(ChunkPlan(8192, 0, {{0, 8192}}), gpsm::Error);
  EXPECT_THROW(ChunkPlan(0, 4096, {}), gpsm::Error);
  EXPECT_THROW(ChunkPlan(8192, 4096, {{0, 9000}}), gpsm::Error);  // outside
  EXPECT_THROW(ChunkPlan(8192, 4096, {{10, 5}}), gpsm::Error);    // reversed
  try {
    ChunkPlan(8192, 4096, {{0, 4096}});  // chunk 1 never written
    FAIL() << "expected an error";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no producer block writes chunk 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(uniform_block_ranges(4096, 0), gpsm::Error);
}

TEST(ProactDestinations, AllPeers) {
  const ChunkPlan p(16384, 4096, uniform_block_ranges(16384, 4096));
  const auto d = destinations_all_peers(p, 4, 1);
  ASSERT_EQ(d.size(), 4u);
  for (auto m : d) EXPECT_EQ(m, 0b1101u);
  EXPECT_EQ(ranks_of(0b1101u), (std::vector<int>{0, 2, 3}));
  EXPECT_THROW(destinations_all_peers(p, 4, 4), gpsm::Error);
  EXPECT_THROW(destinations_all_peers(p, 0, 0), gpsm::Error);
}

TEST(ProactDestinations, FromSubscriptions) {
  // 4 pages of 8 KiB over 3 devices; producer 0's slice is pages 1..3 (offset 8 KiB)
  gpsm::gps::SubscriptionTable t(4, 3);
  t.unsubscribe({1, 2}, 1);  // page 1: devices 0, 2
  t.unsubscribe({2, 3}, 2);  // page 2: devices 0, 1
  t.unsubscribe({3, 4}, 1);
  t.unsubscribe({3, 4}, 2);  // page 3: device 0 only
  const std::uint64_t page = 8192;
  const ChunkPlan p(3 * page, 4096, uniform_block_ranges(3 * page, 4096));
  const auto d = destinations_from_subscriptions(t, page, p, 0, page);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0], 0b100u);  // page 1
  EXPECT_EQ(d[1], 0b100u);
  EXPECT_EQ(d[2], 0b010u);  // page 2
  EXPECT_EQ(d[4], 0u);      // page 3: nobody else
  // a chunk spanning pages 1 and 2 takes the union
  const ChunkPlan big(3 * page, 16384, uniform_block_ranges(3 * page, 4096));
  EXPECT_EQ(destinations_from_subscriptions(t, page, big, 0, page)[0], 0b110u);
  EXPECT_THROW(destinations_from_subscriptions(t, page, p, 0, 2 * page), gpsm::Error);  // past the table
  EXPECT_THROW(destinations_from_subscriptions(t, 0, p, 0, 0), gpsm::Error);
  EXPECT_THROW(destinations_from_subscriptions(t, page, p, 3, 0), gpsm::Error);
}

TEST(ProactChunks, PersistentWarpGroups) {
  EXPECT_EQ(warps_per_group(32, 65536), 1u);  // more chunks than warps: a warp each
  EXPECT_EQ(warps_per_group(32, 16), 2u);     // 16 groups of 2 warps for 16 chunks
  EXPECT_EQ(warps_per_group(128, 16), 8u);
  EXPECT_EQ(warps_per_group(128, 1), 128u);   // one chunk: every warp on it
  EXPECT_EQ(warps_per_group(1, 1), 1u);
  for (std::uint32_t warps : {1u, 3u, 8u, 96u, 2048u})
    for (std::uint64_t chunks : {1ull, 5ull, 16ull, 64ull, 100000ull}) {
      const std::uint32_t g = warps_per_group(warps, chunks);
      ASSERT_GE(g, 1u);
      ASSERT_LE(g, warps);
      ASSERT_TRUE(warps / g >= chunks || g == 1) << warps << " " << chunks;  // no group without a chunk
    }
}
