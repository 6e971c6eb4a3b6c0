#pragma once
// What every example needs before it touches gpsm: which GPUs to run on, and what to say when
// there are none. Plain CUDA runtime calls; nothing here is gpsm API.
//
//   example --devices 0,2   run on CUDA devices 0 and 2
//   example --gpus 2        run on the first 2 GPUs (all of them where the machine has fewer)
//   example                 run on every GPU (up to gpsm::gps::kMaxDevices)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"

namespace example {

// Exit codes. 77 is the conventional "skipped" code: ctest's SKIP_RETURN_CODE turns it into a
// skipped test, so a machine without a GPU never reports an example as passed.
constexpr int kWrongResult = 1;
constexpr int kBadArguments = 2;
constexpr int kRuntimeError = 3;  // gpsm::Error: peer access refused, a device wait timed out, ...
constexpr int kNoGpu = 77;

// Kernel launches and plain CUDA calls report errors through return codes; the gpsm runtime
// throws gpsm::Error, so the examples turn CUDA errors into the same exception.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw gpsm::Error(std::string("gpsm example: ") + what + ": " + cudaGetErrorString(e));
}

inline int parse_count(const char* flag, const char* s) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 1024) {
    std::fprintf(stderr, "%s: expected a number, got '%s'\n", flag, s);
    std::exit(kBadArguments);
  }
  return static_cast<int>(v);
}

// The CUDA ordinals to run on. Exits with kNoGpu when the machine has no usable GPU, and with
// kBadArguments on an argument it does not know.
inline std::vector<int> devices_from_args(int argc, char** argv) {
  std::vector<int> listed;
  int first_n = -1;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--devices") == 0 && has_value) {
      std::string list = argv[++i];
      for (std::size_t pos = 0; pos <= list.size();) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        listed.push_back(parse_count("--devices", list.substr(pos, comma - pos).c_str()));
        pos = comma + 1;
      }
    } else if (std::strcmp(argv[i], "--gpus") == 0 && has_value) {
      first_n = parse_count("--gpus", argv[++i]);
      if (first_n < 1) {
        std::fprintf(stderr, "--gpus: at least 1\n");
        std::exit(kBadArguments);
      }
    } else {
      std::fprintf(stderr, "usage: %s [--devices 0,1,... | --gpus N]\n", argv[0]);
      std::exit(std::strcmp(argv[i], "--help") == 0 ? 0 : kBadArguments);
    }
  }
  // Asked before anything else, so that a machine without a GPU (or without a driver) gets one
  // clear line instead of an error from deep inside the runtime.
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::printf("gpsm: no CUDA device found (%s); this example needs at least one GPU\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    std::exit(kNoGpu);
  }
  if (!listed.empty()) return listed;  // the Context checks that they exist
  const int n = std::min({count, gpsm::gps::kMaxDevices, first_n > 0 ? first_n : count});
  std::vector<int> all;
  for (int d = 0; d < n; ++d) all.push_back(d);
  return all;
}

inline std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace example
