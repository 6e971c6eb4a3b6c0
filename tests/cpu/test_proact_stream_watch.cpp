// The stream-wait watchdog's ledger and message (proact/stream_watch.hpp); its host side runs in
// ProactGpu.WithheldStreamWaitCounterEndsInItsMessage.
#include <gtest/gtest.h>

#include <cstdint>

#include "proact/stream_watch.hpp"

using namespace gpsm::proact;

TEST(ProactStreamWatch, MetIsCyclicGreaterOrEqual) {
  EXPECT_TRUE(stream_wait_met(5, 5));
  EXPECT_TRUE(stream_wait_met(6, 5));
  EXPECT_FALSE(stream_wait_met(4, 5));
  EXPECT_FALSE(stream_wait_met(0, 5));
  EXPECT_TRUE(stream_wait_met(2, 0xfffffffeu));  // the counter wrapped past the value
  EXPECT_FALSE(stream_wait_met(0xfffffffeu, 2));
}

TEST(ProactStreamWatch, OneEntryPerCounterHoldingTheNewestValue) {
  StreamWaits w;
  std::uint32_t flags[2] = {};
  w.note(0, &flags[0], 1, "first row");
  w.note(1, &flags[1], 1, "last row");
  w.note(0, &flags[0], 2, "first row");
  ASSERT_EQ(w.pending().size(), 2u);
  EXPECT_EQ(w.pending()[0].flag, &flags[0]);
  EXPECT_EQ(w.pending()[0].expected, 2u);
  EXPECT_EQ(w.pending()[0].what, "first row");
  EXPECT_EQ(w.pending()[1].device, 1);
  w.clear();
  EXPECT_TRUE(w.empty());
  w.note(0, &flags[0], 7, nullptr);
  EXPECT_EQ(w.pending()[0].what, "stream wait counter");
}

TEST(ProactStreamWatch, MessageNamesEachUnmetCounterExpectedAndSeen) {
  std::uint32_t flags[3] = {};
  const std::vector<PendingWait> waits{{0, &flags[0], 4, "proact copy_engine: chunk ready flag"},
                                       {1, &flags[1], 4, "met one"},
                                       {1, &flags[2], 9, "unreadable one"}};
  const std::string m = stream_wait_timeout_message(waits, {3u, 4u, std::nullopt}, 250, "proact copy_engine run");
  EXPECT_NE(m.find("gpsm: stream wait timed out after 250 ms on CUDA device 0: proact copy_engine: chunk ready flag at "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("expected >= 4, seen 3"), std::string::npos) << m;
  EXPECT_EQ(m.find("met one"), std::string::npos) << m;  // its counter arrived
  EXPECT_NE(m.find("unreadable one at "), std::string::npos) << m;
  EXPECT_NE(m.find("expected >= 9, seen (unreadable)"), std::string::npos) << m;
  EXPECT_NE(m.find("gpsm: proact copy_engine run: failed"), std::string::npos) << m;
  EXPECT_NE(m.find("GPSM_WAIT_TIMEOUT_MS"), std::string::npos) << m;
}
