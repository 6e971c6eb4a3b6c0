// A device barrier (no argument) or a device fence (argument "fence") whose second participant
// never arrives: rank 0's wait must time out with a message naming device, block, the word,
// expected and observed, and the host must get a gpsm::Error, not a hang. Run by
// GpsSync.WithheldProducerEndsInBoundedWaitMessage. Argument "stale": both ranks launch a barrier
// handle that a later Context::barrier() with another block count re-armed; the launch must fail
// with the stale-handle message (GpsSync.StaleBarrierHandleFailsWithItsMessage).
#include <cstdio>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/gps.hpp"
#include "common/cuda_check.hpp"

using namespace gpsm::gps;

__global__ void lonely_barrier(BarrierHandle b) {
  std::uint64_t round = 0;
  b.sync(round);
}

__global__ void lonely_fence(DeviceFence f) { f.sync(0); }

int main(int argc, char** argv) {
  const bool fence = argc > 1 && std::string(argv[1]) == "fence";
  const bool stale = argc > 1 && std::string(argv[1]) == "stale";
  try {
    Context ctx({0, 1});
    // An inline array whose other publisher (rank 1) never runs its kernel; it lives until the
    // context's wait failed (freeing it earlier would wait for the trapped kernel and report the
    // lost context instead of the wait).
    Array<float> x;
    if (fence) x = ctx.alloc<float>(1024, with_mode(PublishMode::inline_store));
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    if (stale) {
      const BarrierHandle old0 = ctx.barrier(0, 1), old1 = ctx.barrier(1, 1);
      (void)ctx.barrier(0, 2);  // another block count: re-arms, old0 and old1 are stale
      lonely_barrier<<<1, 32, 0, ctx.stream(0)>>>(old0);
      GPSM_CUDA_LAUNCH();
      GPSM_CUDA(cudaSetDevice(ctx.device(1)));
      lonely_barrier<<<1, 32, 0, ctx.stream(1)>>>(old1);
    } else if (fence) {
      const std::vector<DeviceFence> f = ctx.device_fences(1);  // one block on each of 2 devices
      lonely_fence<<<1, 32, 0, ctx.stream(0)>>>(f[0]);
    } else {
      BarrierHandle h = ctx.barrier(0, 1);  // expects one block on each of 2 devices
      lonely_barrier<<<1, 32, 0, ctx.stream(0)>>>(h);  // rank 1 is withheld
    }
    GPSM_CUDA_LAUNCH();
    ctx.synchronize();
    std::fprintf(stderr, "wait_probe: the %s returned %s\n", fence ? "fence" : "barrier",
                 stale ? "with a stale handle" : "without its second participant");
    return 1;
  } catch (const gpsm::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
