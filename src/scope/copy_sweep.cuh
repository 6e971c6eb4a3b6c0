#pragma once
// Shared machinery for copy-style tests: a size sweep over one or more concurrent copies, each
// prepared (source filled with the pattern once, destination poisoned per size), timed with the
// gated timing core and verified after the timed run.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scope/results.hpp"
#include "scope/timing.cuh"

namespace gpsm::scope {

struct CopySpec {
  int issue_device = 0;                                  // device whose stream issues the copy
  std::function<void(cudaStream_t, size_t)> copy;        // one copy of the first n bytes
  std::function<void(size_t)> poison;                    // clears the first n destination bytes
  std::function<bool(size_t)> verify;                    // destination holds the pattern?
};

// samples[spec][size] = seconds per copy, one per repetition; ok[size] = all specs verified.
struct SweepSamples {
  std::vector<std::vector<std::vector<double>>> t;
  std::vector<bool> ok;
  std::vector<int> iters;               // loop length per size
  std::vector<ConcurrentSpans> spans;   // per size: whole-loop spans per repetition
};

SweepSamples run_copy_sweep(std::vector<CopySpec>& specs, const std::vector<std::uint64_t>& sizes,
                            const Options& o, bool gated = true);

// One direction: a point per size from spec k's samples.
Series uni_series(const SweepSamples& s, size_t k, const std::vector<std::uint64_t>& sizes,
                  std::string label, std::map<std::string, std::string> params);
// Several concurrent copies of `size` bytes each: aggregate bandwidth = sum of each copy's
// (nvbandwidth's convention; right when the copies run equally long, as a bidirectional pair does).
Series sum_series(const SweepSamples& s, const std::vector<std::uint64_t>& sizes, std::string label,
                  std::map<std::string, std::string> params);

// The sweep the options ask for (full: every power of two; quick: a coarse subset + peak size).
std::vector<std::uint64_t> sweep_sizes(const Options& o);

// Buffers
struct DeviceBuffer {
  int device = 0;
  void* p = nullptr;
  size_t bytes = 0;
  DeviceBuffer(int dev, size_t n);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

enum class HostKind { pageable, pinned, write_combined };
const char* to_string(HostKind k);
struct HostBuffer {
  HostKind kind;
  void* p = nullptr;
  size_t bytes = 0;
  HostBuffer(HostKind k, size_t n);  // allocated under the calling thread's NUMA policy
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
};

// Fills/checks a host buffer: pinned kinds through a kernel on `device` (mapped memory, fast and
// no CPU reads of write-combined memory), pageable on the CPU.
void fill_host(HostBuffer& b, size_t n, unsigned seed, int device);
bool verify_host(const HostBuffer& b, size_t n, unsigned seed, int device);

}  // namespace gpsm::scope
