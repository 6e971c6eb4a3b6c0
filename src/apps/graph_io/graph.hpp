#pragma once
// Data layer of the irregular apps (PageRank, SSSP, ALS): a CSR matrix, readers for Matrix Market
// and SNAP edge lists, a binary cache next to the source file, seeded generators, and row
// partitioning. Plain C++, no CUDA. docs/graphs.md describes the formats and parameters.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps {
class RefFields;  // apps/harness/reference_cache.hpp
}  // namespace gpsm::apps

namespace gpsm::graph_io {

// Compressed sparse rows. val is empty for pattern (unweighted) matrices, else has col.size()
// entries. Column ids are int32, so cols <= 2^31-1; nnz may exceed 2^31. V is the value type:
// float for the graph apps (Csr), double for a solver that must run a file's own values (CsrF64:
// CG, whose SPD matrices SuiteSparse stores in double, and whose conditioning a float rounding
// can change).
template <class V>
struct BasicCsr {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_ptr;  // rows + 1 entries, row_ptr[0] == 0, nondecreasing
  std::vector<std::int32_t> col;      // nnz entries, each in [0, cols)
  std::vector<V> val;                 // empty or nnz entries

  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  bool weighted() const { return !val.empty(); }
  std::int64_t row_nnz(std::int64_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
  // Throws gpsm::Error saying what is wrong (what: names the matrix in the message).
  void validate(const std::string& what = "csr") const;
  bool operator==(const BasicCsr& o) const {
    return rows == o.rows && cols == o.cols && row_ptr == o.row_ptr && col == o.col && val == o.val;
  }
  bool operator!=(const BasicCsr& o) const { return !(*this == o); }
};
using Csr = BasicCsr<float>;
using CsrF64 = BasicCsr<double>;  // validate() is instantiated for these two in csr.cpp

// A graph as (part of) an entry of gpsm bench --isolate's shared references
// (apps/harness/reference_cache.hpp): a generated rmat:23 takes its children ~18 s each to build
// again. Read back, it is validated (gpsm::Error: the entry is not used).
void ref_fields(apps::RefFields& f, Csr& g);

// One entry while building: 12 bytes per entry as float (16 as double), plus the CSR's 8/rows +
// 4 (+ sizeof(V) weighted) per nnz.
template <class V>
struct BasicEntry {
  std::int32_t r, c;
  V w;
};
using Entry = BasicEntry<float>;
using EntryF64 = BasicEntry<double>;

// Builds a CSR from entries (any order). Rows are sorted by column (stable: duplicates keep their
// input order). dedup: keep only the first of equal (r, c) entries. Throws on ids out of range.
Csr csr_from_entries(std::int64_t rows, std::int64_t cols, std::vector<Entry>&& entries,
                     bool weighted, bool dedup = false);
// (A name of its own: an overload would make a braced list of entries ambiguous.)
CsrF64 csr_from_entries_f64(std::int64_t rows, std::int64_t cols, std::vector<EntryF64>&& entries,
                            bool weighted, bool dedup = false);

// ---- readers ---------------------------------------------------------------------------------
// Matrix Market: coordinate; real / integer / pattern; general / symmetric (off-diagonal entries
// mirrored). Duplicates are kept as separate entries. Errors: gpsm::Error "<path>:<line>: ...".
Csr read_matrix_market(const std::string& path);
// The same reader keeping values in double: each value is strtod's correctly rounded double of
// its text (integer values exact up to 2^53; pattern files have no values). Same checks, same
// errors; read_matrix_market's result is this one's values rounded to float.
CsrF64 read_matrix_market_f64(const std::string& path);

enum class IdBase { automatic, zero, one };  // automatic: 0-based if any id is 0, else 1-based
struct SnapOptions {
  IdBase base = IdBase::automatic;
  bool symmetrize = false;  // also add (dst, src) for every edge with src != dst
};
// SNAP edge list: '#' comments, "src dst [weight]" whitespace-separated; either every edge line
// has a weight or none does. Square: rows = cols = max id + 1 (after base adjustment).
Csr read_snap(const std::string& path, const SnapOptions& opt = {});

// ---- binary cache ----------------------------------------------------------------------------
// Little-endian file; layout in docs/graphs.md. key: the options the CSR was built with.
void write_csr_binary(const std::string& path, const Csr& m, const std::string& key = "");
// Throws gpsm::Error naming the file if it is not a gpsm CSR file, truncated, corrupt (checksum)
// or invalid. key_out (if given) receives the stored key.
Csr read_csr_binary(const std::string& path, std::string* key_out = nullptr);
// Double values: flags bit 1 set, 8 bytes per value. Each reader refuses the other's values.
void write_csr_binary(const std::string& path, const CsrF64& m, const std::string& key = "");
CsrF64 read_csr_f64_binary(const std::string& path, std::string* key_out = nullptr);

struct LoadOptions {
  SnapOptions snap;
  bool use_cache = true;  // read/write <path>.gpsmcsr
};
enum class CacheUse { none, hit, written };
// Loads a .mtx (Matrix Market) or any other file (SNAP edge list). With use_cache, reuses
// <path>.gpsmcsr only when its header's key records the same reader options and the same source:
// size, modification time (ns) and a hash of the source's first and last MiB; any difference
// (an older-dated replacement included) rebuilds it. A corrupt or truncated cache, or a header
// whose counts the file cannot hold, throws gpsm::Error naming it (delete it to rebuild) before
// anything is allocated. A cache that cannot be written is skipped; one written replaces the old
// one whole (temporary file and rename).
Csr load_graph(const std::string& path, const LoadOptions& opt = {}, CacheUse* used = nullptr);
std::string cache_path(const std::string& source);
// A Matrix Market file read with read_matrix_market_f64, cached in its own file
// (cache_path_f64: <path>.f64.gpsmcsr, key "mtx f64 v1; <source>") under load_graph's rules, so
// the graph apps' float cache of the same file and this one never replace each other.
CsrF64 load_matrix_market_f64(const std::string& path, bool use_cache = true, CacheUse* used = nullptr);
std::string cache_path_f64(const std::string& source);

// ---- generators (deterministic: same parameters and seed give the same CSR) -----------------
struct RmatParams {
  int scale = 17;        // 2^scale vertices
  int edge_factor = 16;  // edge_factor * 2^scale edges drawn
  double a = 0.57, b = 0.19, c = 0.19;  // d = 1 - a - b - c
  std::uint64_t seed = 1;
  bool permute = true;    // shuffle vertex ids (hubs not all at low ids)
  bool dedup = true;      // drop duplicate edges and self-loops
  bool weighted = false;  // weights uniform in [1, 100)
};
Csr rmat(const RmatParams& p);

struct GridParams {
  std::int64_t nx = 512, ny = 512;  // vertex (x, y) has id y * nx + x
  double shortcut_prob = 0.0;       // per vertex: chance of a diagonal edge to (x+1, y+1)
  float w_min = 1.0f, w_max = 100.0f;
  std::uint64_t seed = 1;
};
// Undirected road-like grid, both directions stored with the same random weight.
Csr grid2d(const GridParams& p);

// n x n, entries in the band |i - j| <= half_width, each off-diagonal kept with probability
// density, diagonal always present (value 2 * half_width + 1 for diagonal dominance), others
// uniform in [-1, 1).
Csr banded(std::int64_t n, std::int64_t half_width, double density, std::uint64_t seed);

// rows x cols, exactly min(per_row, cols) distinct uniform random columns per row, values in [0, 1).
Csr uniform_random(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed);

struct RatingParams {
  std::int64_t users = 100000, items = 10000;
  std::int64_t per_user = 20;  // distinct rated items per user (capped at items)
  int rank = 8;                // rank of the hidden factors
  double noise = 0.5;          // std-dev of the Gaussian noise added before rounding
  std::uint64_t seed = 1;
};
// users x items, ratings in {1..5}: clamp(round(3 + 1.2 * (u . v) / sqrt(rank) + noise)), factors
// u, v ~ N(0, 1) per component; noise ~ N(0, noise^2); items uniform, distinct per user.
Csr ratings(const RatingParams& p);

// The transpose (cols x rows): entry (r, c, w) becomes (c, r, w); rows sorted by column, and
// entries of equal (c, r) keep their order. O(nnz) time and memory.
Csr transpose(const Csr& m);

// ---- partitioning ----------------------------------------------------------------------------
struct RowRange {
  std::int64_t begin, end;  // [begin, end)
};
// parts contiguous ranges covering [0, rows) in order; sizes differ by at most one.
std::vector<RowRange> partition_rows_equal(std::int64_t rows, int parts);
// parts contiguous ranges covering [0, m.rows) in order; each part's nnz differs from
// nnz / parts by at most the largest row's nnz + 1.
std::vector<RowRange> partition_rows_by_nnz(const Csr& m, int parts);

}  // namespace gpsm::graph_io
