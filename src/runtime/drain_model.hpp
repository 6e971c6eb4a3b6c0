#pragma once
// Host reference of the `combine` fence (finepack.hpp): what a source sends to each subscriber,
// and how the receiver applies it. The CPU tests round-trip random store streams through it; the
// device kernels make the same per-line decisions with the same functions.
#include <cstdint>
#include <vector>

#include "runtime/finepack.hpp"
#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps {

struct LineWrite {
  std::uint64_t line = 0;
  std::uint32_t mask = 0;  // dirty words written directly
};

struct DrainPlan {
  int dst = 0;
  std::vector<LineWrite> direct;
  std::vector<PackedEntry> packed;
  std::uint64_t records = 0;       // blocks with packed entries (one directory entry each)
  std::uint64_t useful_bytes = 0;  // 4 B per dirty word sent
  // touched sectors of direct lines + 6 B per packed entry (records padded to 8 entries) + 8 B
  // per record's directory entry
  std::uint64_t link_bytes = 0;
};

// One plan per other subscriber that receives anything, in increasing device order.
std::vector<DrainPlan> plan_drain(const Geometry& g, const std::uint32_t* dirty, const std::uint32_t* src_words,
                                  const std::uint32_t* masks, int self);
// Apply a plan to the receiver's replica: direct lines copy the dirty words from the source's
// replica, packed entries carry their values.
void apply_drain(const DrainPlan& plan, const std::uint32_t* src_words, std::uint32_t* dst_words);

}  // namespace gpsm::gps
