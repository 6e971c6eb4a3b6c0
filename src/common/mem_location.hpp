#pragma once
// The location argument of CUDA 13's managed-memory calls (cudaMemAdvise, cudaMemPrefetchAsync)
// for one GPU.
#include <cuda_runtime.h>

namespace gpsm {

inline cudaMemLocation device_location(int device) {
  cudaMemLocation l{};
  l.type = cudaMemLocationTypeDevice;
  l.id = device;
  return l;
}

}  // namespace gpsm
