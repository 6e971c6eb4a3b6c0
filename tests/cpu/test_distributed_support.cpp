// Which machines can hold a distributed array (runtime/vmm_support.hpp), on fake attribute
// tables: the GPU without VMM or the pair without peer access is named with the devices to keep.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "runtime/vmm_support.hpp"

using gpsm::detail::distributed_support_problem;

namespace {
const auto all_vmm = [](int) { return 1; };
const auto all_peers = [](int, int) { return 1; };
}  // namespace

TEST(DistributedSupport, EveryGpuAndOrderedPairAskedAndAllGoodIsEmpty) {
  std::set<int> vmm_asked;
  std::set<std::pair<int, int>> peer_asked;
  const std::string p = distributed_support_problem(
      {0, 2, 5}, false, [&](int d) { vmm_asked.insert(d); return 1; },
      [&](int a, int b) { peer_asked.insert({a, b}); return 1; });
  EXPECT_EQ(p, "");
  EXPECT_EQ(vmm_asked, (std::set<int>{0, 2, 5}));
  EXPECT_EQ(peer_asked.size(), 6u);  // ordered pairs, never a GPU with itself
  for (const auto& [a, b] : peer_asked) EXPECT_NE(a, b);
}

TEST(DistributedSupport, GpuWithoutVmmNamedWithTheDevicesToKeep) {
  EXPECT_EQ(distributed_support_problem({0, 1, 2}, false, [](int d) { return d == 1 ? 0 : 1; }, all_peers),
            "gpsm: distributed array: GPU 1 does not support CUDA virtual memory management "
            "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0); run with --devices 0,2, or use per-GPU arrays");
  EXPECT_EQ(distributed_support_problem({3}, true, [](int) { return 0; }, all_peers),
            "gpsm: distributed array: GPU 3 does not support CUDA virtual memory management "
            "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0); use per-GPU arrays (cudaMalloc) on this GPU");
}

TEST(DistributedSupport, PairWithoutPeerAccessFailsUnlessReplicated) {
  const auto no_2_to_0 = [](int a, int b) { return a == 2 && b == 0 ? 0 : 1; };
  EXPECT_EQ(distributed_support_problem({0, 1, 2}, false, all_vmm, no_2_to_0),
            "gpsm: distributed array: GPU 2 cannot access GPU 0's memory (cudaDeviceCanAccessPeer = 0), so one range "
            "cannot hold blocks of both; run with --devices 1,2, or use DistributedOptions::replicate");
  EXPECT_EQ(distributed_support_problem({0, 1, 2}, true, all_vmm, no_2_to_0), "");
}
