// The host side of the stream-wait watchdog (proact/stream_watch.hpp): bounded host waits that
// read the noted counters past the timeout, report the unmet ones, release them and fail.
#include "proact/stream_wait.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <cstdio>
#include <thread>

#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::proact {

namespace {

// Per device, made once (prepare_watch) and kept for the process: a non-blocking stream that the
// held streams do not order, and two page-locked words (the counter read back, the value written).
struct WatchKit {
  cudaStream_t stream = nullptr;
  std::uint32_t* words = nullptr;
};

std::mutex& kits_mutex() {
  static std::mutex m;
  return m;
}
std::map<int, WatchKit>& kits() {
  static std::map<int, WatchKit> k;
  return k;
}

WatchKit* kit_of(int device) {
  std::lock_guard<std::mutex> lock(kits_mutex());
  const auto it = kits().find(device);
  return it == kits().end() ? nullptr : &it->second;
}

// Polls the kit's stream until it is idle or `limit` passes.
bool kit_idle_within(const WatchKit& k, std::chrono::milliseconds limit) {
  const auto t0 = std::chrono::steady_clock::now();
  cudaError_t e = cudaErrorNotReady;
  while ((e = cudaStreamQuery(k.stream)) == cudaErrorNotReady && std::chrono::steady_clock::now() - t0 < limit)
    std::this_thread::yield();
  return e == cudaSuccess;
}

// The counter copied on the kit's stream, bounded by `limit`: a counter that cannot be read in
// that time is reported unreadable. No allocation here: it could wait for the held stream.
std::optional<std::uint32_t> read_counter(const PendingWait& w, std::chrono::milliseconds limit) {
  WatchKit* k = kit_of(w.device);
  if (k == nullptr) return std::nullopt;
  int before = 0;
  if (cudaGetDevice(&before) != cudaSuccess) return std::nullopt;
  std::optional<std::uint32_t> out;
  if (cudaSetDevice(w.device) == cudaSuccess &&
      cudaMemcpyAsync(k->words, w.flag, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, k->stream) == cudaSuccess &&
      kit_idle_within(*k, limit))
    out = k->words[0];
  cudaGetLastError();  // a failed read is reported as unreadable, not left for the next call
  cudaSetDevice(before);
  return out;
}

// Writes the awaited value from the kit's page-locked word on the kit's stream (not ordered after
// the held ones), bounded like the read.
void release_counter(const PendingWait& w) {
  WatchKit* k = kit_of(w.device);
  if (k == nullptr) return;
  int before = 0;
  GPSM_CUDA(cudaGetDevice(&before));
  GPSM_CUDA(cudaSetDevice(w.device));
  k->words[1] = w.expected;
  GPSM_CUDA(cudaMemcpyAsync(const_cast<std::uint32_t*>(w.flag), k->words + 1, sizeof(std::uint32_t),
                            cudaMemcpyHostToDevice, k->stream));
  (void)kit_idle_within(*k, std::chrono::milliseconds(1000));
  GPSM_CUDA(cudaSetDevice(before));
}

}  // namespace

void prepare_watch(int device) {
  std::lock_guard<std::mutex> lock(kits_mutex());
  if (kits().count(device) != 0) return;
  int before = 0;
  GPSM_CUDA(cudaGetDevice(&before));
  GPSM_CUDA(cudaSetDevice(device));
  WatchKit k;
  GPSM_CUDA(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
  GPSM_CUDA(cudaHostAlloc(&k.words, 2 * sizeof(std::uint32_t), cudaHostAllocPortable));
  kits()[device] = k;
  GPSM_CUDA(cudaSetDevice(before));
}

cudaError_t bounded_host_wait(const std::function<cudaError_t()>& query, StreamWaits& waits,
                              std::uint64_t timeout_ms, const std::string& host_what) {
  const auto period = std::chrono::milliseconds(timeout_ms);
  auto deadline = std::chrono::steady_clock::now() + period;
  for (;;) {
    const cudaError_t e = query();
    if (e != cudaErrorNotReady) {
      waits.clear();  // every noted wait passed (or the context failed: nothing left to watch)
      return e;
    }
    if (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
      continue;
    }
    // Past the bound: a noted wait short of its value is the hang; none (a long kernel, a slow
    // copy) and the host waits one more period.
    std::vector<std::optional<std::uint32_t>> seen;
    std::vector<PendingWait> unmet;
    for (const PendingWait& w : waits.pending()) {
      seen.push_back(read_counter(w, std::chrono::milliseconds(1000)));
      if (!seen.back() || !stream_wait_met(*seen.back(), w.expected)) unmet.push_back(w);
    }
    if (unmet.empty()) {
      deadline = std::chrono::steady_clock::now() + period;
      continue;
    }
    const std::string msg = stream_wait_timeout_message(waits.pending(), seen, timeout_ms, host_what);
    std::fprintf(stderr, "%s\n", msg.c_str());  // said at once, even if the drain below fails
    for (const PendingWait& w : unmet) release_counter(w);
    // The released streams drain; a bounded wait for them, then the run fails either way.
    const auto drain_end = std::chrono::steady_clock::now() + period;
    while (query() == cudaErrorNotReady && std::chrono::steady_clock::now() < drain_end) std::this_thread::yield();
    waits.clear();
    throw Error(msg);
  }
}

cudaError_t bounded_stream_wait(cudaStream_t s, StreamWaits& waits, std::uint64_t timeout_ms,
                                const std::string& host_what) {
  return bounded_host_wait([s] { return cudaStreamQuery(s); }, waits, timeout_ms, host_what);
}

cudaError_t bounded_event_wait(cudaEvent_t e, StreamWaits& waits, std::uint64_t timeout_ms,
                               const std::string& host_what) {
  return bounded_host_wait([e] { return cudaEventQuery(e); }, waits, timeout_ms, host_what);
}

}  // namespace gpsm::proact
