#pragma once
// What the trace generators (trace_gen.cpp: stencils, scatter; trace_graph.cpp: graph apps) share:
// the address scheme of the simulated buffers, block sampling and their error for bad requests.
// Internal to src/sim.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/trace.hpp"

namespace gpsm::sim::trace_detail {

[[noreturn]] inline void bad(const std::string& what) { throw std::invalid_argument("gpsm sim: " + what); }
// The trace layouts (TraceRequest::layout): slabs, remote, grid, replicas; bad() on others.
inline void check_layout(const std::string& layout) {
  if (layout != "slabs" && layout != "remote" && layout != "grid" && layout != "replicas")
    bad("unknown layout '" + layout + "' (expected slabs, remote, grid or replicas)");
}

// Addresses: GPU g's copy of buffer b at (g << 40) + b 2^37; the managed (grid) buffer b at
// 2^48 + (b << 40); GPU g's GPS replica of buffer b at 2^47 + (g << 40) + b 2^37.
constexpr std::uint64_t kBufSpan = std::uint64_t{1} << 37;
inline std::uint64_t slab_base(int g, int b) {
  return (static_cast<std::uint64_t>(g) << 40) + static_cast<std::uint64_t>(b) * kBufSpan;
}
inline std::uint64_t grid_base(int b) { return (std::uint64_t{1} << 48) + (static_cast<std::uint64_t>(b) << 40); }
inline std::uint64_t replica_base(int g, int b) {
  return (std::uint64_t{1} << 47) + (static_cast<std::uint64_t>(g) << 40) + static_cast<std::uint64_t>(b) * kBufSpan;
}

// Sampling: blocks are taken in chunks of kSampleChunk consecutive blocks, chunk c recorded when
// floor((c+1) s) > floor(c s) (evenly spread, about s of the chunks; chunk 0 alone when that would
// be none). Whole chunks, not every 1/s-th block: neighbouring blocks share rows and planes (a
// row's north is the previous block's centre), and the simulator's footprint (distinct bytes,
// the rest hits L2) only sees that sharing between recorded blocks. Spread single blocks would
// make every recorded block look like it reads its rows from DRAM (2x the bytes for Jacobi).
constexpr std::uint64_t kSampleChunk = 64;
inline bool sampled(std::uint64_t b, std::uint64_t grid, double s) {
  if (s >= 1) return true;
  const std::uint64_t c = b / kSampleChunk, chunks = (grid + kSampleChunk - 1) / kSampleChunk;
  if (std::floor(static_cast<double>(chunks) * s) < 1) return c == 0;
  return std::floor(static_cast<double>(c + 1) * s) > std::floor(static_cast<double>(c) * s);
}

// Sampling that keeps a kernel's ends: the rule above, and the blocks at either end of the grid
// always. They hold the cells next to the GPU's part boundaries, which the neighbours read (a
// road grid's rows: GPS subscriptions come from the recorded blocks only; jacobi2d's edge rows:
// its halo pushes, and under um the pages that migrate; the 3D grid march's first and last chunk
// along a split march axis: the halo planes). The kept blocks stand for themselves (weight 1:
// their remote reads, pushes and published pages are not multiplied), the rule's chunks for the
// rest of the blocks. Keep: how many blocks at the low and the high end.
struct Keep {
  std::uint64_t lo = 0, hi = 0;
};
// The first and the last sampling chunk (however short) of a grid of `grid` blocks
inline Keep end_chunks(std::uint64_t grid) {
  const std::uint64_t chunks = (grid + kSampleChunk - 1) / kSampleChunk;
  return {std::min(grid, kSampleChunk), chunks == 0 ? 0 : grid - (chunks - 1) * kSampleChunk};
}
enum class Pick { no, rule, boundary };
inline Pick pick_block(std::uint64_t b, std::uint64_t grid, double s, Keep keep) {
  if (s >= 1) return Pick::rule;
  if (b < keep.lo || b + keep.hi >= grid) return Pick::boundary;
  // the rule over the blocks between the kept ends, so that some of them always stand for the
  // rest (a 2-GPU 3D march keeps half its items, and the rule over the whole grid picked none of
  // the other half)
  return sampled(b - keep.lo, grid - keep.lo - keep.hi, s) ? Pick::rule : Pick::no;
}
inline Pick pick_block(std::uint64_t b, std::uint64_t grid, double s) { return pick_block(b, grid, s, end_chunks(grid)); }
// Weights of a kernel's recorded blocks (boundary[i]: block i was a boundary pick).
inline void set_weights(KernelTrace& kt, const std::vector<char>& boundary) {
  double nb = 0;
  for (char x : boundary) nb += x;
  const double rule = double(kt.blocks.size()) - nb;
  if (rule < 1) {  // only boundary chunks: they stand for every block
    const double w = kt.blocks.empty() ? 1.0 : double(kt.grid_blocks) / double(kt.blocks.size());
    for (auto& b : kt.blocks) b.weight = w;
    return;
  }
  const double w = (double(kt.grid_blocks) - nb) / rule;
  for (std::size_t i = 0; i < kt.blocks.size(); ++i) kt.blocks[i].weight = boundary[i] ? 1.0 : w;
}

}  // namespace gpsm::sim::trace_detail
