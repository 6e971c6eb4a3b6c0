#pragma once
// How the engine sees an access run (sim/engine.cpp): normalized to a lowest address and a
// non-negative stride, split by page or 128-B line, coalesced into link transactions, and the
// allocation it falls in. Shared by the engine's driver, its kernel cost model and the paradigm
// models (sim/paradigm.hpp). Plain C++, header-only (small templates the callers inline).
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/trace.hpp"

namespace gpsm::sim::engine_detail {

// ---- model constants (docs/sim.md "Engine") ----
constexpr std::uint64_t kLine = 128;          // bytes: coalescing unit of a warp, write queue entry
constexpr double kSector = 32;                // bytes: DRAM access granularity of a scattered load

// A run normalized to a non-negative stride, with its lowest address.
struct Span {
  std::uint64_t lo = 0;   // first byte
  std::uint64_t hi = 0;   // one past the last byte
  std::uint64_t stride = 0;
  std::uint32_t count = 0, bytes = 0;
  bool contiguous() const { return count <= 1 || stride == bytes; }
  double payload() const { return double(count) * bytes; }
};
inline Span span_of(const AccessRun& r) {
  Span s;
  s.count = r.count;
  s.bytes = r.bytes;
  const std::int64_t st = r.stride;
  s.stride = static_cast<std::uint64_t>(st < 0 ? -st : st);
  s.lo = st < 0 && r.count > 0 ? r.addr - static_cast<std::uint64_t>(-st) * (r.count - 1) : r.addr;
  s.hi = r.count == 0 ? s.lo : s.lo + s.stride * (r.count - 1) + r.bytes;
  return s;
}

// Calls f(piece) for the pieces of `s` that fall in one `gran`-aligned block each (an operation
// belongs to the block of its first byte). Contiguous runs: one piece per block; strided: at
// most one piece per operation.
template <class F>
void split_by(const Span& s, std::uint64_t gran, F&& f) {
  if (s.count == 0) return;
  if (s.stride == 0 || s.lo / gran == (s.hi - 1) / gran) {
    f(s);
    return;
  }
  std::uint64_t i0 = 0;
  while (i0 < s.count) {
    const std::uint64_t a = s.lo + i0 * s.stride;
    const std::uint64_t end = (a / gran + 1) * gran;
    std::uint64_t i1 = (end - s.lo + s.stride - 1) / s.stride;  // first op at or past the block end
    i1 = std::min<std::uint64_t>(std::max(i1, i0 + 1), s.count);
    Span p = s;
    p.lo = a;
    p.count = static_cast<std::uint32_t>(i1 - i0);
    p.hi = p.lo + p.stride * (p.count - 1) + p.bytes;
    f(p);
    i0 = i1;
  }
}

// The coalescing rule of remote stores (p2p_inline, um_hints) and remote loads (rdl): one link
// transaction per (run, 128-B line) the run touches, carrying the run's bytes in that line.
// Calls f(payload, transactions) for groups of equal transactions.
template <class F>
void line_transactions(const Span& s, F&& f) {
  if (s.count == 0) return;
  if (s.stride == 0) {  // every operation to one address: one transaction
    f(double(s.bytes), 1.0);
    return;
  }
  const std::uint64_t l0 = s.lo / kLine, l1 = (s.hi - 1) / kLine;
  if (s.contiguous()) {
    if (l0 == l1) {
      f(double(s.hi - s.lo), 1.0);
      return;
    }
    f(double((l0 + 1) * kLine - s.lo), 1.0);
    if (l1 > l0 + 1) f(double(kLine), double(l1 - l0 - 1));
    f(double(s.hi - l1 * kLine), 1.0);
    return;
  }
  if (s.stride >= kLine) {  // every operation its own line
    f(double(s.bytes), double(s.count));
    return;
  }
  const double lines = double(l1 - l0 + 1);  // strided inside lines: the run's bytes spread evenly
  f(s.payload() / lines, lines);
}

// 128-bit byte mask of [a, b) inside a line (0 <= a < b <= 128).
struct Mask {
  std::uint64_t w[2] = {0, 0};
  void set(unsigned a, unsigned b) {
    for (unsigned k = 0; k < 2; ++k) {
      const unsigned lo = std::max(a, k * 64), hi = std::min(b, k * 64 + 64);
      if (lo >= hi) continue;
      const unsigned n = hi - lo;
      const std::uint64_t m = n == 64 ? ~0ull : ((1ull << n) - 1);
      w[k] |= m << (lo - k * 64);
    }
  }
  void merge(const Mask& o) { w[0] |= o.w[0], w[1] |= o.w[1]; }
  int bytes() const { return __builtin_popcountll(w[0]) + __builtin_popcountll(w[1]); }
  bool bit(unsigned i) const { return (w[i / 64] >> (i % 64)) & 1; }
  int segments() const {  // contiguous runs of enabled bytes
    const std::uint64_t starts0 = w[0] & ~(w[0] << 1);
    const std::uint64_t starts1 = w[1] & ~((w[1] << 1) | (w[0] >> 63));
    return __builtin_popcountll(starts0) + __builtin_popcountll(starts1);
  }
};

// Calls f(line, mask) for every 128-B line the span touches (per line for contiguous spans).
template <class F>
void line_masks(const Span& s, F&& f) {
  if (s.count == 0) return;
  if (s.contiguous()) {
    for (std::uint64_t l = s.lo / kLine; l <= (s.hi - 1) / kLine; ++l) {
      Mask m;
      const std::uint64_t a = std::max(s.lo, l * kLine), b = std::min(s.hi, (l + 1) * kLine);
      m.set(unsigned(a - l * kLine), unsigned(b - l * kLine));
      f(l, m);
    }
    return;
  }
  const std::uint32_t n = s.stride == 0 ? 1 : s.count;
  std::uint64_t cur = ~0ull;
  Mask m;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t a = s.lo + std::uint64_t(i) * s.stride, l = a / kLine;
    if (l != cur) {
      if (cur != ~0ull) f(cur, m);
      cur = l;
      m = Mask{};
    }
    m.set(unsigned(a - l * kLine), unsigned(std::min<std::uint64_t>(a + s.bytes, (l + 1) * kLine) - l * kLine));
  }
  f(cur, m);
}

// Allocation lookup by address (sorted bases; runs are assumed to stay in one allocation).
class AllocIndex {
 public:
  explicit AllocIndex(const Trace& t) {
    for (std::size_t i = 0; i < t.allocations.size(); ++i) by_base_.emplace_back(t.allocations[i].base, int(i));
    std::sort(by_base_.begin(), by_base_.end());
    t_ = &t;
  }
  int find(std::uint64_t addr) const {
    auto it = std::upper_bound(by_base_.begin(), by_base_.end(), std::make_pair(addr, INT32_MAX));
    if (it == by_base_.begin()) return -1;
    --it;
    const Allocation& a = t_->allocations[it->second];
    return addr < a.base + a.bytes ? it->second : -1;
  }

 private:
  std::vector<std::pair<std::uint64_t, int>> by_base_;
  const Trace* t_ = nullptr;
};

}  // namespace gpsm::sim::engine_detail
