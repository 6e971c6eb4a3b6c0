// Native peer atomics at context creation (runtime/peer_atomics.hpp, peer_atomic_test.cu): on a
// machine whose every pair reports them, the context is created and the cross-GPU atomic test
// counts every update of every ordered pair; where a pair lacks them, creation fails naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gps_test_util.hpp"
#include "common/cuda_check.hpp"
#include "common/device.hpp"
#include "runtime/runtime_state.hpp"

using namespace gpsm::gps;

TEST(GpsPeerAtomics, EveryOrderedPairCheckedAtContextCreation) {
  GPSM_REQUIRE_GPUS(2);
  const std::vector<int> devs = gpstest::all_devices();
  bool all_native = true;
  for (int a : devs)
    for (int b : devs) {
      if (a == b) continue;
      int v = 0;
      GPSM_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, a, b));
      all_native = all_native && v != 0;
    }
  if (!all_native) {
    try {
      Context ctx(devs);
      FAIL() << "a context over GPUs without native peer atomics was created";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find("peer atomics are not native"), std::string::npos) << e.what();
    }
    return;
  }
  Context ctx(devs);  // runs the attribute check and the test of every ordered pair
  std::vector<cudaStream_t> streams;
  for (int r = 0; r < ctx.size(); ++r) streams.push_back(ctx.stream(r));
  for (int a = 0; a < ctx.size(); ++a)
    for (int b = 0; b < ctx.size(); ++b)
      if (a != b)
        EXPECT_EQ(detail::test_peer_atomics(ctx.device(a), ctx.device(b), streams[a], streams[b]), "")
            << "device " << ctx.device(a) << " on device " << ctx.device(b);
}
