#pragma once
// Helpers for the GPS runtime GPU tests: device buffers, the device list, and a size scale
// (GPSM_TEST_SCALE, e.g. 0.01 under compute-sanitizer, which runs kernels ~100x slower).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpsm/gps.hpp"
#include "gpu_test_util.hpp"
#include "common/cuda_check.hpp"
#include "scope/cuda_probe.hpp"

namespace gpstest {

inline std::vector<int> all_devices() {
  const int n = std::min(gpsm::scope::cuda_device_count(nullptr), gpsm::gps::kMaxDevices);
  std::vector<int> d;
  for (int i = 0; i < n; ++i) d.push_back(i);
  return d;
}

inline double scale() {
  const char* s = std::getenv("GPSM_TEST_SCALE");
  return s != nullptr ? std::max(1e-6, std::atof(s)) : 1.0;
}
inline std::uint64_t scaled(std::uint64_t n, std::uint64_t floor = 1) {
  return std::max<std::uint64_t>(floor, static_cast<std::uint64_t>(static_cast<double>(n) * scale()));
}

// A plain device buffer on one device (not GPS memory).
template <class T>
struct DeviceVec {
  int dev = 0;
  T* p = nullptr;
  std::size_t n = 0;
  DeviceVec() = default;
  DeviceVec(int d, std::size_t count) : dev(d), n(count) {
    GPSM_CUDA(cudaSetDevice(d));
    GPSM_CUDA(cudaMalloc(&p, std::max<std::size_t>(1, n) * sizeof(T)));
    GPSM_CUDA(cudaMemset(p, 0, std::max<std::size_t>(1, n) * sizeof(T)));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  DeviceVec(int d, const std::vector<T>& v) : DeviceVec(d, v.size()) { upload(v); }
  DeviceVec(DeviceVec&& o) noexcept : dev(o.dev), p(o.p), n(o.n) { o.p = nullptr; }
  DeviceVec& operator=(DeviceVec&& o) noexcept {
    std::swap(dev, o.dev);
    std::swap(p, o.p);
    std::swap(n, o.n);
    return *this;
  }
  ~DeviceVec() {
    if (p != nullptr) {
      cudaSetDevice(dev);
      cudaFree(p);
    }
  }
  void upload(const std::vector<T>& v) {
    GPSM_CUDA(cudaSetDevice(dev));
    GPSM_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> v(n);
    GPSM_CUDA(cudaSetDevice(dev));
    GPSM_CUDA(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

inline const char* mode_label(gpsm::gps::PublishMode m) { return gpsm::gps::mode_name(m); }

}  // namespace gpstest
