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
#include <chrono>
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

// Rank r writes words of the chunks it owns (chunks dealt round robin) of `w` with a value of the
// iteration, and loads every word of `rd` (with load_rd; during learning it writes both).
__global__ void write_one_read_other(View<std::uint32_t> w, View<std::uint32_t> rd, std::uint32_t it, int n,
                                     bool write_rd, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < w.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    acc += rd.load(i) + w.load(i);
    if (static_cast<int>((i / 1024) % n) != w.rank()) continue;
    w.store(i, static_cast<std::uint32_t>(i) * 3u + it);
    if (write_rd) rd.store(i, static_cast<std::uint32_t>(i) * 3u + it);
  }
  if (acc == 0x12345678u) *sink = acc;  // keeps the loads
}

// Two decoupled arrays pushed by persistent agents: each interval writes one and only reads the
// other, whose agent (launched first, when its view is taken) never sees a chunk complete and
// waits for its stop word. With one agent stream per device (997b51e) the written array's
// agent queued behind it, and a wait between two stops held the second behind an agent waiting
// for it: each interval took the agents' wait bound (set to 20 s here) instead of milliseconds.
TEST(GpsFenceAsync, PersistentAgentsOfSeveralArraysStopWithoutWaitingOutTheirBound) {
  GPSM_REQUIRE_GPUS(2);
  Settings settings = Settings::from_env();
  settings.wait_timeout_ms = 20000;
  Context ctx(gpstest::all_devices(), settings);
  const int n = ctx.size();
  const std::uint64_t words = 64ull * 1024 * n;
  AllocOptions o = with_decoupled(DecoupledAgent::persistent, 4096);
  o.page_bytes = 4096;
  auto a = ctx.alloc<std::uint32_t>(words, o);
  auto b = ctx.alloc<std::uint32_t>(words, o);
  std::vector<gpstest::DeviceVec<std::uint32_t>> sink;
  for (int r = 0; r < n; ++r) {
    sink.emplace_back(ctx.device(r), 1);
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    cudaFuncAttributes at{};
    GPSM_CUDA(cudaFuncGetAttributes(&at, write_one_read_other));  // loaded before any agent runs
  }
  ctx.tracking_start();
  for (std::uint32_t it = 0; it < 2; ++it) {
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      write_one_read_other<<<132, 256, 0, ctx.stream(r)>>>(a.view(r), b.view(r), it, n, true, sink[r].p);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
  }
  ctx.tracking_stop();
  ASSERT_GT(a.learned_chunks(0), 0u);
  ASSERT_GT(b.learned_chunks(0), 0u);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint32_t> last(2, 1);  // the iteration that last wrote a, b
  for (std::uint32_t it = 2; it < 8; ++it) {
    Array<std::uint32_t>& w = it % 2 == 0 ? a : b;
    Array<std::uint32_t>& rd = it % 2 == 0 ? b : a;
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      const View<std::uint32_t> vr = rd.view(r);  // the read-only array's agent first on the agent stream
      const View<std::uint32_t> vw = w.view(r);
      write_one_read_other<<<132, 256, 0, ctx.stream(r)>>>(vw, vr, it, n, false, sink[r].p);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence_async();
    last[it % 2] = it;
  }
  ctx.synchronize();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0) << "six intervals took " << s << " s: an agent waited out its bound";
  for (int k = 0; k < 2; ++k)
    for (int r = 0; r < n; ++r) {
      const std::vector<std::uint32_t> v = (k == 0 ? a : b).replica(r);
      std::uint64_t bad = 0;
      for (std::uint64_t i = 0; i < words; ++i) bad += v[i] != static_cast<std::uint32_t>(i) * 3u + last[k];
      EXPECT_EQ(bad, 0u) << (k == 0 ? "a" : "b") << " on rank " << r;
    }
}

// A combine view of an inline array taken once and kept for every interval: the fences after the
// first see no new view, yet the kernels still mark words (the array stays drained for good).
TEST(GpsFenceAsync, KeepsDrainingACombineViewHeldAcrossFences) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const std::uint64_t words = 1u << 16;
  auto x = ctx.alloc<std::uint32_t>(words, with_mode(PublishMode::inline_store));
  x.upload(std::vector<std::uint32_t>(words, 0u));
  std::vector<View<std::uint32_t>> views;
  for (int r = 0; r < ctx.size(); ++r) views.push_back(x.view(r, PublishMode::combine));
  const int steps = 8;
  for (int s = 0; s < steps; ++s) {
    const int r = s % ctx.size();
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    increment_picked<<<64, 256, 0, ctx.stream(r)>>>(views[r], s, true);
    GPSM_CUDA_LAUNCH();
    ctx.fence_async();
  }
  ctx.synchronize();
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < words; ++i) {
      std::uint32_t want = 0;
      for (int s = 0; s < steps; ++s) want += picked(i, s, true) ? 1u : 0u;
      bad += v[i] != want;
    }
    EXPECT_EQ(bad, 0u) << "rank " << r;
  }
}

__global__ void add_to_counters(View<std::uint32_t> v, std::uint32_t counters) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (t < 64ull * counters) v.atomic_add(t % counters, 1u);
}

// Atomics of a combine array go to the home copy and mark its dirty word there: fence_async's
// drain publishes them, and the next interval's loads on every GPU see every GPU's adds.
TEST(GpsFenceAsync, PublishesTheAtomicsOfACombineArray) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const std::uint32_t counters = 1000;
  auto x = ctx.alloc<std::uint32_t>(1u << 16, with_mode(PublishMode::combine));
  x.upload(std::vector<std::uint32_t>(x.size(), 0u));
  const int rounds = 3;
  for (int k = 0; k < rounds; ++k) {
    for (int r = 0; r < ctx.size(); ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      add_to_counters<<<(64 * counters + 255) / 256, 256, 0, ctx.stream(r)>>>(x.view(r), counters);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence_async();
  }
  ctx.synchronize();
  const std::uint32_t want = 64u * static_cast<std::uint32_t>(ctx.size()) * rounds;
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    EXPECT_EQ(std::count(v.begin(), v.begin() + counters, want), static_cast<std::ptrdiff_t>(counters))
        << "rank " << r << ": counter 0 holds " << v[0] << " of " << want;
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
