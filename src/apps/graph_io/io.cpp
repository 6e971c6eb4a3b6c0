// Matrix Market and SNAP readers (streamed line by line) and the binary CSR cache.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "apps/graph_io/graph.hpp"
#include "common/atomic_file.hpp"
#include "common/memory_budget.hpp"
#include "gpsm/error.hpp"

namespace gpsm::graph_io {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail_at(const std::string& path, std::int64_t line, const std::string& what) {
  throw Error(path + ":" + std::to_string(line) + ": " + what);
}

// Splits on spaces/tabs (and a trailing '\r').
std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= n) break;
    std::size_t j = i;
    while (j < n && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_int(const std::string& t, std::int64_t& v) {
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  v = x;
  return true;
}

bool parse_real(const std::string& t, double& v) {
  if (t.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double x = std::strtod(t.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(x)) return false;
  v = x;
  return true;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

std::ifstream open_in(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  return in;
}

}  // namespace

namespace {
// The Matrix Market reader for either value type: V = float for the graph apps, double for CG.
// Only the stored value's width differs; every check and message is the same.
template <class V>
BasicCsr<V> read_mm(const std::string& path) {
  using Entry = BasicEntry<V>;
  std::ifstream in = open_in(path);
  std::string line;
  std::int64_t ln = 0;
  if (!std::getline(in, line)) fail_at(path, 1, "empty file, expected a %%MatrixMarket header");
  ln = 1;
  auto h = tokens(line);
  if (h.size() != 5 || h[0] != "%%MatrixMarket")
    fail_at(path, ln, "bad header '" + line +
                          "', expected '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  const std::string object = lower(h[1]), format = lower(h[2]), field = lower(h[3]),
                    sym = lower(h[4]);
  if (object != "matrix") fail_at(path, ln, "unsupported object '" + h[1] + "' (only matrix)");
  if (format != "coordinate")
    fail_at(path, ln, "unsupported format '" + h[2] + "' (only coordinate; array is dense)");
  if (field != "real" && field != "integer" && field != "pattern" && field != "double")
    fail_at(path, ln, "unsupported field '" + h[3] + "' (real, integer or pattern)");
  if (sym != "general" && sym != "symmetric")
    fail_at(path, ln, "unsupported symmetry '" + h[4] + "' (general or symmetric)");
  const bool pattern = field == "pattern", integer = field == "integer",
             symmetric = sym == "symmetric";

  // Size line: first line that is neither a comment nor blank.
  std::int64_t rows = -1, cols = -1, count = -1;
  while (std::getline(in, line)) {
    ++ln;
    if (blank(line) || line[0] == '%') continue;
    auto t = tokens(line);
    if (t.size() != 3 || !parse_int(t[0], rows) || !parse_int(t[1], cols) ||
        !parse_int(t[2], count) || rows < 0 || cols < 0 || count < 0)
      fail_at(path, ln, "bad size line '" + line + "', expected 'rows cols entries'");
    break;
  }
  if (count < 0) fail_at(path, ln + 1, "missing size line 'rows cols entries'");
  const std::int64_t imax = std::numeric_limits<std::int32_t>::max();
  if (rows > imax || cols > imax)
    fail_at(path, ln, "size " + std::to_string(rows) + " x " + std::to_string(cols) +
                          " exceeds int32 ids");
  if (symmetric && rows != cols) fail_at(path, ln, "symmetric matrix must be square");
  {
    // Refused before allocating: the header alone fixes the reader's peak (entries twice while
    // sorted, row pointers and counters per row, the CSR's columns and values), so a header that
    // declares more than the machine holds fails here with the figure, not in std::bad_alloc
    // after gigabytes of row pointers and a cache file.
    // Per entry: the list and its row-sorted copy, then the CSR's column and value (32 bytes as
    // float, 44 as double).
    const double n = double(count) * (symmetric ? 2 : 1);
    const double per_entry = 2.0 * sizeof(Entry) + sizeof(std::int32_t) + sizeof(V);
    const double peak = 16.0 * double(rows + 1) + 8.0 * double(cols + 1) + per_entry * n;
    require_host_memory(peak, path + ":" + std::to_string(ln) + ": the header's " + std::to_string(rows) + " x " +
                                  std::to_string(cols) + " matrix with " + std::to_string(count) + " entries",
                        "use a smaller graph or a machine with more memory");
  }

  std::vector<Entry> e;
  e.reserve(static_cast<std::size_t>(std::min<std::int64_t>(count, 1 << 26)) * (symmetric ? 2 : 1));
  const std::size_t want = pattern ? 2 : 3;
  std::int64_t seen = 0;
  while (std::getline(in, line)) {
    ++ln;
    if (blank(line) || line[0] == '%') continue;
    if (seen == count)
      fail_at(path, ln, "more entries than the " + std::to_string(count) + " the size line gives");
    auto t = tokens(line);
    if (t.size() != want)
      fail_at(path, ln, "expected " + std::to_string(want) + " fields (" +
                            (pattern ? "row col" : "row col value") + "), found " +
                            std::to_string(t.size()));
    std::int64_t i, j;
    if (!parse_int(t[0], i) || !parse_int(t[1], j))
      fail_at(path, ln, "non-integer index in '" + line + "'");
    if (i < 1 || i > rows || j < 1 || j > cols)
      fail_at(path, ln, "index (" + t[0] + ", " + t[1] + ") out of range 1.." +
                            std::to_string(rows) + " x 1.." + std::to_string(cols));
    V w = 1;
    if (!pattern) {
      double v;
      if (integer) {
        std::int64_t iv;
        if (!parse_int(t[2], iv)) fail_at(path, ln, "non-integer value '" + t[2] + "'");
        v = static_cast<double>(iv);
      } else if (!parse_real(t[2], v)) {
        fail_at(path, ln, "non-numeric value '" + t[2] + "'");
      }
      w = static_cast<V>(v);
    }
    const auto r = static_cast<std::int32_t>(i - 1), c = static_cast<std::int32_t>(j - 1);
    e.push_back({r, c, w});
    if (symmetric && r != c) e.push_back({c, r, w});
    ++seen;
  }
  if (in.bad()) fail_at(path, ln, "read error");
  if (seen != count)
    fail_at(path, ln, "expected " + std::to_string(count) + " entries, found " +
                          std::to_string(seen) + " (file ends early)");
  if constexpr (sizeof(V) == sizeof(double)) return csr_from_entries_f64(rows, cols, std::move(e), !pattern);
  else return csr_from_entries(rows, cols, std::move(e), !pattern);
}
}  // namespace

Csr read_matrix_market(const std::string& path) { return read_mm<float>(path); }
CsrF64 read_matrix_market_f64(const std::string& path) { return read_mm<double>(path); }

Csr read_snap(const std::string& path, const SnapOptions& opt) {
  std::ifstream in = open_in(path);
  std::string line;
  std::int64_t ln = 0;
  std::vector<Entry> e;
  int fields = 0;  // 2 or 3 once the first edge is seen
  std::int64_t min_id = std::numeric_limits<std::int64_t>::max(), max_id = -1;
  const std::int64_t imax = std::numeric_limits<std::int32_t>::max();
  while (std::getline(in, line)) {
    ++ln;
    if (blank(line) || line[0] == '#' || line[0] == '%') continue;
    auto t = tokens(line);
    if (t.size() != 2 && t.size() != 3)
      fail_at(path, ln, "expected 'src dst [weight]', found " + std::to_string(t.size()) + " fields");
    if (fields == 0) fields = static_cast<int>(t.size());
    if (static_cast<int>(t.size()) != fields)
      fail_at(path, ln, std::string("edge has ") + (t.size() == 3 ? "a" : "no") +
                            " weight but earlier edges " + (fields == 3 ? "have" : "do not"));
    std::int64_t s, d;
    if (!parse_int(t[0], s) || !parse_int(t[1], d))
      fail_at(path, ln, "non-integer vertex id in '" + line + "'");
    if (s < 0 || d < 0) fail_at(path, ln, "negative vertex id");
    if (opt.base == IdBase::one && (s == 0 || d == 0))
      fail_at(path, ln, "vertex id 0 in a file read as 1-based");
    if (s > imax || d > imax) fail_at(path, ln, "vertex id exceeds int32");
    float w = 1.0f;
    if (fields == 3) {
      double v;
      if (!parse_real(t[2], v)) fail_at(path, ln, "non-numeric weight '" + t[2] + "'");
      w = static_cast<float>(v);
    }
    min_id = std::min({min_id, s, d});
    max_id = std::max({max_id, s, d});
    e.push_back({static_cast<std::int32_t>(s), static_cast<std::int32_t>(d), w});
  }
  if (in.bad()) fail_at(path, ln, "read error");
  const bool one_based =
      opt.base == IdBase::one || (opt.base == IdBase::automatic && !e.empty() && min_id > 0);
  const std::int64_t shift = one_based ? 1 : 0;
  const std::int64_t n = e.empty() ? 0 : max_id + 1 - shift;
  if (shift)
    for (Entry& x : e) --x.r, --x.c;
  {
    // The largest id, not the file's size, sets the rows: one edge naming vertex 300000000 makes
    // 2.4 GB of row pointers. Refused with the figure before the CSR is built (the same peak as
    // the Matrix Market reader's: entries twice while sorted, row pointers and counters per row).
    const double entries = double(e.size()) * (opt.symmetrize ? 2 : 1);
    require_host_memory(24.0 * double(n + 1) + 32.0 * entries,
                        path + ": a graph of " + std::to_string(n) + " vertices (ids up to " + std::to_string(max_id) +
                            ") and " + std::to_string(e.size()) + " edges",
                        "check the vertex ids, or use a machine with more memory");
  }
  if (opt.symmetrize) {
    const std::size_t m = e.size();
    for (std::size_t i = 0; i < m; ++i)
      if (e[i].r != e[i].c) e.push_back({e[i].c, e[i].r, e[i].w});
  }
  return csr_from_entries(n, n, std::move(e), fields == 3);
}

// ---- binary cache -----------------------------------------------------------------------------
namespace {

constexpr char kMagic[8] = {'G', 'P', 'S', 'M', 'C', 'S', 'R', '\0'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kMaxKey = 4096;

bool little_endian_host() {
  const std::uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

struct Fnv {
  std::uint64_t h = 1469598103934665603ull;
  void add(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

// flags: bit 0 = has values, bit 1 = the values are f64 (8 bytes each; f32 otherwise). A float
// CSR's file is therefore byte for byte what it was before double values existed.
constexpr std::uint32_t kHasValues = 1, kF64 = 2;
template <class V>
constexpr std::uint32_t width_flag() {
  return sizeof(V) == 8 ? kF64 : 0u;
}
template <class V>
const char* value_type_name() {
  return sizeof(V) == 8 ? "f64" : "f32";
}

template <class V>
void write_csr(const std::string& path, const BasicCsr<V>& m, const std::string& key) {
  if (!little_endian_host()) throw Error(path + ": binary CSR files need a little-endian host");
  m.validate(path);
  if (key.size() > kMaxKey) throw Error(path + ": cache key of " + std::to_string(key.size()) + " bytes is too long");
  write_file_atomic(path, [&](std::ostream& out) {
    Fnv sum;
    auto put = [&](const void* p, std::size_t n) {
      out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
      sum.add(p, n);
    };
    const std::uint32_t flags = (m.weighted() ? kHasValues : 0u) | width_flag<V>();
    const std::uint32_t key_len = static_cast<std::uint32_t>(key.size());
    const std::int64_t nnz = m.nnz();
    put(kMagic, 8);
    put(&kVersion, 4);
    put(&flags, 4);
    put(&key_len, 4);
    put(key.data(), key.size());
    put(&m.rows, 8);
    put(&m.cols, 8);
    put(&nnz, 8);
    put(m.row_ptr.data(), m.row_ptr.size() * 8);
    put(m.col.data(), m.col.size() * 4);
    if (m.weighted()) put(m.val.data(), m.val.size() * sizeof(V));
    const std::uint64_t h = sum.h;
    out.write(reinterpret_cast<const char*>(&h), 8);
  });
}

// key_only: validates the header and returns with *key_out set and no arrays read (whatever the
// stored value type: a cache of the other precision has another key, so it is rebuilt, not read).
template <class V>
BasicCsr<V> read_csr(const std::string& path, std::string* key_out, bool key_only) {
  if (!little_endian_host()) throw Error(path + ": binary CSR files need a little-endian host");
  std::ifstream in = open_in(path);
  std::error_code ec;
  const auto fsize = static_cast<std::int64_t>(fs::file_size(path, ec));
  if (ec) throw Error(path + ": cannot stat (" + ec.message() + ")");
  auto bad = [&](const std::string& what) -> Error {
    return Error(path + ": corrupt gpsm CSR cache: " + what + " (delete it to rebuild)");
  };
  Fnv sum;
  std::int64_t pos = 0;
  auto get = [&](void* p, std::size_t n, const char* what) {
    if (pos + static_cast<std::int64_t>(n) > fsize || !in.read(static_cast<char*>(p), static_cast<std::streamsize>(n)))
      throw bad(std::string("truncated while reading ") + what);
    sum.add(p, n);
    pos += static_cast<std::int64_t>(n);
  };
  char magic[8];
  get(magic, 8, "magic");
  if (std::memcmp(magic, kMagic, 8) != 0) throw bad("bad magic, not a gpsm CSR file");
  std::uint32_t version, flags, key_len;
  get(&version, 4, "version");
  if (version != kVersion)
    throw bad("version " + std::to_string(version) + ", this build reads " + std::to_string(kVersion));
  get(&flags, 4, "flags");
  if (flags > (kHasValues | kF64)) throw bad("unknown flags " + std::to_string(flags));
  get(&key_len, 4, "key length");
  if (key_len > kMaxKey) throw bad("key length " + std::to_string(key_len) + " too large");
  std::string key(key_len, '\0');
  get(key.data(), key_len, "key");
  BasicCsr<V> m;
  std::int64_t nnz;
  get(&m.rows, 8, "rows");
  get(&m.cols, 8, "cols");
  get(&nnz, 8, "nnz");
  if (m.rows < 0 || m.cols < 0 || nnz < 0) throw bad("negative size");
  // Each count is bounded before any product is formed, so a crafted header cannot overflow the
  // size check below (and so cannot reach the allocations after it): ids are int32, and every
  // nonzero takes at least 4 bytes of the file.
  const std::int64_t imax = std::numeric_limits<std::int32_t>::max();
  if (m.rows > imax || m.cols > imax)
    throw bad("header declares " + std::to_string(m.rows) + " x " + std::to_string(m.cols) + ", beyond int32 ids");
  if (nnz > fsize / 4)
    throw bad("header declares " + std::to_string(nnz) + " nonzeros, more than a " + std::to_string(fsize) +
              "-byte file can hold");
  if (key_only) {
    if (key_out) *key_out = key;
    return m;
  }
  if ((flags & kF64) != width_flag<V>())
    throw Error(path + ": gpsm CSR file holds " + ((flags & kF64) ? "f64" : "f32") + " values; this reader takes " +
                value_type_name<V>() + "; read it with read_csr" + ((flags & kF64) ? "_f64" : "") + "_binary");
  const std::int64_t need =
      pos + (m.rows + 1) * 8 + nnz * 4 + ((flags & kHasValues) ? nnz * std::int64_t(sizeof(V)) : 0) + 8;
  if (need != fsize)
    throw bad(fsize < need ? "truncated: " + std::to_string(fsize) + " bytes, header implies " +
                                 std::to_string(need)
                           : "trailing bytes: " + std::to_string(fsize) + " bytes, header implies " +
                                 std::to_string(need));
  m.row_ptr.resize(m.rows + 1);
  m.col.resize(nnz);
  get(m.row_ptr.data(), m.row_ptr.size() * 8, "row_ptr");
  get(m.col.data(), m.col.size() * 4, "col");
  if (flags & kHasValues) {
    m.val.resize(nnz);
    get(m.val.data(), m.val.size() * sizeof(V), "val");
  }
  const std::uint64_t expect = sum.h;
  std::uint64_t stored;
  if (!in.read(reinterpret_cast<char*>(&stored), 8)) throw bad("truncated while reading checksum");
  if (stored != expect) throw bad("checksum mismatch");
  try {
    m.validate(path);
  } catch (const Error& e) {
    throw bad(e.what());
  }
  if (key_out) *key_out = key;
  return m;
}
}  // namespace

void write_csr_binary(const std::string& path, const Csr& m, const std::string& key) { write_csr(path, m, key); }
void write_csr_binary(const std::string& path, const CsrF64& m, const std::string& key) { write_csr(path, m, key); }
Csr read_csr_binary(const std::string& path, std::string* key_out) { return read_csr<float>(path, key_out, false); }
CsrF64 read_csr_f64_binary(const std::string& path, std::string* key_out) {
  return read_csr<double>(path, key_out, false);
}

std::string cache_path(const std::string& source) { return source + ".gpsmcsr"; }
std::string cache_path_f64(const std::string& source) { return source + ".f64.gpsmcsr"; }

namespace {
bool is_mtx(const std::string& path) {
  std::string ext = lower(fs::path(path).extension().string());
  return ext == ".mtx";
}
std::string options_key(const std::string& path, const LoadOptions& opt) {
  if (is_mtx(path)) return "mtx v1";
  std::ostringstream k;
  k << "snap v1 base=" << static_cast<int>(opt.snap.base) << " sym=" << opt.snap.symmetrize;
  return k.str();
}

// What identifies the source the cache was built from: its size, its modification time in
// nanoseconds and a hash of its first and last MiB. A modification time alone is not enough: a
// source replaced by an older-dated file (a copy keeping times, rsync, untar) would otherwise run
// the old graph. The ends catch a changed header or tail even where size and time match.
std::string source_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": cannot stat (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) return "";  // a pipe or device: read once, never cached
  const std::int64_t size = static_cast<std::int64_t>(st.st_size);
  const std::int64_t mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  constexpr std::int64_t kEnd = std::int64_t{1} << 20;
  std::ifstream in = open_in(path);
  Fnv h;
  std::vector<char> buf(static_cast<std::size_t>(std::min(size, kEnd)));
  auto hash_at = [&](std::int64_t off, std::int64_t n) {
    in.seekg(off);
    if (!in.read(buf.data(), n)) throw Error(path + ": read error while hashing for the cache key");
    h.add(buf.data(), static_cast<std::size_t>(n));
  };
  hash_at(0, std::min(size, kEnd));
  if (size > kEnd) hash_at(std::max(kEnd, size - kEnd), std::min(kEnd, size - kEnd));
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h.h));
  return "source size=" + std::to_string(size) + " mtime_ns=" + std::to_string(mtime_ns) + " ends_fnv1a=" + hex;
}
}  // namespace

namespace {
// load_graph's cache rules for either value type: `options` names the reader and its options in
// the key, `read` builds the CSR from the source on a miss.
template <class V, class Read>
BasicCsr<V> load_cached(const std::string& path, const std::string& cpath, const std::string& options, bool use_cache,
                        CacheUse* used, Read read) {
  if (used) *used = CacheUse::none;
  std::error_code ec;
  const std::string source = use_cache ? source_key(path) : "";
  const bool cached = !source.empty();
  const std::string key = cached ? options + "; " + source : "";
  if (cached) {
    if (fs::exists(cpath, ec)) {
      std::string stored;
      read_csr<V>(cpath, &stored, true);  // the header alone: a bad one throws naming the cache
      if (stored == key) {
        BasicCsr<V> m = read_csr<V>(cpath, nullptr, false);  // throws naming the cache if corrupt
        if (used) *used = CacheUse::hit;
        return m;
      }
    }
  }
  BasicCsr<V> m = read(path);
  if (cached) {
    try {
      write_csr(cpath, m, key);
      if (used) *used = CacheUse::written;
    } catch (const Error&) {
      // read-only directory etc.: the cache is an optimisation, skip it
    }
  }
  return m;
}
}  // namespace

Csr load_graph(const std::string& path, const LoadOptions& opt, CacheUse* used) {
  return load_cached<float>(path, cache_path(path), options_key(path, opt), opt.use_cache, used,
                            [&](const std::string& p) {
                              return is_mtx(p) ? read_matrix_market(p) : read_snap(p, opt.snap);
                            });
}

// The precision is in the key as well as in the file name: a cache renamed or copied across is
// rebuilt, never read as the other precision.
CsrF64 load_matrix_market_f64(const std::string& path, bool use_cache, CacheUse* used) {
  return load_cached<double>(path, cache_path_f64(path), "mtx f64 v1", use_cache, used,
                             [](const std::string& p) { return read_matrix_market_f64(p); });
}

}  // namespace gpsm::graph_io
