// GPU tests of the remote-access study (GPU-SM's H1-H5 in `gpsm scope`): its checks catch data
// read from or written to the wrong GPU, CUDA's occupancy agrees with the shared memory the study
// asks for, and each test's numbers are physically sane (bandwidth under the link's peak, remote
// accesses not free, timelines ascending). GpuScopeTest.RunsVerifiedOnSmallSizes runs each test
// end to end as well.
#include <cuda_runtime.h>

#include <algorithm>

#include "gpu_test_util.hpp"
#include "common/cuda_check.hpp"
#include "common/device.hpp"
#include "scope/copy_sweep.cuh"
#include "scope/registry.hpp"
#include "scope/remote_kernels.cuh"
#include "scope/remote_study.hpp"

using namespace gpsm;
using namespace gpsm::scope;
using namespace gpsm::scope::remote;

namespace {

Options quick_options() {
  Options o;
  for (int d = 0; d < cuda_device_count(nullptr); ++d) o.devices.push_back(d);
  o.quick = true;
  o.reps = 5;
  o.warmup = 1;
  o.target_rep_s = 0.002;
  return o;
}

TestResult run_named(const std::string& name) {
  auto all = make_all_tests();
  auto sel = select_tests(all, {name});
  EXPECT_EQ(sel.size(), 1u);
  return run_test(*sel[0], quick_options(), discover_topology());
}

std::string param(const Series& s, const std::string& k) {
  auto it = s.params.find(k);
  return it == s.params.end() ? "" : it->second;
}

}  // namespace

TEST(RemoteStudyGpu, MixCheckCatchesOneWrongWordAndReadsFromTheWrongGpu) {
  GPSM_REQUIRE_GPUS(2);
  ASSERT_TRUE(enable_peer(0, 1));
  const std::uint32_t n = 1000;  // not a multiple of the block: the edges are checked too
  const std::size_t bytes = std::size_t(n) * n * 4;
  DeviceBuffer in_a(0, bytes), out_a(0, bytes), in_b(1, bytes), out_b(1, bytes);
  {
    DeviceGuard g(1);
    fill_inputs(static_cast<float*>(in_b.p), std::uint64_t(n) * n, kSeedRemote, nullptr);
    GPSM_CUDA(cudaMemset(out_b.p, 0, bytes));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  DeviceGuard g(0);
  fill_inputs(static_cast<float*>(in_a.p), std::uint64_t(n) * n, kSeedLocal, nullptr);
  GPSM_CUDA(cudaMemset(out_a.p, 0, bytes));
  for (Distribution d : {Distribution::batch, Distribution::spread}) {
    MixArgs a;
    a.in_local = static_cast<const float*>(in_a.p);
    a.in_remote = static_cast<const float*>(in_b.p);
    a.out_local = static_cast<float*>(out_a.p);
    a.out_remote = static_cast<float*>(out_b.p);
    a.n = n;
    a.dist = d;
    a.read_cut = cut_for_percent(n, 30);
    a.write_cut = cut_for_percent(n, 10);
    a.flops = 10;
    mix_launch(a, 0, nullptr);
    EXPECT_EQ(mix_check(a, nullptr), 0u) << to_string(d);
    // one word of the remote output spoiled
    GPSM_CUDA(cudaMemset(static_cast<char*>(out_b.p) + 4, 0, 4));
    EXPECT_EQ(mix_check(a, nullptr), 1u) << to_string(d);
    // a kernel that read every datum locally: the remote share of the outputs is wrong
    MixArgs local = a;
    local.in_remote = local.in_local;
    mix_launch(local, 0, nullptr);
    EXPECT_GT(mix_check(a, nullptr), std::uint64_t(n) * a.read_cut / 2) << to_string(d);
  }
}

TEST(RemoteStudyGpu, OccupancyCalculatorGivesTheBlocksTheSharedMemoryWasSizedFor) {
  GPSM_REQUIRE_GPUS(1);
  DeviceGuard g(0);
  int threads = 0, smem = 0, reserved = 0, optin = 0;
  GPSM_CUDA(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const int full = threads / kThreads;
  for (int k = 1; k <= full; k *= 2) {
    const std::size_t s = smem_for_blocks(k, full, smem, reserved, optin);
    EXPECT_EQ(mix_prepare(s), k) << s << " B per block";
    EXPECT_EQ(cache_prepare(true, s), k) << s << " B per block";
  }
  mix_prepare(0);
  cache_prepare(true, 0);
}

TEST(RemoteStudyGpu, BandwidthIsPositiveAndUnderTheLinksPeak) {
  GPSM_REQUIRE_GPUS(2);
  const auto r = run_named(kBandwidth);
  if (r.status == Status::waived) GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  // without NVML the topology knows no NVLink and its only estimate is PCIe's: no bound to test
  const auto topo = discover_topology();
  const bool links_known = std::none_of(topo.notes.begin(), topo.notes.end(),
                                        [](const std::string& n) { return n.rfind("NVML", 0) == 0; });
  for (const auto& s : r.series) {
    ASSERT_EQ(s.points.size(), 1u) << s.label;
    const double v = s.points[0].value.median;
    EXPECT_GT(v, 1.0) << s.label;  // GB/s: anything slower is not a link
    if (param(s, "pattern") == "one" && param(s, "access") != "read+write") {
      const double peak = std::stod(param(s, "link_peak_GBps"));
      if (peak > 0 && links_known) EXPECT_LT(v, 1.02 * peak) << s.label << ": over the link's per-direction peak";
    }
  }
}

TEST(RemoteStudyGpu, RemoteAccessesCostSomethingAndTheCurvesStartAtOne) {
  GPSM_REQUIRE_GPUS(2);
  const auto r = run_named(kIntensity);
  if (r.status == Status::waived) GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  const auto st = derive_study({r});
  ASSERT_FALSE(st.curves.empty());
  for (const auto& c : st.curves) {
    EXPECT_DOUBLE_EQ(c.points.front().slowdown, 1.0);
    // every datum through the link (far slower than the GPU's own memory), no compute to hide it
    if (c.flops_per_datum == 0 && c.points.back().remote_percent == 100)
      EXPECT_GT(c.points.back().slowdown, 1.5) << c.distribution;
  }
}

TEST(RemoteStudyGpu, TimelineAscendsAndItsRatesStayNearTheLink) {
  GPSM_REQUIRE_GPUS(2);
  const auto r = run_named(kTimeline);
  if (r.status == Status::waived) GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  for (const auto& s : r.series)
    for (std::size_t k = 1; k < s.points.size(); ++k)
      EXPECT_GE(s.points[k].value.median, s.points[k - 1].value.median) << s.label << " at " << s.points[k].x;
  const auto st = derive_study({r});
  EXPECT_GT(st.batch_peak_remote_GBps, 0);
  EXPECT_GT(st.spread_peak_remote_GBps, 0);
  EXPECT_GT(st.batch_timeline_slowdown, 0.9);
  EXPECT_GT(st.spread_timeline_slowdown, 0.9);
  // remote bytes go both ways (reads in, writes out): at most twice the per-direction peak, and
  // twice that again for blocks ending in bursts within one tenth of the bytes
  const auto topo = discover_topology();
  const double peak = link_peak_GBps(topo, 0, 1);
  const bool links_known = std::none_of(topo.notes.begin(), topo.notes.end(),
                                        [](const std::string& n) { return n.rfind("NVML", 0) == 0; });
  if (peak > 0 && links_known) {
    EXPECT_LT(st.batch_peak_remote_GBps, 4 * peak);
    EXPECT_LT(st.spread_peak_remote_GBps, 4 * peak);
  }
}

TEST(RemoteStudyGpu, CacheCheckCatchesAStructureWithOtherData) {
  GPSM_REQUIRE_GPUS(2);
  ASSERT_TRUE(enable_peer(0, 1));
  DeviceBuffer structure(1, 4096), out(0, 256 * 256 * 4);
  {
    DeviceGuard g(1);
    fill_inputs(static_cast<float*>(structure.p), 1024, 77, nullptr);
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  DeviceGuard g(0);
  for (bool ldg : {true, false}) {
    CacheArgs c;
    c.structure = static_cast<const float*>(structure.p);
    c.out = static_cast<float*>(out.p);
    c.n = 256;
    c.mask = 1023;
    c.flops = 10;
    c.ldg = ldg;
    cache_launch(c, 0, nullptr);
    EXPECT_EQ(cache_check(c, 77, nullptr), 0u);
    // another structure's values: every output differs but for the rare pair of inputs that the
    // contracting FMAs round together
    EXPECT_GT(cache_check(c, 78, nullptr), 256u * 256u * 99 / 100);
  }
}

TEST(RemoteStudyGpu, CacheTestGivesEveryStructureSizeAtEveryOccupancy) {
  GPSM_REQUIRE_GPUS(2);
  const auto r = run_named(kCache);
  if (r.status == Status::waived) GTEST_SKIP() << r.reason;
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  const auto sw = cache_sweep(true);
  const auto st = derive_study({r});
  EXPECT_EQ(st.cache.size(), sw.structure_bytes.size() * sw.blocks_per_sm.size());
  for (const auto& c : st.cache) {
    EXPECT_GT(c.remote_ldg_us, 0);
    EXPECT_GT(c.remote_ldcg_us, 0);
  }
}
