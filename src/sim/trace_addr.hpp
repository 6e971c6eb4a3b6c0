#pragma once
// What the trace generators (trace_gen.cpp: stencils, scatter; trace_graph.cpp: graph apps) share:
// the address scheme of the simulated buffers, block sampling and their error for bad requests.
// Internal to src/sim.

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

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

}  // namespace gpsm::sim::trace_detail
