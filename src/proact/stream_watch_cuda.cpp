// The host side of the stream-wait watchdog (proact/stream_watch.hpp): bounded host waits that
// read the noted counters past the timeout, report the unmet ones, release them and fail.
#include "proact/stream_wait.hpp"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::proact {

namespace {

// A copy on a private non-blocking stream of the counter's device (the held streams don't order
// it), bounded by `limit`: a counter that cannot be read in that time is reported unreadable.
std::optional<std::uint32_t> read_counter(const PendingWait& w, std::chrono::milliseconds limit) {
  int before = 0;
  if (cudaGetDevice(&before) != cudaSuccess) return std::nullopt;
  std::optional<std::uint32_t> out;
  cudaStream_t s = nullptr;
  std::uint32_t* host = nullptr;
  if (cudaSetDevice(w.device) == cudaSuccess && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess &&
      cudaMallocHost(&host, sizeof(std::uint32_t)) == cudaSuccess &&
      cudaMemcpyAsync(host, w.flag, sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s) == cudaSuccess) {
    const auto t0 = std::chrono::steady_clock::now();
    cudaError_t e = cudaErrorNotReady;
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady && std::chrono::steady_clock::now() - t0 < limit)
      std::this_thread::yield();
    if (e == cudaSuccess) out = *host;
  }
  cudaGetLastError();  // a failed read is reported as unreadable, not left for the next call
  if (s != nullptr) cudaStreamDestroy(s);
  if (host != nullptr) cudaFreeHost(host);
  cudaSetDevice(before);
  return out;
}

// Writes the awaited value, on a private non-blocking stream (not ordered after the held ones).
void release_counter(const PendingWait& w) {
  int before = 0;
  GPSM_CUDA(cudaGetDevice(&before));
  GPSM_CUDA(cudaSetDevice(w.device));
  cudaStream_t s = nullptr;
  GPSM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::uint32_t v = w.expected;
  GPSM_CUDA(cudaMemcpyAsync(const_cast<std::uint32_t*>(w.flag), &v, sizeof v, cudaMemcpyHostToDevice, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
  GPSM_CUDA(cudaStreamDestroy(s));
  GPSM_CUDA(cudaSetDevice(before));
}

}  // namespace

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
