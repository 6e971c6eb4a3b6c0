// The sliced-ELL layout of CG's SpMV and the choice between it and CSR (sell.hpp).
#include "apps/cg/sell.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "apps/cg/env_choice.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const char* layout_name(SpmvLayout l) { return l == SpmvLayout::sell ? "sell" : "csr"; }

SpmvChoice parse_spmv_choice(const char* text) {
  static constexpr ChoiceName<SpmvChoice> kChoices[] = {
      {"auto", SpmvChoice::automatic}, {"csr", SpmvChoice::csr}, {"sell", SpmvChoice::sell}};
  return parse_choice("GPSM_CG_SPMV", "a layout", text, kChoices);
}

namespace {
// Rows of slice s and its width (longest row).
std::int64_t slice_rows(std::int64_t rows, std::int64_t s) { return std::min<std::int64_t>(kSliceRows, rows - s * kSliceRows); }
std::int32_t slice_width(const std::vector<std::int32_t>& row_ptr, std::int64_t rows, std::int64_t s) {
  std::int32_t w = 0;
  for (std::int64_t i = s * kSliceRows; i < s * kSliceRows + slice_rows(rows, s); ++i) w = std::max(w, row_ptr[i + 1] - row_ptr[i]);
  return w;
}
}  // namespace

std::int64_t sell_entries(const std::vector<std::int32_t>& row_ptr) {
  const std::int64_t rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  std::int64_t e = 0;
  for (std::int64_t s = 0; s * kSliceRows < rows; ++s) e += kSliceRows * static_cast<std::int64_t>(slice_width(row_ptr, rows, s));
  return e;
}

Sell make_sell(const std::vector<std::int32_t>& row_ptr, const std::vector<std::int32_t>& col,
               const std::vector<double>& val, std::int64_t pad_base) {
  Sell s;
  s.rows = static_cast<std::int64_t>(row_ptr.size()) - 1;
  const std::int64_t slices = (s.rows + kSliceRows - 1) / kSliceRows;
  s.slice_ptr.assign(static_cast<std::size_t>(slices) + 1, 0);
  std::int64_t at = 0;
  for (std::int64_t sl = 0; sl < slices; ++sl) {
    at += static_cast<std::int64_t>(kSliceRows) * slice_width(row_ptr, s.rows, sl);
    if (at > std::numeric_limits<std::int32_t>::max())
      throw gpsm::Error(fmt::format("gpsm: cg: the sliced layout of {} rows would store {} or more entries; it takes "
                                    "fewer than 2^31 (use more GPUs, or GPSM_CG_SPMV=csr)",
                                    s.rows, at));
    s.slice_ptr[sl + 1] = static_cast<std::int32_t>(at);
  }
  s.col.assign(static_cast<std::size_t>(at), 0);
  s.val.assign(static_cast<std::size_t>(at), 0.0);
  for (std::int64_t i = 0; i < s.rows; ++i) {
    const std::int64_t sl = i / kSliceRows, base = s.slice_ptr[sl] + i % kSliceRows;
    const int w = s.width(sl), len = row_ptr[i + 1] - row_ptr[i];
    for (int k = 0; k < w; ++k) {
      const std::size_t e = static_cast<std::size_t>(base + static_cast<std::int64_t>(k) * kSliceRows);
      if (k < len) {
        s.col[e] = col[static_cast<std::size_t>(row_ptr[i] + k)];
        s.val[e] = val[static_cast<std::size_t>(row_ptr[i] + k)];
      } else {
        s.col[e] = static_cast<std::int32_t>(sell_pad_column(i, s.rows, pad_base));  // value 0 (assigned)
      }
    }
  }
  // The missing rows of a short last slice: computed (not written) by their warp's lanes, at the
  // last row's own column (in the last chunk's column range, which the gps paradigm checks).
  for (std::int64_t i = s.rows; i < slices * kSliceRows; ++i) {
    const std::int64_t sl = i / kSliceRows, base = s.slice_ptr[sl] + i % kSliceRows;
    for (int k = 0; k < s.width(sl); ++k)
      s.col[static_cast<std::size_t>(base + static_cast<std::int64_t>(k) * kSliceRows)] = static_cast<std::int32_t>(sell_pad_column(i, s.rows, pad_base));
  }
  return s;
}

LayoutChoice choose_layout(int lanes, double padding, SpmvChoice want) {
  LayoutChoice c;
  c.padding = padding;
  if (want == SpmvChoice::csr) {
    c.reason = "CSR, forced by GPSM_CG_SPMV=csr";
  } else if (lanes > kSellMaxLanes) {
    c.reason = fmt::format("CSR with {} lanes per row: rows of 16 or more nonzeros already load coalesced{}", lanes,
                           want == SpmvChoice::sell ? " (GPSM_CG_SPMV=sell applies to shorter rows only)" : "");
  } else if (want == SpmvChoice::sell) {
    c.layout = SpmvLayout::sell;
    c.reason = fmt::format("SELL-32, forced by GPSM_CG_SPMV=sell (padding {:.4f} entries per nonzero)", padding);
  } else if (padding <= kSellPaddingBound) {
    c.layout = SpmvLayout::sell;
    c.reason = fmt::format("SELL-32: padding {:.4f} entries per nonzero <= {}", padding, kSellPaddingBound);
  } else {
    c.reason = fmt::format("CSR with {} lanes per row: SELL-32 would read {:.4f} entries per nonzero > {}", lanes,
                           padding, kSellPaddingBound);
  }
  return c;
}

}  // namespace gpsm::apps::cg
