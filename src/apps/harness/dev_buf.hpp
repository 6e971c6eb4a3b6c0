#pragma once
// Device memory of one device that frees itself there (the apps' per-rank buffers). Movable, so
// it can live in std::vector; alloc() once per buffer.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "scope/cuda_check.hpp"

namespace gpsm::apps {

template <class T>
struct DevBuf {
  int dev = -1;
  T* p = nullptr;
  DevBuf() = default;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : dev(o.dev), p(o.p) { o.p = nullptr; }
  DevBuf& operator=(DevBuf&&) = delete;
  ~DevBuf() {
    if (p != nullptr) {
      cudaSetDevice(dev);
      cudaFree(p);
    }
  }
  void alloc(int d, std::size_t n) {
    dev = d;
    GPSM_CUDA(cudaSetDevice(d));
    GPSM_CUDA(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
};

}  // namespace gpsm::apps
