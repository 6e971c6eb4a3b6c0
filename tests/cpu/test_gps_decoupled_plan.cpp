// Host logic of the decoupled publish mode: the chunk layout, and the reduction of the store
// counts seen while tracking into the counts that complete each device's chunks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"
#include "runtime/decoupled_plan.hpp"

using namespace gpsm::gps;

namespace {

Geometry geom(std::uint64_t bytes, std::uint32_t page_shift) {
  Geometry g;
  g.bytes = bytes;
  g.page_shift = page_shift;
  return g;
}

using Counts = std::vector<std::vector<std::uint64_t>>;

}  // namespace

TEST(DecoupledLayout, ChunksCoverThePaddedBytesAndStayInsideAPage) {
  // 100 000 bytes pad to 100 096 (782 lines); 16 KiB chunks in 64 KiB pages: 7 chunks, the last short.
  const ChunkLayout l = chunk_layout(geom(100000, 16), 16384);
  EXPECT_EQ(l.chunk_bytes(), 16384u);
  EXPECT_EQ(l.chunks(), 7u);
  EXPECT_EQ(l.first_line(0), 0u);
  EXPECT_EQ(l.end_line(0), 128u);
  EXPECT_EQ(l.first_line(6), 6u * 128u);
  EXPECT_EQ(l.end_line(6), 100096u / 128u);
  EXPECT_EQ(l.page_of_chunk(3), 0u);
  EXPECT_EQ(l.page_of_chunk(4), 1u);
  std::uint64_t lines = 0;
  for (std::uint64_t c = 0; c < l.chunks(); ++c) {
    EXPECT_LT(l.first_line(c), l.end_line(c));
    if (c > 0) EXPECT_EQ(l.first_line(c), l.end_line(c - 1));
    lines += l.end_line(c) - l.first_line(c);
  }
  EXPECT_EQ(lines, geom(100000, 16).lines());
}

TEST(DecoupledLayout, ChunkIsCappedAtThePage) {
  const ChunkLayout l = chunk_layout(geom(1 << 20, 12), 64 * 1024);  // 4 KiB pages
  EXPECT_EQ(l.chunk_bytes(), 4096u);
  EXPECT_EQ(l.chunks(), 256u);
  for (std::uint64_t c = 0; c < l.chunks(); ++c) EXPECT_EQ(l.page_of_chunk(c), c);
  EXPECT_EQ(chunk_layout(geom(1 << 20, 16), 128).chunks(), (1u << 20) / 128u);
}

TEST(DecoupledLayout, BadChunkSizesAreRefused) {
  EXPECT_THROW(chunk_layout(geom(4096, 16), 0), gpsm::Error);
  EXPECT_THROW(chunk_layout(geom(4096, 16), 64), gpsm::Error);
  EXPECT_THROW(chunk_layout(geom(4096, 16), 3000), gpsm::Error);
}

// Two devices, four chunks of one page each (4 KiB pages), every page subscribed by both.
TEST(DecoupledLearner, AgreeingIntervalsGiveTheCounts) {
  const ChunkLayout l = chunk_layout(geom(4 * 4096, 12), 4096);
  StoreCountLearner learn(2, l.chunks());
  const Counts k{{1024, 512, 0, 0}, {0, 0, 1024, 7}};
  learn.observe(k);
  learn.observe(k);
  EXPECT_EQ(learn.intervals(), 2u);
  const auto e = learn.expectations({0b11, 0b11, 0b11, 0b11}, l);
  EXPECT_EQ(e[0], (std::vector<std::uint64_t>{1024, 512, 0, 0}));
  EXPECT_EQ(e[1], (std::vector<std::uint64_t>{0, 0, 1024, 7}));
  EXPECT_EQ(learned_chunks(e[0]), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(learned_chunks(e[1]), (std::vector<std::uint32_t>{2, 3}));
}

TEST(DecoupledLearner, DisagreeingIntervalsLeaveTheChunkToTheFence) {
  const ChunkLayout l = chunk_layout(geom(3 * 4096, 12), 4096);
  StoreCountLearner learn(2, l.chunks());
  learn.observe({{100, 200, 300}, {0, 0, 0}});
  learn.observe({{100, 201, 300}, {0, 0, 0}});
  learn.observe({{100, 201, 0}, {0, 0, 0}});  // chunk 2 not stored in the third interval
  const auto e = learn.expectations({0b11, 0b11, 0b11}, l);
  EXPECT_EQ(e[0], (std::vector<std::uint64_t>{100, 0, 0}));
  EXPECT_EQ(e[1], (std::vector<std::uint64_t>{0, 0, 0}));
}

TEST(DecoupledLearner, EmptyIntervalsAreSkipped) {
  const ChunkLayout l = chunk_layout(geom(2 * 4096, 12), 4096);
  StoreCountLearner learn(1, l.chunks());
  learn.observe({{0, 0}});  // a fence with no kernel before it
  learn.observe({{64, 0}});
  learn.observe({{0, 0}});
  EXPECT_EQ(learn.intervals(), 1u);
  // One device: pages have no other subscriber, so nothing is pushed.
  EXPECT_EQ(learn.expectations({0b1, 0b1}, l)[0], (std::vector<std::uint64_t>{0, 0}));
  StoreCountLearner none(2, l.chunks());
  EXPECT_EQ(none.expectations({0b11, 0b11}, l)[0], (std::vector<std::uint64_t>{0, 0}));
}

// A chunk written by two devices is left to the fence: a push carries only one device's words,
// so it would never make the chunk complete at a subscriber by itself.
TEST(DecoupledLearner, SharedChunksAndLonePagesAreNotPushed) {
  const ChunkLayout l = chunk_layout(geom(4 * 4096, 12), 4096);
  StoreCountLearner learn(3, l.chunks());
  learn.observe({{10, 10, 10, 10}, {5, 0, 0, 0}, {0, 0, 0, 0}});
  // page 1: only device 0 subscribes (nobody to push to); page 2: device 0 lost its subscription;
  // page 3: devices 0 and 2.
  const auto e = learn.expectations({0b011, 0b001, 0b110, 0b101}, l);
  EXPECT_EQ(e[0], (std::vector<std::uint64_t>{0, 0, 0, 10}));
  EXPECT_EQ(e[1], (std::vector<std::uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(e[2], (std::vector<std::uint64_t>{0, 0, 0, 0}));
}

TEST(DecoupledLearner, AtomicsMakeAChunkIrregular) {
  const ChunkLayout l = chunk_layout(geom(2 * 4096, 12), 4096);
  StoreCountLearner learn(2, l.chunks());
  learn.observe({{kIrregularCount + 3, 8}, {0, 0}});
  learn.observe({{kIrregularCount + 3, 8}, {0, 0}});
  EXPECT_EQ(learn.expectations({0b11, 0b11}, l)[0], (std::vector<std::uint64_t>{0, 8}));
}

TEST(DecoupledLearner, ShapesAreChecked) {
  StoreCountLearner learn(2, 4);
  EXPECT_THROW(learn.observe({{1, 2, 3, 4}}), gpsm::Error);
  EXPECT_THROW(learn.observe({{1, 2, 3}, {1, 2, 3, 4}}), gpsm::Error);
  const ChunkLayout l = chunk_layout(geom(4 * 4096, 12), 4096);
  learn.observe({{1, 2, 3, 4}, {0, 0, 0, 0}});
  EXPECT_THROW(learn.expectations({0b11}, l), gpsm::Error);  // masks shorter than the pages
}
