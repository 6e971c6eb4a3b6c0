// GPU tests of `gpsm scope`: the probes, the timing core, the verification paths, and every
// registered benchmark run end to end on small sizes with its data verified.
#include <cuda_runtime.h>

#include <cctype>
#include <cstring>

#include "gpu_test_util.hpp"
#include "scope/copy_sweep.cuh"
#include "common/cuda_check.hpp"
#include "common/pattern.hpp"
#include "scope/registry.hpp"
#include "scope/timing.cuh"

using namespace gpsm;
using namespace gpsm::scope;

namespace {

int ngpus() { return cuda_device_count(nullptr); }

Options small_options() {
  Options o;
  for (int d = 0; d < ngpus(); ++d) o.devices.push_back(d);
  const bool full = std::string(GPSM_TEST_LEVEL) == "full";
  o.quick = !full;
  o.reps = 5;
  o.warmup = 1;
  o.min_size = 4;
  o.max_size = full ? (256u << 20) : (16u << 20);
  o.peak_size = o.max_size;
  o.target_rep_s = 0.001;
  return o;
}

}  // namespace

TEST(GpuTopology, ProbeSeesEveryDevice) {
  GPSM_REQUIRE_GPUS(1);
  auto t = discover_topology();
  const int n = ngpus();
  ASSERT_EQ(static_cast<int>(t.gpus.size()), n);
  EXPECT_EQ(static_cast<int>(t.peers.size()), n * (n - 1));
  for (const auto& g : t.gpus) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_GT(g.sm_count, 0);
    EXPECT_GT(g.mem_bytes, 1ll << 30);
    EXPECT_FALSE(g.pci_bus_id.empty());
  }
  EXPECT_GT(t.cuda_runtime_version, 0);
}

TEST(GpuPattern, CheckFindsOneCorruptedWord) {
  GPSM_REQUIRE_GPUS(1);
  DeviceBuffer b(0, 1 << 20);
  fill_pattern_device(b.p, b.bytes, 3, nullptr);
  EXPECT_EQ(check_pattern_device(b.p, b.bytes, 3, nullptr), 0u);
  std::uint32_t bad = 12345;
  GPSM_CUDA(cudaMemcpy(static_cast<char*>(b.p) + 4096, &bad, 4, cudaMemcpyHostToDevice));
  EXPECT_EQ(check_pattern_device(b.p, b.bytes, 3, nullptr), 1u);
  EXPECT_GT(check_pattern_device(b.p, b.bytes, 4, nullptr), 1000u);  // wrong seed: almost all differ
}

TEST(GpuTiming, LargerCopiesTakeLonger) {
  GPSM_REQUIRE_GPUS(1);
  DeviceBuffer a(0, 64 << 20), b(0, 64 << 20);
  DeviceStream s(0);
  Options o = small_options();
  auto t_small = time_op({0, s.s, [&](cudaStream_t st) { GPSM_CUDA(cudaMemcpyAsync(b.p, a.p, 1 << 20, cudaMemcpyDeviceToDevice, st)); }}, o);
  auto t_big = time_op({0, s.s, [&](cudaStream_t st) { GPSM_CUDA(cudaMemcpyAsync(b.p, a.p, 64 << 20, cudaMemcpyDeviceToDevice, st)); }}, o);
  ASSERT_EQ(t_small.size(), 5u);
  ASSERT_EQ(t_big.size(), 5u);
  const auto ss = summarize(t_small), sb = summarize(t_big);
  EXPECT_GT(sb.median, 8 * ss.median) << "64 MiB copy should take far longer than a 1 MiB one";
  // device-to-device copy bandwidth (read+write) must be physically plausible: 50 GB/s .. 10 TB/s
  const double gbps = 2.0 * (64 << 20) / sb.median / 1e9;
  EXPECT_GT(gbps, 50);
  EXPECT_LT(gbps, 10000);
}

TEST(GpuPeer, CopyBetweenEveryPairIsExact) {
  GPSM_REQUIRE_GPUS(2);
  const int n = ngpus();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      DeviceBuffer s(a, 8 << 20), d(b, 8 << 20);
      {
        DeviceGuard g(a);
        fill_pattern_device(s.p, s.bytes, 100 + a, nullptr);
        GPSM_CUDA(cudaDeviceSynchronize());
      }
      GPSM_CUDA(cudaMemcpyPeer(d.p, b, s.p, a, s.bytes));
      DeviceGuard g(b);
      EXPECT_EQ(check_pattern_device(d.p, d.bytes, 100 + a, nullptr), 0u) << a << "->" << b;
    }
}

// Every registered test, small sizes: ok (or waived with a reason), every point verified, values
// finite and positive.
class GpuScopeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuScopeTest, RunsVerifiedOnSmallSizes) {
  GPSM_REQUIRE_GPUS(1);
  auto all = make_all_tests();
  auto sel = select_tests(all, {GetParam()});
  ASSERT_EQ(sel.size(), 1u);
  auto topo = discover_topology();
  Options o = small_options();
  auto r = run_test(*sel[0], o, topo);
  if (r.status == Status::waived) GTEST_SKIP() << "waived: " << r.reason;
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_FALSE(r.series.empty());
  for (const auto& s : r.series) {
    ASSERT_FALSE(s.points.empty()) << s.label;
    for (const auto& p : s.points) {
      EXPECT_TRUE(p.verified) << s.label << " x=" << p.x;
      EXPECT_GE(p.time_s.size(), 5u);
      EXPECT_GT(p.value.median, 0) << s.label << " x=" << p.x;
      EXPECT_LE(p.value.min, p.value.median);
      EXPECT_LE(p.value.median, p.value.max);
    }
  }
}

std::vector<std::string> all_test_names() {
  std::vector<std::string> v;
  for (const auto& t : make_all_tests()) v.push_back(t->name());
  return v;
}

// GoogleTest names take letters, digits and '_': "remote.h1_bandwidth" runs as remote_h1_bandwidth
INSTANTIATE_TEST_SUITE_P(AllTests, GpuScopeTest, ::testing::ValuesIn(all_test_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});
