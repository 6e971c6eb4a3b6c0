#pragma once
// Runtime settings: each is a typed environment variable with a default and a docstring
// (NVSHMEM style); `gpsm info` prints them all with their current values.
#include <cstdint>
#include <string>
#include <vector>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

// The longest wait bound accepted (one day, in ms). A wait is a bound on a hang, not a schedule:
// anything longer is a mistake, and the bound is kept in nanoseconds on the device, where
// ms * 10^6 past about 1.8e13 ms would wrap around 2^64 to a bound of microseconds.
constexpr std::uint64_t kMaxWaitTimeoutMs = 24ull * 3600 * 1000;

// The bound in nanoseconds; ms above kMaxWaitTimeoutMs saturates there (never wraps).
constexpr std::uint64_t wait_timeout_ns(std::uint64_t ms) {
  return (ms > kMaxWaitTimeoutMs ? kMaxWaitTimeoutMs : ms) * 1000ull * 1000ull;
}

// How Context::fence_async orders the GPUs' streams (inline arrays): a one-block kernel per GPU
// that meets the others through counters in each GPU's memory (kernel), or every GPU's stream
// waiting on every other GPU's event (events). The kernel keeps every dependency on one GPU, so
// a loop captured into a CUDA graph has no edges between GPUs; events cost n (n - 1) waits, two
// on two GPUs, where they save the barrier kernel's launch. automatic: events on two GPUs, the
// kernel on more (resolve_async_fence).
enum class AsyncFence : std::uint8_t { kernel, events, automatic };

struct Settings {
  std::uint64_t page_bytes = kDefaultPageBytes;      // GPSM_PAGE_SIZE
  PublishMode mode = PublishMode::combine;            // GPSM_PUBLISH_MODE
  std::uint64_t wait_timeout_ms = 10000;              // GPSM_WAIT_TIMEOUT_MS (device-side waits, stream-wait watchdog)
  std::uint64_t inbound_entries = 4u << 20;           // GPSM_INBOUND_ENTRIES (per source, per array)
  bool verify_p2p = true;                             // GPSM_VERIFY_P2P
  bool count_link_bytes = false;                      // GPSM_COUNT_LINK_BYTES
  bool profile_fence = false;                         // GPSM_PROFILE_FENCE
  DecoupledAgent decoupled_agent = DecoupledAgent::inline_warp;  // GPSM_DECOUPLED_AGENT
  std::uint64_t decoupled_chunk = kDefaultDecoupledChunk;       // GPSM_DECOUPLED_CHUNK
  AsyncFence async_fence = AsyncFence::automatic;               // GPSM_ASYNC_FENCE

  // Reads the environment; a malformed value throws gpsm::Error naming the variable.
  static Settings from_env();
};

struct SettingDoc {
  std::string name, value, default_value, doc;
};
std::vector<SettingDoc> describe(const Settings& s);

const char* mode_name(PublishMode m);
// "inline" | "combine" | "bulk" | "decoupled"; throws gpsm::Error otherwise.
PublishMode parse_mode(const std::string& s);
// Throws gpsm::Error for a value that names no publish mode (a cast from a bad integer). Every
// entry point that takes a mode (settings, allocation, set_mode, view) asks here.
void check_publish_mode(PublishMode m);

const char* async_fence_name(AsyncFence f);  // "kernel" | "events" | "auto"
// "kernel" | "events" | "auto"; throws gpsm::Error otherwise.
AsyncFence parse_async_fence(const std::string& s);
// The fence a context of `devices` GPUs runs for setting f: f itself unless automatic, which is
// events on exactly two GPUs and the kernel otherwise. Measured with the 3D apps' host-driven gps
// loop (heat3d / wave3d 256^3, gps's step time): 2xH200, events 0.3-0.65 us faster than the kernel
// in two alternating rounds of each (30.05-30.18 against 30.45-30.70 us, wave3d 34.70-34.82
// against 35.29-35.30); 4xH200, the kernel 16.62 us against events' 78.25 (heat3d).
AsyncFence resolve_async_fence(AsyncFence f, int devices);

const char* agent_name(DecoupledAgent a);  // "inline" | "persistent"
// "inline" | "persistent"; throws gpsm::Error otherwise.
DecoupledAgent parse_decoupled_agent(const std::string& s);
// Throws gpsm::Error unless the chunk size is a power of two of at least one line (128 B).
void check_decoupled_chunk(std::uint64_t bytes);

}  // namespace gpsm::gps
