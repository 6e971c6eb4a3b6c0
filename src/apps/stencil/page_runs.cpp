#include "apps/stencil/page_runs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpsm::apps {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("gpsm: " + what); }

std::string str(std::int64_t v) { return std::to_string(v); }

void check_grid(const std::int64_t n[3], const char* fn) {
  for (int d = 0; d < 3; ++d)
    if (n[d] < 1) bad(std::string(fn) + ": extent " + "xyz"[d] + " = " + str(n[d]) + " is not positive");
}

void check_page(std::int64_t page_bytes, std::int64_t cell_bytes, const char* fn) {
  if (cell_bytes < 1 || page_bytes < cell_bytes || page_bytes % cell_bytes != 0)
    bad(std::string(fn) + ": page size " + str(page_bytes) + " is not a positive multiple of the cell size " +
        str(cell_bytes));
}

// Appends [b, e) to `out`, merging it into the last range when they touch.
void append(std::vector<Range>& out, std::int64_t b, std::int64_t e) {
  if (!out.empty() && out.back().end >= b)
    out.back().end = std::max(out.back().end, e);
  else
    out.push_back(Range{b, e});
}

}  // namespace

std::vector<Range> plane_cells(const std::int64_t n[3], Axis axis, std::int64_t lo, std::int64_t hi) {
  check_grid(n, "plane_cells");
  const int a = static_cast<int>(axis);
  if (lo < 0 || lo > hi || hi > n[a])
    bad("plane_cells: planes [" + str(lo) + ", " + str(hi) + ") outside [0, " + str(n[a]) + "] along " +
        axis_name(axis));
  std::vector<Range> out;
  if (lo == hi) return out;
  // Along axis a, a plane range is `runs` runs of (hi - lo) * unit cells, `period` cells apart.
  const std::int64_t unit = a == 0 ? 1 : a == 1 ? n[0] : n[0] * n[1];
  const std::int64_t period = unit * n[a];
  const std::int64_t runs = n[0] * n[1] * n[2] / period;
  for (std::int64_t k = 0; k < runs; ++k) append(out, k * period + lo * unit, k * period + hi * unit);
  return out;
}

std::vector<PageRun> page_owners(const std::int64_t n[3], Axis axis, const std::vector<std::int64_t>& bounds,
                                 std::int64_t page_bytes, std::int64_t cell_bytes) {
  check_grid(n, "page_owners");
  check_page(page_bytes, cell_bytes, "page_owners");
  const int a = static_cast<int>(axis);
  bool ok = bounds.size() >= 2 && bounds.front() == 0 && bounds.back() == n[a];
  for (std::size_t k = 1; ok && k < bounds.size(); ++k) ok = bounds[k - 1] <= bounds[k];
  if (!ok) bad(std::string("page_owners: bounds must ascend from 0 to n[") + axis_name(axis) + "] = " + str(n[a]));
  const std::int64_t cells = n[0] * n[1] * n[2];
  const std::int64_t per_page = page_bytes / cell_bytes;
  const std::int64_t pages = (cells + per_page - 1) / per_page;
  std::vector<PageRun> out;
  for (std::int64_t p = 0; p < pages; ++p) {
    const std::int64_t cell = p * per_page;
    const std::int64_t c = a == 0 ? cell % n[0] : a == 1 ? (cell / n[0]) % n[1] : cell / (n[0] * n[1]);
    // The last part whose first plane is at or below c (parts without planes are skipped).
    const int owner = static_cast<int>(std::upper_bound(bounds.begin() + 1, bounds.end() - 1, c) - bounds.begin()) - 1;
    if (!out.empty() && out.back().owner == owner)
      out.back().pages.end = p + 1;
    else
      out.push_back(PageRun{Range{p, p + 1}, owner});
  }
  return out;
}

std::vector<Range> pages_holding(const std::vector<Range>& cells, std::int64_t page_bytes, std::int64_t cell_bytes) {
  check_page(page_bytes, cell_bytes, "pages_holding");
  const std::int64_t per_page = page_bytes / cell_bytes;
  std::vector<Range> out;
  for (const Range& r : cells)
    if (r.begin < r.end) append(out, r.begin / per_page, (r.end - 1) / per_page + 1);
  return out;
}

}  // namespace gpsm::apps
