#include "apps/graph/row_segments.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "gpsm/error.hpp"

namespace gpsm::apps::graph {

std::vector<RowSegment> split_long_rows(const std::vector<std::int64_t>& row_ptr, std::int64_t longer_than,
                                        std::int64_t segment_edges) {
  if (longer_than < 1 || segment_edges < 1)
    throw Error(fmt::format("gpsm: split_long_rows: longer_than {} and segment_edges {} must be >= 1", longer_than,
                            segment_edges));
  std::vector<RowSegment> segs;
  std::int32_t split = 0;
  for (std::size_t r = 0; r + 1 < row_ptr.size(); ++r) {
    const std::int64_t b = row_ptr[r], e = row_ptr[r + 1];
    if (e < b) throw Error(fmt::format("gpsm: split_long_rows: row_ptr decreases at row {} ({} then {})", r, b, e));
    if (e - b <= longer_than) continue;
    const std::int64_t count = (e - b + segment_edges - 1) / segment_edges;
    if (static_cast<std::int64_t>(segs.size()) + count > std::numeric_limits<std::int32_t>::max())
      throw Error("gpsm: split_long_rows: more than 2^31 segments");
    const auto first = static_cast<std::int32_t>(segs.size());
    for (std::int64_t s = b; s < e; s += segment_edges)
      segs.push_back(RowSegment{static_cast<std::int64_t>(r), s, s + segment_edges < e ? s + segment_edges : e, first,
                                static_cast<std::int32_t>(count), split, 0});
    ++split;
  }
  return segs;
}

std::int64_t chain_edges_setting(const char* value) {
  if (value == nullptr || *value == '\0') return kChainEdges;
  const std::string v(value);
  if (v == "off") return 0;
  const bool digits = v.size() <= 12 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const long long n = digits ? std::stoll(v) : 0;
  if (n < 1)
    throw Error(fmt::format("gpsm: GPSM_GRAPH_SPLIT='{}': expected 'off' or a positive number of gathers per lane", v));
  return n;
}

std::int64_t split_rows(const std::vector<RowSegment>& segs) { return segs.empty() ? 0 : segs.back().split + 1; }

}  // namespace gpsm::apps::graph
