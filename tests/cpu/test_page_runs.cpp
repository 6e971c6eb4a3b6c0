// Page arithmetic of the 3D apps' um_hints run (apps/stencil/page_runs.hpp), against brute force:
// which cells lie in a range of planes, which GPU each page is preferred on, which pages hold a
// neighbour's planes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/stencil/page_runs.hpp"

using namespace gpsm::apps;
using i64 = std::int64_t;

namespace {

i64 coord(const i64 n[3], Axis axis, i64 cell) {
  const i64 c[3] = {cell % n[0], (cell / n[0]) % n[1], cell / (n[0] * n[1])};
  return c[static_cast<int>(axis)];
}

std::vector<i64> cells_of(const std::vector<Range>& ranges) {
  std::vector<i64> out;
  for (const Range& r : ranges)
    for (i64 c = r.begin; c < r.end; ++c) out.push_back(c);
  return out;
}

}  // namespace

TEST(PageRuns, PlaneCellsAreExactlyTheCellsInThePlanes) {
  const i64 n[3] = {5, 4, 3};
  for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
    const i64 na = n[static_cast<int>(axis)];
    for (i64 lo = 0; lo <= na; ++lo)
      for (i64 hi = lo; hi <= na; ++hi) {
        SCOPED_TRACE(std::string(axis_name(axis)) + " [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
        const std::vector<Range> got = plane_cells(n, axis, lo, hi);
        std::vector<i64> want;
        for (i64 c = 0; c < n[0] * n[1] * n[2]; ++c)
          if (coord(n, axis, c) >= lo && coord(n, axis, c) < hi) want.push_back(c);
        EXPECT_EQ(cells_of(got), want);  // ascending, disjoint, nothing more
        for (std::size_t k = 1; k < got.size(); ++k) EXPECT_LT(got[k - 1].end, got[k].begin) << "touching runs merge";
      }
  }
  // Along z a plane range is one run; along y one per z; along x one per row.
  EXPECT_EQ(plane_cells(n, Axis::z, 1, 2).size(), 1u);
  EXPECT_EQ(plane_cells(n, Axis::y, 1, 3).size(), 3u);
  EXPECT_EQ(plane_cells(n, Axis::x, 2, 3).size(), 12u);
  EXPECT_EQ(plane_cells(n, Axis::y, 0, 4).size(), 1u);  // whole planes: one run
}

TEST(PageRuns, EachPageGoesToTheOwnerOfItsFirstCell) {
  const i64 n[3] = {10, 4, 6};  // 240 cells, 40 per z plane
  // 64-byte pages of 4-byte cells: 16 cells a page, 15 pages; page 5 starts at cell 80 = z 2.
  const std::vector<PageRun> z = page_owners(n, Axis::z, {0, 2, 6}, 64, 4);
  ASSERT_EQ(z.size(), 2u);
  EXPECT_EQ(z[0].pages.begin, 0);
  EXPECT_EQ(z[0].pages.end, 5);
  EXPECT_EQ(z[0].owner, 0);
  EXPECT_EQ(z[1].pages.begin, 5);
  EXPECT_EQ(z[1].pages.end, 15);
  EXPECT_EQ(z[1].owner, 1);

  // Brute force over axes, page sizes and splits (an empty part included): the runs cover every
  // page in order, each page's owner holds its first cell, neighbouring runs differ in owner.
  const std::vector<std::vector<i64>> splits_z = {{0, 6}, {0, 1, 3, 6}, {0, 3, 3, 6}};
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (i64 page : {4, 12, 64, 160, 4096}) {
      const i64 na = n[static_cast<int>(axis)];
      for (std::vector<i64> bounds : splits_z) {
        bounds.back() = na;
        for (i64& b : bounds) b = std::min(b, na);
        SCOPED_TRACE(std::string(axis_name(axis)) + " page " + std::to_string(page));
        const std::vector<PageRun> runs = page_owners(n, axis, bounds, page, 4);
        i64 next = 0;
        for (std::size_t k = 0; k < runs.size(); ++k) {
          EXPECT_EQ(runs[k].pages.begin, next);
          ASSERT_GT(runs[k].pages.end, runs[k].pages.begin);
          if (k > 0) EXPECT_NE(runs[k].owner, runs[k - 1].owner);
          for (i64 p = runs[k].pages.begin; p < runs[k].pages.end; ++p) {
            const i64 c = coord(n, axis, p * page / 4);
            EXPECT_GE(c, bounds[runs[k].owner]) << "page " << p;
            EXPECT_LT(c, bounds[runs[k].owner + 1]) << "page " << p;
          }
          next = runs[k].pages.end;
        }
        EXPECT_EQ(next, (240 * 4 + page - 1) / page);
      }
    }
}

TEST(PageRuns, PagesHoldingAreThePagesTouched) {
  const i64 n[3] = {10, 4, 6};
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (i64 page : {4, 12, 64, 4096}) {
      const std::vector<Range> cells = plane_cells(n, axis, 1, 3);
      const std::vector<Range> got = pages_holding(cells, page, 4);
      std::set<i64> want;
      for (i64 c : cells_of(cells)) want.insert(c * 4 / page);
      std::vector<i64> pages = cells_of(got);
      EXPECT_EQ(std::set<i64>(pages.begin(), pages.end()), want) << axis_name(axis) << " page " << page;
      EXPECT_EQ(pages.size(), want.size()) << "runs overlap";
      for (std::size_t k = 1; k < got.size(); ++k) EXPECT_LT(got[k - 1].end, got[k].begin) << "touching runs merge";
    }
}

TEST(PageRuns, Errors) {
  const i64 n[3] = {10, 4, 6};
  EXPECT_THROW(plane_cells(n, Axis::z, 3, 2), std::invalid_argument);
  EXPECT_THROW(plane_cells(n, Axis::y, 0, 5), std::invalid_argument);
  EXPECT_THROW(page_owners(n, Axis::z, {0, 2, 5}, 64, 4), std::invalid_argument);  // does not reach n[z]
  EXPECT_THROW(page_owners(n, Axis::z, {0, 4, 2, 6}, 64, 4), std::invalid_argument);
  EXPECT_THROW(page_owners(n, Axis::z, {0, 6}, 6, 4), std::invalid_argument);  // page not a multiple of a cell
  EXPECT_THROW(pages_holding({Range{0, 4}}, 2, 4), std::invalid_argument);
  const i64 empty[3] = {0, 4, 6};
  EXPECT_THROW(plane_cells(empty, Axis::z, 0, 1), std::invalid_argument);
}
