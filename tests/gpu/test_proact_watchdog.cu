// The stream-wait watchdog (proact/stream_watch.hpp) on a GPU: a stream wait whose counter is
// withheld ends, within the wait timeout (GPSM_WAIT_TIMEOUT_MS), in a gpsm::Error naming the
// counter, expected and seen values, with the stream drained and the context alive; a stream held
// by a long kernel behind met waits is not a missing counter and is waited for.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpu_test_util.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/settings.hpp"
#include "proact/stream_wait.hpp"

using namespace gpsm::proact;

namespace {

__global__ void spin_for(std::uint64_t ns) {
  std::uint64_t t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

std::uint64_t timeout_from_env(const char* ms) {
  setenv("GPSM_WAIT_TIMEOUT_MS", ms, 1);
  const std::uint64_t t = gpsm::gps::Settings::from_env().wait_timeout_ms;
  unsetenv("GPSM_WAIT_TIMEOUT_MS");
  return t;
}

}  // namespace

TEST(ProactGpu, WithheldStreamWaitCounterEndsInItsMessage) {
  GPSM_REQUIRE_GPUS(1);
  if (const std::string why = stream_wait_unsupported(0); !why.empty()) GTEST_SKIP() << why;
  const std::uint64_t timeout_ms = timeout_from_env("300");
  ASSERT_EQ(timeout_ms, 300u);
  GPSM_CUDA(cudaSetDevice(0));
  cudaStream_t s = nullptr;
  cudaEvent_t done = nullptr;
  std::uint32_t* flag = nullptr;
  std::uint32_t* behind = nullptr;
  GPSM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GPSM_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  GPSM_CUDA(cudaMalloc(&flag, sizeof(std::uint32_t)));
  GPSM_CUDA(cudaMalloc(&behind, sizeof(std::uint32_t)));
  GPSM_CUDA(cudaMemset(flag, 0, sizeof(std::uint32_t)));
  GPSM_CUDA(cudaMemset(behind, 0, sizeof(std::uint32_t)));
  StreamWaits waits;
  stream_wait_geq(s, flag, 5, "test: withheld counter", &waits);  // nobody ever writes 5
  GPSM_CUDA(cudaMemsetAsync(behind, 0xab, sizeof(std::uint32_t), s));  // work held behind the wait
  GPSM_CUDA(cudaEventRecord(done, s));
  ASSERT_EQ(waits.pending().size(), 1u);

  const auto t0 = std::chrono::steady_clock::now();
  std::string msg;
  try {
    (void)bounded_event_wait(done, waits, timeout_ms, "the test's stream");
    ADD_FAILURE() << "the wait returned though its counter never arrived";
  } catch (const gpsm::Error& e) {
    msg = e.what();
  }
  const double waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited_ms, 300.0);
  EXPECT_LT(waited_ms, 300.0 + 3000.0);  // the timeout, the counter's read, the drain: not a hang
  EXPECT_NE(msg.find("gpsm: stream wait timed out after 300 ms on CUDA device 0: test: withheld counter at "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("expected >= 5, seen 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gpsm: the test's stream: failed"), std::string::npos) << msg;
  // the watchdog released the counter: the stream drained and the context still works
  EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  std::uint32_t f = 0, b = 0;
  GPSM_CUDA(cudaMemcpy(&f, flag, sizeof f, cudaMemcpyDeviceToHost));
  GPSM_CUDA(cudaMemcpy(&b, behind, sizeof b, cudaMemcpyDeviceToHost));
  EXPECT_EQ(f, 5u);
  EXPECT_EQ(b, 0xababababu);
  EXPECT_TRUE(waits.empty());

  // A met wait followed by a kernel that runs twice the timeout: no counter is missing, the host
  // waits for the kernel and nothing is thrown.
  stream_wait_geq(s, flag, 5, "test: arrived counter", &waits);
  spin_for<<<1, 1, 0, s>>>(2 * timeout_ms * 1000 * 1000);
  GPSM_CUDA_LAUNCH();
  GPSM_CUDA(cudaEventRecord(done, s));
  const auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(bounded_event_wait(done, waits, timeout_ms, "the test's long kernel"), cudaSuccess);
  const double long_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  EXPECT_GE(long_ms, 550.0);
  EXPECT_TRUE(waits.empty());

  GPSM_CUDA(cudaFree(flag));
  GPSM_CUDA(cudaFree(behind));
  GPSM_CUDA(cudaEventDestroy(done));
  GPSM_CUDA(cudaStreamDestroy(s));
}
