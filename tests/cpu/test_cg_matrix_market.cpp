// CG's Matrix Market input in double: values float cannot hold reach cg::Matrix bit for bit,
// symmetric and general storage give the same matrix, the graph apps' float load of the same
// file (and its cache) is what it was, the two caches live side by side, and the double reader
// refuses bad input exactly as the float one does.
#include <gtest/gtest.h>
#include "test_support.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "apps/cg/matrix.hpp"
#include "apps/graph_io/graph.hpp"
#include "gpsm/error.hpp"

namespace fs = std::filesystem;
namespace gio = gpsm::graph_io;
using gpsm::apps::cg::Matrix;

namespace {

using gpsm::test::TmpDir;

Matrix load_cg(const std::string& path) { return gpsm::apps::cg::load(gpsm::apps::cg::parse_spec(path)); }

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

// The values as C++ literals: the compiler rounds them correctly, as strtod does the file's text.
constexpr double kA = 0.1234567890123456789;
constexpr double kTiny = 1e-300;  // a normal double, 0 as a float
constexpr double kE = 2.7182818284590452353602874;
constexpr double kThird = -0.3333333333333333333;
constexpr double kBig = 123456789.123456789;

// A 3 x 3 symmetric matrix, stored whole and as its lower triangle (entries in another order,
// with comments and blank lines, to show the storage is all that differs).
const char* kGeneral =
    "%%MatrixMarket matrix coordinate real general\n"
    "% values float cannot hold\n"
    "3 3 7\n"
    "1 1 0.1234567890123456789\n"
    "1 2 1e-300\n"
    "2 1 1e-300\n"
    "\n"
    "2 2 2.7182818284590452353602874\n"
    "2 3 -0.3333333333333333333\n"
    "3 2 -0.3333333333333333333\n"
    "3 3 123456789.123456789\n";
const char* kSymmetric =
    "%%MatrixMarket matrix coordinate real symmetric\n"
    "3 3 5\n"
    "3 3 123456789.123456789\n"
    "% the lower triangle only\n"
    "3 2 -0.3333333333333333333\n"
    "2 2 2.7182818284590452353602874\n"
    "2 1 1e-300\n"
    "1 1 0.1234567890123456789\n";

void expect_same(const Matrix& a, const Matrix& b) {
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col, b.col);
  ASSERT_EQ(a.val.size(), b.val.size());
  for (std::size_t k = 0; k < a.val.size(); ++k) EXPECT_EQ(bits(a.val[k]), bits(b.val[k])) << "entry " << k;
}

}  // namespace

TEST(CgMatrixMarket, ValuesFloatCannotHoldLoadBitExactly) {
  // The fixture is only a test if float loses every one of these values.
  for (double v : {kA, kTiny, kE, kThird, kBig}) ASSERT_NE(double(static_cast<float>(v)), v) << v;
  TmpDir t;
  const Matrix a = load_cg(t.write("g.mtx", kGeneral));
  ASSERT_EQ(a.n, 3);
  EXPECT_EQ(a.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 7}));
  EXPECT_EQ(a.col, (std::vector<std::int32_t>{0, 1, 0, 1, 2, 1, 2}));
  const std::vector<double> want = {kA, kTiny, kTiny, kE, kThird, kThird, kBig};
  ASSERT_EQ(a.val.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(bits(a.val[k]), bits(want[k])) << "entry " << k;
}

TEST(CgMatrixMarket, SymmetricAndGeneralStorageAgree) {
  TmpDir t;
  const Matrix g = load_cg(t.write("g.mtx", kGeneral));
  const Matrix s = load_cg(t.write("s.mtx", kSymmetric));
  expect_same(g, s);
  EXPECT_TRUE(s.symmetric());
}

TEST(CgMatrixMarket, GraphAppsFloatLoadIsUnchanged) {
  TmpDir t;
  const std::string p = t.write("g.mtx", kGeneral);
  load_cg(p);  // CG first: its cache must not be the one the graph apps read
  gio::CacheUse u;
  const gio::Csr f = gio::load_graph(p, {}, &u);
  EXPECT_EQ(u, gio::CacheUse::written);
  const std::vector<float> want = {static_cast<float>(kA),     0.0f, 0.0f, static_cast<float>(kE),
                                   static_cast<float>(kThird), static_cast<float>(kThird),
                                   static_cast<float>(kBig)};
  EXPECT_EQ(f.val, want);
  EXPECT_EQ(f, gio::read_matrix_market(p));
  // The float reader is the double one rounded: same structure, each value its float.
  const gio::CsrF64 d = gio::read_matrix_market_f64(p);
  EXPECT_EQ(d.row_ptr, f.row_ptr);
  EXPECT_EQ(d.col, f.col);
  ASSERT_EQ(d.val.size(), f.val.size());
  for (std::size_t k = 0; k < d.val.size(); ++k) EXPECT_EQ(static_cast<float>(d.val[k]), f.val[k]);
}

TEST(CgMatrixMarket, FloatAndDoubleCachesLiveSideBySide) {
  TmpDir t;
  const std::string p = t.write("g.mtx", kGeneral);
  gio::CacheUse u;
  const gio::CsrF64 d1 = gio::load_matrix_market_f64(p, true, &u);
  EXPECT_EQ(u, gio::CacheUse::written);
  const gio::Csr f1 = gio::load_graph(p, {}, &u);
  EXPECT_EQ(u, gio::CacheUse::written);
  // Each load after the other's still hits its own cache: neither replaced the other.
  EXPECT_EQ(gio::load_matrix_market_f64(p, true, &u), d1);
  EXPECT_EQ(u, gio::CacheUse::hit);
  EXPECT_EQ(gio::load_graph(p, {}, &u), f1);
  EXPECT_EQ(u, gio::CacheUse::hit);
  ASSERT_NE(gio::cache_path(p), gio::cache_path_f64(p));
  // The float cache's layout is the one graph apps always wrote: flags = 1 (values), f32 values.
  auto read_all = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string fb = read_all(gio::cache_path(p)), db = read_all(gio::cache_path_f64(p));
  auto u32_at = [](const std::string& b, std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  ASSERT_GT(fb.size(), 20u);
  ASSERT_GT(db.size(), 20u);
  EXPECT_EQ(u32_at(fb, 8), 1u);   // version
  EXPECT_EQ(u32_at(fb, 12), 1u);  // flags: values, f32
  EXPECT_EQ(u32_at(db, 12), 3u);  // flags: values, f64
  const std::string fkey = fb.substr(20, u32_at(fb, 16)), dkey = db.substr(20, u32_at(db, 16));
  EXPECT_EQ(fkey.rfind("mtx v1; source ", 0), 0u) << fkey;
  EXPECT_EQ(dkey.rfind("mtx f64 v1; source ", 0), 0u) << dkey;
  // magic, version, flags, key length, key, 3 counts, row_ptr, col, val, checksum
  const std::size_t head = 20 + fkey.size() + 24 + 4 * 8;
  EXPECT_EQ(fb.size(), head + 7 * 4 + 7 * 4 + 8);
  EXPECT_EQ(db.size(), 20 + dkey.size() + 24 + 4 * 8 + 7 * 4 + 7 * 8 + 8);
  // Each binary reader refuses the other precision's values, saying which it found.
  try {
    gio::read_csr_binary(gio::cache_path_f64(p));
    ADD_FAILURE() << "a float reader read f64 values";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds f64 values"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gio::read_csr_f64_binary(gio::cache_path(p)), gpsm::Error);
  // A double cache copied over the float one's name has the other key: rebuilt, not misread.
  fs::copy_file(gio::cache_path_f64(p), gio::cache_path(p), fs::copy_options::overwrite_existing);
  EXPECT_EQ(gio::load_graph(p, {}, &u), f1);
  EXPECT_EQ(u, gio::CacheUse::written);
}

TEST(CgMatrixMarket, IntegerAndPatternFiles) {
  TmpDir t;
  // 2^24 + 1 and 2^40 + 3: integers float cannot hold, exact in double.
  const Matrix i = load_cg(t.write("i.mtx",
                                   "%%MatrixMarket matrix coordinate integer symmetric\n"
                                   "2 2 3\n1 1 16777217\n2 1 -7\n2 2 1099511627779\n"));
  EXPECT_EQ(i.val, (std::vector<double>{16777217.0, -7.0, -7.0, 1099511627779.0}));
  const Matrix p =
      load_cg(t.write("p.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 3\n1 1\n2 1\n2 2\n"));
  EXPECT_EQ(p.row_ptr, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(p.val, (std::vector<double>(4, 1.0)));
}

TEST(CgMatrixMarket, FloatRoundingCanMakeAnSpdFileSingular) {
  // [[1, 1 - 1e-12], [1 - 1e-12, 1]] is SPD (eigenvalues 2 - 1e-12 and 1e-12); rounded to float
  // the off-diagonal becomes 1 and the matrix singular. Why CG must not read through float.
  TmpDir t;
  const std::string p = t.write("near.mtx",
                                "%%MatrixMarket matrix coordinate real symmetric\n"
                                "2 2 3\n1 1 1\n2 1 0.999999999999\n2 2 1\n");
  const Matrix a = load_cg(p);
  ASSERT_EQ(a.val.size(), 4u);
  EXPECT_GT(a.val[0] * a.val[3] - a.val[1] * a.val[2], 0.0);  // det > 0 with a positive diagonal: SPD
  const gio::Csr f = gio::read_matrix_market(p);
  EXPECT_EQ(double(f.val[0]) * f.val[3] - double(f.val[1]) * f.val[2], 0.0);
}

TEST(CgMatrixMarket, BadFilesFailAsTheFloatReaderDoes) {
  TmpDir t;
  const std::string hdr = "%%MatrixMarket matrix coordinate real general\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hdr.mtx", "%%MatrixMarket matrix coordinate\n1 1 1\n1 1 1\n"},
      {"arr.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"},
      {"cplx.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"},
      {"skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 1\n1 1 1\n"},
      {"size.mtx", hdr + "% c\n3 x 2\n"},
      {"range.mtx", hdr + "2 2 2\n1 1 1\n% c\n3 1 1\n"},
      {"nan.mtx", hdr + "2 2 2\n1 1 1\n2 2 abc\n"},
      {"inf.mtx", hdr + "2 2 2\n1 1 1\n2 2 inf\n"},
      {"under.mtx", hdr + "2 2 2\n1 1 1\n2 2 1e-400\n"},
      {"subnormal.mtx", hdr + "2 2 2\n1 1 1\n2 2 1e-310\n"},
      {"over.mtx", hdr + "2 2 2\n1 1 1\n2 2 1e400\n"},
      {"int.mtx", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n"},
      {"few.mtx", hdr + "2 2 3\n1 1 1\n2 2 1\n"},
      {"many.mtx", hdr + "2 2 1\n1 1 1\n2 2 1\n"},
      {"fields.mtx", hdr + "2 2 1\n1 1\n"},
      {"symrect.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n"},
      {"empty.mtx", ""},
  };
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    const std::string p = t.write(name, text);
    std::string f_msg, d_msg;
    try {
      gio::read_matrix_market(p);
    } catch (const gpsm::Error& e) {
      f_msg = e.what();
    }
    try {
      gio::read_matrix_market_f64(p);
    } catch (const gpsm::Error& e) {
      d_msg = e.what();
    }
    EXPECT_FALSE(f_msg.empty()) << "the float reader accepted it";
    EXPECT_EQ(d_msg, f_msg);
    // and through CG, with the cache on, the same message
    try {
      load_cg(p);
      ADD_FAILURE() << "cg loaded it";
    } catch (const gpsm::Error& e) {
      EXPECT_EQ(std::string(e.what()), f_msg);
    }
  }
  // CG's own refusals, unchanged
  const std::string rect = t.write("rect.mtx", hdr + "2 3 1\n1 1 1\n");
  EXPECT_THROW(
      {
        try {
          load_cg(rect);
        } catch (const gpsm::Error& e) {
          EXPECT_NE(std::string(e.what()).find("CG needs a square matrix"), std::string::npos) << e.what();
          throw;
        }
      },
      gpsm::Error);
  const std::string unsym = t.write("unsym.mtx", hdr + "2 2 3\n1 1 2\n1 2 0.1\n2 2 2\n");
  EXPECT_THROW(
      {
        try {
          load_cg(unsym);
        } catch (const gpsm::Error& e) {
          EXPECT_NE(std::string(e.what()).find("is not symmetric"), std::string::npos) << e.what();
          throw;
        }
      },
      gpsm::Error);
  // A value symmetric only after float rounding is not symmetric in double.
  const std::string near = t.write("near_sym.mtx", hdr + "2 2 4\n1 1 2\n1 2 0.1\n2 1 0.10000000001\n2 2 2\n");
  EXPECT_THROW(load_cg(near), gpsm::Error);
  EXPECT_EQ(gio::read_matrix_market(near).val[1], gio::read_matrix_market(near).val[2]);
}

TEST(CgMatrixMarket, HeaderIsCheckedAgainstMemoryBeforeAllocating) {
  TmpDir t;
  const std::string p =
      t.write("huge.mtx", "%%MatrixMarket matrix coordinate real general\n300000000 300000000 1\n1 1 1\n");
  const char* old = std::getenv("GPSM_MEMORY_LIMIT");
  const std::string keep = old ? old : "";
  setenv("GPSM_MEMORY_LIMIT", "1G", 1);
  std::string msg;
  try {
    gio::read_matrix_market_f64(p);
  } catch (const gpsm::Error& e) {
    msg = e.what();
  }
  if (old) setenv("GPSM_MEMORY_LIMIT", keep.c_str(), 1);
  else unsetenv("GPSM_MEMORY_LIMIT");
  EXPECT_NE(msg.find(p + ":2: the header's 300000000 x 300000000 matrix with 1 entries needs about"), std::string::npos)
      << msg;
}
