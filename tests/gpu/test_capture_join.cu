// Graph capture of the host-driven loops: a fork-join's two branches end in one node
// (join_capture_dependencies), and a loop captured into one multi-GPU graph (MultiGpuGraph) with
// fence_async and forked branches in every step still orders every GPU's stores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/capture_join.hpp"
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
std::size_t count_nodes(cudaGraph_t g, cudaGraphNodeType type) {
  std::size_t n = 0;
  GPSM_CUDA(cudaGraphGetNodes(g, nullptr, &n));
  std::vector<cudaGraphNode_t> nodes(n);
  GPSM_CUDA(cudaGraphGetNodes(g, nodes.data(), &n));
  return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(), [&](cudaGraphNode_t x) {
    cudaGraphNodeType t{};
    GPSM_CUDA(cudaGraphNodeGetType(x, &t));
    return t == type;
  }));
}
}  // namespace

// After a join the captured stream depends on one (empty) node, not on both branches; the graph
// still runs both branches before what follows (the sum shows a lost or reordered branch).
TEST(CaptureJoin, AForkJoinEndsInOneNodeAndTheGraphKeepsItsOrder) {
  GPSM_REQUIRE_GPUS(1);
  GPSM_CUDA(cudaSetDevice(0));
  cudaStream_t main = nullptr;
  GPSM_CUDA(cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking));
  gpsm::ForkJoin fj(0);
  const int n = 1 << 16;
  gpstest::DeviceVec<std::uint32_t> a(0, n), b(0, n);
  EXPECT_FALSE(gpsm::join_capture_dependencies(main));  // not capturing: nothing to join

  GPSM_CUDA(cudaStreamBeginCapture(main, cudaStreamCaptureModeRelaxed));
  const cudaStream_t side = fj.fork(main);
  add_to<<<n / 256, 256, 0, side>>>(a.p, n, 1);    // branch 1
  add_to<<<n / 256, 256, 0, main>>>(b.p, n, 10);   // branch 2
  fj.join(main);                                   // joins the two into one node
  cudaStreamCaptureStatus st{};
  const cudaGraphNode_t* deps = nullptr;
  std::size_t ndeps = 0;
  GPSM_CUDA(cudaStreamGetCaptureInfo(main, &st, nullptr, nullptr, &deps, nullptr, &ndeps));
  EXPECT_EQ(ndeps, 1u);
  EXPECT_FALSE(gpsm::join_capture_dependencies(main));  // already one node
  add_to<<<n / 256, 256, 0, main>>>(a.p, n, 100);  // after both: a = 101 only if branch 1 came first
  add_to<<<n / 256, 256, 0, main>>>(b.p, n, 100);
  cudaGraph_t g = nullptr;
  GPSM_CUDA(cudaStreamEndCapture(main, &g));
  EXPECT_EQ(count_nodes(g, cudaGraphNodeTypeEmpty), 1u);
  EXPECT_EQ(count_nodes(g, cudaGraphNodeTypeKernel), 4u);
  cudaGraphExec_t e = nullptr;
  GPSM_CUDA(cudaGraphInstantiate(&e, g, 0));
  for (int k = 0; k < 3; ++k) GPSM_CUDA(cudaGraphLaunch(e, main));
  GPSM_CUDA(cudaStreamSynchronize(main));
  const std::vector<std::uint32_t> ha = a.download(), hb = b.download();
  EXPECT_EQ(std::count(ha.begin(), ha.end(), 303u), n);
  EXPECT_EQ(std::count(hb.begin(), hb.end(), 330u), n);
  cudaGraphExecDestroy(e);
  cudaGraphDestroy(g);
  cudaStreamDestroy(main);
}

// fence_async's chain (read, increment, store; GPU to GPU with no host wait), each step split in
// two halves on a forked branch and the main stream, the whole chain one multi-GPU graph launched
// twice: every word ends at twice the step count only if each step saw the previous GPU's stores.
TEST(CaptureJoin, AGraphOfForkedStepsAndAsyncFencesOrdersInlineStoresAcrossGpus) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
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
