#pragma once
// The watchdog of stream waits (stream_wait.hpp). A cuStreamWaitValue32 cannot be cancelled and
// has no timeout: a counter that never arrives holds its stream, and every host wait behind it,
// forever. Each stream wait is noted in a ledger (StreamWaits) by whoever enqueues it; the host
// waits behind them go through bounded_host_wait (stream_watch_cuda.cpp), which past the wait
// timeout (GPSM_WAIT_TIMEOUT_MS, --wait-timeout-ms) reads every noted counter, reports the ones
// short of their value (which, where, expected, seen), then writes each its awaited value so the
// held streams drain (nothing is left waiting on memory about to be freed, the CUDA context
// survives) and fails the run with a gpsm::Error. The ledger and the message are plain C++.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpsm::proact {

// cuStreamWaitValue32's CU_STREAM_WAIT_VALUE_GEQ: (int32)(seen - expected) >= 0, so counters may wrap.
constexpr bool stream_wait_met(std::uint32_t seen, std::uint32_t expected) {
  return static_cast<std::int32_t>(seen - expected) >= 0;
}

struct PendingWait {
  int device = 0;                        // CUDA device of the stream (and of the counter)
  const std::uint32_t* flag = nullptr;   // the counter, device memory
  std::uint32_t expected = 0;
  std::string what;                      // the counter's name, as the enqueuer gave it
};

// The stream waits enqueued since the last clear(), one entry per counter: a later wait on the
// same counter replaces the earlier one (its value is the newer expectation; the earlier wait is
// met when it is, the counters only move forward). Owned next to the counters it names; cleared
// once the host has seen every noted wait pass (after a successful bounded_host_wait of all of
// them, before the counters are freed).
class StreamWaits {
 public:
  void note(int device, const std::uint32_t* flag, std::uint32_t expected, const char* what);
  void clear();
  const std::vector<PendingWait>& pending() const { return waits_; }
  bool empty() const { return waits_.empty(); }

 private:
  std::vector<PendingWait> waits_;
  std::unordered_map<const void*, std::size_t> index_;
};

// The report of one wait short of its value: "gpsm: stream wait timed out after T ms on CUDA
// device D: <what> at <address> expected >= E, seen S (...)". `seen` empty: the counter could not
// be read.
std::string stream_wait_timeout_line(const PendingWait& w, std::optional<std::uint32_t> seen,
                                     std::uint64_t timeout_ms);

// The whole message of a timed-out host wait: one line per unmet wait (`seen` by index of
// `waits`; met ones are left out), then what was done and what to do. `host_what` names the
// host wait.
std::string stream_wait_timeout_message(const std::vector<PendingWait>& waits,
                                        const std::vector<std::optional<std::uint32_t>>& seen,
                                        std::uint64_t timeout_ms, const std::string& host_what);

}  // namespace gpsm::proact
