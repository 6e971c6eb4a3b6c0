// The simulator's engine: replays a trace on a System under one paradigm (docs/sim.md "Engine").
// Plain C++, deterministic (no randomness, no unordered iteration), arithmetic per access run:
// only the remote write queue (gps_hw, finepack) and the UM page table work per 128-B line or
// per page, never per operation of a contiguous run.
#include "sim/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/march.hpp"
#include "sim/um.hpp"

namespace gpsm::sim {

const char* sim_paradigm_name(SimParadigm p) {
  switch (p) {
    case SimParadigm::memcpy: return "memcpy";
    case SimParadigm::um: return "um";
    case SimParadigm::um_hints: return "um_hints";
    case SimParadigm::rdl: return "rdl";
    case SimParadigm::p2p_inline: return "p2p_inline";
    case SimParadigm::gps_hw: return "gps_hw";
    case SimParadigm::finepack: return "finepack";
    case SimParadigm::proact: return "proact";
    case SimParadigm::infinite: return "infinite";
  }
  return "?";
}

namespace {
constexpr SimParadigm kAll[] = {SimParadigm::memcpy,     SimParadigm::um,     SimParadigm::um_hints,
                                SimParadigm::rdl,        SimParadigm::p2p_inline, SimParadigm::gps_hw,
                                SimParadigm::finepack,   SimParadigm::proact, SimParadigm::infinite};
}  // namespace

std::vector<SimParadigm> parse_sim_paradigms(const std::string& list) {
  std::vector<bool> on(std::size(kAll), false);
  std::stringstream ss(list);
  bool any = false;
  for (std::string x; std::getline(ss, x, ',');) {
    if (x.empty()) continue;
    any = true;
    if (x == "all") {
      std::fill(on.begin(), on.end(), true);
      continue;
    }
    bool found = false;
    for (std::size_t i = 0; i < std::size(kAll); ++i)
      if (x == sim_paradigm_name(kAll[i])) on[i] = found = true;
    if (!found) {
      std::string names;
      for (SimParadigm p : kAll) names += std::string(names.empty() ? "" : ", ") + sim_paradigm_name(p);
      throw std::invalid_argument("unknown paradigm '" + x + "' (gpsm sim knows: all, " + names + ")");
    }
  }
  if (!any) throw std::invalid_argument("--paradigm is empty");
  std::vector<SimParadigm> out;
  for (std::size_t i = 0; i < std::size(kAll); ++i)
    if (on[i]) out.push_back(kAll[i]);
  return out;
}

const char* sim_trace_layout(SimParadigm p) {
  switch (p) {
    case SimParadigm::um:
    case SimParadigm::um_hints: return "grid";
    case SimParadigm::gps_hw:
    case SimParadigm::finepack: return "replicas";
    case SimParadigm::rdl: return "remote";
    default: return "slabs";
  }
}

namespace {

// ---- model constants (docs/sim.md "Engine") ----
constexpr std::uint64_t kLine = 128;          // bytes: coalescing unit of a warp, write queue entry
constexpr double kSector = 32;                // bytes: DRAM access granularity of a scattered load
constexpr double kSaturatingOccupancy = 0.5;  // fraction of a full wave that saturates HBM
constexpr std::size_t kGpsProfileIterations = 2;  // GPS profiling phase: the first two iterations

// A run normalized to a non-negative stride, with its lowest address.
struct Span {
  std::uint64_t lo = 0;   // first byte
  std::uint64_t hi = 0;   // one past the last byte
  std::uint64_t stride = 0;
  std::uint32_t count = 0, bytes = 0;
  bool contiguous() const { return count <= 1 || stride == bytes; }
  double payload() const { return double(count) * bytes; }
};
Span span_of(const AccessRun& r) {
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

// A GPS / FinePack remote write queue for one (source, destination): `cap` entries of one
// 128-B line each; a store to a line already queued merges its bytes into the entry. GPS
// (pack = false): a store needing an entry when the queue is full drains the oldest entry as a
// write of each contiguous byte range. FinePack (pack = true): it drains the whole queue into
// packed messages (finepack_wire). A fence (kernel end) drains everything the same way.
class WriteQueue {
 public:
  WriteQueue(int cap, bool pack, int subheader, const LinkParams* l, const LinkModel* lm)
      : cap_(std::max(cap, 1)), pack_(pack), sub_(subheader), l_(l), lm_(lm), ring_(cap_) {
    where_.reserve(std::size_t(cap_) * 2);
  }
  void store(std::uint64_t line, const Mask& m, double weight) {
    auto it = where_.find(line);
    if (it != where_.end()) {
      ring_[it->second % cap_].mask.merge(m);
      ++coalesced_;
      return;
    }
    if (size_ == cap_) {
      if (pack_) drain_all();
      else drain_oldest();
    }
    const std::uint64_t seq = head_ + size_;
    ring_[seq % cap_] = Entry{line, m, weight};
    where_.emplace(line, seq);
    ++size_;
    ++entries_;
  }
  void fence() { drain_all(); }
  double wire = 0, payload = 0, writes = 0;  // weighted totals so far
  std::uint64_t entries_ = 0, coalesced_ = 0;

 private:
  struct Entry {
    std::uint64_t line = 0;
    Mask mask;
    double weight = 1;
  };
  void emit_gps(const Entry& e) {
    // each contiguous byte range of the entry one write (a link packet carries one range)
    unsigned i = 0;
    while (i < kLine) {
      if (!e.mask.bit(i)) {
        ++i;
        continue;
      }
      unsigned j = i;
      while (j < kLine && e.mask.bit(j)) ++j;
      wire += lm_->write_wire(*l_, double(j - i)) * e.weight;
      payload += double(j - i) * e.weight;
      writes += e.weight;
      i = j;
    }
  }
  void drain_oldest() {
    const Entry& e = ring_[head_ % cap_];
    emit_gps(e);
    where_.erase(e.line);
    ++head_;
    --size_;
  }
  void drain_all() {
    if (size_ == 0) return;
    if (!pack_) {
      while (size_ > 0) drain_oldest();
      return;
    }
    std::vector<const Entry*> v;
    v.reserve(size_);
    for (int k = 0; k < size_; ++k) v.push_back(&ring_[(head_ + k) % cap_]);
    std::sort(v.begin(), v.end(), [](const Entry* a, const Entry* b) { return a->line < b->line; });
    // A sub-header of s bytes holds 10 length bits and 8 s - 10 offset bits (seed 000 Table 5.2):
    // one packed message covers at most 2^(8 s - 10) bytes of addresses from its base (the line of
    // its first entry); an entry whose last byte lies beyond starts a new message.
    const int off_bits = std::max(0, 8 * sub_ - 10);
    const std::uint64_t span = off_bits >= 63 ? ~0ull : (1ull << off_bits);
    std::size_t k0 = 0;
    while (k0 < v.size()) {
      const std::uint64_t base = v[k0]->line * kLine;
      double runs = 0, bytes = 0, wsum = 0;
      std::size_t k = k0;
      for (; k < v.size(); ++k) {
        if (k > k0 && v[k]->line * kLine + kLine - 1 - base >= span) break;
        runs += v[k]->mask.segments();
        // a range running off the end of a line into the start of the next is one sub-transaction
        if (k > k0 && v[k]->line == v[k - 1]->line + 1 && v[k - 1]->mask.bit(kLine - 1) && v[k]->mask.bit(0)) runs -= 1;
        bytes += v[k]->mask.bytes();
        wsum += v[k]->weight;
      }
      const double w = wsum / double(k - k0);
      wire += lm_->finepack_wire(*l_, runs, bytes, sub_) * w;
      payload += bytes * w;
      writes += w;
      k0 = k;
    }
    where_.clear();
    head_ += size_;
    size_ = 0;
  }
  int cap_;
  bool pack_;
  int sub_;
  const LinkParams* l_;
  const LinkModel* lm_;
  std::vector<Entry> ring_;
  std::uint64_t head_ = 0;
  int size_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> where_;  // line -> sequence number
};

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

// What one kernel moved through the GPU's own memory system.
struct LocalAcc {
  double load = 0, store = 0;   // bytes through L2 (weighted)
  double gather = 0;            // of `load`, the lone sectors (a warp's load that touched one 32-B sector)
  double dram_extra = 0;        // scattered loads: a 32-B sector each (no L2 reuse assumed)
  double store_dram = 0;
  double flops = 0;
  double weight = 0, recorded = 0;  // sum of block weights, blocks recorded
  double steps = 0;                 // weighted serial steps of the blocks (marching kernels)
  ByteRanges intervals;             // contiguous loads (recorded)
  // L1 reuse of a marching block (docs/sim.md "L2 hit model"): its loads after its L1, each distinct
  // byte of the block's loads once (l1_load, weighted); `block` collects the current block's.
  double l1_load = 0;
  ByteRanges block;

  void add_load(const Span& s, double w) {
    load += s.payload() * w;
    // A lone sector: a gather (the graph kernels' x[col] on rmat), which the L2 serves at its
    // random-sector rate (GpuParams::gather_GBps), not at the rate of line-sized requests.
    if (s.contiguous() && s.hi - s.lo == std::uint64_t(kSector) && s.lo % std::uint64_t(kSector) == 0)
      gather += s.payload() * w;
    // A run whose operations are at most a sector apart touches every sector of its span (a
    // float4 row's west/east scalars at stride 16 read the lines its centre loads read): it
    // joins the footprint. Only sparser runs pay a sector per operation.
    if (s.contiguous() || (s.stride > 0 && double(s.stride) <= kSector)) {
      add_range(intervals, s.lo, s.hi);
      add_range(block, s.lo, s.hi);
    } else {
      dram_extra += (s.stride == 0 ? double(s.bytes) : double(s.count) * std::max<double>(s.bytes, kSector)) * w;
      l1_load += s.payload() * w;  // scattered: no reuse assumed in L1 either
    }
  }
  void add_store(const Span& s, double w) {
    store += s.payload() * w;
    // a lone store narrower than a sector (a scattered store the recorder could not pair) moves a
    // sector, as each operation of a scattered run does
    const bool scattered = (!s.contiguous() && s.stride != 0) || (s.count == 1 && double(s.bytes) < kSector);
    store_dram += (scattered ? double(s.count) * std::max<double>(s.bytes, kSector) : s.payload()) * w;
  }
  void end_block(double w, std::uint32_t serial_steps) {
    l1_load += distinct_bytes(block) * w;
    block.clear();
    steps += double(serial_steps) * w;
  }
  // Distinct bytes of the contiguous loads: every re-read within the kernel hits L2.
  double footprint() { return distinct_bytes(intervals); }
};

// Waves of thread blocks: the fraction of the roofline time a kernel of `blocks` blocks takes
// per block, relative to full waves (a last or only wave of fewer than kSaturatingOccupancy of
// a wave's blocks runs at that fraction of the bandwidth).
double wave_factor(double blocks, double wave) {
  if (blocks <= 0 || wave <= 0) return 1;  // wave 0: no partial-wave factor (marching kernels)
  const double full = std::floor(blocks / wave), rem = blocks - full * wave;
  return (full * wave + (rem > 0 ? std::max(rem, kSaturatingOccupancy * wave) : 0)) / blocks;
}

// A kernel's bytes: `dram` through HBM, `l2` through L2 (after L1 for a marching kernel).
struct KernelBytes {
  double dram = 0, l2 = 0;
  double l2_gather = 0;  // of l2, the lone sectors (not for marching kernels: their L2 bytes are their L1's misses)
};
KernelBytes kernel_bytes(LocalAcc& a, bool marching) {
  const double scale = a.recorded > 0 ? a.weight / a.recorded : 1;  // sampled blocks' footprint
  KernelBytes b;
  b.dram = a.footprint() * scale + a.dram_extra + a.store_dram;
  // A marching block's neighbour rows along the other axis and its x edges are other warps' and
  // lanes' centres of the same plane, loaded by the block a step before: they come from L1, so
  // its L2 traffic is its distinct bytes (wave3d 256^3: 537 MB through L2 at 7 TB/s, 76 us, where
  // the step ran at its DRAM bound, 55 us; docs/sim.md 2026-11-22). Other kernels: every load.
  b.l2 = (marching ? a.l1_load : a.load) + a.store;
  b.l2_gather = marching ? 0 : a.gather;
  return b;
}

// The roofline terms of a kernel, each before the wave factor; seconds() is the kernel's roofline time.
struct Roofline {
  double dram_s = 0, l2_s = 0, flops_s = 0, factor = 1;
  double seconds() const { return std::max({dram_s, l2_s, flops_s}) * factor; }
};
Roofline roofline(const LocalAcc& a, const KernelBytes& b, const GpuParams& gp, double grid_blocks, double wave) {
  // The L2 term: line-sized requests at l2_GBps, lone sectors at gather_GBps (0: l2_GBps)
  const double gather_GBps = gp.gather_GBps > 0 ? gp.gather_GBps : gp.l2_GBps;
  const double l2_s = (b.l2 - b.l2_gather) / (gp.l2_GBps * 1e9) + b.l2_gather / (gather_GBps * 1e9);
  return Roofline{b.dram / (gp.hbm_GBps * 1e9), l2_s, a.flops / (gp.flops_G * 1e9), wave_factor(grid_blocks, wave)};
}

// The requests a kernel's hottest word takes (docs/sim.md "Hot words"): per allocation, its warp
// store and atomic requests over its 32-B sectors (a one-word flag takes them all; a large array's
// requests spread over its sectors and come to a few each).
double hot_word_requests(const std::vector<Allocation>& allocs, const std::vector<double>& requests) {
  double hot = 0;
  for (std::size_t i = 0; i < allocs.size(); ++i)
    if (requests[i] > 0)
      hot = std::max(hot, requests[i] / std::max<double>(1, std::ceil(double(allocs[i].bytes) / kSector)));
  return hot;
}

// One march step (docs/sim.md "Serial bound"): serial_step_us when the GPU gives one (> 0), else
// derived from the residency (march_step_seconds), so that it follows the plan's blocks per SM
// without a fit: the blocks resident at once (the kernel's wave, or its grid if smaller) share
// the HBM, each moving per step the bytes a block asks of the memory system beyond its L1 (its
// distinct loads and its stores, over its steps, priming included). heat3d's step: 8.0-8.8 KB
// per step from the trace, the estimate's 8 KiB (a plane loaded, one stored) that replaced the
// 1.18 us fitted on the 4-blocks-per-SM step. The kernel's DRAM bytes per step instead (its L2
// footprint: a chunk's priming planes, which the chunk below also loads, count once) gave heat3d
// 6.3-7.6 KB and missed its 2- and 4-GPU runs by 19-33 %.
double step_seconds(const LocalAcc& a, const KernelBytes& b, const GpuParams& gp, double grid_blocks, double wave) {
  if (gp.serial_step_us > 0) return gp.serial_step_us * 1e-6;
  if (!(a.steps > 0)) return 0;
  // What the march asks beyond L1 (b.l2) comes from HBM for the kernel's DRAM bytes and from the
  // L2 for the rest (a chunk's priming planes, which the chunk below loaded): each at its rate.
  const double resident = std::min(grid_blocks, wave), dram = std::min(b.dram, b.l2);
  return march_step_seconds(resident, dram / a.steps, gp.hbm_GBps) +
         march_step_seconds(resident, (b.l2 - dram) / a.steps, gp.l2_GBps);
}

// The latency bound of a kernel whose blocks march (serial_steps): block b runs in slot
// b % wave after the blocks before it in that slot, so a slot's time is the sum of its blocks'
// steps x the step time, and the kernel takes at least its busiest slot. A sampled kernel (not
// every block recorded) takes the mean recorded block's steps times the blocks per slot, or its
// longest recorded block if that is more (thin edge items and long interior items share slots).
double serial_seconds(const KernelTrace& k, double step_s, double wave) {
  if (!(step_s > 0) || k.blocks.empty() || wave < 1) return 0;
  const auto slots = static_cast<std::size_t>(wave);
  double worst = 0;
  if (k.blocks.size() >= k.grid_blocks) {
    std::vector<double> slot(slots, 0.0);
    for (const BlockTrace& b : k.blocks) slot[b.block % slots] += b.serial_steps;
    for (double v : slot) worst = std::max(worst, v);
  } else {  // sampled: the mean block's steps times the blocks per slot, at least the longest block
    double longest = 0, sum = 0, weight = 0;
    for (const BlockTrace& b : k.blocks) {
      longest = std::max(longest, double(b.serial_steps));
      sum += double(b.serial_steps) * b.weight;
      weight += b.weight;
    }
    worst = std::max(longest, weight > 0 ? sum / weight * double(k.grid_blocks) / wave : 0.0);
  }
  return worst * step_s;
}

// The chain bound of a kernel whose threads load in dependent chains (chain_steps: a gather
// kernel's row_ptr, col[e], x[col], ...; docs/sim.md "Chain bound"): a block holds its slot until
// its longest thread has waited its chain load latencies one after another, and the block
// scheduler hands a free slot the next block, so the kernel takes at least the longest block's
// chain and at least its blocks' chains spread evenly over the `wave` slots (the list-scheduling
// lower bound: sum of chains / slots). Sampled kernels: the recorded blocks stand for `weight`
// blocks each. 0 when no block gives a chain or the HBM latency is 0.
// A step's latency: the gathers (gather_steps) hit the L2 with probability
// hit = min(1, l2_bytes / gather_bytes) and take hit x l2 + (1 - hit) x hbm; the other steps
// (row_ptr, col[e]: streamed, each line read once; the old value, the partials) take the HBM
// latency. The hit fraction is what an L2 of C bytes gives references spread uniformly over F
// bytes (it holds C / F of them at any time; LRU under independent uniform references hits C / F
// exactly), so it is 1 where the gathered arrays fit and falls continuously past it; skewed
// (power-law) gathers hit more than that, so beyond the L2 this leans to the HBM latency. The
// streamed col lines pass through the L2 too, but each once: between two gathers of one x line
// far fewer of them arrive than the L2 holds, so they are left out of the footprint.
// l2_latency_s <= 0 or l2_bytes <= 0 or gather_bytes 0: every step the HBM latency.
double chain_seconds(const KernelTrace& k, double latency_s, double wave, double l2_latency_s, double l2_bytes) {
  if (!(latency_s > 0) || k.blocks.empty() || wave < 1) return 0;
  double gather_s = latency_s;
  if (l2_latency_s > 0 && l2_bytes > 0 && k.gather_bytes > 0) {
    const double hit = std::min(1.0, l2_bytes / double(k.gather_bytes));
    gather_s = hit * l2_latency_s + (1 - hit) * latency_s;
  }
  double longest = 0, sum = 0;
  for (const BlockTrace& b : k.blocks) {
    const std::uint32_t g = std::min(b.gather_steps, b.chain_steps);
    const double c = double(b.chain_steps - g) * latency_s + double(g) * gather_s;
    longest = std::max(longest, c);
    sum += c * b.weight;
  }
  return std::max(longest, sum / wave);
}

// The issue bound (docs/sim.md "Issue bound"): a kernel's warp instructions (the blocks'
// warp_insts, or push_insts for p2p_inline where a block gives them; sampled blocks count weight
// times) at the GPU's issue rate, SMs x issue_per_clock x clock. {0, 0} when no block gives them.
struct Issue {
  double insts = 0, seconds = 0;
};
Issue issue_bound(const KernelTrace& k, bool push, const GpuParams& gp) {
  Issue r;
  for (const BlockTrace& b : k.blocks) r.insts += double(push && b.push_insts > 0 ? b.push_insts : b.warp_insts) * b.weight;
  const double rate = double(gp.sms) * gp.issue_per_clock * gp.clock_GHz * 1e9;
  if (r.insts > 0 && rate > 0) r.seconds = r.insts / rate;
  return r;
}

struct Engine {
  const Trace& t;
  System sys;  // link scaled
  SimParadigm p;
  const SimOptions& o;
  const LinkModel& lm;
  AllocIndex index;
  int G;
  double wave;

  Engine(const Trace& t_, const System& s_, SimParadigm p_, const SimOptions& o_, const LinkModel& lm_)
      : t(t_), sys(s_), p(p_), o(o_), lm(lm_), index(t_) {
    if (!(o.link_scale > 0)) throw std::invalid_argument("link_scale must be > 0");
    sys.link.raw_GBps *= o.link_scale;
    G = std::max(t.gpus, 1);
    wave = double(std::max(sys.gpu.sms, 1)) * std::max(sys.gpu.blocks_per_sm, 1);
  }

  bool host_driven() const { return p != SimParadigm::infinite; }

  // The least time a GPU needs to send `wire` bytes to its peers in one phase of an all-to-all:
  // at the measured all-to-all egress (System::egress_GBps, wire bytes of large packets). 0 where
  // no egress cap applies (egress 0).
  double egress_seconds(double wire) const {
    return sys.egress_GBps > 0 ? wire / (sys.egress_GBps * 1e9) : 0;
  }

  // ---- UM page state (um, um_hints): per managed allocation, per page (sim/um.hpp) ----
  std::vector<UmPages> pages;  // by managed allocation
  std::vector<int> pages_of;   // allocation -> index in pages, or -1
  double page_bytes() const { return std::max(sys.gpu.page_bytes, 4096.0); }

  void setup_pages() {
    pages_of.assign(t.allocations.size(), -1);
    for (std::size_t i = 0; i < t.allocations.size(); ++i) {
      const Allocation& a = t.allocations[i];
      if (a.kind != MemKind::managed) continue;
      pages_of[i] = int(pages.size());
      pages.emplace_back(int(i), a.base, a.bytes, std::uint64_t(page_bytes()), G, a.gpu);
    }
    if (pages.empty() || t.iterations.empty()) return;
    // First touch (before the timed loop, as the bench's um and um_hints do): iteration 0's
    // accesses decide where each page lives (the GPU that stores most to it, else loads most).
    for (const KernelTrace& k : t.iterations[0].kernels)
      for (const BlockTrace& b : k.blocks)
        for (const AccessRun& r : b.runs) {
          const Span s = span_of(r);
          const int a = index.find(s.lo);
          if (a >= 0 && pages_of[a] >= 0) touch(pages[pages_of[a]], s, k.gpu, r.op, b.weight);
        }
    for (UmPages& pg : pages) pg.place_first_touch();
  }
  // pos: when in the GPU's iteration (kernel ordinal + block / grid: UmPages::first)
  void touch(UmPages& pg, const Span& s, int gpu, Op op, double w, double pos = 0) {
    const std::uint64_t base = t.allocations[pg.alloc].base, pb = std::uint64_t(page_bytes());
    Span rel = s;
    rel.lo -= base;
    rel.hi -= base;
    split_by(rel, pb, [&](const Span& piece) {
      pg.add(piece.lo / pb, gpu, op != Op::store, op != Op::load, piece.payload() * w, pos);
    });
  }

  // ---- GPS subscriptions: per replica group, per GPU, pages (gps_page_bytes) it loads ----
  std::unordered_map<int, std::vector<std::vector<char>>> subscribed;  // group -> [gpu][page]
  std::vector<int> replica_of_group_gpu;                              // allocation index by (group, gpu) lookup
  std::uint64_t gps_page() const { return std::max<std::uint64_t>(std::uint64_t(o.gps_page_bytes), kLine); }

  void setup_subscriptions() {
    for (const Allocation& a : t.allocations)
      if (a.kind == MemKind::replica && a.group >= 0 && !subscribed.count(a.group)) {
        const std::uint64_t n = (a.bytes + gps_page() - 1) / gps_page();
        subscribed[a.group].assign(G, std::vector<char>(n, 0));
      }
    if (subscribed.empty()) return;
    // Profiling (GPS's access tracking between cuGPSTrackingStart/Stop): the first
    // kGpsProfileIterations iterations (one per buffer of the double-buffered apps); a GPU stays
    // subscribed to the pages of a GPS array it loaded (or did atomics on) there. Stores alone do
    // not subscribe: a GPU that only writes a page needs no one else's updates of it.
    const std::size_t n_prof = std::min<std::size_t>(t.iterations.size(), kGpsProfileIterations);
    for (std::size_t ii = 0; ii < n_prof; ++ii)
      for (const KernelTrace& k : t.iterations[ii].kernels)
        for (const BlockTrace& b : k.blocks)
          for (const AccessRun& r : b.runs) {
            if (r.op == Op::store) continue;
            const Span s = span_of(r);
            const int ai = index.find(s.lo);
            if (ai < 0) continue;
            const Allocation& a = t.allocations[ai];
            if (a.kind != MemKind::replica || a.group < 0 || k.gpu < 0 || k.gpu >= G) continue;
            auto& sub = subscribed[a.group][k.gpu];
            Span rel = s;
            rel.lo -= a.base;
            rel.hi -= a.base;
            split_by(rel, gps_page(), [&](const Span& piece) {
              const std::uint64_t pg = piece.lo / gps_page();
              if (pg < sub.size()) sub[pg] = 1;
            });
          }
  }

  SimResult run();
};

SimResult Engine::run() {
  if (t.gpus < 1) throw std::invalid_argument("trace has no GPUs");
  if (t.iterations.empty()) throw std::invalid_argument("trace has no iterations");
  const bool um = p == SimParadigm::um, hints = p == SimParadigm::um_hints;
  const bool gps = p == SimParadigm::gps_hw || p == SimParadigm::finepack;
  if (um || hints) setup_pages();
  if (gps) setup_subscriptions();
  const LinkParams& L = sys.link;
  const GpuParams& gp = sys.gpu;
  const double lat = L.latency_ns * 1e-9;
  // infinite has no host in the loop unless the trace names its loop's calls: the bench's graph
  // apps run infinite in the same host loop as every other paradigm, transfers elided.
  const double launch_s = gp.launch_us * 1e-6, graph_node_s = gp.graph_node_us * 1e-6, sync = gp.sync_us * 1e-6;
  const double chunk_bytes = std::max(o.proact_chunk_bytes, 1.0);

  LoopBound loop;  // the current iteration's
  double total_time = 0, total_wire = 0, total_useful = 0;
  double last_time = 0, last_wire = 0, last_useful = 0;  // the trace's last iteration (run_iters extrapolates it)
  double sum_compute = 0, sum_transfer = 0, sum_exposed = 0;
  std::vector<std::vector<double>> W(G, std::vector<double>(G, 0.0));  // wire bytes src -> dst
  std::vector<std::vector<double>> P(G, std::vector<double>(G, 0.0));  // memcpy payload src -> dst
  std::vector<double> stored(G, 0.0);  // payload of the SM stores a GPU puts into peers' memory
  std::vector<WriteQueue> queues;
  if (gps)
    for (int a = 0; a < G; ++a)
      for (int b = 0; b < G; ++b)
        queues.emplace_back(int(o.write_queue_entries), p == SimParadigm::finepack, o.finepack_subheader, &L, &lm);

  std::vector<KernelBound> last_kernels;
  for (const IterationTrace& it : t.iterations) {
    last_kernels.clear();
    for (auto& row : W) std::fill(row.begin(), row.end(), 0.0);
    for (auto& row : P) std::fill(row.begin(), row.end(), 0.0);
    std::fill(stored.begin(), stored.end(), 0.0);
    std::vector<double> kern(G, 0), launches(G, 0), exposed(G, 0), proact_end(G, 0), read_waves(G, 0);
    // Marching kernels' dependent remote loads (rdl, um_hints): per reading GPU, the time its
    // blocks wait for them, on the kernel's critical path (march_read_wait below).
    std::vector<double> read_wait(G, 0);
    double useful = 0, extra_wire = 0;
    // The loop's calls are named (trace version 7) and priced (GpuParams::host measured).
    const bool named = it.host_named && gp.host.measured();
    const bool hosted = host_driven() || named;
    const double launch = hosted ? launch_s : 0, graph_node = hosted ? graph_node_s : 0;
    // A named loop is the app's own, host-issued (the graph apps' bench loop has no graph mode):
    // --host-loop graph does not apply to it.
    const bool graph = o.graph_launch && !it.host_sync && !named;
    std::vector<int> kernels_on(G, 0);
    // Each GPU's kernels' start (after its launch) and duration in the iteration: when a managed
    // page's faults happen (the UM driver's thrashing detection, below)
    std::vector<std::vector<std::pair<double, double>>> kspan(G);

    for (const KernelTrace& k : it.kernels) {
      const int g = k.gpu;
      if (g < 0 || g >= G) throw std::invalid_argument("trace kernel '" + k.name + "' names GPU " + std::to_string(g));
      LocalAcc acc;
      const double grid = std::max<double>(k.grid_blocks, double(k.blocks.size()));
      // The kernel's own residency when the trace gives it (registers limit the 3D steps).
      const double kwave = k.blocks_per_sm > 0 ? double(std::max(sys.gpu.sms, 1)) * k.blocks_per_sm : wave;
      const double n_waves = std::max(1.0, std::ceil(grid / kwave));
      // A marching kernel (its blocks march planes: serial_steps) waits for its remote loads'
      // bursts (below, after the blocks); any other kernel exposes a round trip per reading wave.
      bool marching = false;
      for (const BlockTrace& b : k.blocks) marching = marching || b.serial_steps > 0;
      // rdl exposure: waves holding blocks that wait on remote loads, per reading GPU
      std::vector<double> last_wave(G, -1);
      // remote read wire bytes per (reader, owner, wave): the bursts of a marching kernel
      std::vector<std::vector<std::vector<double>>> burst;
      if (marching)
        burst.assign(G, std::vector<std::vector<double>>(G, std::vector<double>(std::size_t(n_waves), 0.0)));
      auto remote_read_in_wave = [&](int reader, double wave_idx) {
        if (!marching && wave_idx != last_wave[reader]) {
          last_wave[reader] = wave_idx;
          read_waves[reader] += 1;
        }
      };
      // proact chunks: (dst, bytes, ready wave)
      struct Chunk { int dst; double bytes; double wave; };
      std::vector<Chunk> chunks;
      std::vector<double> chunk_fill(G, 0);
      std::vector<double> chunk_wave(G, 0);

      auto remote_read = [&](int owner, int reader, const Span& s, double w, double wave_idx) {
        line_transactions(s, [&](double pay, double n) {
          const double wire = lm.read_wire(L, pay) * n * w;
          W[owner][reader] += wire;
          if (marching) burst[reader][owner][std::size_t(std::min(wave_idx, n_waves - 1))] += wire;
        });
        useful += s.payload() * w;
        remote_read_in_wave(reader, wave_idx);
      };
      auto remote_write = [&](int src, int dst, const Span& s, double w) {
        line_transactions(s, [&](double pay, double n) { W[src][dst] += lm.write_wire(L, pay) * n * w; });
        useful += s.payload() * w;
        stored[src] += s.payload() * w;
      };
      auto enqueue = [&](int src, int dst, const Span& s, double w) {
        WriteQueue& q = queues[std::size_t(src) * G + dst];
        line_masks(s, [&](std::uint64_t line, const Mask& m) { q.store(line, m, w); });
      };

      // A marching block's contiguous remote loads, per owner: they pass its L1 as its local
      // loads do (its neighbour rows and edges are other warps' centres, loaded a step before),
      // so each distinct byte crosses the link once per block (charged at the block's end).
      std::vector<ByteRanges> block_remote(G);
      // Warp store and atomic requests per allocation of this GPU's (the hot word, below)
      std::vector<double> requests(t.allocations.size(), 0.0);
      for (const BlockTrace& b : k.blocks) {
        const double w = b.weight;
        const double wave_idx = std::floor(double(b.block) / kwave);
        const bool l1 = b.serial_steps > 0;
        // a demand load of another GPU's memory (rdl's remote planes, um_hints' accessed-by pages)
        auto remote_load = [&](int owner, const Span& x) {
          if (l1 && x.contiguous()) add_range(block_remote[owner], x.lo, x.hi);
          else remote_read(owner, g, x, w, wave_idx);
        };
        acc.flops += b.flops * w;
        acc.weight += w;
        acc.recorded += 1;
        for (const AccessRun& r : b.runs) {
          const Span s = span_of(r);
          const bool ld = r.op != Op::store, st = r.op != Op::load;
          const int ai = index.find(s.lo);
          const Allocation* a = ai >= 0 ? &t.allocations[ai] : nullptr;
          if (st && a != nullptr && a->gpu == g) requests[std::size_t(ai)] += w;  // a run: one warp's request
          auto local = [&](const Span& x) {
            if (ld) acc.add_load(x, w);
            if (st) acc.add_store(x, w);
          };
          const bool managed = a != nullptr && a->kind == MemKind::managed && !pages_of.empty() && pages_of[ai] >= 0;
          if (hints && managed) {
            // um_hints: each page lives on its preferred location; other GPUs reach it through
            // accessed-by mappings, load by load and store by store
            UmPages& pg = pages[pages_of[ai]];
            Span rel = s;
            rel.lo -= a->base;
            rel.hi -= a->base;
            split_by(rel, std::uint64_t(page_bytes()), [&](const Span& piece) {
              const std::uint64_t page = std::min<std::uint64_t>(piece.lo / std::uint64_t(page_bytes()), pg.n - 1);
              const int home = pg.owner[page];
              Span abs = piece;
              abs.lo += a->base;
              abs.hi += a->base;
              if (home == g || home < 0 || home >= G) {
                local(abs);
              } else {
                if (ld && !st) remote_load(home, abs);
                else if (ld) remote_read(home, g, abs, w, wave_idx);
                if (st) remote_write(g, home, abs, w);
              }
            });
            continue;
          }
          if (um && managed) {  // the page comes to the GPU: a local access after its fault
            local(s);
            touch(pages[pages_of[ai]], s, g, r.op, w, kernels_on[g] + double(b.block) / grid);
            continue;
          }
          if (a == nullptr || a->gpu == g || a->gpu < 0 || a->gpu >= G) {
            // own memory (or an address no allocation holds: counted as local)
            local(s);
            if (gps && st && a != nullptr && a->kind == MemKind::replica && a->group >= 0) {
              // publish: every other GPU subscribed to the stored page gets the store
              auto& subs = subscribed[a->group];
              Span rel = s;
              rel.lo -= a->base;
              rel.hi -= a->base;
              split_by(rel, gps_page(), [&](const Span& piece) {
                const std::uint64_t pg = piece.lo / gps_page();
                for (int h = 0; h < G; ++h)
                  if (h != g && pg < subs[h].size() && subs[h][pg]) enqueue(g, h, piece, w);
              });
            }
            continue;
          }
          // another GPU's memory
          const int dst = a->gpu;
          if (p == SimParadigm::infinite) {
            // Transfers elided: an access to another GPU costs nothing (an infinitely fast link,
            // the seeds' bound). Landing it in local memory instead (as gpsm bench's elided 3D
            // pushes do) made p2p_inline beat the bound on scatter once a fast link carried its
            // 4-B stores more cheaply than local HBM sectors (v100-pcie4 at 256 GB/s: 9.84
            // against 11.37 us).
            continue;
          }
          if (ld && !st) {  // remote demand load (any paradigm)
            remote_load(dst, s);
            continue;
          }
          // a remote store / atomic: a halo push in the slabs layout
          switch (p) {
            case SimParadigm::memcpy:
            case SimParadigm::proact:
              local(s);  // stored to the local copy of the halo, sent after (memcpy) or per chunk
              P[g][dst] += s.payload() * w;
              useful += s.payload() * w;
              if (p == SimParadigm::proact) {
                chunk_fill[dst] += s.payload() * w;
                chunk_wave[dst] = std::max(chunk_wave[dst], wave_idx);
                while (chunk_fill[dst] >= chunk_bytes) {  // a chunk is full: it goes
                  chunks.push_back({dst, chunk_bytes, chunk_wave[dst]});
                  chunk_fill[dst] -= chunk_bytes;
                }
                if (chunk_fill[dst] == 0) chunk_wave[dst] = 0;
              }
              break;
            case SimParadigm::rdl:
              // no pushes: the neighbour reads these bytes from this GPU's copy during its kernel
              // (same geometry: the reading waves are counted as this kernel's)
              remote_read(g, dst, s, w, wave_idx);
              break;
            case SimParadigm::gps_hw:
            case SimParadigm::finepack:
              enqueue(g, dst, s, w);
              break;
            default:  // p2p_inline, um, um_hints: peer stores
              remote_write(g, dst, s, w);
              break;
          }
        }
        for (int ow = 0; ow < G; ++ow) {  // the block's distinct remote load bytes
          ByteRanges& rr = block_remote[ow];
          if (rr.empty()) continue;
          for (const auto& [lo, hi] : merged(rr))
            for (std::uint64_t a = lo; a < hi;) {  // one contiguous span each (Span's bytes: 32 bits)
              Span x;
              x.lo = a;
              x.hi = std::min<std::uint64_t>(hi, a + (std::uint64_t{1} << 30));
              x.count = 1;
              x.bytes = std::uint32_t(x.hi - x.lo);
              x.stride = x.bytes;
              remote_read(ow, g, x, w, wave_idx);
              a = x.hi;
            }
          rr.clear();
        }
        acc.end_block(w, b.serial_steps);
      }
      // A marching kernel's tail is its serial bound's business: its plan balances the slots by
      // marched planes (a block beyond the first wave starts when a slot frees up), so its
      // roofline takes no partial-wave factor. With it, wave3d 256^3 on 2 GPUs (576 items on
      // 528 slots) was charged 1.375x the roofline on top of a balanced plan.
      const bool serial = marching && gp.serial_step_us >= 0;  // < 0: the serial bound is not modelled
      const KernelBytes kb = kernel_bytes(acc, marching);
      const double step_s = serial ? step_seconds(acc, kb, gp, grid, kwave) : 0;
      const Roofline roof = roofline(acc, kb, gp, grid, serial ? 0.0 : kwave);
      // KernelBound's fields in order: gpu, name, bytes and flops, the roofline terms, the wave
      // factor, the serial and chain bounds (the issue term, time and bound below)
      KernelBound kbound{g,           k.name,     kb.dram,    kb.l2,
                         acc.flops,   roof.dram_s, roof.l2_s, roof.flops_s,
                         roof.factor, serial_seconds(k, step_s, kwave),
                         chain_seconds(k, gp.load_latency_ns * 1e-9, kwave, gp.l2_latency_ns * 1e-9, gp.l2_bytes)};
      kbound.hot_requests = hot_word_requests(t.allocations, requests);
      kbound.hot_s = kbound.hot_requests * gp.hot_word_ns * 1e-9;
      const Issue issue = issue_bound(k, p == SimParadigm::p2p_inline, gp);
      kbound.warp_insts = issue.insts;
      kbound.issue_s = issue.seconds;
      // The latency bound adds the chain and the issue time: a launch's warps start together and
      // run the same code, so they issue their address arithmetic, wait on the same dependent
      // load, issue again: the waits do not hide behind other warps' issue (docs/sim.md "Issue
      // bound": road:5120 pagerank on one H200, chain 291 + issue 389 us against 684 measured).
      const double latency = kbound.chain_s + kbound.issue_s;
      // A rolled loop's rounds wait their load latency on top of the time its bytes take
      // (docs/sim.md "Rolled loops": jacobi2d's scalar grid sweep on one H200, 1.18 ms measured,
      // its L2 bytes 827 us at the L2's rate and 344 us of rounds)
      const bool adds = k.chain_adds != 0 && kbound.chain_s > 0;
      const double roof_t = roof.seconds() + (adds ? kbound.chain_s : 0.0);
      const double tb = std::max({roof_t, kbound.serial_s, latency});
      const double tk = tb + kbound.hot_s;  // the hot word's requests add (docs/sim.md "Hot words")
      kbound.time_s = tk;
      const char* roof_bound = roof.dram_s >= roof.l2_s && roof.dram_s >= roof.flops_s ? "dram"
                               : roof.l2_s >= roof.flops_s                          ? "l2"
                                                                                    : "flops";
      kbound.bound = tb == kbound.serial_s && tb > roof_t ? "serial"
                     : tb == latency && tb > roof_t
                         ? (kbound.issue_s > 0 && kbound.chain_s > 0 ? "chain+issue" : kbound.issue_s > 0 ? "issue" : "chain")
                     : adds ? std::string(roof_bound) + "+chain"
                            : roof_bound;
      last_kernels.push_back(std::move(kbound));
      if (marching) {
        // Dependent remote loads of a march (rdl's remote planes, um_hints' accessed-by pages):
        // a reading block cannot take its next step before its remote plane arrives, and all
        // reading blocks of a wave ask at once, so they wait a round trip plus the burst's wire
        // time through the link (PCIe reads: a request TLP out, completions back), not one
        // round trip. A wave's bursts from different owners come at different points of the
        // march (the lower halo primes the first chunk, the upper one ends the last), so the
        // wave waits for its largest. This replaces the one round trip per reading wave
        // (remote_read_in_wave counts none for a marching kernel).
        for (int rd = 0; rd < G; ++rd) {
          double wait = 0;
          for (std::size_t wv = 0; wv < std::size_t(n_waves); ++wv) {
            double worst = 0;
            for (int ow = 0; ow < G; ++ow)
              if (burst[rd][ow][wv] > 0) worst = std::max(worst, 2 * lat + lm.wire_time(L, burst[rd][ow][wv]));
            wait += worst;
          }
          read_wait[rd] += wait;
        }
      }
      launches[g] += graph ? graph_node : launch;
      if (um) kspan[g].emplace_back(launches[g] + kern[g], tk);
      ++kernels_on[g];
      if (gps)
        for (int d = 0; d < G; ++d) queues[std::size_t(g) * G + d].fence();  // kernel end drains
      if (p == SimParadigm::proact) {
        for (int d = 0; d < G; ++d)
          if (chunk_fill[d] > 0) chunks.push_back({d, chunk_fill[d], chunk_wave[d]});  // the last, partial one
        // each destination's chunks in order on its own copy pipe; a chunk starts when the wave
        // holding its last producing block has finished (waves progress evenly through the kernel)
        std::vector<double> pipe(G, 0);
        double end = tk;
        for (const Chunk& c : chunks) {
          const double ready = tk * (std::min(c.wave, n_waves - 1) + 1) / n_waves;
          const double start = std::max(ready, pipe[c.dst]);
          pipe[c.dst] = start + lm.copy_time(sys, g, c.dst, c.bytes);
          extra_wire += lm.write_wire(L, c.bytes);
          end = std::max(end, pipe[c.dst]);
        }
        proact_end[g] += end;
      }
      kern[g] += tk;
    }
    // ---- per-GPU transfer time of this iteration ----
    if (gps) {
      for (int a = 0; a < G; ++a)
        for (int b = 0; b < G; ++b) {
          WriteQueue& q = queues[std::size_t(a) * G + b];
          W[a][b] += q.wire;
          useful += q.payload;
          q.wire = q.payload = q.writes = 0;
        }
    }
    std::vector<double> link_t(G, 0);
    for (int g = 0; g < G; ++g) {
      double out = 0, in = 0, pair = 0;
      for (int d = 0; d < G; ++d) {
        out += W[g][d];
        in += W[d][g];
        pair = std::max({pair, lm.wire_time(L, W[g][d]), lm.wire_time(L, W[d][g])});
      }
      // A direct-topology GPU's SM stores into its peers also share its egress: their payload,
      // packed as the copies' large packets, at the measured all-to-all egress (egress_GBps: wire
      // bytes of large packets). Stores to consecutive addresses from consecutive warps reach the
      // fabric combined: 4xH200, road:5120 pagerank p2p_inline put 78.6 MB per GPU on the links in
      // 319.6 us, >= 246 GB/s of payload, which 32-B packets at their wire overhead could not
      // carry (that cap gave 469 us), while the payload at the copies' egress gives 332 us.
      // A switched GPU (switch_tree, nvswitch) sends and receives everything through its one
      // port: on 4xH200 (NV18 between every pair: NVSwitch), pagerank and sssp rmat:20's remote
      // loads on 4 GPUs (193 MB of wire into each GPU from its 3 peers) took 527.5 / 580.5 us,
      // near the 4-GPU bytes at one port's rate (492.4 / 583.2 us), not at three pairs' (a
      // per-pair bound gave 183.7 / 274.5 us); on 2 GPUs both bounds agree (646.3 / 686.5 us
      // against 639.3 / 655.8).
      double t = sys.topology == Topology::direct ? pair : lm.wire_time(L, std::max(out, in));
      if (stored[g] > 0) t = std::max(t, egress_seconds(lm.write_wire(L, stored[g])));
      link_t[g] = t;
    }
    double wire = extra_wire;
    for (int a = 0; a < G; ++a)
      for (int b = 0; b < G; ++b) wire += W[a][b];

    if (um) {
      // The driver's view of this iteration's faults, in time order: the pages that thrash within
      // its lapse pin before they cost (sim/um.hpp UmThrashing). A touch's time: the run so far,
      // then its kernel's start and the block's place in it.
      const UmThrashing th{gp.um_thrash_lapse_us * 1e-6, gp.um_thrash_threshold};
      const double now = total_time;
      const auto time_of = [&](int g, double pos) {
        const auto& ks = kspan[std::size_t(g)];
        if (ks.empty()) return now;
        const std::size_t k = std::min(ks.size() - 1, std::size_t(std::max(0.0, pos)));
        return now + ks[k].first + (pos - double(k)) * ks[k].second;
      };
      for (UmPages& pg : pages) pg.driver_faults(time_of, th);
    }
    std::vector<double> gpu_t(G, 0), xfer(G, 0);
    for (int g = 0; g < G; ++g) {
      switch (p) {
        case SimParadigm::infinite: gpu_t[g] = launches[g] + kern[g]; break;  // launches: 0 without a host loop
        case SimParadigm::memcpy: {
          double sent = 0;  // wire bytes this GPU copies out
          // In a CUDA graph a copy between kernel nodes takes the measured node time
          // (System::graph_copy_us): 4xH200, heat3d 256^3 on 4 GPUs, two 256-KiB copies per
          // middle GPU took 13.8 us per iteration over infinite, the stream fit gave 6.
          // On a stream the first copy after the kernel takes the measured copy-after-a-kernel
          // time (System::stream_copy_us), the others follow it back to back: 4xH200, a 2-MiB
          // copy right after a kernel 14.88 us where the back-to-back fit gives 7.6; pagerank
          // road:1024's 2-GPU memcpy (one 2.1-MB copy per GPU) measured 34.1 us: 25.8 with the
          // fit, 31.8 with this.
          const bool graph_copy = graph && !sys.graph_copy_us.empty();
          bool first = !graph && !sys.stream_copy_us.empty();
          for (int d = 0; d < G; ++d)
            if (P[g][d] > 0) {
              // one stream: copies one after another
              xfer[g] += graph_copy ? sys.graph_copy_s(P[g][d])
                         : first    ? sys.stream_copy_s(P[g][d])
                                    : lm.copy_time(sys, g, d, P[g][d]);
              first = false;
              sent += lm.write_wire(L, P[g][d]);
            }
          wire += sent;
          // Every GPU copies in the same phase, so the fabric carries an all-to-all of copies: a
          // GPU's copies take at least its bytes at the measured all-to-all copy egress.
          // road:5120 pagerank on 4xH200 (3 x 26.2 MB per GPU): the copies one after another at
          // 395.75 GB/s gave 199 us, the measured memcpy run spent 418 us over infinite's.
          xfer[g] = std::max(xfer[g], egress_seconds(sent));
          gpu_t[g] = launches[g] + kern[g] + xfer[g];
          break;
        }
        case SimParadigm::proact:
          gpu_t[g] = launches[g] + proact_end[g];
          xfer[g] = proact_end[g] - kern[g];
          break;
        case SimParadigm::um: {
          const UmFaults f = um_faults(pages, g);
          const double migrated = f.faults * page_bytes(), remote = f.remote;
          const double fault_s = f.batches * gp.fault_us * 1e-6;  // a GPU's batches one after another
          const double mig_wire = migrated > 0 ? lm.write_wire(L, page_bytes()) * (migrated / page_bytes()) : 0;
          const double remote_wire = remote > 0 ? lm.write_wire(L, remote) : 0;
          wire += mig_wire + remote_wire;
          useful += migrated + remote;
          xfer[g] = std::max(fault_s, lm.wire_time(L, mig_wire)) + lm.wire_time(L, remote_wire) + std::max(link_t[g], 0.0);
          gpu_t[g] = launches[g] + kern[g] + xfer[g];
          break;
        }
        default: {  // p2p_inline, rdl, um_hints, gps_hw, finepack: traffic overlapped with the kernel
          xfer[g] = link_t[g];
          const double rtt = 2 * lat;
          exposed[g] = read_waves[g] * rtt + (link_t[g] > 0 ? lat : 0);
          // a march's remote-load waits lengthen its critical path (they are in link_t too)
          gpu_t[g] = launches[g] + std::max(kern[g] + read_wait[g], link_t[g]) + exposed[g];
          break;
        }
      }
    }
    if (um)  // page ownership after the iteration
      for (UmPages& pg : pages) pg.end_iteration();
    int slow = 0;
    for (int g = 1; g < G; ++g)
      if (gpu_t[g] > gpu_t[slow]) slow = g;
    // One host thread issues every GPU's work of the iteration. Where the host reads a result
    // back (host_sync: jacobi2d's norm, sssp's flag) it waits for it, so issuing, executing and
    // the read-back add up; otherwise it issues ahead and the slower of the two bounds the loop.
    // The host's issue: a named loop's calls priced one by one (docs/sim.md "Host loop"), its GPUs
    // lengthened by the wait for the other GPUs' events (event_hop_us), and its multi-GPU infinite
    // run is the bench's elided bound (fixed iterations, no read-back); else issue_us per GPU. A
    // CUDA graph without a read-back issues itself; infinite without a named loop has no host.
    loop = LoopBound{};
    loop.named = named;
    loop.gpus_s = gpu_t[slow];
    bool issued = false, reads_back = false;
    if (named) {
      const HostCallCosts& hc = gp.host;
      const int waits = G > 1 ? it.peer_waits : 0;
      double issue_us = 0;
      for (int g = 0; g < G; ++g) {
        int copies = 0;
        if (p == SimParadigm::memcpy)
          for (int d = 0; d < G; ++d) copies += P[g][d] > 0 ? 1 : 0;
        // the memsets are among the GPU's traced kernels (their bytes), but the host enqueues them as memsets
        const int memsets = std::min<int>(it.memsets, kernels_on[g]);
        issue_us += hc.set_device_us + (kernels_on[g] - memsets) * hc.launch_us + memsets * hc.memset_us +
                    waits * hc.wait_us + (waits > 0 ? hc.record_us : 0) + copies * hc.copy_us;
      }
      issued = true;
      reads_back = it.host_sync && !(p == SimParadigm::infinite && G > 1);
      loop.host_s = issue_us * 1e-6;
      if (reads_back) loop.readback_s = sync + G * hc.readback_us * 1e-6;
      else if (waits > 0) loop.hop_s = gp.event_hop_us * 1e-6;
    } else if (host_driven() && (it.host_sync || !o.graph_launch)) {
      issued = true;
      reads_back = it.host_sync;
      loop.host_s = G * gp.issue_us * 1e-6;
      if (reads_back) loop.readback_s = G * gp.readback_us * 1e-6 + sync;
    }
    if (reads_back) {
      loop.time_s = loop.host_s + loop.gpus_s + loop.readback_s;
      loop.bound = "host+gpus";
    } else if (issued) {
      loop.time_s = std::max(loop.gpus_s + loop.hop_s, loop.host_s);
      loop.bound = loop.gpus_s + loop.hop_s >= loop.host_s ? "gpus" : "host";
    } else {
      loop.time_s = loop.gpus_s;
      loop.bound = host_driven() ? "graph" : "kernels";
    }
    last_time = loop.time_s;
    total_time += last_time;
    last_wire = wire;
    last_useful = useful;
    total_wire += wire;
    total_useful += useful;
    sum_compute += kern[slow];
    sum_transfer += xfer[slow];
    sum_exposed += std::max(0.0, gpu_t[slow] - launches[slow] - kern[slow]);
  }
  const double n = double(t.iterations.size());
  const double runs = std::max(n, double(o.run_iters));
  SimResult r;
  r.kernels = std::move(last_kernels);
  r.loop = loop;
  r.sec_per_iter = (total_time + (runs - n) * last_time) / runs;
  r.link_bytes_per_iter = (total_wire + (runs - n) * last_wire) / runs;
  r.useful_bytes_per_iter = (total_useful + (runs - n) * last_useful) / runs;
  r.compute_s = sum_compute / n;
  r.transfer_s = sum_transfer / n;
  r.exposed_transfer_s = sum_exposed / n;
  switch (p) {
    case SimParadigm::memcpy: r.model = "kernel (halo stored locally), then copy-engine copies of the halo bytes, not overlapped; launch + host sync"; break;
    case SimParadigm::um: r.model = "managed pages placed by first touch; a page touched by a non-owner faults and migrates (page_bytes over the link), faults to contiguous pages one batch (fault_us each, a GPU's one after another); a page stored by one GPU pins where its migrations follow each other within the driver's thrashing lapse (um_thrash_lapse_us) or two GPUs' touches interleave, else keeps migrating; write-shared pages keep migrating"; break;
    case SimParadigm::um_hints: r.model = "managed pages on their preferred location; other GPUs load/store them remotely at line granularity, no faults"; break;
    case SimParadigm::rdl: r.model = "halo read by the neighbour during its kernel (one read per 128-B line), a link round trip exposed per wave of reading blocks"; break;
    case SimParadigm::p2p_inline: r.model = "remote stores, one write per (run, 128-B line), overlapped with the kernel"; break;
    case SimParadigm::gps_hw: r.model = "GPS: published stores to subscribed pages through a per-destination write queue of 128-B entries (FIFO drain, fence at kernel end)"; break;
    case SimParadigm::finepack: r.model = "FinePack: GPS's queue drained whole into packed messages (outer header + sub-headers)"; break;
    case SimParadigm::proact: r.model = "halo stored locally; each chunk copied when its producing wave ends, overlapped; tail = last chunk"; break;
    case SimParadigm::infinite:
      r.model = t.iterations.front().host_named && sys.gpu.host.measured()
                    ? "no transfers: the kernels in the app's host loop (its calls named by the trace), no read-back"
                    : "no transfers, no launch or host sync: the kernels alone";
      break;
  }
  return r;
}

}  // namespace

SimResult simulate_with(const Trace& t, const System& s, SimParadigm p, const SimOptions& o, const LinkModel& lm) {
  Engine e(t, s, p, o, lm);
  return e.run();
}

}  // namespace gpsm::sim
