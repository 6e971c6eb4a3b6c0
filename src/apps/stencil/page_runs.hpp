#pragma once
// Page arithmetic of the 3D apps' um_hints run (plain C++, CPU-tested).
//
// cudaMemAdvise and cudaMemPrefetchAsync act on whole CPU pages: the driver rounds a range's
// start down and its end up to the page size before applying the hint. So the hints are placed
// per page, never per cell, and read back over exactly the pages they were placed on:
//   preferred location: each page goes to the part (GPU) whose planes hold its first cell; a
//     page shared by two GPUs' planes belongs to one of them, and a GPU whose planes hold no
//     page start (a tiny problem) has no page of its own;
//   accessed-by: every page holding any cell a neighbour reads.
// A page is page_bytes of the buffer from its start (the allocation must be page-aligned).
#include <cstdint>
#include <vector>

#include "apps/stencil/decomp.hpp"

namespace gpsm::apps {

// The cells of an n[0] x n[1] x n[2] grid (x fastest) whose coordinate along `axis` lies in
// [lo, hi), as ascending disjoint ranges of linear cell indices: one along z, one per z along y,
// one per row along x (adjacent ranges merged). Throws std::invalid_argument unless
// 0 <= lo <= hi <= n[axis] and every extent is positive.
std::vector<Range> plane_cells(const std::int64_t n[3], Axis axis, std::int64_t lo, std::int64_t hi);

struct PageRun {
  Range pages;    // page indices [begin, end)
  int owner = 0;  // part index
};
// Every page of the grid's buffer (cells of cell_bytes each) with the part whose planes hold the
// page's first cell: part k holds planes [bounds[k], bounds[k + 1]) along `axis`, bounds ascending
// from 0 to n[axis]. Consecutive pages of one owner form one run; the runs cover every page in
// order. Throws std::invalid_argument for bad bounds, or a page size that is not a positive
// multiple of cell_bytes.
std::vector<PageRun> page_owners(const std::int64_t n[3], Axis axis, const std::vector<std::int64_t>& bounds,
                                 std::int64_t page_bytes, std::int64_t cell_bytes);

// The pages holding any of `cells` (ascending ranges of cell indices, as plane_cells gives them),
// as ascending disjoint runs of page indices (touching runs merged).
std::vector<Range> pages_holding(const std::vector<Range>& cells, std::int64_t page_bytes, std::int64_t cell_bytes);

}  // namespace gpsm::apps
