// The graph apps' proact plan (apps/graph/graph_proact_plan.hpp): the kernels' block -> rows
// mapping, the chunk split, contributors per chunk (checked against the PROACT engine's chunk
// plan and its host model of the PROACT dissertation's Algorithm 1), the ready values across the
// 32-bit wrap, and each rank's copy list (every row to every peer exactly once, in row order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "apps/graph/graph_proact_plan.hpp"
#include "apps/graph/vec_layout.hpp"
#include "gpsm/error.hpp"
#include "proact/chunks.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::graph;

TEST(GraphProact, RowsPerBlockFollowTheKernelsLanes) {
  EXPECT_EQ(rows_per_block(1), 256);  // sgd, and pagerank / sssp on sparse rows
  EXPECT_EQ(rows_per_block(4), 64);
  EXPECT_EQ(rows_per_block(32), 8);
  EXPECT_EQ(rows_per_block(1) * 1, kGraphThreads);
  EXPECT_THROW(rows_per_block(0), gpsm::Error);
  EXPECT_THROW(rows_per_block(3), gpsm::Error);
  EXPECT_THROW(rows_per_block(64), gpsm::Error);
}

TEST(GraphProact, AutomaticChunksAreEightToSixteenOfAtLeastTheFloor) {
  for (std::int64_t rows : {std::int64_t{1} << 20, std::int64_t{3} << 21, std::int64_t{1} << 24, std::int64_t{123457}})
    for (int width : {1, 16})
      for (int lanes : {1, 8, 32}) {
        if (width == 16 && lanes != 1) continue;  // sgd: one thread per row
        SCOPED_TRACE(testing::Message() << rows << " rows x " << width << ", " << lanes << " lanes");
        const VecLayout l = make_layout({{0, rows}}, width);
        const ChunkSplit s = split_rank(l, 0, rows_per_block(lanes), 0);
        const std::uint64_t bytes = static_cast<std::uint64_t>(rows) * width * 4;
        if (bytes >= 8 * kMinChunkBytes) {
          EXPECT_GE(s.chunks(), 8);
          EXPECT_LE(s.chunks(), 16);
        }
        EXPECT_GE(s.chunk_bytes(), kMinChunkBytes);
        EXPECT_EQ(s.chunk_bytes() % (static_cast<std::uint64_t>(s.rows_per_block) * width * 4), 0u);  // whole blocks
      }
  // A part under one minimum chunk is one chunk.
  const ChunkSplit small = split_rank(make_layout({{0, 2048}}, 1), 0, rows_per_block(16), 0);
  EXPECT_EQ(small.chunks(), 1);
  EXPECT_EQ(small.contributors(0), 2048u / 16u);
}

TEST(GraphProact, RequestedChunksRoundUpToWholeBlocks) {
  // 16 rows per block (lanes 16) x 4 B = 64 B blocks: 100 B -> 2 blocks (128 B).
  EXPECT_EQ(blocks_per_chunk(1000, 64, 100), 2);
  EXPECT_EQ(blocks_per_chunk(1000, 64, 64), 1);
  EXPECT_EQ(blocks_per_chunk(1000, 64, 1), 1);
  EXPECT_EQ(blocks_per_chunk(1000, 16384, 1 << 20), 64);
  EXPECT_EQ(blocks_per_chunk(4, 1024, 0), 2048);  // the 2 MiB floor, even past the last block
  EXPECT_THROW(blocks_per_chunk(4, 0, 0), gpsm::Error);
}

TEST(GraphProact, ContributorsCountTheBlocksWritingEachChunk) {
  ChunkSplit s;
  s.rows = 1000;
  s.rows_per_block = 64;   // 16 blocks, the last with 40 rows
  s.blocks_per_chunk = 5;  // chunks of blocks 0-4, 5-9, 10-14, 15
  s.width = 1;
  ASSERT_EQ(s.blocks(), 16);
  ASSERT_EQ(s.chunks(), 4);
  EXPECT_EQ(s.contributors(0), 5u);
  EXPECT_EQ(s.contributors(2), 5u);
  EXPECT_EQ(s.contributors(3), 1u);
  EXPECT_EQ(s.first_row(3), 960);
  EXPECT_EQ(s.end_row(3), 1000);
  EXPECT_EQ(s.chunk_of_block(14), 2);
  EXPECT_EQ(s.chunk_of_block(15), 3);
}

// The kernel's counting (block b adds 1 to chunk b / blocks_per_chunk; the chunk is ready at
// `contributors`) against the engine's plan and Algorithm 1 model, blocks finishing in any order.
TEST(GraphProact, CountingMatchesTheEnginesReadinessModel) {
  std::mt19937 rng(7);
  for (std::int64_t rows : {1, 255, 256, 257, 5000, 65536 + 3})
    for (int width : {1, 16})
      for (std::int64_t rpb : {8, 64, 256})
        for (std::uint64_t req : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3000}, std::uint64_t{100000}}) {
          SCOPED_TRACE(testing::Message() << rows << " rows x " << width << ", " << rpb << " per block, request " << req);
          const ChunkSplit s = split_rank(make_layout({{0, rows}}, width), 0, rpb, req);
          const std::uint64_t row_bytes = static_cast<std::uint64_t>(width) * 4;
          const gpsm::proact::ChunkPlan plan(static_cast<std::uint64_t>(rows) * row_bytes, s.chunk_bytes(),
                                               gpsm::proact::uniform_block_ranges(rows * row_bytes, rpb * row_bytes));
          ASSERT_EQ(static_cast<std::int64_t>(plan.blocks()), s.blocks());
          ASSERT_EQ(static_cast<std::int64_t>(plan.chunks()), s.chunks());
          std::uint64_t sum = 0;
          for (std::int64_t c = 0; c < s.chunks(); ++c) {
            EXPECT_EQ(s.contributors(c), plan.initial()[c]) << "chunk " << c;
            sum += s.contributors(c);
          }
          EXPECT_EQ(sum, static_cast<std::uint64_t>(s.blocks()));
          for (std::int64_t b = 0; b < s.blocks(); ++b)
            EXPECT_EQ(plan.chunks_of_block(b), std::vector<std::uint64_t>{static_cast<std::uint64_t>(s.chunk_of_block(b))});
          std::vector<std::int64_t> order(static_cast<std::size_t>(s.blocks()));
          std::iota(order.begin(), order.end(), 0);
          std::shuffle(order.begin(), order.end(), rng);
          gpsm::proact::ReadyTracker model(plan);
          std::vector<std::uint32_t> counter(static_cast<std::size_t>(s.chunks()), 0);
          for (std::int64_t b : order) {
            model.block_done(b);
            ++counter[s.chunk_of_block(b)];
            for (std::int64_t c = 0; c < s.chunks(); ++c)
              ASSERT_EQ(counter_reached(counter[c], ready_value(1, s.contributors(c))), model.ready(c)) << "chunk " << c;
          }
        }
}

// Counters are never reset: publication p waits for p x contributors, modulo 2^32.
TEST(GraphProact, ReadyValuesSurviveTheCounterWrap) {
  const std::uint32_t k = 7;
  std::uint32_t counter = 0;
  // Start a few publications before the 32-bit wrap of the counter.
  const std::uint32_t first = static_cast<std::uint32_t>((std::uint64_t{1} << 32) / k) - 3;
  counter = first * k;
  for (std::uint32_t phase = first + 1; phase < first + 8; ++phase) {
    const std::uint32_t want = ready_value(phase, k);
    for (std::uint32_t i = 0; i < k; ++i) {
      EXPECT_FALSE(counter_reached(counter, want)) << "phase " << phase << " after " << i << " blocks";
      ++counter;
    }
    EXPECT_TRUE(counter_reached(counter, want)) << "phase " << phase;
  }
  EXPECT_LT(counter, first * k);  // it did wrap
  EXPECT_FALSE(counter_reached(5, ready_value(1, 6)));
  EXPECT_TRUE(counter_reached(6, ready_value(1, 6)));
}

TEST(GraphProact, CopiesShipEveryRowToEveryPeerOnceInRowOrder) {
  for (int width : {1, 16}) {
    const VecLayout l = make_layout({{0, 1000}, {1000, 1700}, {1700, 1700}, {1700, 3000}}, width);
    for (int r = 0; r < l.ranks(); ++r) {
      SCOPED_TRACE(testing::Message() << "rank " << r << ", width " << width);
      const ChunkSplit s = split_rank(l, r, 64, 1024 * width);  // 4 blocks per chunk
      const std::vector<ChunkCopy> cp = rank_copies(l, r, s);
      if (l.part_rows(r) == 0) {
        EXPECT_TRUE(cp.empty());
        continue;
      }
      ASSERT_EQ(static_cast<std::int64_t>(cp.size()), s.chunks() * (l.ranks() - 1));
      std::vector<std::vector<int>> got(static_cast<std::size_t>(l.ranks()),
                                        std::vector<int>(static_cast<std::size_t>(l.elems()), 0));
      for (std::size_t i = 0; i < cp.size(); ++i) {
        const ChunkCopy& c = cp[i];
        EXPECT_NE(c.dst, r);
        EXPECT_EQ(c.contributors, s.contributors(c.chunk));
        if (i > 0) EXPECT_GE(c.chunk, cp[i - 1].chunk);  // row order: the order blocks finish
        // Peers rotated from r + 1.
        EXPECT_EQ(c.dst, (r + 1 + static_cast<int>(i % (l.ranks() - 1))) % l.ranks());
        for (std::int64_t e = c.elem; e < c.elem + c.elems; ++e) ++got[c.dst][e];
      }
      for (int d = 0; d < l.ranks(); ++d)
        for (std::int64_t e = 0; e < l.elems(); ++e) {
          const bool owned = e >= l.first_elem(r) && e < l.first_elem(r) + l.owned_elems(r);
          ASSERT_EQ(got[d][e], d != r && owned ? 1 : 0) << "dst " << d << " elem " << e;
        }
    }
  }
  EXPECT_TRUE(rank_copies(make_layout({{0, 100}}, 1), 0, split_rank(make_layout({{0, 100}}, 1), 0, 8, 0)).empty());
}

TEST(GraphProact, PublishesAsMuchAsMemcpy) {
  const VecLayout l = make_layout({{0, 3}, {3, 5}, {5, 6}}, 2);
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::proact, l), publish_bytes(Paradigm::memcpy, l));
  EXPECT_DOUBLE_EQ(publish_bytes(Paradigm::proact, make_layout({{0, 6}}, 2)), 0);
}

TEST(GraphProact, ChunkRequestParses) {
  EXPECT_EQ(parse_chunk_request(""), 0u);
  EXPECT_EQ(parse_chunk_request("4096"), 4096u);
  EXPECT_EQ(parse_chunk_request("64K"), 65536u);
  EXPECT_EQ(parse_chunk_request("2M"), 2u << 20);
  for (const char* bad : {"0", "-5", "abc", "12Q", "K"}) EXPECT_THROW(parse_chunk_request(bad), gpsm::Error) << bad;
}
