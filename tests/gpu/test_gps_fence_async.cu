// fence_async in every publish mode but bulk: combine and decoupled stores are drained on the
// context's streams (no host wait) and every GPU's next step sees them. A chain of
// read-increment-store steps passing from GPU to GPU loses an increment wherever one step read a
// stale word, so each word's final value counts the steps that saw their predecessors; dense steps
// (every word, direct lines) and sparse ones (about a fifth of the words, packed records), with the
// inbound areas large enough and far too small (records then go as word stores), stream-launched
// and captured into one multi-GPU graph. Bulk arrays, whose copies are planned on the host, are
// refused with a message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/multi_gpu_graph.hpp"
#include "gps_test_util.hpp"

using namespace gpsm::gps;

namespace {

// Step s touches word i when picked(i, s): every word (dense) or about one in five (sparse).
__host__ __device__ bool picked(std::uint64_t i, int s, bool sparse) {
  if (!sparse) return true;
  std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(s) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h % 5 == 0;
}

__global__ void increment_picked(View<std::uint32_t> v, int s, bool sparse) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    if (picked(i, s, sparse)) v.store(i, v.load(i) + 1u);
}

struct Case {
  PublishMode mode;
  bool sparse;
  bool tiny_inbound;  // GPSM_INBOUND_ENTRIES at its floor: sparse records spill as word stores
  bool graph;         // the whole chain captured once and launched twice
};

std::string name_of(const Case& c) {
  return std::string(mode_name(c.mode)) + (c.sparse ? "_sparse" : "_dense") + (c.tiny_inbound ? "_spill" : "") +
         (c.graph ? "_graph" : "");
}

class GpsFenceAsyncModes : public ::testing::TestWithParam<Case> {};

TEST_P(GpsFenceAsyncModes, ChainedIncrementsAcrossGpusLoseNothing) {
  GPSM_REQUIRE_GPUS(2);
  const Case c = GetParam();
  Settings settings = Settings::from_env();
  if (c.tiny_inbound) settings.inbound_entries = 1;  // the floor: 1024 entries per source
  Context ctx(gpstest::all_devices(), settings);
  const std::uint64_t words = gpstest::scaled(1u << 21, 1u << 14);
  auto x = ctx.alloc<std::uint32_t>(words, with_mode(c.mode));
  x.upload(std::vector<std::uint32_t>(words, 0u));
  const int steps = 24;
  const auto run_chain = [&] {
    for (int s = 0; s < steps; ++s) {
      const int r = s % ctx.size();
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      increment_picked<<<264, 256, 0, ctx.stream(r)>>>(x.view(r), s, c.sparse);
      GPSM_CUDA_LAUNCH();
      ctx.fence_async();
    }
  };
  int launches = 1;
  if (c.graph) {
    std::vector<int> devices;
    std::vector<cudaStream_t> streams;
    for (int r = 0; r < ctx.size(); ++r) {
      devices.push_back(ctx.device(r));
      streams.push_back(ctx.stream(r));
    }
    gpsm::MultiGpuGraph graph(devices, streams);
    graph.capture(run_chain);
    launches = 2;
    for (int k = 0; k < launches; ++k) graph.launch();
    ctx.synchronize();
  } else {
    run_chain();
  }
  ctx.fence();  // nothing may be left for it (every word checked in every replica below)
  std::vector<std::uint32_t> want(words, 0u);
  for (std::uint64_t i = 0; i < words; ++i)
    for (int s = 0; s < steps; ++s) want[i] += picked(i, s, c.sparse) ? launches : 0;
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    std::uint64_t bad = 0, first = words;
    for (std::uint64_t i = 0; i < words; ++i)
      if (v[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << name_of(c) << ": rank " << r << " has " << bad << " words that lost an increment, first "
                       << first << " (" << (first < words ? v[first] : 0u) << " of "
                       << (first < words ? want[first] : 0u) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryMode, GpsFenceAsyncModes,
    ::testing::Values(Case{PublishMode::inline_store, true, false, false}, Case{PublishMode::combine, false, false, false},
                      Case{PublishMode::combine, true, false, false}, Case{PublishMode::combine, true, true, false},
                      Case{PublishMode::decoupled, true, false, false}, Case{PublishMode::combine, true, false, true},
                      Case{PublishMode::combine, true, true, true}, Case{PublishMode::decoupled, false, false, true}),
    [](const ::testing::TestParamInfo<Case>& i) { return name_of(i.param); });

// A combine view of an inline array leaves dirty words: fence_async drains them too.
TEST(GpsFenceAsync, DrainsCombineViewsOfAnInlineArray) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const std::uint64_t words = 1u << 16;
  auto x = ctx.alloc<std::uint32_t>(words, with_mode(PublishMode::inline_store));
  x.upload(std::vector<std::uint32_t>(words, 0u));
  for (int s = 0; s < 6; ++s) {
    const int r = s % ctx.size();
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    increment_picked<<<64, 256, 0, ctx.stream(r)>>>(x.view(r, PublishMode::combine), s, false);
    GPSM_CUDA_LAUNCH();
    ctx.fence_async();
  }
  ctx.synchronize();
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    EXPECT_EQ(std::count(v.begin(), v.end(), 6u), static_cast<std::ptrdiff_t>(words)) << "rank " << r;
  }
}

TEST(GpsFenceAsync, RefusesBulkArraysWithAMessage) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint32_t>(1u << 14, with_mode(PublishMode::bulk));
  try {
    ctx.fence_async();
    FAIL() << "fence_async() with a bulk array did not throw";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bulk"), std::string::npos) << e.what();
  }
  auto y = ctx.alloc<std::uint32_t>(1u << 14, with_mode(PublishMode::combine));
  (void)y.view(0, PublishMode::bulk);
  x.free();
  EXPECT_THROW(ctx.fence_async(), gpsm::Error);  // y's bulk view
  EXPECT_THROW(ctx.fence_async(), gpsm::Error);  // still there: only fence() publishes it
  ctx.fence();
  ctx.fence_async();
}

}  // namespace
