#pragma once
// Small device utilities every layer uses: a guard that restores the current device, peer access
// switched on with the reason when CUDA refuses, and the data pattern written into and checked in
// device or host buffers (common/pattern.hpp), so no test or context trusts bytes it did not check.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpsm {

// Current device helper that restores the previous device on scope exit.
struct DeviceGuard {
  int prev = 0;
  explicit DeviceGuard(int dev);
  ~DeviceGuard();
};

// Enables peer access src->dst if needed; returns false (and says why) when CUDA refuses.
bool enable_peer(int src, int dst, std::string* why = nullptr);
void disable_peer(int src, int dst);

// Device buffer helpers.
void fill_pattern_device(void* p, size_t bytes, unsigned seed, cudaStream_t s);
// Counts 32-bit words != pattern + add in [0, bytes) on the current device; synchronizes s. `add`:
// what a test's kernels added to every word (sm_stream_local's and sm_l2_local's passes).
unsigned long long check_pattern_device(const void* p, size_t bytes, unsigned seed, cudaStream_t s,
                                        std::uint32_t add = 0);
void fill_pattern_host(void* p, size_t bytes, unsigned seed);
unsigned long long check_pattern_host(const void* p, size_t bytes, unsigned seed);

}  // namespace gpsm
