// GPSM_HOST_LOOP: how the host-driven multi-GPU loops launch (apps/harness/loop_launch.hpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "apps/harness/loop_launch.hpp"
#include "gpsm/error.hpp"

namespace {
struct EnvGuard {
  ~EnvGuard() { unsetenv("GPSM_HOST_LOOP"); }
};
}  // namespace

TEST(LoopLaunch, GraphByDefaultStreamOnRequestAndAClearErrorOtherwise) {
  EnvGuard g;
  using gpsm::apps::LoopLaunch;
  unsetenv("GPSM_HOST_LOOP");
  EXPECT_EQ(gpsm::apps::loop_launch_from_env(), LoopLaunch::graph);
  setenv("GPSM_HOST_LOOP", "", 1);
  EXPECT_EQ(gpsm::apps::loop_launch_from_env(), LoopLaunch::graph);
  setenv("GPSM_HOST_LOOP", "graph", 1);
  EXPECT_EQ(gpsm::apps::loop_launch_from_env(), LoopLaunch::graph);
  setenv("GPSM_HOST_LOOP", "stream", 1);
  EXPECT_EQ(gpsm::apps::loop_launch_from_env(), LoopLaunch::stream);
  setenv("GPSM_HOST_LOOP", "Stream", 1);
  try {
    gpsm::apps::loop_launch_from_env();
    ADD_FAILURE() << "GPSM_HOST_LOOP=Stream accepted";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPSM_HOST_LOOP='Stream'"), std::string::npos) << e.what();
  }
}
