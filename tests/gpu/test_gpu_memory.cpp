// The GPU side of gpsm bench's memory check (apps/harness/gpu_memory.hpp): cudaMemGetInfo's free
// bytes read on the device, a size no GPU can hold refused with the figure before any allocation,
// and one that fits let through.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <string>

#include "app_test_util.hpp"
#include "apps/harness/gpu_memory.hpp"
#include "gpu_test_util.hpp"

using namespace gpsm::apps;

TEST(GpuMemory, FreeBytesAreAtMostTheTotal) {
  GPSM_REQUIRE_GPUS(1);
  const double free_b = gpu_free_bytes({0});
  std::size_t f = 0, total = 0;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&f, &total), cudaSuccess);
  EXPECT_GT(free_b, 0.0);
  EXPECT_LE(free_b, double(total));
}

TEST(GpuMemory, ASizeNoGpuHoldsIsRefusedWithTheFigure) {
  GPSM_REQUIRE_GPUS(1);
  auto heat = apptest::app_named("heat3d");
  ASSERT_NE(heat, nullptr);
  // 8192^3 cells: two 2-TiB buffers on one GPU, more than any GPU has.
  const std::string no_room = gpu_memory_check(*heat, heat->problem("8192", 1), Paradigm::single, {0});
  EXPECT_EQ(no_room.rfind("gpsm: heat3d 8192x8192x8192 on 1 GPU needs 4096.0 GiB per GPU, the GPU has ", 0), 0u)
      << no_room;
  EXPECT_NE(no_room.find(" GiB free; use a smaller size or more GPUs"), std::string::npos) << no_room;
  // 64^3: 2 MiB.
  EXPECT_EQ(gpu_memory_check(*heat, heat->problem("64", 1), Paradigm::single, {0}), "");
}
