#pragma once
// FinePack in software (PROACT dissertation ch. V): how the dirty words of one 128-byte line travel to a
// subscriber at a fence, and the packed message format for scattered words.
//
// A source tracks dirty words in a bitmap, one u32 per line (bit w = word w). At the fence each
// dirty line is sent one of two ways, whichever puts fewer bytes on the link:
//   direct  the dirty words are written to the subscriber's replica as one warp-wide store; the
//           link carries every touched 32-byte sector whole (the remote-write granularity);
//   packed  each dirty word becomes a 6-byte entry: a 2-byte offset inside its block plus the
//           4-byte value (FinePack's base + offset with a 2-byte sub-header).
// Blocks are runs of kMaxBlockLines lines (16 KiB), smaller when pages are smaller, so a block
// never spans two pages and has one subscriber set. A source sends each block's packed entries to
// a subscriber as one record: the offsets and the values land in two arrays of the receiver's
// inbound area, and an 8-byte directory entry {first entry, count} for the block says where. The
// receiver gathers every source's record of a block in shared memory and writes the block's
// touched words with one coalesced (masked) store per line: words arriving from three GPUs for
// one line cost the receiver one write, not three scattered ones.
// The bitmap already coalesces repeated stores to one word, so a source sends each dirty word to
// each subscriber once per fence, and no record holds two entries for one word: unpacking needs
// no ordering. Values are read from the source's replica at the fence, so same-address order
// from one GPU holds (the last store in program order is what the replica holds).
#include <cstdint>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

// One packed word as the host model lists it (on the wire: block offset + value, 6 bytes).
struct PackedEntry {
  std::uint32_t word;   // word offset from the replica base (arrays up to 16 GiB)
  std::uint32_t value;  // the word's value at the fence
};
constexpr std::uint32_t kPackedEntryBytes = 6;  // 2-byte offset in the block + 4-byte value
constexpr std::uint32_t kDirEntryBytes = 8;     // one per (block, destination) record
constexpr std::uint64_t kMaxPackedWords = std::uint64_t{1} << 32;
constexpr std::uint32_t kMaxBlockLines = 128;   // 16 KiB: word offsets fit 12 bits
constexpr std::uint32_t kMaxBlockWords = kMaxBlockLines * kLineWords;
// Records start on 8-entry boundaries (16-byte copies); the padding crosses the link too.
constexpr std::uint32_t kRecordAlignEntries = 8;
GPSM_HD std::uint32_t padded_entries(std::uint32_t n) {
  return (n + kRecordAlignEntries - 1) / kRecordAlignEntries * kRecordAlignEntries;
}
// Lines per block for pages of 1 << page_shift bytes (page_shift >= 7): whole pages below 16 KiB.
GPSM_HD std::uint32_t block_lines_for(std::uint32_t page_shift) {
  return page_shift >= 14 ? kMaxBlockLines : (1u << (page_shift - 7));
}

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
// True when the line should travel as packed entries (strictly cheaper on the link; the block's
// directory entry is shared by many lines and left out of the choice).
GPSM_HD bool pack_line(std::uint32_t mask) { return packed_link_bytes(mask) < direct_link_bytes(mask); }

// Words [first_word, first_word + nwords) were stored: set their dirty bits (host reference; the
// device does the same with warp-aggregated atomics).
inline void mark_dirty_host(std::uint32_t* dirty_lines, std::uint64_t first_word, std::uint64_t nwords) {
  for (std::uint64_t w = first_word; w < first_word + nwords; ++w) dirty_lines[w / kLineWords] |= 1u << (w % kLineWords);
}

}  // namespace gpsm::gps
