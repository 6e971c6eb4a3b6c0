// Data layer of the irregular apps (apps/graph): readers, cache, generators, partitioning.
#include <gtest/gtest.h>
#include "test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/graph_io/graph.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::graph_io;
namespace fs = std::filesystem;

namespace {

using gpsm::test::TmpDir;

// Expects f() to throw gpsm::Error whose message contains "<path>:<line>:" and needle.
template <class F>
void expect_error_at(F f, const std::string& path, int line, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error for " << path;
  } catch (const gpsm::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path + ":" + std::to_string(line) + ":"), std::string::npos) << m;
    EXPECT_NE(m.find(needle), std::string::npos) << m;
  }
}

std::vector<std::int32_t> row_cols(const Csr& m, std::int64_t r) {
  return {m.col.begin() + m.row_ptr[r], m.col.begin() + m.row_ptr[r + 1]};
}

}  // namespace

TEST(GraphMtx, GeneralReal) {
  TmpDir t;
  auto p = t.write("a.mtx",
                   "%%MatrixMarket matrix coordinate real general\n% comment\n\n3 4 4\n"
                   "1 1 1.5\n3 4 -2e1\n1 3 7\n2 2 0.25\n");
  Csr m = read_matrix_market(p);
  m.validate();
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.cols, 4);
  EXPECT_EQ(m.row_ptr, (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(m.col, (std::vector<std::int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(m.val, (std::vector<float>{1.5f, 7.0f, 0.25f, -20.0f}));
}

TEST(GraphMtx, SymmetricPatternMirrors) {
  TmpDir t;
  auto p = t.write("s.mtx",
                   "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n");
  Csr m = read_matrix_market(p);
  EXPECT_FALSE(m.weighted());
  EXPECT_EQ(m.nnz(), 5);
  EXPECT_EQ(row_cols(m, 0), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(row_cols(m, 1), (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(row_cols(m, 2), (std::vector<std::int32_t>{1}));
}

TEST(GraphMtx, SymmetricIntegerValuesMirrored) {
  TmpDir t;
  auto p = t.write("i.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 4\n2 1 -3\n");
  Csr m = read_matrix_market(p);
  EXPECT_EQ(m.col, (std::vector<std::int32_t>{0, 1, 0}));
  EXPECT_EQ(m.val, (std::vector<float>{4, -3, -3}));
}

TEST(GraphMtx, MalformedNameFileAndLine) {
  TmpDir t;
  const std::string hdr = "%%MatrixMarket matrix coordinate real general\n";
  struct Case { std::string name, text; int line; std::string needle; };
  const std::vector<Case> cases = {
      {"hdr.mtx", "%%MatrixMarket matrix coordinate\n1 1 1\n1 1 1\n", 1, "bad header"},
      {"arr.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "array"},
      {"cplx.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex"},
      {"herm.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "hermitian"},
      {"size.mtx", hdr + "% c\n3 x 2\n", 3, "bad size line"},
      {"range.mtx", hdr + "2 2 2\n1 1 1\n% c\n3 1 1\n", 5, "out of range"},
      {"zero.mtx", hdr + "2 2 1\n0 1 1\n", 3, "out of range"},
      {"nan.mtx", hdr + "2 2 2\n1 1 1\n2 2 abc\n", 4, "non-numeric"},
      {"few.mtx", hdr + "2 2 3\n1 1 1\n2 2 1\n", 4, "expected 3 entries, found 2"},
      {"many.mtx", hdr + "2 2 1\n1 1 1\n2 2 1\n", 4, "more entries"},
      {"fields.mtx", hdr + "2 2 1\n1 1\n", 3, "expected 3 fields"},
      {"symrect.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "square"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = t.write(c.name, c.text);
    expect_error_at([&] { read_matrix_market(p); }, p, c.line, c.needle);
  }
}

TEST(GraphSnap, ZeroBasedAutoAndWeights) {
  TmpDir t;
  auto p = t.write("g.txt", "# Directed graph\n# FromNodeId ToNodeId\n0 1 2.5\n1\t2 1\n\n2 0 3\n");
  Csr m = read_snap(p);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(m.col, (std::vector<std::int32_t>{1, 2, 0}));
  EXPECT_EQ(m.val, (std::vector<float>{2.5f, 1.0f, 3.0f}));
}

TEST(GraphSnap, OneBasedAutoAndExplicit) {
  TmpDir t;
  auto p = t.write("g1.txt", "# c\n1 2\n2 3\n3 1\n3 2\n");
  Csr a = read_snap(p);  // no id 0: 1-based
  EXPECT_EQ(a.rows, 3);
  EXPECT_FALSE(a.weighted());
  EXPECT_EQ(row_cols(a, 2), (std::vector<std::int32_t>{0, 1}));
  SnapOptions zero;
  zero.base = IdBase::zero;
  Csr b = read_snap(p, zero);
  EXPECT_EQ(b.rows, 4);
  EXPECT_EQ(row_cols(b, 3), (std::vector<std::int32_t>{1, 2}));
  SnapOptions sym;
  sym.symmetrize = true;
  Csr s = read_snap(p, sym);
  EXPECT_EQ(s.nnz(), 8);
}

TEST(GraphSnap, MalformedNameFileAndLine) {
  TmpDir t;
  SnapOptions one;
  one.base = IdBase::one;
  struct Case { std::string name, text; int line; std::string needle; SnapOptions opt; };
  const std::vector<Case> cases = {
      {"f.txt", "# c\n0 1\n1 2 3 4\n", 3, "found 4 fields", {}},
      {"x.txt", "0 1\n# c\n1 x\n", 3, "non-integer", {}},
      {"w.txt", "0 1 1.0\n1 2\n", 2, "no weight", {}},
      {"nw.txt", "0 1 1.0\n1 2 zz\n", 2, "non-numeric weight", {}},
      {"neg.txt", "0 1\n-1 2\n", 2, "negative", {}},
      {"z.txt", "1 2\n\n0 2\n", 3, "vertex id 0", one},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto p = t.write(c.name, c.text);
    expect_error_at([&] { read_snap(p, c.opt); }, p, c.line, c.needle);
  }
}

TEST(GraphCache, RoundTripAndReuse) {
  TmpDir t;
  auto p = t.write("c.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 2\n3 1 3\n");
  CacheUse u;
  Csr a = load_graph(p, {}, &u);
  EXPECT_EQ(u, CacheUse::written);
  ASSERT_TRUE(fs::exists(cache_path(p)));
  Csr b = load_graph(p, {}, &u);
  EXPECT_EQ(u, CacheUse::hit);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, read_matrix_market(p));
  // A bigger generated matrix, weighted and not.
  RmatParams rp;
  rp.scale = 10;
  rp.edge_factor = 8;
  rp.seed = 3;
  Csr g = rmat(rp);
  const std::string bp = (t.dir / "g.gpsmcsr").string();
  write_csr_binary(bp, g, "k1");
  std::string key;
  EXPECT_EQ(read_csr_binary(bp, &key), g);
  EXPECT_EQ(key, "k1");
  GridParams gp;
  gp.nx = 20;
  gp.ny = 30;
  gp.shortcut_prob = 0.1;
  Csr w = grid2d(gp);
  write_csr_binary(bp, w);
  EXPECT_EQ(read_csr_binary(bp), w);
}

TEST(GraphCache, OptionMismatchAndStaleRebuild) {
  TmpDir t;
  auto p = t.write("e.txt", "1 2\n2 3\n");
  CacheUse u;
  Csr a = load_graph(p, {}, &u);
  EXPECT_EQ(u, CacheUse::written);
  LoadOptions zero;
  zero.snap.base = IdBase::zero;
  Csr b = load_graph(p, zero, &u);
  EXPECT_EQ(u, CacheUse::written);  // other options: rebuilt
  EXPECT_EQ(b.rows, 4);
  EXPECT_NE(a, b);
  // Source newer than the cache: rebuilt.
  t.write("e.txt", "1 2\n2 3\n3 4\n");
  fs::last_write_time(cache_path(p), fs::last_write_time(p) - std::chrono::hours(1));
  Csr c = load_graph(p, zero, &u);
  EXPECT_EQ(u, CacheUse::written);
  EXPECT_EQ(c.rows, 5);
}

TEST(GraphCache, TruncatedAndCorruptDetected) {
  TmpDir t;
  auto p = t.write("d.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n2 3 2\n3 1 3\n");
  load_graph(p);
  const std::string cp = cache_path(p);
  const auto full = fs::file_size(cp);
  for (std::uintmax_t cut : {full - 1, full - 9, std::uintmax_t{30}, std::uintmax_t{5}}) {
    SCOPED_TRACE(cut);
    fs::remove(cp);
    load_graph(p);
    fs::resize_file(cp, cut);
    try {
      load_graph(p);
      ADD_FAILURE() << "truncated cache accepted";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(cp), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
    }
  }
  // A flipped byte in the arrays: checksum.
  fs::remove(cp);
  load_graph(p);
  {
    std::fstream f(cp, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(full - 12));
    f.put('\x7f');
  }
  EXPECT_THROW(read_csr_binary(cp), gpsm::Error);
  // Not a cache at all.
  auto junk = t.write("junk.gpsmcsr", "hello world, this is not a CSR file at all......");
  EXPECT_THROW(read_csr_binary(junk), gpsm::Error);
}

TEST(GraphGen, RmatDeterministicCountsAndSkew) {
  RmatParams p;
  p.scale = 14;
  p.edge_factor = 16;
  p.seed = 7;
  Csr a = rmat(p), b = rmat(p);
  a.validate();
  EXPECT_EQ(a, b);
  p.seed = 8;
  EXPECT_NE(a, rmat(p));
  const std::int64_t n = 1 << 14, drawn = n * 16;
  EXPECT_EQ(a.rows, n);
  EXPECT_LE(a.nnz(), drawn);
  EXPECT_GE(a.nnz(), drawn / 2);  // duplicates and self-loops removed, most survive
  std::int64_t maxdeg = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) maxdeg = std::max(maxdeg, a.row_nnz(r));
  const double mean = static_cast<double>(a.nnz()) / n;
  EXPECT_GT(maxdeg, 20 * mean) << "max " << maxdeg << " mean " << mean;
  for (std::int64_t r = 0; r < a.rows; ++r) {  // sorted, no duplicates, no self-loops
    auto c = row_cols(a, r);
    EXPECT_TRUE(std::adjacent_find(c.begin(), c.end(), std::greater_equal<>()) == c.end());
    EXPECT_FALSE(std::binary_search(c.begin(), c.end(), static_cast<std::int32_t>(r)));
  }
  RmatParams raw = p;
  raw.dedup = false;
  EXPECT_EQ(rmat(raw).nnz(), drawn);
}

TEST(GraphGen, GridSymmetricPositive) {
  GridParams g;
  g.nx = 300;
  g.ny = 400;  // 1.2e5 vertices
  Csr a = grid2d(g);
  a.validate();
  EXPECT_EQ(a.rows, 120000);
  EXPECT_EQ(a.nnz(), 2 * (299 * 400 + 300 * 399));
  EXPECT_EQ(a, grid2d(g));
  for (float w : a.val) {
    EXPECT_GE(w, g.w_min);
    EXPECT_LE(w, g.w_max);
  }
  // symmetric with equal weights: check a few rows
  for (std::int64_t r : {0L, 12345L, 119999L})
    for (std::int64_t i = a.row_ptr[r]; i < a.row_ptr[r + 1]; ++i) {
      const std::int64_t c = a.col[i];
      auto cs = row_cols(a, c);
      auto it = std::lower_bound(cs.begin(), cs.end(), static_cast<std::int32_t>(r));
      ASSERT_TRUE(it != cs.end() && *it == r);
      EXPECT_EQ(a.val[a.row_ptr[c] + (it - cs.begin())], a.val[i]);
    }
  g.shortcut_prob = 0.05;
  Csr s = grid2d(g);
  const std::int64_t extra = (s.nnz() - a.nnz()) / 2;
  EXPECT_GT(extra, 0.04 * 299 * 399);
  EXPECT_LT(extra, 0.06 * 299 * 399);
  g.seed = 2;
  EXPECT_NE(s, grid2d(g));
}

TEST(GraphGen, BandedUniformRatings) {
  Csr b = banded(100000, 4, 0.5, 1);
  b.validate();
  EXPECT_EQ(b, banded(100000, 4, 0.5, 1));
  EXPECT_NE(b, banded(100000, 4, 0.5, 2));
  for (std::int64_t r = 0; r < b.rows; ++r)
    for (std::int64_t i = b.row_ptr[r]; i < b.row_ptr[r + 1]; ++i)
      ASSERT_LE(std::abs(b.col[i] - r), 4);
  const double avg = static_cast<double>(b.nnz()) / b.rows;
  EXPECT_NEAR(avg, 5.0, 0.1);  // 1 diagonal + 8 * 0.5

  Csr u = uniform_random(100000, 50000, 8, 3);
  u.validate();
  EXPECT_EQ(u.nnz(), 800000);
  EXPECT_EQ(u, uniform_random(100000, 50000, 8, 3));
  EXPECT_NE(u, uniform_random(100000, 50000, 8, 4));
  for (std::int64_t r = 0; r < u.rows; ++r) {
    auto c = row_cols(u, r);
    ASSERT_TRUE(std::adjacent_find(c.begin(), c.end(), std::greater_equal<>()) == c.end());
  }
  EXPECT_EQ(uniform_random(10, 5, 8, 1).nnz(), 50);  // capped at cols

  RatingParams rp;
  rp.users = 100000;
  rp.items = 5000;
  rp.per_user = 10;
  Csr r = ratings(rp);
  r.validate();
  EXPECT_EQ(r.nnz(), 1000000);
  EXPECT_EQ(r, ratings(rp));
  std::vector<std::int64_t> hist(6, 0);
  for (float v : r.val) {
    ASSERT_TRUE(v == 1 || v == 2 || v == 3 || v == 4 || v == 5) << v;
    ++hist[static_cast<int>(v)];
  }
  for (int s = 1; s <= 5; ++s) EXPECT_GT(hist[s], 10000) << s;  // every rating occurs
  rp.seed = 2;
  EXPECT_NE(r, ratings(rp));
}

TEST(GraphPartition, EqualRows) {
  for (std::int64_t rows : {0L, 1L, 7L, 100L, 100003L})
    for (int parts : {1, 2, 3, 8, 13}) {
      auto p = partition_rows_equal(rows, parts);
      ASSERT_EQ(p.size(), static_cast<std::size_t>(parts));
      EXPECT_EQ(p.front().begin, 0);
      EXPECT_EQ(p.back().end, rows);
      for (int k = 0; k < parts; ++k) {
        if (k) EXPECT_EQ(p[k].begin, p[k - 1].end);
        const std::int64_t sz = p[k].end - p[k].begin;
        EXPECT_TRUE(sz == rows / parts || sz == rows / parts + 1);
      }
    }
  EXPECT_THROW(partition_rows_equal(10, 0), gpsm::Error);
}

TEST(GraphPartition, BalancedByNnz) {
  RmatParams rp;
  rp.scale = 13;
  GridParams gp;
  gp.nx = 100;
  gp.ny = 50;
  std::vector<Csr> ms = {rmat(rp), grid2d(gp), banded(1000, 3, 0.3, 1),
                         uniform_random(5, 5, 0, 1)};
  rp.permute = false;  // hubs at low ids: strongly skewed prefix
  ms.push_back(rmat(rp));
  for (std::size_t mi = 0; mi < ms.size(); ++mi) {
    const Csr& m = ms[mi];
    std::int64_t maxrow = 0;
    for (std::int64_t r = 0; r < m.rows; ++r) maxrow = std::max(maxrow, m.row_nnz(r));
    for (int parts : {1, 2, 3, 4, 7, 8, 64}) {
      SCOPED_TRACE("matrix " + std::to_string(mi) + " parts " + std::to_string(parts));
      auto p = partition_rows_by_nnz(m, parts);
      ASSERT_EQ(p.size(), static_cast<std::size_t>(parts));
      std::vector<int> owner(m.rows, 0);
      std::int64_t sum = 0;
      for (int k = 0; k < parts; ++k) {
        ASSERT_LE(p[k].begin, p[k].end);
        for (std::int64_t r = p[k].begin; r < p[k].end; ++r) ++owner[r];
        const std::int64_t nz = m.row_ptr[p[k].end] - m.row_ptr[p[k].begin];
        sum += nz;
        EXPECT_LE(std::abs(static_cast<double>(nz) - static_cast<double>(m.nnz()) / parts),
                  static_cast<double>(maxrow + 1));
      }
      EXPECT_EQ(sum, m.nnz());
      EXPECT_TRUE(std::all_of(owner.begin(), owner.end(), [](int o) { return o == 1; }));
      EXPECT_EQ(p.front().begin, 0);
      EXPECT_EQ(p.back().end, m.rows);
    }
  }
}
