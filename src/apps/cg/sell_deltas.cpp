// 16-bit column deltas of CG's sliced layout (sell_deltas.hpp).
#include "apps/cg/sell_deltas.hpp"

#include <fmt/format.h>

#include "apps/cg/env_choice.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const char* index_storage_name(IndexStorage s) { return s == IndexStorage::i16 ? "i16" : "i32"; }

namespace {
constexpr ChoiceName<IndexChoice> kIndexChoices[] = {
    {"auto", IndexChoice::automatic}, {"i32", IndexChoice::i32}, {"i16", IndexChoice::i16}};
}  // namespace

const char* index_choice_name(IndexChoice c) { return choice_name(c, kIndexChoices); }

IndexChoice parse_index_choice(const char* text) {
  return parse_choice("GPSM_CG_INDEX", "an index storage", text, kIndexChoices);
}

namespace {
// Slot k of slice s: its entries' smallest and largest column.
void slot_range(const Sell& s, std::int64_t sl, int k, std::int64_t& lo, std::int64_t& hi) {
  const std::int64_t e0 = s.slice_ptr[sl] + static_cast<std::int64_t>(k) * kSliceRows;
  lo = hi = s.col[static_cast<std::size_t>(e0)];
  for (std::int64_t e = e0 + 1; e < e0 + kSliceRows; ++e) {
    lo = std::min<std::int64_t>(lo, s.col[static_cast<std::size_t>(e)]);
    hi = std::max<std::int64_t>(hi, s.col[static_cast<std::size_t>(e)]);
  }
}
}  // namespace

WideSlot first_wide_slot(const Sell& s) {
  for (std::int64_t sl = 0; sl < s.slices(); ++sl)
    for (int k = 0; k < s.width(sl); ++k) {
      std::int64_t lo = 0, hi = 0;
      slot_range(s, sl, k, lo, hi);
      if (hi - lo >= kDeltaSpan) return {sl, k, lo, hi};
    }
  return {};
}

std::string describe(const WideSlot& w) {
  return fmt::format("slice {}, slot {} spans columns {} to {} ({} apart; 16-bit deltas reach {})", w.slice, w.slot,
                     w.lo, w.hi, w.hi - w.lo, kDeltaSpan - 1);
}

SellDeltas make_deltas(const Sell& s) {
  SellDeltas d;
  d.base.resize(s.col.size() / kSliceRows);
  d.delta.resize(s.col.size());
  for (std::int64_t sl = 0; sl < s.slices(); ++sl)
    for (int k = 0; k < s.width(sl); ++k) {
      std::int64_t lo = 0, hi = 0;
      slot_range(s, sl, k, lo, hi);
      if (hi - lo >= kDeltaSpan)
        throw gpsm::Error("gpsm: cg: 16-bit column deltas do not fit: " + describe({sl, k, lo, hi}));
      const std::int64_t e0 = s.slice_ptr[sl] + static_cast<std::int64_t>(k) * kSliceRows;
      d.base[static_cast<std::size_t>(e0 / kSliceRows)] = static_cast<std::int32_t>(lo);
      for (std::int64_t e = e0; e < e0 + kSliceRows; ++e)
        d.delta[static_cast<std::size_t>(e)] = static_cast<std::uint16_t>(s.col[static_cast<std::size_t>(e)] - lo);
    }
  return d;
}

IndexesChoice choose_index(bool sliced, IndexChoice want, const std::string& misfit) {
  if (want == IndexChoice::i32) return {IndexStorage::i32, "columns i32 (GPSM_CG_INDEX=i32)"};
  if (!sliced) {
    if (want == IndexChoice::i16)
      throw gpsm::Error("gpsm: cg: GPSM_CG_INDEX=i16, but this run's SpMV layout is CSR: 16-bit column deltas are a "
                        "form of the sliced layout (use i32 or auto, or GPSM_CG_SPMV=sell where rows are short)");
    return {IndexStorage::i32, "columns i32: the CSR layout (16-bit deltas are sliced only)"};
  }
  if (!misfit.empty()) {
    if (want == IndexChoice::i16)
      throw gpsm::Error("gpsm: cg: GPSM_CG_INDEX=i16, but " + misfit + " (use i32 or auto)");
    return {IndexStorage::i32, "columns i32: " + misfit};
  }
  // Automatic keeps 32-bit columns: on one H200 (poisson2d:2048x512 and 2048x1024, values as a
  // table) the deltas made the Standard persistent kernel slower (45.93 against 44.56 us; its
  // ptxas spills a scalar with them), Pipelined and gps within 1.2 % either way, and every kernel
  // slower at 512^2 (the matrix sits in L2 there: fewer bytes buy nothing, the base load costs).
  if (want == IndexChoice::i16)
    return {IndexStorage::i16, "columns as 16-bit deltas (GPSM_CG_INDEX=i16; every slot of 32 spans < 65536)"};
  return {IndexStorage::i32,
          "columns i32: 16-bit deltas fit (every slot of 32 spans < 65536) but measured no faster; GPSM_CG_INDEX=i16 "
          "takes them"};
}

}  // namespace gpsm::apps::cg
