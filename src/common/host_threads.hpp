#pragma once
// One host thread per GPU for host-driven loops, and the barrier they meet at (plain C++,
// CPU-tested). A host loop that issues every GPU's calls from one thread pays the sum of their
// issue times per iteration; a thread per GPU pays the largest, as one process per GPU (MPI) does.
// The barrier is what the threads need where one GPU's call must follow another GPU's (a stream
// wait on a peer's event must come after the peer recorded it). Abortable: a thread that fails
// releases the others with an error instead of leaving them waiting forever.
#include <atomic>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "gpsm/error.hpp"

namespace gpsm {

class HostBarrier {
 public:
  explicit HostBarrier(int threads) : n_(threads) {}
  // Returns once all `threads` threads have called it (this round); throws gpsm::Error when
  // abort() was called. Spins: rounds are microseconds apart and threads are few.
  void wait() {
    const unsigned gen = gen_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
      count_.store(0, std::memory_order_relaxed);
      gen_.store(gen + 1, std::memory_order_release);
      return;
    }
    for (unsigned spin = 0; gen_.load(std::memory_order_acquire) == gen; ++spin) {
      if (aborted_.load(std::memory_order_acquire)) throw gpsm::Error("gpsm: another host thread of the run failed");
      if ((spin & 1023u) == 1023u) std::this_thread::yield();
    }
  }
  void abort() { aborted_.store(true, std::memory_order_release); }
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

 private:
  const int n_;
  std::atomic<int> count_{0};
  std::atomic<unsigned> gen_{0};
  std::atomic<bool> aborted_{false};
};

// Runs body(r) for r = 0..n-1, each on its own thread, with one barrier for all; returns when all
// returned and rethrows the first failure (the others are released from the barrier with an
// error, which is not rethrown in its place).
inline void run_per_gpu_threads(int n, const std::function<void(int, HostBarrier&)>& body) {
  HostBarrier bar(n);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  std::atomic<int> first{-1};
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r, bar);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
        int none = -1;
        if (!bar.aborted()) first.compare_exchange_strong(none, r);
        bar.abort();
      }
    });
  for (std::thread& t : threads) t.join();
  if (first.load() >= 0) std::rethrow_exception(errors[static_cast<std::size_t>(first.load())]);
}

}  // namespace gpsm
