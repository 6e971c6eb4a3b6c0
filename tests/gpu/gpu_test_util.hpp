#pragma once
// GPU tests skip — never pass — where the machine lacks the GPUs they need.
#include <gtest/gtest.h>

#include <string>

#include "scope/cuda_probe.hpp"

#define GPSM_REQUIRE_GPUS(n)                                                                     \
  do {                                                                                           \
    std::string why_;                                                                            \
    const int have_ = gpsm::scope::cuda_device_count(&why_);                                     \
    if (have_ < (n))                                                                             \
      GTEST_SKIP() << "needs " << (n) << " GPU(s), found " << have_ << (why_.empty() ? "" : " (") \
                   << why_ << (why_.empty() ? "" : ")");                                         \
  } while (0)
