// CSR validity, building from entries, and row partitioning.
#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "apps/graph_io/graph.hpp"
#include "apps/harness/reference_cache.hpp"
#include "gpsm/error.hpp"
#include "common/omp.hpp"

namespace gpsm::graph_io {

template <class V>
void BasicCsr<V>::validate(const std::string& what) const {
  auto fail = [&](const std::string& m) { throw Error(what + ": invalid CSR: " + m); };
  if (rows < 0 || cols < 0) fail("negative size");
  if (cols > std::numeric_limits<std::int32_t>::max()) fail("cols exceeds int32 column ids");
  if (static_cast<std::int64_t>(row_ptr.size()) != rows + 1)
    fail("row_ptr has " + std::to_string(row_ptr.size()) + " entries, expected rows + 1 = " +
         std::to_string(rows + 1));
  if (row_ptr[0] != 0) fail("row_ptr[0] != 0");
  for (std::int64_t r = 0; r < rows; ++r)
    if (row_ptr[r + 1] < row_ptr[r]) fail("row_ptr decreases at row " + std::to_string(r));
  if (row_ptr[rows] != nnz())
    fail("row_ptr[rows] = " + std::to_string(row_ptr[rows]) + " but col has " +
         std::to_string(nnz()) + " entries");
  if (!val.empty() && val.size() != col.size())
    fail("val has " + std::to_string(val.size()) + " entries, col " + std::to_string(col.size()));
  for (std::int64_t i = 0; i < nnz(); ++i)
    if (col[i] < 0 || col[i] >= cols)
      fail("column id " + std::to_string(col[i]) + " at entry " + std::to_string(i) +
           " outside [0, " + std::to_string(cols) + ")");
}

template struct BasicCsr<float>;
template struct BasicCsr<double>;

namespace {
template <class V>
BasicCsr<V> from_entries(std::int64_t rows, std::int64_t cols, std::vector<BasicEntry<V>>&& e, bool weighted,
                         bool dedup) {
  using Entry = BasicEntry<V>;
  if (rows < 0 || cols < 0 || rows > std::numeric_limits<std::int32_t>::max() ||
      cols > std::numeric_limits<std::int32_t>::max())
    throw Error("csr_from_entries: size " + std::to_string(rows) + " x " + std::to_string(cols) +
                " outside int32 ids");
  BasicCsr<V> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(rows + 1, 0);
  for (const Entry& x : e) {
    if (x.r < 0 || x.r >= rows || x.c < 0 || x.c >= cols)
      throw Error("csr_from_entries: entry (" + std::to_string(x.r) + ", " + std::to_string(x.c) +
                  ") outside " + std::to_string(rows) + " x " + std::to_string(cols));
    ++m.row_ptr[x.r + 1];
  }
  for (std::int64_t r = 0; r < rows; ++r) m.row_ptr[r + 1] += m.row_ptr[r];
  // Counting sort by row (stable), then a stable sort by column inside each row.
  std::vector<Entry> sorted(e.size());
  {
    std::vector<std::int64_t> next(m.row_ptr.begin(), m.row_ptr.end() - 1);
    for (const Entry& x : e) sorted[next[x.r]++] = x;
  }
  std::vector<Entry>().swap(e);
  // Rows are independent: sorted in parallel, the same result with any number of threads.
  GPSM_OMP(parallel for schedule(dynamic, 4096))
  for (std::int64_t r = 0; r < rows; ++r)
    std::stable_sort(sorted.begin() + m.row_ptr[r], sorted.begin() + m.row_ptr[r + 1],
                     [](const Entry& a, const Entry& b) { return a.c < b.c; });
  m.col.reserve(sorted.size());
  if (weighted) m.val.reserve(sorted.size());
  std::int64_t out = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t b = m.row_ptr[r], en = m.row_ptr[r + 1];
    m.row_ptr[r] = out;
    for (std::int64_t i = b; i < en; ++i) {
      if (dedup && i > b && sorted[i].c == sorted[i - 1].c) continue;
      m.col.push_back(sorted[i].c);
      if (weighted) m.val.push_back(sorted[i].w);
      ++out;
    }
  }
  m.row_ptr[rows] = out;
  m.col.shrink_to_fit();
  m.val.shrink_to_fit();
  return m;
}
}  // namespace

Csr csr_from_entries(std::int64_t rows, std::int64_t cols, std::vector<Entry>&& e, bool weighted,
                     bool dedup) {
  return from_entries(rows, cols, std::move(e), weighted, dedup);
}

CsrF64 csr_from_entries_f64(std::int64_t rows, std::int64_t cols, std::vector<EntryF64>&& e, bool weighted,
                            bool dedup) {
  return from_entries(rows, cols, std::move(e), weighted, dedup);
}

std::vector<RowRange> partition_rows_equal(std::int64_t rows, int parts) {
  if (parts <= 0 || rows < 0) throw Error("partition_rows_equal: need parts > 0 and rows >= 0");
  std::vector<RowRange> out(parts);
  for (int k = 0; k < parts; ++k)
    out[k] = {rows * k / parts, rows * (k + 1) / parts};
  return out;
}

std::vector<RowRange> partition_rows_by_nnz(const Csr& m, int parts) {
  if (parts <= 0) throw Error("partition_rows_by_nnz: need parts > 0");
  const std::int64_t total = m.nnz();
  // Boundary k: the row start whose prefix nnz is nearest to floor(k * total / parts).
  std::vector<std::int64_t> bound(parts + 1, 0);
  bound[parts] = m.rows;
  for (int k = 1; k < parts; ++k) {
    const std::int64_t t = static_cast<std::int64_t>(
        static_cast<unsigned __int128>(total) * static_cast<unsigned>(k) / static_cast<unsigned>(parts));
    // first r with row_ptr[r] >= t
    auto it = std::lower_bound(m.row_ptr.begin(), m.row_ptr.end(), t);
    std::int64_t r = it - m.row_ptr.begin();
    if (r > 0 && t - m.row_ptr[r - 1] < m.row_ptr[r] - t) {
      // step back to the first row with that smaller prefix (nearest below)
      const std::int64_t below = m.row_ptr[r - 1];
      r = std::lower_bound(m.row_ptr.begin(), m.row_ptr.end(), below) - m.row_ptr.begin();
    }
    bound[k] = std::max(bound[k - 1], std::min(r, m.rows));
  }
  std::vector<RowRange> out(parts);
  for (int k = 0; k < parts; ++k) out[k] = {bound[k], std::max(bound[k], bound[k + 1])};
  return out;
}

Csr transpose(const Csr& m) {
  Csr t;
  t.rows = m.cols;
  t.cols = m.rows;
  t.row_ptr.assign(static_cast<std::size_t>(t.rows) + 1, 0);
  for (std::int32_t c : m.col) ++t.row_ptr[static_cast<std::size_t>(c) + 1];
  for (std::int64_t r = 0; r < t.rows; ++r) t.row_ptr[r + 1] += t.row_ptr[r];
  t.col.resize(m.col.size());
  if (m.weighted()) t.val.resize(m.val.size());
  std::vector<std::int64_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  // Rows of m in increasing order: each row of t receives its entries sorted by column.
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t e = m.row_ptr[r]; e < m.row_ptr[r + 1]; ++e) {
      const std::int64_t at = next[m.col[e]]++;
      t.col[at] = static_cast<std::int32_t>(r);
      if (m.weighted()) t.val[at] = m.val[e];
    }
  return t;
}

void ref_fields(apps::RefFields& f, Csr& g) {
  f.value(g.rows);
  f.value(g.cols);
  f.array(g.row_ptr);
  f.array(g.col);
  f.array(g.val);
  if (f.reading()) g.validate("the shared graph");
}

}  // namespace gpsm::graph_io
