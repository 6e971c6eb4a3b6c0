#pragma once
// The remote write queue of the GPS and FinePack hardware models (sim/paradigm_gps.cpp): what
// leaves a GPU for one destination, entry by entry, and the wire bytes its drains put on the link.
#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/engine.hpp"  // LinkModel
#include "sim/engine_access.hpp"

namespace gpsm::sim::engine_detail {

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
    // A sub-header of s bytes holds 10 length bits and 8 s - 10 offset bits (Table 5.2 of
    // "Improving Multi-GPU Strong Scaling Through Optimization of Fine-Grained Transfers"): one
    // packed message covers at most 2^(8 s - 10) bytes of addresses from its base (the line of
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

}  // namespace gpsm::sim::engine_detail
