#pragma once
// FinePack in software (seed 000 ch. V): how the dirty words of one 128-byte line travel to a
// subscriber at a fence, and the packed message format for scattered words.
//
// A source tracks dirty words in a bitmap, one u32 per line (bit w = word w). At the fence each
// dirty line is sent one of two ways, whichever puts fewer bytes on the link:
//   direct  the dirty words are written to the subscriber's replica as one warp-wide store; the
//           link carries every touched 32-byte sector whole (the remote-write granularity);
//   packed  each dirty word becomes an 8-byte entry {word offset, value} appended to the
//           subscriber's inbound queue; the receiver unpacks (scatters) them into its replica.
// The offset is relative to the replica's base: the receiver adds its own base, which is the
// "base + offset" compression of FinePack with the base known to both ends (no header bytes).
// The bitmap already coalesces repeated stores to one word, so a source sends each dirty word to
// each subscriber once per fence, and no queue holds two entries for one word: unpacking needs
// no ordering. Values are read from the source's replica at the fence, so same-address order
// from one GPU holds (the last store in program order is what the replica holds).
#include <cstdint>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

struct PackedEntry {
  std::uint32_t word;   // word offset from the replica base (arrays up to 16 GiB)
  std::uint32_t value;  // the word's value at the fence
};
static_assert(sizeof(PackedEntry) == 8, "packed entries are 8 bytes on the wire");
constexpr std::uint32_t kPackedEntryBytes = sizeof(PackedEntry);
constexpr std::uint64_t kMaxPackedWords = std::uint64_t{1} << 32;

GPSM_HD int popcount32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

// 32-byte sectors (8 words each) a line's dirty mask touches.
GPSM_HD std::uint32_t sectors_touched(std::uint32_t mask) {
  std::uint32_t n = 0;
  for (int s = 0; s < 4; ++s) n += ((mask >> (8 * s)) & 0xFFu) != 0u;
  return n;
}
GPSM_HD std::uint32_t direct_link_bytes(std::uint32_t mask) { return sectors_touched(mask) * kSectorBytes; }
GPSM_HD std::uint32_t packed_link_bytes(std::uint32_t mask) {
  return static_cast<std::uint32_t>(popcount32(mask)) * kPackedEntryBytes;
}
// True when the line should travel as packed entries (strictly cheaper on the link).
GPSM_HD bool pack_line(std::uint32_t mask) { return packed_link_bytes(mask) < direct_link_bytes(mask); }

// Words [first_word, first_word + nwords) were stored: set their dirty bits (host reference; the
// device does the same with warp-aggregated atomics).
inline void mark_dirty_host(std::uint32_t* dirty_lines, std::uint64_t first_word, std::uint64_t nwords) {
  for (std::uint64_t w = first_word; w < first_word + nwords; ++w) dirty_lines[w / kLineWords] |= 1u << (w % kLineWords);
}

}  // namespace gpsm::gps
