#pragma once
// 16-bit column deltas for CG's sliced layout (plain C++, CPU-tested): index compression after
// Kourtis, Goumas and Koziris, "Optimizing sparse matrix-vector multiplication using index and
// value compression" (CF 2008), and Willcock and Lumsdaine, "Accelerating sparse matrix
// computations via data compression" (ICS 2006): SpMV is bound by the bytes it reads, and with
// float values a 32-bit column is half of a sliced entry.
//
// In the sliced layout (sell.hpp) a warp reads entry k of its slice's 32 rows at once: the "slot"
// (s, k), entries slice_ptr[s] + 32 k + t. A stencil's rows are neighbours and so are their k-th
// columns, so a slot's 32 columns lie close together. Such a slot is stored as one 32-bit base,
// the smallest of its columns, and a 16-bit delta per entry, column = base + delta. The base is one
// address for the whole warp (a broadcast load), so per slot a warp reads 64 bytes of deltas and 4
// of base instead of 128 bytes of columns. The smallest column as the base (rather than, say,
// lane 0's) makes the fit exactly "the slot spans fewer than 65536 columns" and the delta
// unsigned: a zero-extending load, no sign.
//
// Slot (s, k)'s base is base[slice_ptr[s] / 32 + k]: slice_ptr is a multiple of 32, so the bases
// are numbered like the slots, no second offset table.
//
// A slot that spans more does not fit: a row reaching far, or a slot mixing own columns with halo
// slots far from them. In the local numbering of a multi-GPU run (partition.hpp) the halo slots
// follow the rows, those from lower ranks first: the first rows' slots reading the rank above
// (its last grid row, Poisson's "north") sit `rows` away from own columns. A Poisson 2D grid whose
// width is a multiple of 32 never mixes them in a slot (the rows that read the north halo are the
// first `width`, whole slices); the south halo follows the last rows, a few thousand columns away.
// A width that is not (37x29) puts a slice across that boundary: 32-bit columns. One index storage
// for every GPU and slot (a kernel template argument), so one slot that does not fit keeps the
// whole run at 32-bit columns.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/sell.hpp"

namespace gpsm::apps::cg {

enum class IndexStorage : std::uint8_t { i32, i16 };
const char* index_storage_name(IndexStorage s);  // "i32", "i16"
// Bytes of a stored entry's column; an i16 slot adds a 4-byte base (once per warp).
constexpr int index_bytes(IndexStorage s) { return s == IndexStorage::i16 ? 2 : 4; }

// What the user asks for (GPSM_CG_INDEX): the automatic choice, or one storage forced.
enum class IndexChoice : std::uint8_t { automatic, i32, i16 };
// GPSM_CG_INDEX's value: null or "" or "auto", "i32", "i16". Throws gpsm::Error otherwise.
IndexChoice parse_index_choice(const char* text);
const char* index_choice_name(IndexChoice c);  // "auto", "i32", "i16"

constexpr std::int64_t kDeltaSpan = 65536;  // a slot fits when its largest column - smallest < this

// A slot whose columns span kDeltaSpan or more: slice, slot (k) and its smallest and largest column.
struct WideSlot {
  std::int64_t slice = -1;  // -1: none
  int slot = 0;
  std::int64_t lo = 0, hi = 0;
  bool found() const { return slice >= 0; }
};

// The first wide slot of the sliced layout make_sell builds from a CSR (row_ptr, and column(k) of
// CSR entry k), padding included (sell_pad_column, pad_base as make_sell's), without building it.
template <class Column>
WideSlot first_wide_slot(const std::vector<std::int32_t>& row_ptr, const Column& column, std::int64_t pad_base) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  for (std::int64_t s = 0; s * kSliceRows < rows; ++s) {
    const std::int64_t first = s * kSliceRows, end = std::min(rows, first + kSliceRows);
    std::int32_t w = 0;
    for (std::int64_t i = first; i < end; ++i) w = std::max(w, row_ptr[i + 1] - row_ptr[i]);
    for (int k = 0; k < w; ++k) {
      std::int64_t lo = 0, hi = 0;
      for (std::int64_t i = first; i < first + kSliceRows; ++i) {
        const bool real = i < rows && k < row_ptr[i + 1] - row_ptr[i];
        const std::int64_t c = real ? static_cast<std::int64_t>(column(row_ptr[i] + k)) : sell_pad_column(i, rows, pad_base);
        lo = i == first ? c : std::min(lo, c);
        hi = i == first ? c : std::max(hi, c);
      }
      if (hi - lo >= kDeltaSpan) return {s, k, lo, hi};
    }
  }
  return {};
}

// The same on a built layout.
WideSlot first_wide_slot(const Sell& s);

// "slice 3, slot 0 spans columns 12 to 1050000 (1049988 apart, 16-bit deltas reach 65535)".
std::string describe(const WideSlot& w);

// The columns of a sliced layout as 16-bit deltas from a per-slot base.
struct SellDeltas {
  std::vector<std::int32_t> base;     // per slot (slice_ptr[s] / 32 + k): its smallest column
  std::vector<std::uint16_t> delta;   // per entry: its column - its slot's base
};
// Throws gpsm::Error naming the first wide slot when one does not fit.
SellDeltas make_deltas(const Sell& s);

// The index storage a run takes and why, in one line for the report.
struct IndexesChoice {
  IndexStorage storage = IndexStorage::i32;
  std::string reason;
};
// sliced: the run's layout is SELL-32 (deltas are a form of it; CSR keeps 32-bit columns).
// misfit: "" when every GPU's every slot fits (in both numberings the runs use), else the first
// one that does not (describe, with its GPU). Forcing i16 where it cannot apply throws gpsm::Error.
IndexesChoice choose_index(bool sliced, IndexChoice want, const std::string& misfit);

// Host emulation of the device's sliced SpMV over deltas (sell_row_times with each column read as
// base + delta): equal to sell_row_times on the layout they were made from.
template <class X>
double sell_delta_row_times(const Sell& s, const SellDeltas& d, std::int64_t row, int lanes, const X& x) {
  return sliced_row_times(
      s.slice_ptr, row, lanes,
      [&](std::int64_t e, std::int64_t slot) {
        return static_cast<std::int32_t>(d.base[static_cast<std::size_t>(slot)] + d.delta[static_cast<std::size_t>(e)]);
      },
      [&](std::int64_t e) { return s.val[static_cast<std::size_t>(e)]; }, x);
}

}  // namespace gpsm::apps::cg
