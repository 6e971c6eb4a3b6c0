#pragma once
// The `bulk` publish mode (the memcpy paradigm): at a fence the source's dirty words are copied
// to each other subscriber by copy engines. Copying whole dirty pages would overwrite words
// another GPU wrote in the same page, so the plan copies maximal runs of dirty words, split where
// the page's subscriber set changes. Plain C++: the runtime downloads the bitmap and issues one
// cudaMemcpyPeerAsync per run.
#include <cstdint>
#include <vector>

#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps {

struct CopyRun {
  int dst = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t bytes = 0;
  bool operator==(const CopyRun& o) const { return dst == o.dst && byte_offset == o.byte_offset && bytes == o.bytes; }
};

// dirty: one u32 per line (g.lines() words); masks: one per page. Runs go to every subscriber of
// the page except `self`, in increasing offset order per destination.
std::vector<CopyRun> plan_bulk(const Geometry& g, const std::uint32_t* dirty, const std::uint32_t* masks, int self);

// ArrayBase::publish_box_bytes_async: a sub-box of the array read as a 3D volume (n[0] x n[1] x
// n[2] elements of `elem` bytes, x fastest), cells [lo, hi) on each axis, that `self` stored into
// its own replica, copied to the other subscribers. Per destination: `whole` when it subscribes to
// every page of every row of the box (one 3D copy), else the maximal runs of each row over the
// pages it subscribes to (none where it subscribes to none). Destinations in increasing order.
struct BoxCopy {
  int dst = 0;
  bool whole = false;
  std::vector<CopyRun> runs;  // when not whole
};
std::vector<BoxCopy> plan_box_publish(const Geometry& g, const std::uint32_t* masks, const std::uint64_t n[3],
                                      std::uint64_t elem, const std::uint64_t lo[3], const std::uint64_t hi[3],
                                      int self);

}  // namespace gpsm::gps
