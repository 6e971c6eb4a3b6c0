#pragma once
// GPS constants and the publish modes, shared by host and device code.
#include <cstdint>

#if defined(__CUDACC__)
#define GPSM_HD __host__ __device__ __forceinline__
#else
#define GPSM_HD inline
#endif

namespace gpsm::gps {

// Devices per context. Subscriber sets are 32-bit masks; views carry one pointer per device, so
// this bounds the kernel-parameter size (8 covers an HGX/DGX node).
constexpr int kMaxDevices = 8;

// Publishing works on 4-byte words and 128-byte lines: a line is one L2 cache line, the unit the
// hardware coalesces remote stores into, and one 32-bit word of the dirty bitmap.
constexpr std::uint32_t kWordBytes = 4;
constexpr std::uint32_t kLineBytes = 128;
constexpr std::uint32_t kLineWords = kLineBytes / kWordBytes;  // 32
constexpr std::uint32_t kSectorBytes = 32;                     // smallest remote write the link carries
constexpr std::uint64_t kDefaultPageBytes = 64 * 1024;         // GPS paper §5.2: 64 KiB pages

// How a store reaches the other subscribers of its page (GPS paper §3.3, docs/gps.md "Publish modes").
enum class PublishMode : std::uint8_t {
  inline_store = 0,  // each store is also written to every other subscriber as it is issued
  combine = 1,       // store marks a dirty word; at the fence dense lines go as line writes and
                     // scattered words as packed (offset, value) messages unpacked by the receiver
  bulk = 2,          // store marks a dirty word; at the fence dirty runs are copied by copy engines
  decoupled = 3,     // store marks a dirty word and adds to its chunk's readiness counter; the store
                     // that completes the count learned while tracking hands the chunk to an agent,
                     // which pushes it while the kernel runs; the fence publishes what is left
};

// Who pushes a complete chunk in PublishMode::decoupled (the transfer agents of the PROACT
// dissertation §2.3.3): the warp whose store completed it, or persistent polling warps.
enum class DecoupledAgent : std::uint8_t {
  inline_warp = 0,  // the completing warp copies the chunk to each subscriber (16-byte stores)
  persistent = 1,   // a block of polling warps on a stream of its own, armed when a view is taken
};
constexpr std::uint64_t kDefaultDecoupledChunk = 16 * 1024;
// Added to a chunk's readiness counter by an atomic on it (performed at the home copy, published
// at the fence): the counter can then never equal the learned count, so the fence publishes it.
constexpr unsigned long long kIrregularCount = 1ull << 40;

GPSM_HD std::uint32_t bit(int device) { return 1u << device; }

}  // namespace gpsm::gps
