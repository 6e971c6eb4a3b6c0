// Files written whole or not at all (common/atomic_file): a fault while writing leaves the previous
// file intact and no temporary behind, for every kind of file gpsm writes; output paths checked
// before work (writable, never one of the command's inputs); the graph cache keyed on its source.
#include <gtest/gtest.h>
#include "test_support.hpp"
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/graph_io/graph.hpp"
#include "common/atomic_file.hpp"
#include "gpsm/error.hpp"
#include "gpsm/machine_model.hpp"
#include "proact/autotune.hpp"
#include "sim/trace.hpp"

namespace fs = std::filesystem;

namespace {

using gpsm::test::TmpDir;

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A file-size limit for this process (RLIMIT_FSIZE): a write past it fails with EFBIG, as a full
// disk fails with ENOSPC, part way through the file. SIGXFSZ is ignored so the write returns the
// error instead of ending the process. Both are restored on scope exit.
struct FileSizeLimit {
  rlimit old{};
  struct sigaction old_sa {};
  explicit FileSizeLimit(rlim_t bytes) {
    struct sigaction sa {};
    sa.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &sa, &old_sa);
    getrlimit(RLIMIT_FSIZE, &old);
    rlimit r = old;
    r.rlim_cur = bytes;
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &r), 0) << std::strerror(errno);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old);
    sigaction(SIGXFSZ, &old_sa, nullptr);
  }
};

// Runs `write` (which replaces `path`) under a file-size limit below what it writes; expects a
// gpsm::Error naming the path and the system's reason, the old bytes in place and no temporary.
void expect_old_survives_short_write(const TmpDir& t, const std::string& path, const std::function<void()>& write,
                                     rlim_t limit) {
  const std::string before = slurp(path);
  ASSERT_FALSE(before.empty());
  try {
    FileSizeLimit lim(limit);
    write();
    ADD_FAILURE() << "a write past the file-size limit succeeded";
  } catch (const gpsm::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find(std::strerror(EFBIG)), std::string::npos) << m;
  }
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(t.others({fs::path(path).filename().string()}), std::vector<std::string>{});
}

}  // namespace

TEST(AtomicFile, WritesNewAndReplacesKeepingTheMode) {
  TmpDir t;
  const std::string p = t.path("a.json");
  gpsm::write_file_atomic(p, std::string("first\n"));
  EXPECT_EQ(slurp(p), "first\n");
  ::chmod(p.c_str(), 0640);
  gpsm::write_file_atomic(p, [](std::ostream& os) { os << "second " << 2 << "\n"; });
  EXPECT_EQ(slurp(p), "second 2\n");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // Through a symbolic link: the link stays, its target is replaced.
  fs::create_symlink("a.json", t.path("link.json"));
  gpsm::write_file_atomic(t.path("link.json"), std::string("third\n"));
  EXPECT_TRUE(fs::is_symlink(t.path("link.json")));
  EXPECT_EQ(slurp(p), "third\n");
  // A missing folder is an error naming the path, and nothing is created.
  try {
    gpsm::write_file_atomic(t.path("sub/dir/b.txt"), std::string("x"));
    ADD_FAILURE() << "wrote into a missing folder";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(t.path("sub/dir/b.txt")), std::string::npos) << e.what();
  }
  EXPECT_EQ(t.others({"a.json", "link.json"}), std::vector<std::string>{});
}

TEST(AtomicFile, ThrowingProducerLeavesOldFile) {
  TmpDir t;
  const std::string p = t.write("r.json", "{\"old\": true}\n");
  try {
    gpsm::write_file_atomic(p, [](std::ostream& os) {
      os << std::string(1 << 20, 'x');  // past the stream's buffer: part of it is on disk
      throw std::runtime_error("producer failed");
    });
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "producer failed");  // the producer's own error, unchanged
  }
  EXPECT_EQ(slurp(p), "{\"old\": true}\n");
  EXPECT_EQ(t.others({"r.json"}), std::vector<std::string>{});
}

TEST(AtomicFile, ShortWriteLeavesOldFile) {
  TmpDir t;
  const std::string p = t.write("r.json", "{\"old\": true}\n");
  expect_old_survives_short_write(t, p, [&] { gpsm::write_file_atomic(p, std::string(100000, 'y')); }, 4096);
}

TEST(AtomicFile, UnwritableFolderLeavesOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders; the short-write tests cover this path";
  TmpDir t;
  const std::string p = t.write("r.json", "old");
  fs::permissions(t.dir, fs::perms::owner_read | fs::perms::owner_exec);
  try {
    gpsm::write_file_atomic(p, std::string("new"));
    ADD_FAILURE() << "wrote into a read-only folder";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create a temporary file"), std::string::npos) << e.what();
  }
  fs::permissions(t.dir, fs::perms::owner_all);
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(t.others({"r.json"}), std::vector<std::string>{});
}

// One fault test per kind of file gpsm writes; the results documents of scope/bench/sim/publish/
// proact and report's tables are plain write_file_atomic(path, text) calls, covered above.
TEST(AtomicFile, MachineModelSurvivesFailedSave) {
  TmpDir t;
  const auto m = gpsm::model::load_model(std::string(GPSM_FIXTURES_DIR) + "/machine_models/h200x4_full_machine_model.json");
  const std::string p = t.path("machine_model.json");
  gpsm::model::save_model(m, p);
  std::string before = slurp(p);
  ASSERT_GT(before.size(), 8192u);
  gpsm::model::MachineModel m2 = m;
  m2.machine = "another machine";
  expect_old_survives_short_write(t, p, [&] { gpsm::model::save_model(m2, p); }, 4096);
  EXPECT_EQ(gpsm::model::load_model(p).machine, m.machine);
}

TEST(AtomicFile, ProactCacheSurvivesFailedSave) {
  TmpDir t;
  const auto c = gpsm::proact::load_cache(std::string(GPSM_FIXTURES_DIR) + "/results/proact_cache_sample.json");
  ASSERT_FALSE(c.entries().empty());
  const std::string p = t.path("cache.json");
  gpsm::proact::save_cache(c, p);
  const auto size = fs::file_size(p);
  ASSERT_GT(size, 64u);
  expect_old_survives_short_write(t, p, [&] { gpsm::proact::save_cache(c, p); }, size / 2);
  EXPECT_EQ(gpsm::proact::load_cache(p).entries().size(), c.entries().size());
}

TEST(AtomicFile, GraphCacheSurvivesFailedWrite) {
  TmpDir t;
  gpsm::graph_io::GridParams gp;
  gp.nx = 64;
  gp.ny = 64;
  const auto g = gpsm::graph_io::grid2d(gp);
  const std::string p = t.path("g.gpsmcsr");
  gpsm::graph_io::write_csr_binary(p, g, "k");
  expect_old_survives_short_write(t, p, [&] { gpsm::graph_io::write_csr_binary(p, g, "k2"); }, 4096);
  std::string key;
  EXPECT_EQ(gpsm::graph_io::read_csr_binary(p, &key), g);
  EXPECT_EQ(key, "k");
}

TEST(AtomicFile, SimTraceSurvivesFailedWrite) {
  TmpDir t;
  gpsm::sim::Trace tr;
  tr.app = "scatter";
  tr.problem = "hand";
  tr.gpus = 1;
  tr.layout = "slabs";
  // Past the writer's 4-MiB buffer, so the failure hits one of its flushes, not only the last.
  for (int i = 0; i < 200; ++i)
    tr.allocations.push_back({"gpu0.array" + std::to_string(i) + std::string(30000, 'n'), gpsm::sim::MemKind::device, 0,
                              -1, static_cast<std::uint64_t>(i) << 20, 4096});
  const std::string p = t.path("t.trace");
  gpsm::sim::write_trace(tr, p);
  ASSERT_GT(fs::file_size(p), std::uintmax_t{5} << 20);
  gpsm::sim::Trace tr2 = tr;
  tr2.problem = "changed";
  expect_old_survives_short_write(t, p, [&] { gpsm::sim::write_trace(tr2, p); }, 4096);
  EXPECT_EQ(gpsm::sim::read_trace(p).problem, "hand");
}

TEST(OutputCheck, RefusesAnOutputThatIsAnInput) {
  TmpDir t;
  const std::string m = t.write("m.json", "{}");
  fs::create_symlink("m.json", t.path("alias.json"));
  fs::create_hard_link(m, t.path("hard.json"));
  const std::string rel = fs::relative(m).string();
  for (const std::string& out : {m, t.path("alias.json"), t.path("hard.json"), t.path("./m.json"), rel}) {
    SCOPED_TRACE(out);
    try {
      gpsm::check_outputs({{"--json", out}}, {{"--system", m}});
      ADD_FAILURE() << "output == input accepted";
    } catch (const std::invalid_argument& e) {
      const std::string w = e.what();
      EXPECT_EQ(w.rfind("gpsm: --json " + out + ": is the same file as --system " + m, 0), 0u) << w;
    }
  }
  // Neither exists yet, same path: still the same file.
  EXPECT_THROW(gpsm::check_outputs({{"--json", t.path("n.json")}}, {{"--tune", t.path("./n.json")}}),
               std::invalid_argument);
  // Another file in the same folder, an empty output, an empty input: fine.
  EXPECT_NO_THROW(gpsm::check_outputs({{"--json", t.path("out.json")}, {"--tune", ""}}, {{"--system", m}, {"--x", ""}}));
  EXPECT_EQ(t.others({"m.json", "alias.json", "hard.json"}), std::vector<std::string>{});  // the probe is removed
}

TEST(OutputCheck, FoldersAndUnwritablePaths) {
  TmpDir t;
  EXPECT_THROW(gpsm::check_outputs({{"--json", t.dir.string()}}, {}), std::invalid_argument);  // a folder
  try {  // a file's folder must exist
    gpsm::check_outputs({{"--json", t.path("new/deeper/r.json")}}, {});
    ADD_FAILURE() << "a file in a missing folder accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("folder " + t.path("new/deeper") + " does not exist"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(t.path("new")));  // checked, not created
  const std::string file = t.write("f", "x");
  try {
    gpsm::check_outputs({{"--json", file + "/r.json"}}, {});
    ADD_FAILURE() << "a path under a file accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not a folder"), std::string::npos) << e.what();
  }
  try {
    gpsm::check_outputs({{"--json", "/proc/gpsm-r.json"}}, {});
    ADD_FAILURE() << "a file in /proc accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("gpsm: --json /proc/gpsm-r.json: cannot create files in /proc", 0), 0u)
        << e.what();
  }
  // An output folder holding an input under an output's name.
  const std::string in = t.write("results.json", "{}");
  try {
    gpsm::check_output_dir("--out", t.dir.string(), {"results.json", "topology.dot"}, {{"--model", in}});
    ADD_FAILURE() << "an output folder overwriting its input accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is the same file as --model " + in), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(gpsm::check_output_dir("--out", t.path("fresh"), {"results.json"}, {{"--model", in}}));
  EXPECT_THROW(gpsm::check_output_dir("--out", file, {"results.json"}, {}), std::invalid_argument);
}

TEST(GraphCacheKey, SourceReplacedByAnOlderFileIsReRead) {
  TmpDir t;
  // Same size, same line count: only the content and the time differ.
  const std::string p = t.write("g.txt", "0 1\n1 2\n");
  gpsm::graph_io::CacheUse u;
  const auto a = gpsm::graph_io::load_graph(p, {}, &u);
  EXPECT_EQ(u, gpsm::graph_io::CacheUse::written);
  const auto cache_time = fs::last_write_time(gpsm::graph_io::cache_path(p));
  t.write("g.txt", "0 3\n3 2\n");
  fs::last_write_time(p, cache_time - std::chrono::hours(24));  // older than the cache (cp -p, rsync, untar)
  const auto b = gpsm::graph_io::load_graph(p, {}, &u);
  EXPECT_EQ(u, gpsm::graph_io::CacheUse::written);
  EXPECT_EQ(b.rows, 4);
  EXPECT_NE(a, b);
  EXPECT_EQ(b, gpsm::graph_io::read_snap(p));
  // Unchanged since: reused.
  gpsm::graph_io::load_graph(p, {}, &u);
  EXPECT_EQ(u, gpsm::graph_io::CacheUse::hit);
  // Same content, another time (touch): rebuilt, as the time is part of the key.
  fs::last_write_time(p, cache_time - std::chrono::hours(48));
  gpsm::graph_io::load_graph(p, {}, &u);
  EXPECT_EQ(u, gpsm::graph_io::CacheUse::written);
  // Same size and time, changed tail (within the hashed last MiB): rebuilt.
  const auto tm = fs::last_write_time(p);
  t.write("g.txt", "0 3\n3 1\n");
  fs::last_write_time(p, tm);
  const auto c = gpsm::graph_io::load_graph(p, {}, &u);
  EXPECT_EQ(u, gpsm::graph_io::CacheUse::written);
  EXPECT_EQ(c, gpsm::graph_io::read_snap(p));
}

TEST(GraphCacheKey, CraftedHeaderCountsRefusedBeforeAllocating) {
  TmpDir t;
  gpsm::graph_io::GridParams gp;
  gp.nx = 8;
  gp.ny = 8;
  const std::string p = t.path("g.gpsmcsr");
  gpsm::graph_io::write_csr_binary(p, gpsm::graph_io::grid2d(gp), "k");
  const std::string good = slurp(p);
  // magic 8, version 4, flags 4, key length 4, key 1, then rows, cols, nnz (int64 each)
  const std::size_t rows_at = 21, cols_at = 29, nnz_at = 37;
  struct Case {
    std::size_t at;
    std::int64_t v;
    const char* needle;
  };
  const Case cases[] = {
      {rows_at, std::int64_t{1} << 61, "beyond int32 ids"},         // (rows + 1) * 8 would wrap
      {rows_at, std::numeric_limits<std::int64_t>::max(), "beyond int32 ids"},
      {cols_at, std::int64_t{1} << 40, "beyond int32 ids"},
      {nnz_at, std::int64_t{1} << 62, "nonzeros, more than a"},     // nnz * 4 would wrap to 0
      {nnz_at, std::numeric_limits<std::int64_t>::max(), "nonzeros, more than a"},
      {nnz_at, -1, "negative size"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.at) + " = " + std::to_string(c.v));
    std::string bad = good;
    std::memcpy(&bad[c.at], &c.v, 8);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bad;
    try {
      gpsm::graph_io::read_csr_binary(p);
      ADD_FAILURE() << "crafted header accepted";
    } catch (const gpsm::Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find(p + ": corrupt gpsm CSR cache"), std::string::npos) << m;
      EXPECT_NE(m.find(c.needle), std::string::npos) << m;
    }
  }
  // The loader refuses the same header naming the cache (not silently rebuilt).
  const std::string src = t.write("s.txt", "0 1\n");
  gpsm::graph_io::load_graph(src);
  std::string bad = slurp(gpsm::graph_io::cache_path(src));
  const std::int64_t huge = std::int64_t{1} << 62;
  const std::uint32_t key_len = *reinterpret_cast<const std::uint32_t*>(&bad[16]);
  std::memcpy(&bad[20 + key_len + 16], &huge, 8);
  std::ofstream(gpsm::graph_io::cache_path(src), std::ios::binary | std::ios::trunc) << bad;
  EXPECT_THROW(gpsm::graph_io::load_graph(src), gpsm::Error);
}
