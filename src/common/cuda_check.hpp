#pragma once
// Checked CUDA calls: every runtime call goes through GPSM_CUDA so a failure names the call, the
// file and line, and the CUDA error text (clear failure, nothing silent).
#include <cuda_runtime.h>

#include <string>

#include "gpsm/error.hpp"

namespace gpsm::detail {
[[noreturn]] inline void cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear sticky non-fatal errors so the next call starts clean
  throw gpsm::Error(std::string("gpsm: CUDA error ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    ") in " + call + " at " + file + ":" + std::to_string(line));
}
}  // namespace gpsm::detail

#define GPSM_CUDA(call)                                                              \
  do {                                                                               \
    cudaError_t gpsm_err_ = (call);                                                  \
    if (gpsm_err_ != cudaSuccess) ::gpsm::detail::cuda_fail(gpsm_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: launch errors now, execution errors at the next synchronizing call.
#define GPSM_CUDA_LAUNCH() GPSM_CUDA(cudaGetLastError())
