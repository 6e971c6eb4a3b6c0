// The stream-wait ledger and its timeout message (proact/stream_watch.hpp).
#include "proact/stream_watch.hpp"

#include <fmt/format.h>

namespace gpsm::proact {

void StreamWaits::note(int device, const std::uint32_t* flag, std::uint32_t expected, const char* what) {
  const auto [it, fresh] = index_.try_emplace(flag, waits_.size());
  if (fresh) {
    waits_.push_back({device, flag, expected, what != nullptr ? what : "stream wait counter"});
    return;
  }
  PendingWait& w = waits_[it->second];
  w.device = device;
  w.expected = expected;
  if (what != nullptr && w.what != what) w.what = what;
}

void StreamWaits::clear() {
  waits_.clear();
  index_.clear();
}

std::string stream_wait_timeout_line(const PendingWait& w, std::optional<std::uint32_t> seen,
                                     std::uint64_t timeout_ms) {
  return fmt::format("gpsm: stream wait timed out after {} ms on CUDA device {}: {} at {} expected >= {}, seen {}",
                     timeout_ms, w.device, w.what, static_cast<const void*>(w.flag), w.expected,
                     seen ? std::to_string(*seen) : std::string("(unreadable)"));
}

std::string stream_wait_timeout_message(const std::vector<PendingWait>& waits,
                                        const std::vector<std::optional<std::uint32_t>>& seen,
                                        std::uint64_t timeout_ms, const std::string& host_what) {
  std::string lines;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    const std::optional<std::uint32_t> s = i < seen.size() ? seen[i] : std::nullopt;
    if (s && stream_wait_met(*s, waits[i].expected)) continue;
    lines += stream_wait_timeout_line(waits[i], s, timeout_ms) + "\n";
  }
  return lines + fmt::format(
                     "gpsm: {}: failed (a counter never arrived; the awaited values were written so the held "
                     "streams drain, and the run's data is not to be trusted); raise GPSM_WAIT_TIMEOUT_MS / "
                     "--wait-timeout-ms if the machine is just slow, else report this with `gpsm info`",
                     host_what);
}

}  // namespace gpsm::proact
