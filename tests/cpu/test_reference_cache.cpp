// gpsm bench --isolate's shared references (apps/harness/reference_cache.hpp): every app's
// reference type reads back bit for bit, and a generated graph (validated as it is read); a reference is computed once and then read; a damaged
// or foreign entry is computed again with the reason said, never read as a reference; a folder
// that cannot be written costs the sharing, not the run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "apps/cg/reference.hpp"
#include "apps/ct/ct_pwls.hpp"
#include "apps/filter/filter_reference.hpp"
#include "apps/graph/graph_refs.hpp"
#include "apps/graph_io/graph.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/stencil/reference.hpp"
#include "common/temp_dir.hpp"

namespace {

using gpsm::apps::ReferenceCache;
using gpsm::apps::RefFields;
using gpsm::apps::cached_reference;

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Stores t under key, reads it back into a fresh T.
template <class T>
T round_trip(const ReferenceCache& c, const std::string& key, T t) {
  using gpsm::apps::ref_fields;
  c.store(key, [&](RefFields& f) { ref_fields(f, t); });
  T back{};
  std::string why = "unset";
  EXPECT_TRUE(c.load(key, [&](RefFields& f) { ref_fields(f, back); }, &why)) << why;
  EXPECT_EQ(why, "");
  return back;
}

TEST(ReferenceCache, EveryAppsReferenceReadsBackBitForBit) {
  gpsm::TempDir dir("gpsm-test-refs", "the test");
  ReferenceCache c(dir.path());
  const float nan = std::numeric_limits<float>::quiet_NaN();

  gpsm::apps::JacobiResult j;
  j.a = {0.0f, -0.0f, 1.0f / 3.0f, nan, std::numeric_limits<float>::denorm_min()};
  j.iterations = 997;
  j.norm = 1.0 / 7.0;
  const auto j2 = round_trip(c, "jacobi2d/5x1:1000:1:1e-08", j);
  EXPECT_TRUE(same_bits(j2.a, j.a));
  EXPECT_EQ(j2.iterations, 997);
  EXPECT_EQ(j2.norm, j.norm);

  gpsm::apps::filter::Image im;
  im.width = 3;
  im.height = 2;
  im.px = {1, 2, 3, 4, 5, 6.5f};
  const auto im2 = round_trip(c, "filter/3x2:k5:4", im);
  EXPECT_EQ(im2.width, 3);
  EXPECT_EQ(im2.height, 2);
  EXPECT_TRUE(same_bits(im2.px, im.px));

  gpsm::apps::cg::Solve s;
  s.rho = {1.0, 0.5, 1e-300};
  s.iterations = 2;
  s.x = {};  // an empty array reads back empty
  s.max_x_norm = 3.25;
  const auto s2 = round_trip(c, "cg/poisson2d:4/1/rows/0/auto/i32/4/standard/0/2", s);
  EXPECT_TRUE(same_bits(s2.rho, s.rho));
  EXPECT_EQ(s2.iterations, 2);
  EXPECT_TRUE(s2.x.empty());
  EXPECT_EQ(s2.max_x_norm, 3.25);

  gpsm::apps::ct::PwlsRun p;
  p.cost = {10, 9, 8.5};
  p.rmse_hu = {};
  p.x = {0.25f, nan};
  const auto p2 = round_trip(c, "ct/tiny/4/2", p);
  EXPECT_TRUE(same_bits(p2.cost, p.cost));
  EXPECT_TRUE(p2.rmse_hu.empty());
  EXPECT_TRUE(same_bits(p2.x, p.x));

  gpsm::apps::graph::PageRankResult pr{{0.1f, 0.2f, 0.7f}, 20};
  const auto pr2 = round_trip(c, "pagerank/rmat:4#1/iters:20", pr);
  EXPECT_TRUE(same_bits(pr2.rank, pr.rank));
  EXPECT_EQ(pr2.iterations, 20);

  gpsm::apps::graph::SsspResult ss{{0, 1.5f, std::numeric_limits<float>::infinity()}, 4, true};
  const auto ss2 = round_trip(c, "sssp/rmat:4#1/cap:1000", ss);
  EXPECT_TRUE(same_bits(ss2.dist, ss.dist));
  EXPECT_EQ(ss2.iterations, 4);
  EXPECT_TRUE(ss2.converged);

  gpsm::apps::graph::SgdResult sg{{1, 2}, {3}, 0.75, 1.5};
  const auto sg2 = round_trip(c, "als/ratings:4x4x2#1/epochs:5", sg);
  EXPECT_TRUE(same_bits(sg2.users, sg.users));
  EXPECT_TRUE(same_bits(sg2.items, sg.items));
  EXPECT_EQ(sg2.rmse, 0.75);
  EXPECT_EQ(sg2.initial_rmse, 1.5);

  std::vector<float> v = {1, 2, 3};  // the 3D apps' reference: a plain vector
  EXPECT_TRUE(same_bits(round_trip(c, "heat3d/2x2x2:10:1", v), v));
}

TEST(ReferenceCache, AGraphReadsBackWholeAndAnInvalidOneIsNotUsed) {
  gpsm::TempDir dir("gpsm-test-refs", "the test");
  ReferenceCache c(dir.path());
  gpsm::graph_io::Csr g;
  g.rows = 3;
  g.cols = 3;
  g.row_ptr = {0, 2, 2, 3};
  g.col = {1, 2, 0};
  g.val = {0.5f, 1.5f, 2.5f};
  EXPECT_EQ(round_trip(c, "sssp/graph/t#1", g), g);
  g.val.clear();  // a pattern graph: no values
  EXPECT_EQ(round_trip(c, "pagerank/graph/t#1", g), g);
  // Lengths that fit but a column out of range: validate refuses it, the entry is not used.
  g.col = {1, 7, 0};
  c.store("bad", [&](RefFields& f) { ref_fields(f, g); });
  gpsm::graph_io::Csr back;
  std::string why;
  EXPECT_FALSE(c.load("bad", [&](RefFields& f) { ref_fields(f, back); }, &why));
  EXPECT_NE(why.find("the shared graph"), std::string::npos) << why;
}

TEST(ReferenceCache, ComputedOnceThenReadByTheNextRun) {
  gpsm::TempDir dir("gpsm-test-refs", "the test");
  ReferenceCache c(dir.path());
  int computed = 0;
  std::vector<std::string> notes;
  auto note = [&](const std::string& s) { notes.push_back(s); };
  auto compute = [&] {
    ++computed;
    return std::vector<float>{4, 5, 6};
  };
  // Two "processes": each starts with nothing in memory, only the folder is shared.
  EXPECT_EQ(cached_reference<std::vector<float>>(&c, "k", compute, note), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(cached_reference<std::vector<float>>(&c, "k", compute, note), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(computed, 1);
  // Another key is another reference.
  cached_reference<std::vector<float>>(&c, "k2", compute, note);
  EXPECT_EQ(computed, 2);
  // Without a cache (one process) it computes each time it is asked; the app keeps it in memory.
  cached_reference<std::vector<float>>(nullptr, "k", compute, note);
  EXPECT_EQ(computed, 3);
  EXPECT_TRUE(notes.empty());
  // Nothing but the entries is left in the folder (no temporaries).
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().extension(), ".bin") << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2);
}

// Writes `bytes` where key's entry lives.
void plant(const ReferenceCache& c, const std::string& key, const std::string& bytes) {
  std::ofstream(c.path_of(key), std::ios::binary) << bytes;
}

std::string valid_entry(const ReferenceCache& c, const std::string& key, std::vector<float> v) {
  c.store(key, [&](RefFields& f) { f.array(v); });
  std::ifstream f(c.path_of(key), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(ReferenceCache, DamagedOrForeignEntriesAreComputedAgainWithTheReason) {
  gpsm::TempDir dir("gpsm-test-refs", "the test");
  ReferenceCache c(dir.path());
  const std::string good = valid_entry(c, "k", {1, 2, 3, 4});
  auto try_load = [&](std::string* why) {
    std::vector<float> v;
    return c.load("k", [&](RefFields& f) { f.array(v); }, why);
  };
  std::string why;
  ASSERT_TRUE(try_load(&why)) << why;

  struct Case {
    std::string name, bytes, reason;
  } cases[] = {
      {"truncated inside the array", good.substr(0, good.size() - 20), "ends"},
      {"end mark cut off", good.substr(0, good.size() - 8), "runs past the entry's end"},
      {"not a reference file", "hello\n", "not a gpsm reference file"},
      {"another key behind the hash", "gpsm.reference/1\nother\n", "another key"},
      {"no key line", "gpsm.reference/1\n", "no key line"},
      {"shorter than the end mark", "gpsm.reference/1\nk\nabc", "shorter than its end mark"},
      {"bytes left unread", good.substr(0, good.size() - 16) + "xxxx" + good.substr(good.size() - 16), "left unread"},
  };
  for (const auto& k : cases) {
    plant(c, "k", k.bytes);
    EXPECT_FALSE(try_load(&why)) << k.name;
    EXPECT_NE(why.find(k.reason), std::string::npos) << k.name << ": " << why;
  }
  // A length far past the file (garbage where the count is) is refused before allocating.
  {
    std::string huge = good;
    const std::size_t count_at = good.find("k\n") + 2;
    const std::uint64_t n = std::uint64_t{1} << 60;
    std::memcpy(huge.data() + count_at, &n, sizeof n);
    plant(c, "k", huge);
    EXPECT_FALSE(try_load(&why));
    EXPECT_NE(why.find("runs past the entry's end"), std::string::npos) << why;
  }
  // Through cached_reference: computed again, the reason said, and the entry made good.
  plant(c, "k", "gpsm.reference/1\nk\nabc");
  std::vector<std::string> notes;
  int computed = 0;
  auto got = cached_reference<std::vector<float>>(
      &c, "k",
      [&] {
        ++computed;
        return std::vector<float>{9};
      },
      [&](const std::string& s) { notes.push_back(s); });
  EXPECT_EQ(got, std::vector<float>{9});
  EXPECT_EQ(computed, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("unreadable (shorter than its end mark): computing it"), std::string::npos) << notes[0];
  std::vector<float> v;
  EXPECT_TRUE(c.load("k", [&](RefFields& f) { f.array(v); }, &why)) << why;
  EXPECT_EQ(v, std::vector<float>{9});
  // Absent is not damaged: false with no reason.
  EXPECT_FALSE(c.load("absent", [&](RefFields& f) { f.array(v); }, &why));
  EXPECT_EQ(why, "");
}

TEST(ReferenceCache, AFolderThatCannotBeWrittenCostsTheSharingNotTheRun) {
  ReferenceCache c("/nonexistent/gpsm-refs");
  try {
    c.store("k", [](RefFields& f) {
      int one = 1;
      f.value(one);
    });
    FAIL() << "stored into a missing folder";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write the shared reference /nonexistent/gpsm-refs/ref-"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::string> notes;
  const auto got = cached_reference<std::vector<float>>(
      &c, "k", [] { return std::vector<float>{7}; }, [&](const std::string& s) { notes.push_back(s); });
  EXPECT_EQ(got, std::vector<float>{7});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("not shared with the next runs"), std::string::npos) << notes[0];
}

TEST(ReferenceCache, AWriterThatThrowsLeavesNoEntryAndNoTemporary) {
  gpsm::TempDir dir("gpsm-test-refs", "the test");
  ReferenceCache c(dir.path());
  EXPECT_THROW(c.store("k",
                       [](RefFields& f) {
                         int one = 1;
                         f.value(one);
                         throw std::runtime_error("disk gone");
                       }),
               std::runtime_error);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  EXPECT_THROW(c.store("a\nb", [](RefFields&) {}), gpsm::Error);  // the key is one line
}

}  // namespace
