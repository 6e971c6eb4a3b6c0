#pragma once
// A side stream on one device beside a caller's stream, with the two events that fork work onto it
// and join it back. Stream-ordered both ways, so a CUDA graph captured from the main stream holds
// the side's work as a parallel branch (the gps launches that run their published part beside
// their plain part: heat3d / wave3d's items, the filter's rows).
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"

namespace gpsm {

class ForkJoin {
 public:
  ForkJoin() = default;
  explicit ForkJoin(int device) : dev_(device) {
    GPSM_CUDA(cudaSetDevice(device));
    GPSM_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
    GPSM_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    GPSM_CUDA(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
  ForkJoin(const ForkJoin&) = delete;
  ForkJoin& operator=(const ForkJoin&) = delete;
  ForkJoin(ForkJoin&& o) noexcept : dev_(o.dev_), side_(o.side_), fork_(o.fork_), join_(o.join_) {
    o.side_ = nullptr;
    o.fork_ = o.join_ = nullptr;
  }
  ForkJoin& operator=(ForkJoin&&) = delete;
  ~ForkJoin() {
    if (side_ == nullptr) return;
    cudaSetDevice(dev_);
    cudaStreamDestroy(side_);
    cudaEventDestroy(fork_);
    cudaEventDestroy(join_);
  }
  // The side stream, after it waits for everything enqueued on `main` so far.
  cudaStream_t fork(cudaStream_t main) const {
    GPSM_CUDA(cudaEventRecord(fork_, main));
    GPSM_CUDA(cudaStreamWaitEvent(side_, fork_, 0));
    return side_;
  }
  // `main` waits for everything enqueued on the side stream so far.
  void join(cudaStream_t main) const {
    GPSM_CUDA(cudaEventRecord(join_, side_));
    GPSM_CUDA(cudaStreamWaitEvent(main, join_, 0));
  }

 private:
  int dev_ = 0;
  cudaStream_t side_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace gpsm
