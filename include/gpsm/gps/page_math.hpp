#pragma once
// Index math of a replicated allocation: bytes -> words -> lines -> pages. Host and device use the
// same functions so the CPU tests cover what the kernels compute.
#include <cstdint>

#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

struct Geometry {
  std::uint64_t bytes = 0;      // allocation size as requested
  std::uint32_t page_shift = 16;  // page = 1 << page_shift bytes

  GPSM_HD std::uint64_t page_bytes() const { return std::uint64_t{1} << page_shift; }
  GPSM_HD std::uint64_t pages() const { return (bytes + page_bytes() - 1) >> page_shift; }
  // Replica size: whole lines, so the last line's word bitmap never points past the buffer.
  GPSM_HD std::uint64_t padded_bytes() const { return (bytes + kLineBytes - 1) / kLineBytes * kLineBytes; }
  GPSM_HD std::uint64_t words() const { return padded_bytes() / kWordBytes; }
  GPSM_HD std::uint64_t lines() const { return padded_bytes() / kLineBytes; }
  GPSM_HD std::uint64_t page_of_byte(std::uint64_t b) const { return b >> page_shift; }
  GPSM_HD std::uint64_t page_of_word(std::uint64_t w) const { return (w * kWordBytes) >> page_shift; }
  GPSM_HD std::uint64_t page_of_line(std::uint64_t l) const { return (l * kLineBytes) >> page_shift; }
  // Dirty/tracking bitmaps: one bit per word (32 per line = one u32 per line), one bit per page.
  GPSM_HD std::uint64_t page_bitmap_words() const { return (pages() + 31) / 32; }
};

// [first, last) pages covering the byte range [begin, end); empty when begin >= end.
struct PageRange {
  std::uint64_t first = 0, last = 0;
};
GPSM_HD PageRange pages_of_bytes(const Geometry& g, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return {0, 0};
  return {begin >> g.page_shift, ((end - 1) >> g.page_shift) + 1};
}

// A page size for data accessed in runs of run_bytes that start at multiples of run_bytes (the
// rows of a grid, its planes): the largest power of two dividing run_bytes, at most max_page, so
// every run covers whole pages and View::span checks one mask per page of a run, never a page
// shared with another run. 0 when no page of at least one line divides run_bytes (runs then
// straddle pages, whatever the size).
inline std::uint64_t page_bytes_for_runs(std::uint64_t run_bytes, std::uint64_t max_page = std::uint64_t{2} << 20) {
  if (run_bytes == 0) return 0;
  std::uint64_t p = run_bytes & (~run_bytes + 1);  // lowest set bit: the largest power of two dividing it
  while (p > max_page) p >>= 1;
  return p >= kLineBytes ? p : 0;
}

// log2 of a page size; returns -1 unless it is a power of two that is a whole number of lines.
inline int page_shift_of(std::uint64_t page_bytes) {
  if (page_bytes < kLineBytes || (page_bytes & (page_bytes - 1)) != 0) return -1;
  int s = 0;
  while ((std::uint64_t{1} << s) < page_bytes) ++s;
  return s;
}

}  // namespace gpsm::gps

namespace gpsm::gps {

// The subscribers of pages [first, last] from the mask table and its run lengths (runs[p]: pages
// from p on with p's mask, same_mask_runs): one step per run of equal masks, not one per page.
// `all` is the AND of the masks (the devices holding every page), `uniform` whether they are all
// equal. Host and device (View::span, View::local_span) walk it alike.
struct MaskSpan {
  std::uint32_t first = 0, all = 0;
  bool uniform = true;
};
GPSM_HD MaskSpan masks_over_runs(const std::uint32_t* masks, const std::uint32_t* runs, std::uint64_t first,
                                 std::uint64_t last) {
  MaskSpan s;
  s.first = masks[first];
  s.all = s.first;
  for (std::uint64_t p = first + runs[first]; p <= last; p += runs[p]) {
    s.all &= masks[p];
    s.uniform = false;  // runs are maximal: the next run's mask differs
  }
  return s;
}

}  // namespace gpsm::gps
