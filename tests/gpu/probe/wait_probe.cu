// A device barrier whose second participant never arrives: rank 0's wait must time out with a
// message naming device, block, counter, expected and observed, and the host must get a
// gpsm::Error, not a hang. Run by GpsSync.WithheldProducerEndsInBoundedWaitMessage.
#include <cstdio>

#include "gpsm/error.hpp"
#include "gpsm/gps.hpp"
#include "common/cuda_check.hpp"

using namespace gpsm::gps;

__global__ void lonely_barrier(BarrierHandle b) {
  std::uint64_t round = 0;
  b.sync(round);
}

int main() {
  try {
    Context ctx({0, 1});
    BarrierHandle h = ctx.barrier(0, 1);  // expects one block on each of 2 devices
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    lonely_barrier<<<1, 32, 0, ctx.stream(0)>>>(h);  // rank 1 is withheld
    GPSM_CUDA_LAUNCH();
    ctx.synchronize();
    std::fprintf(stderr, "wait_probe: the barrier returned without its second participant\n");
    return 1;
  } catch (const gpsm::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
