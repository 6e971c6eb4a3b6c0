#include "apps/graph/vec_layout.hpp"

#include <algorithm>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::graph {

int VecLayout::owner(std::int64_t row) const {
  // Parts are few (<= 32): the first whose end is past the row.
  for (int r = 0; r < ranks(); ++r)
    if (row < parts[r].end) return r;
  throw Error("VecLayout: row " + std::to_string(row) + " outside [0, " + std::to_string(rows()) + ")");
}

std::int64_t VecLayout::slot(std::int64_t row) const {
  const int r = owner(row);
  return r * chunk + (row - parts[r].begin);
}

VecLayout make_layout(std::vector<graph_io::RowRange> parts, int width) {
  if (parts.empty() || width < 1) throw Error("make_layout: no parts or width < 1");
  VecLayout l;
  std::int64_t at = 0;
  for (const auto& p : parts) {
    if (p.begin != at || p.end < p.begin)
      throw Error("make_layout: parts are not contiguous at row " + std::to_string(at));
    at = p.end;
    l.chunk = std::max(l.chunk, p.end - p.begin);
  }
  l.parts = std::move(parts);
  l.width = width;
  return l;
}

VecLayout layout_for(const graph_io::Csr& m, int ranks, bool balance_nnz, int width) {
  return make_layout(balance_nnz ? graph_io::partition_rows_by_nnz(m, ranks) : graph_io::partition_rows_equal(m.rows, ranks),
                     width);
}

std::vector<float> to_slots(const VecLayout& l, const std::vector<float>& v, float pad) {
  if (static_cast<std::int64_t>(v.size()) != l.rows() * l.width) throw Error("to_slots: vector size mismatch");
  std::vector<float> s(static_cast<std::size_t>(l.elems()), pad);
  for (int r = 0; r < l.ranks(); ++r)
    std::copy(v.begin() + l.parts[r].begin * l.width, v.begin() + l.parts[r].end * l.width,
              s.begin() + l.first_elem(r));
  return s;
}

std::vector<float> from_slots(const VecLayout& l, const std::vector<float>& s) {
  if (static_cast<std::int64_t>(s.size()) != l.elems()) throw Error("from_slots: vector size mismatch");
  std::vector<float> v(static_cast<std::size_t>(l.rows() * l.width));
  for (int r = 0; r < l.ranks(); ++r)
    std::copy(s.begin() + l.first_elem(r), s.begin() + l.first_elem(r) + l.owned_elems(r),
              v.begin() + l.parts[r].begin * l.width);
  return v;
}

Slice slice_rows(const graph_io::Csr& m, graph_io::RowRange rows, const VecLayout& cols) {
  if (cols.rows() != m.cols) throw Error("slice_rows: the column layout has " + std::to_string(cols.rows()) +
                                         " rows, the matrix " + std::to_string(m.cols) + " columns");
  // Slot of every column, once (cheaper than a search per entry).
  std::vector<std::int32_t> slot_of(static_cast<std::size_t>(m.cols));
  for (int r = 0; r < cols.ranks(); ++r)
    for (std::int64_t c = cols.parts[r].begin; c < cols.parts[r].end; ++c)
      slot_of[c] = static_cast<std::int32_t>(r * cols.chunk + (c - cols.parts[r].begin));
  Slice s;
  const std::int64_t first = m.row_ptr[rows.begin], last = m.row_ptr[rows.end];
  s.row_ptr.resize(static_cast<std::size_t>(rows.end - rows.begin + 1));
  for (std::int64_t i = rows.begin; i <= rows.end; ++i) s.row_ptr[i - rows.begin] = m.row_ptr[i] - first;
  s.col.resize(static_cast<std::size_t>(last - first));
  for (std::int64_t e = first; e < last; ++e) s.col[e - first] = slot_of[m.col[e]];
  if (m.weighted()) s.val.assign(m.val.begin() + first, m.val.begin() + last);
  return s;
}

double publish_bytes(Paradigm par, const VecLayout& l) {
  const int n = l.ranks();
  double owned = 0;
  for (int r = 0; r < n; ++r) owned += static_cast<double>(l.owned_elems(r)) * sizeof(float);
  switch (par) {
    case Paradigm::single:
    case Paradigm::infinite:
    case Paradigm::rdl:  // nothing is published: the readers fetch (remote_read_bytes)
      return 0;
    case Paradigm::memcpy:
    case Paradigm::proact:  // memcpy's copies, chunked
    case Paradigm::p2p_inline:
      return owned * (n - 1);
    case Paradigm::nccl:
      return n == 1 ? 0 : static_cast<double>(l.chunk) * l.width * sizeof(float) * n * (n - 1);
    default:
      return -1;
  }
}

double remote_read_bytes(const VecLayout& cols, const Slice& s, int r) {
  std::int64_t remote = 0;
  for (std::int32_t c : s.col) remote += c / cols.chunk != r ? 1 : 0;
  return static_cast<double>(remote) * cols.width * sizeof(float);
}

std::vector<std::uint32_t> predicted_masks(const VecLayout& l, const std::vector<std::vector<const Slice*>>& reads,
                                           std::uint64_t page_bytes) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(l.elems()) * sizeof(float);
  std::vector<std::uint32_t> m((bytes + page_bytes - 1) / page_bytes, 0u);
  auto touch = [&](std::int64_t first_elem, std::int64_t count, int r) {
    if (count <= 0) return;
    const std::uint64_t a = static_cast<std::uint64_t>(first_elem) * sizeof(float) / page_bytes;
    const std::uint64_t b = (static_cast<std::uint64_t>(first_elem + count) * sizeof(float) - 1) / page_bytes;
    for (std::uint64_t p = a; p <= b; ++p) m[p] |= 1u << r;
  };
  for (int r = 0; r < l.ranks(); ++r) {
    touch(l.first_elem(r), l.owned_elems(r), r);
    if (r < static_cast<int>(reads.size()))
      for (const Slice* s : reads[r])
        for (std::int32_t c : s->col) touch(static_cast<std::int64_t>(c) * l.width, l.width, r);
  }
  return m;
}

double gps_publish_bytes(const VecLayout& l, const std::vector<std::uint32_t>& masks, std::uint64_t page_bytes) {
  double total = 0;
  const std::uint64_t per_page = page_bytes / sizeof(float);
  for (int r = 0; r < l.ranks(); ++r) {
    std::int64_t e = l.first_elem(r);
    const std::int64_t end = e + l.owned_elems(r);
    while (e < end) {
      const std::uint64_t p = static_cast<std::uint64_t>(e) / per_page;
      const std::int64_t stop = std::min<std::int64_t>(end, static_cast<std::int64_t>((p + 1) * per_page));
      const int others = __builtin_popcount(masks.at(p) & ~(1u << r));
      total += static_cast<double>(stop - e) * sizeof(float) * others;
      e = stop;
    }
  }
  return total;
}

std::vector<double> subscriber_histogram(const std::vector<std::uint32_t>& masks, int ranks) {
  std::vector<double> h(static_cast<std::size_t>(ranks), 0.0);
  for (std::uint32_t m : masks) {
    const int k = __builtin_popcount(m);
    if (k >= 1 && k <= ranks) h[k - 1] += 1;
  }
  return h;
}

int lanes_for(double mean_row_nnz) {
  int l = 1;
  while (l < 32 && l < mean_row_nnz) l *= 2;
  return l;
}

int lane_shift(int lanes) {
  for (int s = 0; s <= 5; ++s)
    if (lanes == 1 << s) return s;
  throw Error("gpsm: " + std::to_string(lanes) + " threads per row: the graph kernels take a power of two from 1 to 32");
}

}  // namespace gpsm::apps::graph
