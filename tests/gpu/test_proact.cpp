// PROACT engine on real GPUs: every agent delivers exactly the produced bytes to every
// destination (2 and 4 GPUs, one-to-all and all-to-all), the tracked producer computes the same
// bytes, the verifier catches one corrupted byte, and the sweep records its configurations.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpu_test_util.hpp"
#include "proact/engine.hpp"

using namespace gpsm::proact;

namespace {

// As `gpsm proact` does: enough hardware queues for the copy streams' flag waits, set before this
// binary creates any CUDA context (an explicit setting wins).
[[maybe_unused]] const int kConnections = setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);

ProactConfig small_config(int gpus, Pattern pattern) {
  ProactConfig c;
  for (int d = 0; d < gpus; ++d) c.devices.push_back(d);
  c.bytes = 8ull << 20;  // 2048 producer blocks
  c.pattern = pattern;
  c.agents = parse_agents("all");
  c.chunks = {64 * 1024, 1 << 20};
  c.threads = {256};
  c.work = 8;
  c.wait_timeout_ms = 20000;
  return c;
}

// Runs each agent (at two chunk sizes for the chunked ones) and checks every destination's copy of
// every producer's slice word by word on the GPUs.
void every_agent_delivers(int gpus, Pattern pattern) {
  const ProactConfig cfg = small_config(gpus, pattern);
  Engine e(cfg);
  e.set_work(cfg.work);
  const auto slices = producer_slices(cfg);
  for (Agent a : cfg.agents) {
    for (std::uint64_t chunk : chunked(a) ? cfg.chunks : std::vector<std::uint64_t>{0}) {
      SCOPED_TRACE(std::string(agent_name(a)) + " chunk " + std::to_string(chunk));
      const std::string why = e.unsupported(a, chunk, 256);
      ASSERT_TRUE(why.empty()) << why;
      RunTimes t;
      ASSERT_NO_THROW(t = e.run_agent(a, chunk, 256));  // run_agent verifies too; checked again below
      EXPECT_GT(t.total_s, 0.0);
      EXPECT_GE(t.tail_s, 0.0);
      for (int p = 0; p < gpus; ++p) {
        if (slices[p].bytes == 0) continue;
        for (int d = 0; d < gpus; ++d) {
          const VerifyResult v = e.verify(d, p);
          EXPECT_EQ(v.bad_words, 0u) << "rank " << d << " slice of " << p << ", first bad word " << v.first_bad_word;
        }
      }
    }
  }
}

}  // namespace

TEST(ProactGpu, EveryAgentDeliversOneToAll2Gpus) {
  GPSM_REQUIRE_GPUS(2);
  every_agent_delivers(2, Pattern::one_to_all);
}

TEST(ProactGpu, EveryAgentDeliversOneToAll4Gpus) {
  GPSM_REQUIRE_GPUS(4);
  every_agent_delivers(4, Pattern::one_to_all);
}

TEST(ProactGpu, EveryAgentDeliversAllToAll4Gpus) {
  GPSM_REQUIRE_GPUS(4);
  every_agent_delivers(4, Pattern::all_to_all);
}

TEST(ProactGpu, TrackedProducerComputesTheSameBytes) {
  GPSM_REQUIRE_GPUS(2);
  const ProactConfig cfg = small_config(2, Pattern::one_to_all);
  Engine e(cfg);
  e.set_work(cfg.work);
  for (std::uint64_t chunk : {4096ull, 65536ull, 8ull << 20}) {
    ASSERT_NO_THROW(e.run_compute(true, chunk)) << chunk;  // verifies the producer's slice
    EXPECT_EQ(e.verify(0, 0).bad_words, 0u);
  }
}

TEST(ProactGpu, VerificationCatchesOneCorruptedByte) {
  GPSM_REQUIRE_GPUS(2);
  const ProactConfig cfg = small_config(2, Pattern::one_to_all);
  Engine e(cfg);
  e.set_work(cfg.work);
  ASSERT_NO_THROW(e.run_agent(Agent::memcpy, 0, 0));
  ASSERT_EQ(e.verify(1, 0).bad_words, 0u);
  const std::uint64_t offset = 5 * 4096 + 7;
  e.corrupt_byte(1, offset);
  const VerifyResult v = e.verify(1, 0);
  EXPECT_EQ(v.bad_words, 1u);
  EXPECT_EQ(v.first_bad_word, offset / 4);
  EXPECT_EQ(e.verify(0, 0).bad_words, 0u);  // the producer's own copy is untouched
}

TEST(ProactGpu, SweepRecordsEveryConfiguration) {
  GPSM_REQUIRE_GPUS(2);
  ProactConfig cfg = small_config(2, Pattern::one_to_all);
  cfg.agents = parse_agents("persistent,copy_engine");
  cfg.chunks = {1 << 20};
  cfg.reps = 5;
  cfg.warmup = 0;
  const ProactRun run = run_proact(cfg);
  ASSERT_EQ(run.results.size(), 3u);  // memcpy, persistent, copy_engine
  for (const auto& r : run.results) {
    EXPECT_EQ(r.status, "ok") << agent_name(r.agent) << ": " << r.reason;
    EXPECT_EQ(r.total_s.size(), 5u);
  }
  EXPECT_EQ(run.base.compute_s.size(), 5u);
  EXPECT_EQ(run.base.tracked_s.size(), 1u);
}

TEST(ProactGpu, HostProxyFallbackDelivers) {
  GPSM_REQUIRE_GPUS(2);
  ProactConfig cfg = small_config(2, Pattern::one_to_all);
  cfg.agents = parse_agents("copy_engine");
  cfg.force_ce_proxy = true;  // the path machines without stream waits take
  Engine e(cfg);
  e.set_work(cfg.work);
  EXPECT_EQ(e.ce_mechanism(), "host_proxy");
  for (std::uint64_t chunk : cfg.chunks) {
    ASSERT_NO_THROW(e.run_agent(Agent::copy_engine, chunk, 0)) << chunk;
    EXPECT_EQ(e.verify(1, 0).bad_words, 0u);
  }
}
