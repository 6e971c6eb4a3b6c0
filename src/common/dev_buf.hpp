#pragma once
// Device memory of one device that frees itself there (per-rank buffers of the benchmarks and
// apps). Movable, so it can live in std::vector; alloc() replaces any earlier allocation.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/cuda_check.hpp"

namespace gpsm {

template <class T>
struct DevBuf {
  int dev = -1;
  T* p = nullptr;
  DevBuf() = default;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  DevBuf(DevBuf&& o) noexcept : dev(o.dev), p(o.p) { o.p = nullptr; }
  DevBuf& operator=(DevBuf&&) = delete;
  ~DevBuf() { reset(); }
  void alloc(int d, std::size_t n) {
    reset();
    dev = d;
    GPSM_CUDA(cudaSetDevice(d));
    GPSM_CUDA(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
  // alloc(d, v.size()), then v copied there.
  void assign(int d, const std::vector<T>& v) {
    alloc(d, v.size());
    if (!v.empty()) GPSM_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  void reset() {
    if (p == nullptr) return;
    cudaSetDevice(dev);
    cudaFree(p);
    p = nullptr;
  }
};

}  // namespace gpsm
