// The pair logic of the native peer atomics check at context creation (runtime/peer_atomics.hpp),
// on fake attribute tables.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "runtime/peer_atomics.hpp"

using namespace gpsm::gps::detail;

namespace {

// native(a, b) = 1 except the listed ordered pairs
std::function<int(int, int)> table(std::vector<std::pair<int, int>> missing) {
  return [missing](int a, int b) {
    for (const auto& m : missing)
      if (m.first == a && m.second == b) return 0;
    return 1;
  };
}

}  // namespace

TEST(PeerAtomics, EveryOrderedPairIsAskedAndOnlyGapsListed) {
  std::map<std::pair<int, int>, int> asked;
  const auto gaps = pairs_without_native_atomics({0, 1, 2}, [&](int a, int b) {
    ++asked[{a, b}];
    return a == 2 && b == 0 ? 0 : 1;
  });
  EXPECT_EQ(asked.size(), 6u);  // 3 x 2 ordered pairs, never a device with itself
  for (const auto& [pair, n] : asked) {
    EXPECT_NE(pair.first, pair.second);
    EXPECT_EQ(n, 1);
  }
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].from, 2);
  EXPECT_EQ(gaps[0].to, 0);
  EXPECT_EQ(gaps[0].why, "cudaDevP2PAttrNativeAtomicSupported = 0");
  EXPECT_TRUE(pairs_without_native_atomics({4, 7}, table({})).empty());
  EXPECT_TRUE(pairs_without_native_atomics({3}, table({{3, 3}})).empty());  // one GPU: no pair
}

TEST(PeerAtomics, DevicesToKeepAvoidEveryGapInEitherDirection) {
  // an NVLink pair (0,1) and a PCIe pair (2,3) without atomics between the two halves, one way
  const auto gaps = pairs_without_native_atomics({0, 1, 2, 3}, table({{0, 2}, {3, 0}, {1, 2}, {1, 3}}));
  EXPECT_EQ(gaps.size(), 4u);
  EXPECT_EQ(devices_without_gaps({0, 1, 2, 3}, gaps), (std::vector<int>{0, 1}));
  EXPECT_EQ(devices_without_gaps({2, 3, 0, 1}, gaps), (std::vector<int>{2, 3}));
  EXPECT_EQ(devices_without_gaps({0, 1, 2, 3}, {}), (std::vector<int>{0, 1, 2, 3}));
}

TEST(PeerAtomics, MessageNamesThePairsWhatNeedsThemAndWhatToDo) {
  const std::vector<int> devs{0, 1, 2};
  auto gaps = pairs_without_native_atomics(devs, table({{1, 2}}));
  gaps.push_back({0, 2, "a cross-GPU test's 64-bit atomic adds totalled 10 of 20"});
  const std::string m = peer_atomics_message(devs, gaps);
  EXPECT_EQ(m.rfind("gpsm: ", 0), 0u) << m;
  EXPECT_NE(m.find("device 1 on device 2's memory: cudaDevP2PAttrNativeAtomicSupported = 0"), std::string::npos) << m;
  EXPECT_NE(m.find("device 0 on device 2's memory: a cross-GPU test's 64-bit atomic adds totalled 10 of 20"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("device barrier and atomics at a page's home copy"), std::string::npos) << m;
  EXPECT_NE(m.find("run with --devices 0,1,"), std::string::npos) << m;
  EXPECT_NE(m.find("GPSM_VERIFY_P2P=0"), std::string::npos) << m;
  // two GPUs, one gap: no pair to keep, said so
  const std::string two = peer_atomics_message({0, 1}, pairs_without_native_atomics({0, 1}, table({{1, 0}})));
  EXPECT_NE(two.find("--devices 0 (no two of these GPUs have them)"), std::string::npos) << two;
}
