// Cross-GPU synchronization: message passing through replicated data with a flag outside GPS
// memory, device barriers without lost wake-ups, and bounded waits that end in a message.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <utility>
#include <vector>

#include "gps_test_util.hpp"

using namespace gpsm::gps;
using gpstest::DeviceVec;

namespace {

constexpr int kLitmusThreads = 256;
constexpr std::uint64_t kWordStride = 1031;  // data words land in different lines and pages

// Block 0 writes for the pair (rank -> next), block 1 reads for the pair (prev -> rank).
// Writer: wait for ack t-1, every thread stores t into its word, block barrier, release fence at
// system scope, flag = t. Reader: acquire flag >= t, block barrier, every thread loads its word
// (from its local replica when subscribed, else from the home) and counts values < t as stale.
__global__ void mp_litmus(View<std::uint32_t> data_w, View<std::uint32_t> data_r, std::uint32_t* flag_out,
                          std::uint32_t* ack_in, std::uint32_t* flag_in, std::uint32_t* ack_out,
                          std::uint32_t trials, unsigned long long* stale, WaitPolicy w, std::uint64_t my_base,
                          std::uint64_t prev_base) {
  unsigned long long bad = 0;
  if (blockIdx.x == 0) {
    for (std::uint32_t t = 1; t <= trials; ++t) {
      if (threadIdx.x == 0) wait_geq_sys<std::uint32_t>(ack_in, t - 1, w, "litmus ack");
      __syncthreads();
      data_w.store(my_base + threadIdx.x * kWordStride, t);
      __syncthreads();
      if (threadIdx.x == 0) {
        fence_sys();
        st_release_sys(flag_out, t);
      }
    }
  } else {
    for (std::uint32_t t = 1; t <= trials; ++t) {
      if (threadIdx.x == 0) wait_geq_sys<std::uint32_t>(flag_in, t, w, "litmus flag");
      __syncthreads();
      bad += data_r.load(prev_base + threadIdx.x * kWordStride) < t;
      __syncthreads();
      if (threadIdx.x == 0) st_release_sys(ack_out, t);
    }
  }
  if (bad != 0) atomicAdd(stale, bad);
}

__global__ void barrier_storm(BarrierHandle b, std::uint64_t* arrivals, std::uint32_t iters, unsigned global_block0,
                              unsigned long long* early) {
  std::uint64_t round = 0;
  const unsigned me = global_block0 + blockIdx.x;
  unsigned long long bad = 0;
  for (std::uint32_t i = 1; i <= iters; ++i) {
    if (threadIdx.x == 0) st_relaxed_sys(&arrivals[me], static_cast<std::uint64_t>(i));
    b.sync(round);
    // Nobody may leave generation i before every block arrived at it.
    if (threadIdx.x < b.participants) bad += ld_relaxed_sys(&arrivals[threadIdx.x]) < i;
  }
  if (bad != 0) atomicAdd(early, bad);
}

// One block per device; rank 1's block arrives `delay_ns` late and first writes `launch` into
// `late` (device 0's memory). Every block checks `late` after the barrier: passing early reads
// the previous launch's value.
__global__ void late_arrival(BarrierHandle b, std::uint32_t* late, std::uint32_t launch, std::uint64_t delay_ns,
                             unsigned long long* early) {
  std::uint64_t round = 0;
  if (b.self == 1 && threadIdx.x == 0) {
    const std::uint64_t t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < delay_ns) {
    }
    st_relaxed_sys(late, launch);
  }
  b.sync(round);
  if (threadIdx.x == 0 && ld_acquire_sys(late) < launch) atomicAdd(early, 1ull);
}

void run_litmus(bool reader_subscribed) {
  const std::vector<int> devs = gpstest::all_devices();
  Context ctx(devs);
  const int n = ctx.size();
  // Each writer's words fill whole pages of their own, so subscriptions can differ per writer.
  const std::uint64_t per_page = kDefaultPageBytes / sizeof(std::uint32_t);
  const std::uint64_t span = (kLitmusThreads * kWordStride + per_page - 1) / per_page * per_page;
  auto data = ctx.alloc<std::uint32_t>(span * n, with_mode(PublishMode::inline_store));
  if (!reader_subscribed)  // readers load remotely from the writer's (home) replica
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < n; ++o)
        if (o != r) data.unsubscribe(static_cast<std::uint64_t>(r) * span, span, o);
  std::vector<DeviceVec<std::uint32_t>> flag, ack;
  std::vector<DeviceVec<unsigned long long>> stale;
  for (int r = 0; r < n; ++r) {
    flag.emplace_back(ctx.device(r), 1);  // flag[r]: written by r-1, read by r (outside GPS memory)
    ack.emplace_back(ctx.device(r), 1);   // ack[r]: written by r+1, read by r
    stale.emplace_back(ctx.device(r), 1);
  }
  const std::uint32_t trials = static_cast<std::uint32_t>(gpstest::scaled(reader_subscribed ? 1000000 : 200000, 100));
  for (int r = 0; r < n; ++r) ctx.check_coresident(reinterpret_cast<const void*>(&mp_litmus), 2, kLitmusThreads, 0);
  for (int r = 0; r < n; ++r) {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    mp_litmus<<<2, kLitmusThreads, 0, ctx.stream(r)>>>(data.view(r), data.view(r), flag[next].p, ack[r].p, flag[r].p,
                                                       ack[prev].p, trials, stale[r].p, ctx.wait_policy(r), r * span,
                                                       prev * span);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(stale[r].download()[0], 0ull) << "rank " << r << " read stale data";
    EXPECT_EQ(flag[r].download()[0], trials) << "rank " << r;
  }
  std::printf("[litmus] %d pairs x %u trials x %d words, reader %s: no stale reads\n", n, trials, kLitmusThreads,
              reader_subscribed ? "subscribed (local loads)" : "not subscribed (remote loads)");
}

}  // namespace

TEST(GpsSync, MessagePassingNeverReadsStaleData) {
  GPSM_REQUIRE_GPUS(2);
  run_litmus(true);
}

TEST(GpsSync, MessagePassingWithRemoteLoadsNeverReadsStaleData) {
  GPSM_REQUIRE_GPUS(2);
  run_litmus(false);
}

TEST(GpsSync, DeviceBarrierHasNoLostWakeups) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size(), blocks = 4, threads = 128;
  ctx.check_coresident(reinterpret_cast<const void*>(&barrier_storm), blocks, threads, 0);
  DeviceVec<std::uint64_t> arrivals(ctx.device(0), static_cast<std::size_t>(n * blocks));
  std::vector<DeviceVec<unsigned long long>> early;
  for (int r = 0; r < n; ++r) early.emplace_back(ctx.device(r), 1);
  const std::uint32_t iters = static_cast<std::uint32_t>(gpstest::scaled(100000, 100));
  for (int launch = 0; launch < 2; ++launch) {  // a second launch starts from the counters' new base
    std::vector<BarrierHandle> h;
    for (int r = 0; r < n; ++r) h.push_back(ctx.barrier(r, blocks));
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    GPSM_CUDA(cudaMemset(arrivals.p, 0, n * blocks * sizeof(std::uint64_t)));
    GPSM_CUDA(cudaDeviceSynchronize());
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      barrier_storm<<<blocks, threads, 0, ctx.stream(r)>>>(h[r], arrivals.p, iters, r * blocks, early[r].p);
      GPSM_CUDA_LAUNCH();
    }
    ctx.synchronize();
    for (int r = 0; r < n; ++r) EXPECT_EQ(early[r].download()[0], 0ull) << "rank " << r << " launch " << launch;
    const auto arr = arrivals.download();
    for (int b = 0; b < n * blocks; ++b) EXPECT_EQ(arr[b], iters) << "block " << b;
  }
  std::printf("[barrier] %u barriers x 2 launches over %d GPUs x %d blocks\n", iters, n, blocks);
}

// Handles taken once and launched again: the second launch's barrier must still wait for the
// late block (a handle holding the first launch's base let every block through at once).
TEST(GpsSync, BarrierHandleReusedForALaterLaunchStillWaits) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  std::vector<BarrierHandle> h;
  for (int r = 0; r < n; ++r) h.push_back(ctx.barrier(r, 1));
  DeviceVec<std::uint32_t> late(ctx.device(0), 1);
  std::vector<DeviceVec<unsigned long long>> early;
  for (int r = 0; r < n; ++r) early.emplace_back(ctx.device(r), 1);
  for (std::uint32_t launch = 1; launch <= 3; ++launch) {
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      late_arrival<<<1, 32, 0, ctx.stream(r)>>>(h[r], late.p, launch, 20ull * 1000 * 1000, early[r].p);
      GPSM_CUDA_LAUNCH();
    }
    ctx.synchronize();
    for (int r = 0; r < n; ++r) EXPECT_EQ(early[r].download()[0], 0ull) << "rank " << r << " launch " << launch;
  }
  // a handle taken after the launches, with the same block count, is the same arming
  const BarrierHandle again = ctx.barrier(0, 1);
  EXPECT_EQ(again.arming, h[0].arming);
  EXPECT_EQ(again.base, h[0].base);
}

// Runs the wait probe (its trap loses the CUDA context, so it runs in a child process) with the
// given wait bound; returns pclose's status and everything it printed.
std::pair<int, std::string> run_wait_probe(const std::string& what, int timeout_ms) {
  const std::string cmd = "GPSM_WAIT_TIMEOUT_MS=" + std::to_string(timeout_ms) + " GPSM_VERIFY_P2P=0 " +
                          GPSM_WAIT_PROBE + " " + what + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed: " + cmd};
  std::string out;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  return {pclose(p), out};
}

// A handle whose arming a later barrier() with another block count replaced fails the launch
// with its message (in a child process: the trap loses the CUDA context).
TEST(GpsSync, StaleBarrierHandleFailsWithItsMessage) {
  GPSM_REQUIRE_GPUS(2);
  const auto [status, out] = run_wait_probe("stale", 2000);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 3) << out;
  EXPECT_NE(out.find("gpsm: stale barrier handle on device rank"), std::string::npos) << out;
  EXPECT_NE(out.find("belongs to barrier arming 1, the context's is 2"), std::string::npos) << out;
}

// The device barrier and the device fence of persistent kernels, each with its second participant
// withheld: the wait ends in the bounded-wait message and a gpsm::Error, not a hang.
TEST(GpsSync, WithheldProducerEndsInBoundedWaitMessage) {
  GPSM_REQUIRE_GPUS(2);
  for (const std::string which : {"barrier", "fence"}) {
    SCOPED_TRACE(which);
    // Runs in a child process: the trap that ends the wait loses that CUDA context.
    const auto [status, out] = run_wait_probe(which, 300);
    ASSERT_TRUE(WIFEXITED(status)) << out;
    EXPECT_EQ(WEXITSTATUS(status), 3) << out;
    EXPECT_NE(out.find("bounded wait timed out on device rank 0"), std::string::npos) << out;
    // the fence's word of rank 1 for round 0 carries tag 1 in its upper 32 bits
    const std::string what = which == "barrier" ? "device barrier counter expected >= 2 observed 1"
                                                : "device fence word expected >= 4294967296 observed 0";
    EXPECT_NE(out.find(what), std::string::npos) << out;
  }
}
