#pragma once
// The sliced-ELL layout of a GPU's local rows for CG's SpMV (plain C++, CPU-tested): SELL-C-sigma
// with C = 32 rows per slice (one warp) and sigma = 1, i.e. no sorting: rows keep their order, so
// the row split, the halo lists, the chunks and the dot-product order are the CSR's.
//
// Slice s holds rows 32 s .. 32 s + 31; its width is its longest row; entry k of row 32 s + t sits
// at slice_ptr[s] + 32 k + t, so thread t of a warp reads its row's k-th entry next to its
// neighbours' (one coalesced 256-byte value load and 128-byte column load per k and warp). A row
// shorter than its slice is padded with value 0 at a column the SpMV reads anyway, the row's own
// (an SPD matrix has every diagonal entry), so no per-row length and no branch are needed.
//
// The arithmetic is cg_math.hpp's, unchanged: one thread per row keeps `lanes` accumulators and
// adds entry k into accumulator k % lanes, in k order, then reduces them with lane_tree; that is
// exactly what the CSR path's `lanes` threads and their shuffle-down tree compute, so both layouts
// give the same bits and one CPU reference checks both. A padding entry adds fma(0, x_own, acc),
// which is acc itself for a finite x_own, with one exception: an accumulator that is -0 (a product
// that underflowed to -0) becomes +0, so the sign of an exactly zero row sum may differ.
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/cg_math.hpp"

namespace gpsm::apps::cg {

constexpr int kSliceRows = kWarp;  // C: a slice is what one warp reads
// Entries the SpMV reads, padding included, per nonzero, up to which SELL is taken: beyond it the
// padding costs more memory traffic than the coalescing saves (a dense row pads its whole slice).
constexpr double kSellPaddingBound = 1.25;
// SELL only for rows of fewer than 16 nonzeros on average (lanes <= 8): there the CSR path's
// groups of 2-8 lanes make partly used, uncoalesced loads; groups of 16 or 32 lanes already read
// 128-256 contiguous bytes of a row, and one thread would need 16-32 accumulators to keep the
// lanes' order.
constexpr int kSellMaxLanes = 8;

enum class SpmvLayout : std::uint8_t { csr, sell };
const char* layout_name(SpmvLayout l);

// What the user asks for (GPSM_CG_SPMV): the automatic choice, or one layout forced.
enum class SpmvChoice : std::uint8_t { automatic, csr, sell };
// GPSM_CG_SPMV's value: null or "" or "auto", "csr", "sell". Throws gpsm::Error otherwise.
SpmvChoice parse_spmv_choice(const char* text);

struct Sell {
  std::int64_t rows = 0;
  std::vector<std::int32_t> slice_ptr;  // slices + 1; slice s: [slice_ptr[s], slice_ptr[s + 1]), width = size / 32
  std::vector<std::int32_t> col;        // column-major within a slice; padding: pad_base + row (a
                                        // short last slice's missing rows: pad_base + rows - 1)
  std::vector<double> val;              // padding: 0
  std::int64_t slices() const { return static_cast<std::int64_t>(slice_ptr.size()) - 1; }
  int width(std::int64_t s) const { return (slice_ptr[s + 1] - slice_ptr[s]) / kSliceRows; }
};

// Entries of the sliced layout of the CSR row pointers: per slice, 32 times its width, padding
// included. The SpMV reads every one: a short last slice stores its missing rows (padding too),
// and the whole warp computes them so that its loads need no per-lane guard.
std::int64_t sell_entries(const std::vector<std::int32_t>& row_ptr);

// The column of a padding entry of row `row` (of `rows`; a short last slice's missing rows are
// rows and beyond): the row's own, pad_base + row (0: local columns; the row's global index for
// global columns), the last row's for a missing row. make_sell and the delta fit (sell_deltas.hpp)
// both take it from here.
inline std::int64_t sell_pad_column(std::int64_t row, std::int64_t rows, std::int64_t pad_base) {
  return pad_base + (row < rows ? row : rows - 1);
}

// The sliced layout of a CSR (row_ptr: rows + 1), padded at sell_pad_column. Throws gpsm::Error
// when the stored entries reach 2^31.
Sell make_sell(const std::vector<std::int32_t>& row_ptr, const std::vector<std::int32_t>& col,
               const std::vector<double>& val, std::int64_t pad_base = 0);

// The layout a run takes and why, in one line for the report.
struct LayoutChoice {
  SpmvLayout layout = SpmvLayout::csr;
  double padding = 1;  // the largest GPU's sliced entries per nonzero (sell_entries / nnz)
  std::string reason;
};
// lanes: the matrix's lanes per row; padding as above.
LayoutChoice choose_layout(int lanes, double padding, SpmvChoice want);

// Host emulation of the device's sliced SpMV for local row `row` (x(j): the vector at column j),
// in cg_math.hpp's order: equal to row_times over the row's CSR entries for finite x. The entries
// as stored: column col(e, slot) and value val(e) of entry e (slot: slice_ptr[s] / 32 + k, entry
// k of the row's slice s), so the compressed forms (sell_deltas.hpp, value_storage.hpp) emulate
// through the same loop.
template <class Col, class Val, class X>
double sliced_row_times(const std::vector<std::int32_t>& slice_ptr, std::int64_t row, int lanes, const Col& col,
                        const Val& val, const X& x) {
  const std::int64_t sl = row / kSliceRows, t = row % kSliceRows;
  const std::int64_t base = slice_ptr[sl] + t, slot0 = slice_ptr[sl] / kSliceRows;
  const int w = (slice_ptr[sl + 1] - slice_ptr[sl]) / kSliceRows;
  double acc[kWarp];
  for (int l = 0; l < lanes; ++l) acc[l] = 0.0;
  for (int k = 0; k < w; ++k) {
    const std::int64_t e = base + static_cast<std::int64_t>(k) * kSliceRows;
    acc[k % lanes] = fmad(val(e), x(col(e, slot0 + k)), acc[k % lanes]);
  }
  return lane_tree(acc, lanes);
}

// The same for the plain layout: 32-bit columns, double values.
template <class X>
double sell_row_times(const Sell& s, std::int64_t row, int lanes, const X& x) {
  return sliced_row_times(
      s.slice_ptr, row, lanes, [&](std::int64_t e, std::int64_t) { return s.col[static_cast<std::size_t>(e)]; },
      [&](std::int64_t e) { return s.val[static_cast<std::size_t>(e)]; }, x);
}

}  // namespace gpsm::apps::cg
