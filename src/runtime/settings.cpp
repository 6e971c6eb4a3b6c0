#include "gpsm/gps/settings.hpp"

#include <cctype>
#include <cstdlib>
#include <exception>
#include <limits>

#include "gpsm/error.hpp"
#include "runtime/finepack.hpp"
#include "gpsm/gps/page_math.hpp"
#include "common/sizes.hpp"

namespace gpsm::gps {

namespace {

constexpr const char* kPageSize = "GPSM_PAGE_SIZE";
constexpr const char* kPublishMode = "GPSM_PUBLISH_MODE";
constexpr const char* kWaitTimeout = "GPSM_WAIT_TIMEOUT_MS";
constexpr const char* kInboundEntries = "GPSM_INBOUND_ENTRIES";
constexpr const char* kVerifyP2p = "GPSM_VERIFY_P2P";
constexpr const char* kCountLinkBytes = "GPSM_COUNT_LINK_BYTES";
constexpr const char* kProfileFence = "GPSM_PROFILE_FENCE";
constexpr const char* kDecoupledAgent = "GPSM_DECOUPLED_AGENT";
constexpr const char* kDecoupledChunk = "GPSM_DECOUPLED_CHUNK";
constexpr const char* kAsyncFence = "GPSM_ASYNC_FENCE";

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The variable's value, or false when it is unset or empty (empty = use the default).
bool env(const char* name, std::string& value) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  value = trim(v);
  return !value.empty();
}

[[noreturn]] void bad(const char* name, const std::string& value, const std::string& why) {
  throw Error(std::string("gpsm: ") + name + "='" + value + "' " + why);
}

std::uint64_t parse_positive_int(const char* name, const std::string& v) {
  if (v.empty() || v.size() > 20) bad(name, v, "is not a positive integer");
  std::uint64_t x = 0;
  for (char c : v) {
    if (!std::isdigit(static_cast<unsigned char>(c))) bad(name, v, "is not a positive integer");
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (x > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) bad(name, v, "is too large");
    x = x * 10 + digit;
  }
  if (x == 0) bad(name, v, "must be positive");
  return x;
}

std::uint64_t parse_size_var(const char* name, const std::string& v, const char* expected) {
  try {
    return gpsm::parse_size(v);
  } catch (const std::exception& e) {
    bad(name, v, std::string("is not ") + expected + " (" + e.what() + ")");
  }
}

bool parse_bool(const char* name, const std::string& v) {
  const std::string s = lower(v);
  if (s == "1" || s == "true" || s == "on") return true;
  if (s == "0" || s == "false" || s == "off") return false;
  bad(name, v, "is not a boolean (use 1/0, true/false or on/off)");
}

std::string bool_str(bool b) { return b ? "true" : "false"; }

}  // namespace

const char* mode_name(PublishMode m) {
  switch (m) {
    case PublishMode::inline_store: return "inline";
    case PublishMode::combine: return "combine";
    case PublishMode::bulk: return "bulk";
    case PublishMode::decoupled: return "decoupled";
  }
  return "unknown";
}

PublishMode parse_mode(const std::string& s) {
  if (s == "inline") return PublishMode::inline_store;
  if (s == "combine") return PublishMode::combine;
  if (s == "bulk") return PublishMode::bulk;
  if (s == "decoupled") return PublishMode::decoupled;
  throw Error("gpsm: unknown publish mode '" + s + "' (expected inline, combine, bulk or decoupled)");
}

void check_publish_mode(PublishMode m) {
  switch (m) {
    case PublishMode::inline_store:
    case PublishMode::combine:
    case PublishMode::bulk:
    case PublishMode::decoupled: return;
  }
  throw Error("gpsm: publish mode value " + std::to_string(static_cast<int>(m)) +
              " names no mode (inline, combine, bulk or decoupled)");
}

const char* async_fence_name(AsyncFence f) {
  switch (f) {
    case AsyncFence::kernel: return "kernel";
    case AsyncFence::events: return "events";
    case AsyncFence::automatic: return "auto";
  }
  return "unknown";
}

AsyncFence parse_async_fence(const std::string& s) {
  if (s == "kernel") return AsyncFence::kernel;
  if (s == "events") return AsyncFence::events;
  if (s == "auto") return AsyncFence::automatic;
  throw Error("gpsm: unknown async fence '" + s + "' (expected kernel, events or auto)");
}

AsyncFence resolve_async_fence(AsyncFence f, int devices) {
  if (f != AsyncFence::automatic) return f;
  return devices == 2 ? AsyncFence::events : AsyncFence::kernel;
}

const char* agent_name(DecoupledAgent a) {
  switch (a) {
    case DecoupledAgent::inline_warp: return "inline";
    case DecoupledAgent::persistent: return "persistent";
  }
  return "unknown";
}

DecoupledAgent parse_decoupled_agent(const std::string& s) {
  if (s == "inline") return DecoupledAgent::inline_warp;
  if (s == "persistent") return DecoupledAgent::persistent;
  throw Error("gpsm: unknown decoupled agent '" + s + "' (expected inline or persistent)");
}

void check_decoupled_chunk(std::uint64_t bytes) {
  if (page_shift_of(bytes) < 0)
    throw Error("gpsm: decoupled chunk size " + std::to_string(bytes) + " is not a power of two of at least " +
                std::to_string(kLineBytes) + " bytes");
}

Settings Settings::from_env() {
  Settings s;
  std::string v;
  if (env(kPageSize, v)) {
    const std::uint64_t b = parse_size_var(kPageSize, v, "a size such as 64K, 64KiB or 65536");
    if (page_shift_of(b) < 0)
      bad(kPageSize, v, "must be a power of two of at least " + std::to_string(kLineBytes) + " bytes (e.g. 4K, 64K, 2M)");
    s.page_bytes = b;
  }
  if (env(kPublishMode, v)) {
    PublishMode m;
    try {
      m = parse_mode(v);
    } catch (const Error&) {
      bad(kPublishMode, v, "is not a publish mode (use inline, combine, bulk or decoupled)");
    }
    try {
      check_publish_mode(m);
    } catch (const Error& e) {
      const std::string why = e.what();
      bad(kPublishMode, v, "cannot be used: " + why.substr(why.rfind("gpsm: ", 0) == 0 ? 6 : 0));
    }
    s.mode = m;
  }
  if (env(kWaitTimeout, v)) {
    s.wait_timeout_ms = parse_positive_int(kWaitTimeout, v);
    if (s.wait_timeout_ms > kMaxWaitTimeoutMs)
      bad(kWaitTimeout, v,
          "is more than a day (at most " + std::to_string(kMaxWaitTimeoutMs) +
              " ms); the bound is a guard against a hang, use e.g. 60000 for a minute");
  }
  if (env(kInboundEntries, v)) {
    const std::uint64_t n = parse_size_var(kInboundEntries, v, "a positive entry count such as 4194304 or 4M");
    if (n > std::numeric_limits<std::uint64_t>::max() / kPackedEntryBytes) bad(kInboundEntries, v, "is too large");
    s.inbound_entries = n;
  }
  if (env(kVerifyP2p, v)) s.verify_p2p = parse_bool(kVerifyP2p, v);
  if (env(kCountLinkBytes, v)) s.count_link_bytes = parse_bool(kCountLinkBytes, v);
  if (env(kProfileFence, v)) s.profile_fence = parse_bool(kProfileFence, v);
  if (env(kDecoupledAgent, v)) {
    try {
      s.decoupled_agent = parse_decoupled_agent(lower(v));
    } catch (const Error&) {
      bad(kDecoupledAgent, v, "is not a decoupled agent (use inline or persistent)");
    }
  }
  if (env(kDecoupledChunk, v)) {
    const std::uint64_t b = parse_size_var(kDecoupledChunk, v, "a size such as 16K, 64KiB or 16384");
    if (page_shift_of(b) < 0)
      bad(kDecoupledChunk, v, "must be a power of two of at least " + std::to_string(kLineBytes) + " bytes (e.g. 4K, 16K)");
    s.decoupled_chunk = b;
  }
  if (env(kAsyncFence, v)) {
    try {
      s.async_fence = parse_async_fence(lower(v));
    } catch (const Error&) {
      bad(kAsyncFence, v, "is not an async fence (use kernel, events or auto)");
    }
  }
  return s;
}

std::vector<SettingDoc> describe(const Settings& s) {
  const Settings d;
  return {
      {kPageSize, gpsm::format_size(s.page_bytes), gpsm::format_size(d.page_bytes),
       "Page size of replicated allocations: the unit of subscription (power of two, >= 128 B)."},
      {kPublishMode, mode_name(s.mode), mode_name(d.mode),
       "How stores reach other subscribers: inline (at each store), combine (at the fence, lines or packed "
       "words), bulk (at the fence, copy-engine runs) or decoupled (each chunk pushed by an agent when the "
       "stores counted for it while tracking have all been made; the fence publishes the rest)."},
      {kWaitTimeout, std::to_string(s.wait_timeout_ms), std::to_string(d.wait_timeout_ms),
       "Milliseconds (at most 86400000, a day) a device-side wait (device barrier, device fence, flag) spins before it reports a timeout "
       "and traps; also the bound of the PROACT paths' host waits behind stream waits (a counter short of its value "
       "is reported and the run fails); host fences wait for the kernels without a bound."},
      {kInboundEntries, std::to_string(s.inbound_entries), std::to_string(d.inbound_entries),
       "Initial capacity of each inbound packed-entry area, per source and array (6 B per entry; count or size like 4M); doubles after a fence that needed more than one round."},
      {kVerifyP2p, bool_str(s.verify_p2p), bool_str(d.verify_p2p),
       "Check peer access between all device pairs at context creation (0/1, true/false, on/off)."},
      {kCountLinkBytes, bool_str(s.count_link_bytes), bool_str(d.count_link_bytes),
       "Count useful and link bytes at each fence for statistics (small overhead; 0/1, true/false, on/off)."},
      {kProfileFence, bool_str(s.profile_fence), bool_str(d.profile_fence),
       "Print each fence's phase times (wait for kernels, drain, unpack, control) to stderr (0/1)."},
      {kDecoupledAgent, agent_name(s.decoupled_agent), agent_name(d.decoupled_agent),
       "Who pushes a complete chunk in decoupled mode: inline (the warp whose store completed it) or persistent "
       "(a block of polling warps per device, launched when a decoupled view is taken)."},
      {kDecoupledChunk, gpsm::format_size(s.decoupled_chunk), gpsm::format_size(d.decoupled_chunk),
       "Readiness-counter granularity of decoupled arrays (power of two >= 128 B; capped at the page size)."},
      {kAsyncFence, async_fence_name(s.async_fence), async_fence_name(d.async_fence),
       "How fence_async orders the GPUs (inline arrays): kernel (a one-block barrier kernel per GPU on its "
       "stream, counters in GPU memory; a captured loop has no cross-GPU graph edges), events (each GPU's "
       "stream waits on every other GPU's event) or auto (events on two GPUs, the kernel on more)."},
  };
}

}  // namespace gpsm::gps
