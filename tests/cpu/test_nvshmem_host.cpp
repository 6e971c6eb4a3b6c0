// The host side of the nvshmem paradigm, without a GPU: the worker's command line and result
// file round trips, the gather and its consistency checks, the unique-ID file hand-over, the
// child group that must never hang (children failing, hanging, missing), and the whole parent
// path of run_nvshmem driven by fake workers (shell scripts that hand back prepared results).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "apps/stencil/nvshmem_launch.hpp"
#include "apps/stencil/nvshmem_proto.hpp"
#include "apps/stencil/decomp.hpp"
#include "common/child_group.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::jacobi;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system temp dir, removed at the end of the test.
struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "gpsm-nvshmem-test-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = t;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& n) const { return (dir / n).string(); }
};

// Sets an environment variable for one scope and puts the old value back.
struct EnvVar {
  std::string name;
  bool had = false;
  std::string old;
  EnvVar(const std::string& n, const char* v) : name(n) {
    if (const char* o = std::getenv(n.c_str())) {
      had = true;
      old = o;
    }
    if (v) setenv(n.c_str(), v, 1);
    else unsetenv(n.c_str());
  }
  ~EnvVar() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
};

WorkerArgs sample_args() {
  WorkerArgs a;
  a.rank = 2;
  a.ranks = 4;
  a.device = 3;
  a.nx = 200;
  a.ny = 131;
  a.iters = 40;
  a.nccheck = 3;
  a.tol = 0.05f;
  a.warmup = 1;
  a.reps = 5;
  a.uid_file = "/tmp/x/uid";
  a.out_file = "/tmp/x/rank2.bin";
  a.timeout_s = 77;
  return a;
}

WorkerArgs parse(const std::vector<std::string>& args) {
  std::vector<const char*> argv{"gpsm-nvshmem-stencil"};
  for (const auto& s : args) argv.push_back(s.c_str());
  return parse_worker_args(static_cast<int>(argv.size()), argv.data());
}

// The result rank r of `ranks` would write for an nx x ny grid: cell values that name their
// global row and column, so a misplaced row shows.
WorkerResult fake_result(std::int64_t nx, std::int64_t ny, int ranks, int r, std::vector<double> secs, int iters) {
  const JacobiSlab s = jacobi_slab(nx, ny, ranks, r);
  WorkerResult w;
  w.rank = r;
  w.ranks = ranks;
  w.device = r;
  w.nx = nx;
  w.ny = ny;
  w.first_row = s.first_row;
  w.chunk = s.chunk;
  w.norm = 0.25 + r;
  w.seconds = secs;
  w.iterations.assign(secs.size(), iters);
  for (std::int64_t lr = 0; lr < s.chunk; ++lr)
    for (std::int64_t c = 0; c < nx; ++c) w.rows.push_back(static_cast<float>((s.first_row + lr) * 1000 + c));
  return w;
}

// The result rank r of a heat3d (radius 1) / wave3d (radius 2) run would write: its local box,
// each cell holding its global linear index where it belongs in the global box (owned planes; the
// first and last ranks' boundary halos) and NaN in the halos a neighbour filled, so a misplaced or
// missed cell shows.
WorkerResult fake_box_result(const std::int64_t n[3], Axis axis, int radius, int ranks, int r, std::vector<double> secs,
                             int iters) {
  const Slab3D s = slab3d(n, axis, radius, ranks, r);
  WorkerResult w;
  w.rank = r;
  w.ranks = ranks;
  w.device = r;
  w.nx = n[0];
  w.ny = n[1];
  w.nz = n[2];
  w.first_row = s.first;
  w.chunk = s.count;
  w.seconds = secs;
  w.iterations.assign(secs.size(), iters);
  const int a = static_cast<int>(axis);
  for (std::int64_t z = 0; z < s.local[2]; ++z)
    for (std::int64_t y = 0; y < s.local[1]; ++y)
      for (std::int64_t x = 0; x < s.local[0]; ++x) {
        const std::int64_t l[3] = {x, y, z};
        const bool halo = (s.has_lower() && l[a] < radius) || (s.has_upper() && l[a] >= radius + s.count);
        const std::int64_t gi = (s.global(2, z) * n[1] + s.global(1, y)) * n[0] + s.global(0, x);
        w.rows.push_back(halo ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(gi));
      }
  return w;
}

void write_script(const std::string& path, const std::string& body) {
  {
    std::ofstream f(path);
    f << "#!/bin/sh\n" << body;
  }
  fs::permissions(path, fs::perms::owner_all);
}

double seconds_of(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// ---- command line ----------------------------------------------------------------------------

TEST(NvshmemProto, ArgumentsRoundTrip) {
  const WorkerArgs a = sample_args();
  const WorkerArgs b = parse(to_args(a));
  EXPECT_EQ(b.rank, a.rank);
  EXPECT_EQ(b.ranks, a.ranks);
  EXPECT_EQ(b.device, a.device);
  EXPECT_EQ(b.nx, a.nx);
  EXPECT_EQ(b.ny, a.ny);
  EXPECT_EQ(b.iters, a.iters);
  EXPECT_EQ(b.nccheck, a.nccheck);
  EXPECT_EQ(b.tol, a.tol);
  EXPECT_EQ(b.warmup, a.warmup);
  EXPECT_EQ(b.reps, a.reps);
  EXPECT_EQ(b.uid_file, a.uid_file);
  EXPECT_EQ(b.out_file, a.out_file);
  EXPECT_EQ(b.timeout_s, a.timeout_s);
}

TEST(NvshmemProto, StencilArgumentsRoundTrip) {
  for (WorkerApp app : {WorkerApp::heat3d, WorkerApp::wave3d})
    for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
      WorkerArgs a = sample_args();
      a.app = app;
      a.nz = 23;
      a.ny = 19;
      a.axis = axis;
      a.seed = 4000000001u;
      const WorkerArgs b = parse(to_args(a));
      EXPECT_EQ(b.app, app);
      EXPECT_EQ(b.nx, a.nx);
      EXPECT_EQ(b.ny, 19);
      EXPECT_EQ(b.nz, 23);
      EXPECT_EQ(b.axis, axis);
      EXPECT_EQ(b.seed, a.seed);
      EXPECT_EQ(b.iters, a.iters);
      EXPECT_EQ(b.rank, a.rank);
    }
  // jacobi2d's defaults when the 3D options are absent (an older parent's command line)
  std::vector<std::string> old = to_args(sample_args());
  old.erase(old.begin(), old.begin() + 8);  // --app, --nz, --axis, --seed and their values
  ASSERT_EQ(old.front(), "--rank");
  const WorkerArgs j = parse(old);
  EXPECT_EQ(j.app, WorkerApp::jacobi2d);
  EXPECT_EQ(j.nz, 1);
}

TEST(NvshmemProto, ToleranceCrossesTheCommandLineExactly) {
  // The stop test compares against tol: the worker must get the parent's float bit for bit.
  for (float tol : {1.0e-8f, 0.05f, 1.0f / 3.0f, std::numeric_limits<float>::denorm_min(),
                    std::numeric_limits<float>::max(), 0.0f}) {
    WorkerArgs a = sample_args();
    a.tol = tol;
    EXPECT_EQ(parse(to_args(a)).tol, tol) << tol;
  }
}

TEST(NvshmemProto, BadArgumentsAreNamed) {
  auto expect_bad = [](std::vector<std::string> args, const std::string& needle) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted; expected an error naming '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  std::vector<std::string> good = to_args(sample_args());
  std::vector<std::string> no_out(good.begin(), good.end() - 4);  // drops --out and --timeout
  no_out.insert(no_out.end(), good.end() - 2, good.end());
  expect_bad(no_out, "--out");
  auto with = [&](const std::string& opt, const std::string& v) {
    std::vector<std::string> a = good;
    for (std::size_t i = 0; i + 1 < a.size(); ++i)
      if (a[i] == opt) a[i + 1] = v;
    return a;
  };
  expect_bad(with("--rank", "4"), "--rank 4");
  expect_bad(with("--tol", "fast"), "--tol");
  expect_bad(with("--tol", "nan"), "--tol");
  expect_bad(with("--nx", "2"), "--nx");
  expect_bad(with("--nccheck", "0"), "--nccheck");
  expect_bad(with("--app", "heat2d"), "--app 'heat2d'");
  expect_bad(with("--axis", "w"), "--axis");
  std::vector<std::string> heat = with("--app", "heat3d");
  for (std::size_t i = 0; i + 1 < heat.size(); ++i)
    if (heat[i] == "--nz") heat[i + 1] = "2";
  expect_bad(heat, "--nz 2");
}

// ---- result file -----------------------------------------------------------------------------

TEST(NvshmemProto, ResultFileRoundTrip) {
  Scratch s;
  const WorkerResult w = fake_result(7, 9, 3, 1, {0.5, 0.25}, 12);
  write_result(s.file("r.bin"), w);
  EXPECT_FALSE(fs::exists(s.file("r.bin.tmp")));  // written through a rename
  const WorkerResult r = read_result(s.file("r.bin"));
  EXPECT_EQ(r.rank, w.rank);
  EXPECT_EQ(r.ranks, w.ranks);
  EXPECT_EQ(r.device, w.device);
  EXPECT_EQ(r.nx, w.nx);
  EXPECT_EQ(r.ny, w.ny);
  EXPECT_EQ(r.first_row, w.first_row);
  EXPECT_EQ(r.chunk, w.chunk);
  EXPECT_EQ(r.norm, w.norm);
  EXPECT_EQ(r.seconds, w.seconds);
  EXPECT_EQ(r.iterations, w.iterations);
  EXPECT_EQ(r.rows, w.rows);
  EXPECT_EQ(r.nz, 1);
  // The documented layout: header 88 bytes, 12 per rep, 4 per cell.
  EXPECT_EQ(fs::file_size(s.file("r.bin")), 88u + 2 * 12 + w.rows.size() * 4);
  // A 3D box: nz and the box's cells come back (NaN halos bit for bit).
  const std::int64_t n[3] = {7, 6, 9};
  const WorkerResult b = fake_box_result(n, Axis::z, 2, 2, 1, {0.5}, 3);
  write_result(s.file("b.bin"), b);
  const WorkerResult rb = read_result(s.file("b.bin"));
  EXPECT_EQ(rb.nz, 9);
  EXPECT_EQ(rb.first_row, b.first_row);
  EXPECT_EQ(rb.chunk, b.chunk);
  ASSERT_EQ(rb.rows.size(), b.rows.size());
  EXPECT_EQ(std::memcmp(rb.rows.data(), b.rows.data(), b.rows.size() * sizeof(float)), 0);
  EXPECT_EQ(fs::file_size(s.file("b.bin")), 88u + 12 + b.rows.size() * 4);
}

TEST(NvshmemProto, MalformedResultFilesAreRejectedWithTheirPath) {
  Scratch s;
  write_result(s.file("r.bin"), fake_result(7, 9, 3, 1, {0.5}, 12));
  std::string bytes;
  {
    std::ifstream f(s.file("r.bin"), std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  }
  auto expect_rejected = [&](const std::string& content, const std::string& needle) {
    {
      std::ofstream f(s.file("bad.bin"), std::ios::binary | std::ios::trunc);
      f << content;
    }
    try {
      read_result(s.file("bad.bin"));
      ADD_FAILURE() << "accepted; expected '" << needle << "'";
    } catch (const gpsm::Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(s.file("bad.bin")), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  expect_rejected(bytes.substr(0, bytes.size() - 4), "expected");   // one cell short
  expect_rejected(bytes + "x", "expected");                         // one byte long
  expect_rejected(bytes.substr(0, 40), "header");
  expect_rejected("GPSMNVJ2" + bytes.substr(8), "magic");
  EXPECT_THROW(read_result(s.file("missing.bin")), gpsm::Error);
}

// ---- gather ----------------------------------------------------------------------------------

TEST(NvshmemProto, GatherPlacesEveryRanksRowsAndTakesTheSlowestRank) {
  const std::int64_t nx = 6, ny = 12;
  const int ranks = 3;
  std::vector<WorkerResult> rs;
  for (int r = 0; r < ranks; ++r) rs.push_back(fake_result(nx, ny, ranks, r, {1.0 + r, 3.0 - r}, 10));
  const GatheredRun g = gather_results(rs, nx, ny, 2);
  EXPECT_EQ(g.iterations, 10);
  ASSERT_EQ(g.sec_per_iter.size(), 2u);
  EXPECT_DOUBLE_EQ(g.sec_per_iter[0], 3.0 / 10);  // rank 2 slowest in rep 1
  EXPECT_DOUBLE_EQ(g.sec_per_iter[1], 3.0 / 10);  // rank 0 slowest in rep 2
  ASSERT_EQ(g.grid.size(), static_cast<std::size_t>(nx * ny));
  for (std::int64_t iy = 0; iy < ny; ++iy)
    for (std::int64_t c = 0; c < nx; ++c) {
      const float want = (iy == 0 || iy == ny - 1) ? 0.0f : static_cast<float>(iy * 1000 + c);
      EXPECT_EQ(g.grid[iy * nx + c], want) << iy << "," << c;
    }
}

TEST(NvshmemProto, GatherRejectsResultsThatDoNotFit) {
  const std::int64_t nx = 6, ny = 12;
  auto three = [&] {
    std::vector<WorkerResult> rs;
    for (int r = 0; r < 3; ++r) rs.push_back(fake_result(nx, ny, 3, r, {1.0}, 10));
    return rs;
  };
  auto expect_bad = [&](std::vector<WorkerResult> rs, const std::string& needle) {
    try {
      gather_results(rs, nx, ny, 1);
      ADD_FAILURE() << "accepted; expected '" << needle << "'";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto rs = three();
  rs[1].iterations[0] = 9;  // PEs that stopped at different iterations
  expect_bad(rs, "rank 1 reported 9 iterations");
  rs = three();
  std::swap(rs[0], rs[2]);
  expect_bad(rs, "rank 0 reported rank 2");
  rs = three();
  rs[2].first_row += 1;
  expect_bad(rs, "rank 2 reported rows");
  rs = three();
  rs[0].seconds = {1.0, 2.0};
  rs[0].iterations = {10, 10};
  expect_bad(rs, "2 timed reps, not 1");
  rs = three();
  rs[1].seconds[0] = 0;
  expect_bad(rs, "loop time");
}

TEST(NvshmemProto, Gather3DFillsTheGlobalBoxFromEveryRanksBox) {
  const std::int64_t n[3] = {10, 11, 12};  // wave3d's 3 ranks still own 2 planes each along x
  for (int radius : {1, 2})
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      for (int ranks : {1, 2, 3}) {
        SCOPED_TRACE(std::to_string(radius) + " " + axis_name(axis) + " " + std::to_string(ranks));
        std::vector<WorkerResult> rs;
        for (int r = 0; r < ranks; ++r) rs.push_back(fake_box_result(n, axis, radius, ranks, r, {1.0 + r, 2.0}, 7));
        const GatheredRun g = gather_stencil3d_results(rs, n, axis, radius, 2);
        EXPECT_EQ(g.iterations, 7);
        ASSERT_EQ(g.sec_per_iter.size(), 2u);
        EXPECT_DOUBLE_EQ(g.sec_per_iter[0], (1.0 + ranks - 1) / 7);
        ASSERT_EQ(g.grid.size(), static_cast<std::size_t>(n[0] * n[1] * n[2]));
        int wrong = 0;
        for (std::size_t i = 0; i < g.grid.size(); ++i) wrong += g.grid[i] != static_cast<float>(i);  // NaN too
        EXPECT_EQ(wrong, 0);
      }
}

TEST(NvshmemProto, Gather3DRejectsBoxesThatDoNotFit) {
  const std::int64_t n[3] = {7, 11, 10};
  auto three = [&] {
    std::vector<WorkerResult> rs;
    for (int r = 0; r < 3; ++r) rs.push_back(fake_box_result(n, Axis::y, 2, 3, r, {1.0}, 5));
    return rs;
  };
  auto expect_bad = [&](std::vector<WorkerResult> rs, const std::string& needle) {
    try {
      gather_stencil3d_results(rs, n, Axis::y, 2, 1);
      ADD_FAILURE() << "accepted; expected '" << needle << "'";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto rs = three();
  rs[1].first_row += 1;
  expect_bad(rs, "rank 1 reported planes");
  rs = three();
  rs[2].rows.pop_back();
  expect_bad(rs, "rank 2 reported");
  rs = three();
  rs[0].nz = 1;  // a jacobi2d result
  expect_bad(rs, "a 7x11x1 box");
  rs = three();
  rs[2].iterations[0] = 4;
  expect_bad(rs, "rank 2 reported 4 iterations");
  // the same results split along z do not fit a split along y
  rs.clear();
  for (int r = 0; r < 3; ++r) rs.push_back(fake_box_result(n, Axis::z, 2, 3, r, {1.0}, 5));
  expect_bad(rs, "reported");
}

TEST(NvshmemProto, LinkBytesCountHaloRowsAndNormPartials) {
  Problem p;
  p.n[0] = 200;
  p.n[1] = 131;
  p.nccheck = 3;
  EXPECT_EQ(nvshmem_link_bytes_per_iter(p, 1), 0.0);
  EXPECT_DOUBLE_EQ(nvshmem_link_bytes_per_iter(p, 2), 2.0 * 2 * 198 * 4 + 2.0 * 1 * 4 / 3);
  EXPECT_DOUBLE_EQ(nvshmem_link_bytes_per_iter(p, 4), 2.0 * 4 * 198 * 4 + 4.0 * 3 * 4 / 3);
  // heat3d / wave3d: p2p_inline's count, the interior cells of `radius` planes each way per
  // boundary (planes across y are x by z: 23 x 25 cells, 19 x 21 interior for radius 2).
  Problem q;
  q.n[0] = 23;
  q.n[1] = 21;
  q.n[2] = 25;
  q.axis = Axis::y;
  EXPECT_EQ(nvshmem_link_bytes_per_iter(q, 1, WorkerApp::wave3d), 0.0);
  EXPECT_EQ(nvshmem_link_bytes_per_iter(q, 2, WorkerApp::wave3d), 2.0 * 2 * 19 * 21 * 4);
  EXPECT_EQ(nvshmem_link_bytes_per_iter(q, 3, WorkerApp::heat3d), 2.0 * 2 * 1 * 21 * 23 * 4);
  EXPECT_EQ(nvshmem_link_bytes_per_iter(q, 2, WorkerApp::wave3d), slab3d_halo_bytes(q.n, Axis::y, 2, 2, false));
}

// ---- unique-ID file --------------------------------------------------------------------------

TEST(NvshmemProto, UniqueIdFileHandOver) {
  Scratch s;
  const std::string id(128, '\x5a');
  write_file_atomic(s.file("uid"), id);
  EXPECT_EQ(wait_for_file(s.file("uid"), 128, 1.0), id);
  EXPECT_THROW(wait_for_file(s.file("uid"), 64, 1.0), gpsm::Error);  // a wrong file, not a partial one
  const auto t0 = std::chrono::steady_clock::now();
  try {
    wait_for_file(s.file("never"), 128, 0.2);
    ADD_FAILURE() << "returned without the file";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not appear"), std::string::npos) << e.what();
  }
  EXPECT_LT(seconds_of(t0), 5.0);
}

// ---- child group -----------------------------------------------------------------------------

TEST(ChildGroup, AllSucceedWithTheirEnvironment) {
  Scratch s;
  EnvVar keep("GPSM_CHILD_TEST_KEEP", "kept");
  EnvVar over("GPSM_CHILD_TEST_OVER", "old");
  gpsm::ChildGroup g;
  for (int r = 0; r < 3; ++r) {
    gpsm::ChildSpec c;
    c.name = "child " + std::to_string(r);
    c.exe = "/bin/sh";
    c.args = {"-c", "echo \"$GPSM_CHILD_TEST_KEEP $GPSM_CHILD_TEST_OVER $0\"", std::to_string(r)};
    c.env = {{"GPSM_CHILD_TEST_OVER", "new"}};
    c.log_file = s.file("c" + std::to_string(r) + ".log");
    g.spawn(c);
  }
  const gpsm::GroupResult res = g.wait_all(30);
  EXPECT_TRUE(res.ok) << res.reason;
  EXPECT_EQ(gpsm::log_tail(s.file("c2.log")), "kept new 2");
}

TEST(ChildGroup, FirstFailureKillsTheOthersAndShowsItsOutput) {
  Scratch s;
  gpsm::ChildGroup g;
  gpsm::ChildSpec hang{"sleeper", "/bin/sh", {"-c", "sleep 60"}, {}, s.file("a.log")};
  gpsm::ChildSpec fail{"rank 1", "/bin/sh", {"-c", "echo starting; echo 'cannot reach PE 0' >&2; exit 3"}, {}, s.file("b.log")};
  g.spawn(hang);
  g.spawn(fail);
  const auto t0 = std::chrono::steady_clock::now();
  const gpsm::GroupResult res = g.wait_all(60);
  EXPECT_LT(seconds_of(t0), 10.0);  // not the sleeper's 60 s
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.reason.find("rank 1 exited with code 3"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("starting | cannot reach PE 0"), std::string::npos) << res.reason;
}

TEST(ChildGroup, TimeoutKillsEveryoneAndNamesThem) {
  Scratch s;
  gpsm::ChildGroup g;
  g.spawn({"rank 0", "/bin/sh", {"-c", "echo waiting for PE 1; sleep 60"}, {}, s.file("a.log")});
  g.spawn({"rank 1", "/bin/sh", {"-c", "sleep 60"}, {}, s.file("b.log")});
  const auto t0 = std::chrono::steady_clock::now();
  const gpsm::GroupResult res = g.wait_all(0.3);
  EXPECT_LT(seconds_of(t0), 10.0);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.reason.find("timed out after 0.3 s"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("rank 0: waiting for PE 1"), std::string::npos) << res.reason;
  EXPECT_NE(res.reason.find("rank 1 (no output)"), std::string::npos) << res.reason;
}

TEST(ChildGroup, SignalsAndMissingExecutablesAreFailures) {
  Scratch s;
  {
    gpsm::ChildGroup g;
    g.spawn({"crasher", "/bin/sh", {"-c", "kill -SEGV $$"}, {}, s.file("a.log")});
    const gpsm::GroupResult res = g.wait_all(30);
    EXPECT_FALSE(res.ok);
    EXPECT_NE(res.reason.find("crasher was killed by signal 11"), std::string::npos) << res.reason;
  }
  {
    gpsm::ChildGroup g;
    bool threw = false;
    try {
      g.spawn({"ghost", s.file("no-such-worker"), {}, {}, s.file("b.log")});
    } catch (const gpsm::Error& e) {
      threw = true;  // glibc reports the failed exec from posix_spawn
      EXPECT_NE(std::string(e.what()).find("ghost"), std::string::npos) << e.what();
    }
    if (!threw) {  // or the child exits 127
      const gpsm::GroupResult res = g.wait_all(30);
      EXPECT_FALSE(res.ok);
      EXPECT_NE(res.reason.find("127"), std::string::npos) << res.reason;
    }
  }
}

TEST(ChildGroup, LogTailKeepsTheLastLinesOnOneLine) {
  Scratch s;
  {
    std::ofstream f(s.file("l.log"));
    for (int i = 0; i < 500; ++i) f << "line " << i << "\n";
  }
  const std::string t = gpsm::log_tail(s.file("l.log"), 40);
  EXPECT_EQ(t.rfind("... ", 0), 0u) << t;
  EXPECT_NE(t.find("line 499"), std::string::npos) << t;
  EXPECT_EQ(t.find('\n'), std::string::npos) << t;
  EXPECT_LE(t.size(), 40u + 4 + 3 * 10);
  EXPECT_EQ(gpsm::log_tail(s.file("none.log")), "");
}

// ---- the parent path of run_nvshmem with fake workers ----------------------------------------

namespace {

RunRequest fake_request(int gpus) {
  RunRequest r;
  r.paradigm = Paradigm::nvshmem;
  for (int g = 0; g < gpus; ++g) r.devices.push_back(g);
  r.problem.n[0] = 10;
  r.problem.n[1] = 9;
  r.problem.iters = 12;
  r.problem.nccheck = 3;
  r.reps = 2;
  r.warmup = 1;
  return r;
}

// A worker that checks the environment gpsm must give it, then copies the result prepared for
// its rank to the --out path it was given.
std::string fake_worker(const Scratch& s) {
  const std::string w = s.file("fake-worker");
  write_script(w,
               "[ \"$NVSHMEM_DISABLE_NVLS\" = 1 ] || { echo 'NVLS not disabled' >&2; exit 9; }\n"
               "[ \"$NCCL_NVLS_ENABLE\" = 0 ] || { echo 'NCCL NVLS not disabled' >&2; exit 9; }\n"
               "while [ $# -gt 0 ]; do case $1 in --out) out=$2; shift 2;; --rank) rank=$2; shift 2;; "
               "*) shift;; esac; done\n"
               "cp \"" + s.dir.string() + "/prepared$rank.bin\" \"$out\"\n");
  return w;
}

}  // namespace

TEST(NvshmemParent, GathersWhatFakeWorkersHandBack) {
  Scratch s;
  const RunRequest req = fake_request(3);
  for (int r = 0; r < 3; ++r)
    write_result(s.file("prepared" + std::to_string(r) + ".bin"), fake_result(10, 9, 3, r, {0.012, 0.024}, 12));
  EnvVar worker("GPSM_NVSHMEM_WORKER", fake_worker(s).c_str());
  EnvVar nvls("NVSHMEM_DISABLE_NVLS", "0");  // the user's 0 must not reach the workers
  const NvshmemRun run = run_nvshmem(req);
  EXPECT_EQ(run.gathered.iterations, 12);
  ASSERT_EQ(run.gathered.sec_per_iter.size(), 2u);
  EXPECT_DOUBLE_EQ(run.gathered.sec_per_iter[1], 0.024 / 12);
  EXPECT_EQ(run.gathered.grid[1 * 10 + 3], 1003.0f);
  EXPECT_EQ(run.gathered.grid[7 * 10 + 9], 7009.0f);
  EXPECT_EQ(run.link_bytes_per_iter, nvshmem_link_bytes_per_iter(req.problem, 3));
}

TEST(NvshmemParent, GathersA3DBoxFromFakeWorkersGivenTheApp) {
  Scratch s;
  RunRequest req = fake_request(3);
  req.problem.n[0] = 9;
  req.problem.n[1] = 8;
  req.problem.n[2] = 13;
  req.problem.axis = Axis::z;
  for (int r = 0; r < 3; ++r)
    write_result(s.file("prepared" + std::to_string(r) + ".bin"),
                 fake_box_result(req.problem.n, Axis::z, 2, 3, r, {0.012, 0.024}, 12));
  // the worker must be told the app, the third extent, the axis and the seed
  const std::string w = s.file("fake-3d-worker");
  write_script(w,
               "case \"$*\" in *'--app wave3d --nz 13 --axis z --seed 1 '*) ;; *) echo \"bad args: $*\" >&2; exit 9;; esac\n"
               "exec \"" + fake_worker(s) + "\" \"$@\"\n");
  EnvVar worker("GPSM_NVSHMEM_WORKER", w.c_str());
  const NvshmemRun run = run_nvshmem(req, WorkerApp::wave3d);
  EXPECT_EQ(run.gathered.iterations, 12);
  ASSERT_EQ(run.gathered.grid.size(), 9u * 8 * 13);
  for (std::size_t i = 0; i < run.gathered.grid.size(); ++i) ASSERT_EQ(run.gathered.grid[i], static_cast<float>(i)) << i;
  EXPECT_EQ(run.link_bytes_per_iter, slab3d_halo_bytes(req.problem.n, Axis::z, 2, 3, false));
}

TEST(NvshmemParent, AFailingWorkerFailsTheRunWithItsMessage) {
  Scratch s;
  const std::string w = s.file("failing-worker");
  write_script(w,
               "case \"$*\" in *'--rank 1 '*) echo 'PE 1 cannot reach PE 0 by peer-to-peer' >&2; exit 1;; esac\n"
               "sleep 60\n");
  EnvVar worker("GPSM_NVSHMEM_WORKER", w.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  try {
    run_nvshmem(fake_request(3));
    ADD_FAILURE() << "the run succeeded";
  } catch (const gpsm::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 (device 1) exited with code 1"), std::string::npos) << what;
    EXPECT_NE(what.find("cannot reach PE 0"), std::string::npos) << what;
  }
  EXPECT_LT(seconds_of(t0), 30.0);
}

TEST(NvshmemParent, AHangingRunIsKilledAtTheTimeout) {
  Scratch s;
  const std::string w = s.file("hanging-worker");
  write_script(w, "echo 'waiting in nvshmem_barrier_all'; sleep 60\n");
  EnvVar worker("GPSM_NVSHMEM_WORKER", w.c_str());
  EnvVar timeout("GPSM_NVSHMEM_TIMEOUT_S", "1");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    run_nvshmem(fake_request(2));
    ADD_FAILURE() << "the run succeeded";
  } catch (const gpsm::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("timed out after 1 s"), std::string::npos) << what;
    EXPECT_NE(what.find("waiting in nvshmem_barrier_all"), std::string::npos) << what;
  }
  EXPECT_LT(seconds_of(t0), 20.0);
}

TEST(NvshmemParent, WorkerLookupAndTimeoutSettingsFailClearly) {
  {
    EnvVar worker("GPSM_NVSHMEM_WORKER", "/nonexistent/gpsm-nvshmem-stencil");
    try {
      find_nvshmem_worker();
      ADD_FAILURE() << "found a worker that does not exist";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find("GPSM_NVSHMEM_WORKER"), std::string::npos) << e.what();
    }
  }
  {
    EnvVar worker("GPSM_NVSHMEM_WORKER", nullptr);
    // the test binary's folder has no worker: the message says where it looked and what to do
    if (!fs::exists(fs::read_symlink("/proc/self/exe").parent_path() / kNvshmemWorkerName)) {
      try {
        find_nvshmem_worker();
        ADD_FAILURE() << "found a worker";
      } catch (const gpsm::Error& e) {
        EXPECT_NE(std::string(e.what()).find("gpsm_nvshmem_stencil"), std::string::npos) << e.what();
      }
    }
  }
  {
    EnvVar t("GPSM_NVSHMEM_TIMEOUT_S", "soon");
    EXPECT_THROW(nvshmem_timeout_s(), gpsm::Error);
  }
  {
    EnvVar t("GPSM_NVSHMEM_TIMEOUT_S", nullptr);
    EXPECT_EQ(nvshmem_timeout_s(), kNvshmemDefaultTimeoutS);
  }
}

TEST(NvshmemParent, WorkerEnvironmentKeepsMulticastOffAndTheUsersChoices) {
  EnvVar nvls("NVSHMEM_DISABLE_NVLS", "0");
  EnvVar transport("NVSHMEM_REMOTE_TRANSPORT", "ibrc");
  EnvVar ifname("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", nullptr);
  const auto env = nvshmem_worker_env();
  auto value = [&](const std::string& k) -> std::string {
    for (const auto& kv : env)
      if (kv.first == k) return kv.second;
    return "<unset>";
  };
  EXPECT_EQ(value("NVSHMEM_DISABLE_NVLS"), "1");
  EXPECT_EQ(value("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(value("NVSHMEM_REMOTE_TRANSPORT"), "<unset>");  // the user's ibrc is inherited
  EXPECT_EQ(value("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME"), "lo");
}
