// One host thread per GPU (common/host_threads.hpp): the barrier's rounds order the threads, a
// failing thread releases the others and its error is the one reported.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "common/host_threads.hpp"

using gpsm::HostBarrier;
using gpsm::run_per_gpu_threads;

TEST(HostThreads, NoThreadPassesARoundBeforeEveryThreadReachedIt) {
  constexpr int kThreads = 4, kRounds = 2000;
  std::vector<std::atomic<int>> reached(kThreads);
  std::atomic<int> violations{0};
  run_per_gpu_threads(kThreads, [&](int r, HostBarrier& bar) {
    for (int k = 0; k < kRounds; ++k) {
      reached[static_cast<std::size_t>(r)].store(k, std::memory_order_release);
      bar.wait();
      for (int g = 0; g < kThreads; ++g)  // every thread has reached round k
        if (reached[static_cast<std::size_t>(g)].load(std::memory_order_acquire) < k) violations.fetch_add(1);
      bar.wait();  // nobody moves on to k + 1 before all checked k
    }
  });
  EXPECT_EQ(violations.load(), 0);
  for (int g = 0; g < kThreads; ++g) EXPECT_EQ(reached[static_cast<std::size_t>(g)].load(), kRounds - 1);
}

TEST(HostThreads, AFailingThreadReleasesTheOthersAndItsErrorIsReported) {
  std::atomic<int> released{0};
  try {
    run_per_gpu_threads(3, [&](int r, HostBarrier& bar) {
      if (r == 1) throw gpsm::Error("gpsm: rank 1 failed");
      try {
        for (;;) bar.wait();  // rank 1 never arrives: only the abort ends this
      } catch (const gpsm::Error&) {
        released.fetch_add(1);
        throw;
      }
    });
    ADD_FAILURE() << "no error";
  } catch (const gpsm::Error& e) {
    EXPECT_EQ(std::string(e.what()), "gpsm: rank 1 failed");
  }
  EXPECT_EQ(released.load(), 2);
}

TEST(HostThreads, OneThreadNeverWaits) {
  int rounds = 0;
  run_per_gpu_threads(1, [&](int, HostBarrier& bar) {
    for (int k = 0; k < 100; ++k, ++rounds) bar.wait();
  });
  EXPECT_EQ(rounds, 100);
}
