#pragma once
// Long rows of pagerank's and sssp's matrix cut into segments that whole blocks reduce (plain
// C++, CPU-tested; graph_kernels.cu runs them).
//
// Why: those kernels give each row `lanes` threads (<= 32), so a row's edges are a chain of
// degree / lanes gathers per thread, and on a power-law graph one hub row is the critical path of
// the whole kernel. rmat:23's largest in-degree is 152,850: 9,553 gathers in a row with 16 lanes,
// and pagerank took ~4.4 ms per iteration on one H200 and on two alike (2026-11-22, 8094655).
// A split row's segments run as one block each, before the row kernel (which skips the row);
// each block leaves its partial, and the row's last block to finish combines the partials in
// segment order (the same result every run) and writes the row.
#include <cstdint>
#include <vector>

namespace gpsm::apps::graph {

struct RowSegment {
  std::int64_t row = 0;          // local row
  std::int64_t begin = 0, end = 0;  // its edges [begin, end)
  std::int32_t first = 0;        // the row's first segment (partials [first, first + count))
  std::int32_t count = 0;        // the row's segments
  std::int32_t split = 0;        // the row's index among the split rows (its finish counter)
  std::int32_t pad = 0;
};

// A row is split when a lane's chain would exceed this many gathers (more than kChainEdges * lanes edges).
constexpr std::int64_t kChainEdges = 64;
// Edges per segment: 4 per thread of a 256-thread block.
constexpr std::int64_t kSegmentEdges = 1024;

// The segments of every row of `row_ptr` (rows + 1 offsets, non-decreasing) with more than
// `longer_than` edges, in row order, each cut into pieces of `segment_edges` (the last shorter).
// Throws gpsm::Error on longer_than < 1, segment_edges < 1 or a decreasing row_ptr.
std::vector<RowSegment> split_long_rows(const std::vector<std::int64_t>& row_ptr, std::int64_t longer_than,
                                        std::int64_t segment_edges = kSegmentEdges);
// GPSM_GRAPH_SPLIT's value (nullptr or "": unset): the chain length past which rows split,
// kChainEdges by default, "off" for none (returns 0), else a positive integer. Anything else
// throws gpsm::Error naming the variable.
std::int64_t chain_edges_setting(const char* value);
// Number of split rows in `segs` (their `split` indices run 0 .. n-1).
std::int64_t split_rows(const std::vector<RowSegment>& segs);

}  // namespace gpsm::apps::graph
