#pragma once
// The PROACT kernels' parameters and host launchers (producer.cu, agent_persistent.cu,
// agent_device_launch_rdc.cu). CUDA runtime types only; the engine (engine_cuda.cpp) calls these.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "gpsm/gps/sync.hpp"
#include "proact/values.hpp"

namespace gpsm::proact {

inline constexpr int kProducerThreads = 256;  // x 16 B = one 4 KiB block (kBlockBytes)
inline constexpr int kMaxPeers = gps::kMaxDevices;

// What the producer kernel does besides computing its slice into `local`.
enum class Track : std::uint8_t {
  none = 0,      // nothing (compute baseline; memcpy agent)
  counters = 1,  // PROACT dissertation Algorithm 1: after the block barrier, decrement the
                 // block's chunk counters; the block that brings one to zero stores
                 // flags[c] = phase (release, system scope)
  inline_peers = 2,  // also store every value to each peer (inline agent)
};

struct ProducerArgs {
  std::uint32_t* local = nullptr;  // the producer's slice in its own replica (4-byte words)
  std::uint64_t words = 0;         // slice words (a multiple of 1024: 4 KiB blocks)
  std::uint64_t first_word = 0;    // slice offset in the array, words (values depend on the global index)
  std::uint32_t seed = 0, phase = 0, work = 0;
  // Track::counters
  std::uint32_t* remaining = nullptr;  // per chunk, reset to ChunkGeometry::writers before each phase
  std::uint32_t* flags = nullptr;      // per chunk, device or host-mapped memory
  std::uint64_t chunk_bytes = 0;
  // Track::inline_peers
  std::uint32_t* peers[kMaxPeers] = {};  // the slice in each destination's replica
  int npeers = 0;
};

void launch_producer(Track t, const ProducerArgs& a, cudaStream_t s);

// Counts words of dst[0, words) that differ from produce_value (first_word + k, ...); writes the
// count and the lowest bad word index to out[0] and out[1] (device memory, zeroed and set to
// UINT64_MAX by the launcher on the stream first).
void launch_verify(const std::uint32_t* dst, std::uint64_t words, std::uint64_t first_word, std::uint32_t seed,
                   std::uint32_t phase, std::uint32_t work, unsigned long long* out, cudaStream_t s);

// One thread waits until *go >= value (host-mapped memory): everything enqueued behind it starts
// when the host releases the run. Bounded: after timeout_ns it stores value to *timed_out
// (host-mapped) and returns, so the run drains and the host fails it with the context intact.
void launch_gate(const std::uint32_t* go, std::uint32_t value, std::uint64_t timeout_ns, std::uint32_t* timed_out,
                 cudaStream_t s);

// Persistent transfer warps (agent_persistent.cu): `threads` threads (whole warps) in groups; a
// group takes chunks group, group + groups, ...; for each it waits (bounded) until
// flags[c] >= phase, then copies the chunk to every destination in dest_mask[c].
struct CopyArgs {
  const std::uint32_t* src = nullptr;        // the producer's slice
  std::uint32_t* dst[kMaxPeers] = {};        // the slice in each destination's replica, by rank
  const std::uint32_t* dest_mask = nullptr;  // per chunk: bit r = rank r receives it
  const std::uint32_t* flags = nullptr;
  std::uint32_t phase = 0;
  std::uint64_t words = 0, chunk_words = 0, chunks = 0;
  gps::WaitPolicy wait;
};
void launch_persistent_agent(const CopyArgs& a, int threads, cudaStream_t s);

// Device-launch agent (agent_device_launch_rdc.cu, relocatable device code): the producer with
// Track::counters whose chunk-completing block launches a copy kernel of `threads` threads for the
// chunk (fire-and-forget stream). The parent grid completes only after its children.
// times[0] = latest globaltimer (ns) at which a producer block finished its compute,
// times[1] = latest globaltimer at which a copy kernel finished; error[0] = first device-side
// launch error code + 1 (0: none), error[1] = the chunk. All zeroed by the caller.
struct LaunchTimes {
  unsigned long long* times = nullptr;
  unsigned int* error = nullptr;
};
void launch_producer_device_launch(const ProducerArgs& a, const CopyArgs& c, int threads, const LaunchTimes& t,
                                   cudaStream_t s);
// Loads every PROACT kernel on the current device (cudaFuncGetAttributes) and, for the device-launch
// agent, runs one parent that launches one child, so the device runtime is set up. Why: CUDA loads
// kernels lazily (CUDA_MODULE_LOADING=LAZY, the default since 12.2), and loading a kernel while the
// gate kernel spins waits for the gate: the first run of each kernel then opened the gate on its
// timeout (seen on 4xH200, 2026-11-22: "the host took over 20000 ms to enqueue the run"). Call
// before the first gated run; synchronizes the device.
void preload_producer_kernels();
void preload_persistent_agent();
void preload_device_launch();
// Whether this build has the device-launch agent (CUDA dynamic parallelism).
bool device_launch_built();

}  // namespace gpsm::proact
