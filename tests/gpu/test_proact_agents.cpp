// Every app's proact paradigm follows the agent gpsm bench asks for (a --proact-cache entry):
// memcpy runs the app's memcpy exchange, inline its p2p_inline one, copy_engine its copy-engine
// exchange; each run is verified against the CPU reference as usual and records the agent it ran
// (ProactChunkUse::agent), with no chunk for memcpy and inline and the same link bytes as the
// paradigm it ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "app_test_util.hpp"

using namespace gpsm::apps;
using gpsm::proact::Agent;

TEST(ProactAgentsGpu, EveryAppRunsTheAgentItIsAskedFor) {
  GPSM_REQUIRE_GPUS(1);
  const int g = std::min<int>(2, static_cast<int>(gpstest::all_devices().size()));
  struct Case {
    const char* app;
    const char* size;
    int iters;
  };
  for (const Case& c : {Case{"jacobi2d", "200x131", 20}, Case{"heat3d", "40x36x44", 10}, Case{"wave3d", "40x36x44", 10},
                        Case{"pagerank", "rmat:11", 10}, Case{"sssp", "rmat:11", 30},
                        Case{"als", "ratings:3000x400x12", 3}}) {
    auto app = apptest::app_named(c.app);
    ASSERT_NE(app, nullptr) << c.app;
    const Problem p = app->problem(c.size, c.iters);
    for (const auto& [agent, par] : {std::pair<Agent, Paradigm>{Agent::memcpy, Paradigm::memcpy},
                                     {Agent::inline_store, Paradigm::p2p_inline}}) {
      SCOPED_TRACE(std::string(c.app) + " proact with the " + gpsm::proact::agent_name(agent) + " agent on " +
                   std::to_string(g) + " GPUs");
      const RunOutcome o = apptest::run(*app, Paradigm::proact, g, p, {0, "test: the agent", agent});
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_LE(o.error, o.tolerance);
      EXPECT_EQ(o.proact.agent, gpsm::proact::agent_name(agent));
      EXPECT_EQ(o.proact.chunk_bytes, 0u);
      EXPECT_EQ(o.proact.source, "test: the agent");
      EXPECT_GT(o.proact.key_size, 0u);
      if (g > 1) EXPECT_NE(o.timing.find("proact ran the"), std::string::npos) << o.timing;
      const RunOutcome same = apptest::run(*app, par, g, p);
      ASSERT_EQ(same.status, RunStatus::ok) << same.reason;
      EXPECT_DOUBLE_EQ(o.link_bytes_per_iter, same.link_bytes_per_iter);
    }
    // no request: copy engines, with a chunk where one ships on more than one GPU
    SCOPED_TRACE(std::string(c.app) + " proact with no request");
    const RunOutcome ce = apptest::run(*app, Paradigm::proact, g, p);
    ASSERT_EQ(ce.status, RunStatus::ok) << ce.reason;
    EXPECT_EQ(ce.proact.agent, "copy_engine");
    if (g > 1) EXPECT_GT(ce.proact.chunk_bytes, 0u);
    EXPECT_EQ(ce.timing.find("proact ran the"), std::string::npos) << ce.timing;
  }
}
