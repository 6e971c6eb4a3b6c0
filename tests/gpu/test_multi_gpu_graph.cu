// The host-driven loops as one CUDA graph (MultiGpuGraph): captured, relaunched and replaced; and
// with fence_async and a forked branch in every step, under either AsyncFence, every GPU's stores
// still ordered.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <cstdint>
#include <vector>

#include "common/fork_join.hpp"
#include "common/multi_gpu_graph.hpp"
#include "gps_test_util.hpp"

using namespace gpsm::gps;

namespace {
__global__ void add_to(std::uint32_t* p, int n, std::uint32_t v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}
__global__ void increment_range(View<std::uint32_t> v, std::uint64_t lo, std::uint64_t hi) {
  for (std::uint64_t i = lo + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < hi;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    v.store(i, v.load(i) + 1u);
}
}  // namespace

// One GPU: the captured loop runs once per launch, in order, and a new capture replaces the old.
TEST(MultiGpuGraph, CapturesRelaunchesAndRecapturesALoop) {
  GPSM_REQUIRE_GPUS(1);
  GPSM_CUDA(cudaSetDevice(0));
  cudaStream_t st = nullptr;
  GPSM_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const int n = 1 << 16;
  gpstest::DeviceVec<std::uint32_t> a(0, n);
  gpsm::MultiGpuGraph g({0}, {st});
  EXPECT_FALSE(g.captured());
  EXPECT_THROW(g.launch(), gpsm::Error);
  g.capture([&] {
    for (int k = 0; k < 5; ++k) add_to<<<n / 256, 256, 0, st>>>(a.p, n, 1);
  });
  ASSERT_TRUE(g.captured());
  for (int k = 0; k < 3; ++k) g.launch();
  GPSM_CUDA(cudaStreamSynchronize(st));
  std::vector<std::uint32_t> h = a.download();
  EXPECT_EQ(std::count(h.begin(), h.end(), 15u), n);  // nothing ran while capturing
  g.capture([&] { add_to<<<n / 256, 256, 0, st>>>(a.p, n, 100); });
  g.launch();
  GPSM_CUDA(cudaStreamSynchronize(st));
  h = a.download();
  EXPECT_EQ(std::count(h.begin(), h.end(), 115u), n);
  g.drop();
  EXPECT_FALSE(g.captured());
  cudaStreamDestroy(st);
}

// fence_async's chain (read, increment, store; GPU to GPU with no host wait), each step split in
// two halves on a forked branch and the main stream, the whole chain one multi-GPU graph launched
// twice: every word ends at twice the step count only if each step saw the previous GPU's stores.
class MultiGpuGraphFence : public ::testing::TestWithParam<AsyncFence> {};

TEST_P(MultiGpuGraphFence, ForkedStepsAndAsyncFencesOrderInlineStoresAcrossGpus) {
  GPSM_REQUIRE_GPUS(2);
  Settings settings = Settings::from_env();
  settings.async_fence = GetParam();
  Context ctx(gpstest::all_devices(), settings);
  const std::uint64_t words = gpstest::scaled(1u << 20, 1u << 12);
  auto x = ctx.alloc<std::uint32_t>(words, with_mode(PublishMode::inline_store));
  x.upload(std::vector<std::uint32_t>(words, 0u));
  std::vector<gpsm::ForkJoin> fj;
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
  for (int r = 0; r < ctx.size(); ++r) {
    fj.emplace_back(ctx.device(r));
    devices.push_back(ctx.device(r));
    streams.push_back(ctx.stream(r));
  }
  const int steps = 24;
  gpsm::MultiGpuGraph graph(devices, streams);
  graph.capture([&] {
    for (int s = 0; s < steps; ++s) {
      const int r = s % ctx.size();
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      const cudaStream_t side = fj[r].fork(ctx.stream(r));
      increment_range<<<132, 256, 0, side>>>(x.view(r), 0, words / 2);
      increment_range<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), words / 2, words);
      GPSM_CUDA_LAUNCH();
      fj[r].join(ctx.stream(r));
      ctx.fence_async();
    }
  });
  graph.launch();
  ctx.synchronize();
  graph.launch();
  ctx.synchronize();
  ctx.fence();
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    const auto bad = std::count_if(v.begin(), v.end(), [&](std::uint32_t w) { return w != 2u * steps; });
    EXPECT_EQ(bad, 0) << "rank " << r << " word 0 holds " << v[0] << " of " << 2 * steps;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryFence, MultiGpuGraphFence, ::testing::Values(AsyncFence::kernel, AsyncFence::events, AsyncFence::automatic),
                         [](const ::testing::TestParamInfo<AsyncFence>& i) { return std::string(async_fence_name(i.param)); });
