// fence_async's per-array decision (async_fence_plan.hpp): what it drains, when it may grow the
// inbound areas (never in stream capture), and what it refuses before enqueuing anything.
#include <gtest/gtest.h>

#include <cstdint>

#include "gpsm/gps/settings.hpp"
#include "runtime/async_fence_plan.hpp"

using namespace gpsm::gps;

TEST(AsyncFencePlan, InlineWithoutOtherViewsNeedsNothing) {
  const AsyncDrainPlan p = plan_async_drain(mode_bit(PublishMode::inline_store), false, false, false, 0, false);
  EXPECT_FALSE(p.drain);
  EXPECT_FALSE(p.grow);
  EXPECT_TRUE(p.refuse.empty());
}

TEST(AsyncFencePlan, ArraysWhoseViewsMarkWordsAreDrained) {
  for (PublishMode m : {PublishMode::combine, PublishMode::decoupled})
    EXPECT_TRUE(plan_async_drain(mode_bit(m), true, false, false, 1024, false).drain) << mode_name(m);
  // An inline array that once took a combine view, kept across fences: no view since the last
  // fence, yet its stores may still mark words.
  EXPECT_TRUE(plan_async_drain(mode_bit(PublishMode::inline_store), true, true, false, 1024, false).drain);
}

TEST(AsyncFencePlan, GrowsOnlyOutsideCaptureWhenUnallocatedOrSpilled) {
  const std::uint32_t c = mode_bit(PublishMode::combine);
  EXPECT_TRUE(plan_async_drain(c, true, false, false, 0, false).grow);      // first drain: allocate
  EXPECT_TRUE(plan_async_drain(c, true, false, false, 4096, true).grow);    // a record spilled: double
  EXPECT_FALSE(plan_async_drain(c, true, false, false, 4096, false).grow);  // room enough
  // In capture the areas stay as they are (records spill as word stores), even unallocated.
  const AsyncDrainPlan cap = plan_async_drain(c, true, true, false, 0, true);
  EXPECT_TRUE(cap.drain);
  EXPECT_FALSE(cap.grow);
  // Nothing to drain, nothing to grow.
  EXPECT_FALSE(plan_async_drain(mode_bit(PublishMode::inline_store), false, false, false, 0, true).grow);
}

TEST(AsyncFencePlan, RefusesBulkAndAPersistentAgentInCapture) {
  const AsyncDrainPlan bulk = plan_async_drain(mode_bit(PublishMode::bulk), true, false, false, 0, false);
  EXPECT_FALSE(bulk.drain);
  EXPECT_NE(bulk.refuse.find("bulk"), std::string::npos);
  const AsyncDrainPlan view = plan_async_drain(mode_bit(PublishMode::combine) | mode_bit(PublishMode::bulk), true,
                                               false, false, 4096, false);
  EXPECT_NE(view.refuse.find("bulk view"), std::string::npos);
  const std::uint32_t d = mode_bit(PublishMode::decoupled);
  EXPECT_NE(plan_async_drain(d, true, true, true, 4096, false).refuse.find("persistent agent"), std::string::npos);
  EXPECT_TRUE(plan_async_drain(d, true, false, true, 4096, false).refuse.empty());  // stopped on the device
  EXPECT_TRUE(plan_async_drain(d, true, true, false, 4096, false).refuse.empty());  // inline agent: captured fine
}
