// The host side of CG's nvshmem paradigms (nvshmem_std, nvshmem_pipe), without a GPU: the
// worker's command line and result file round trips, the gather of every rank's result into the
// run's solve (rows against the parent's split, histories equal bit for bit, slowest rank's time),
// and the parent path of run_cg_nvshmem driven by fake workers (shell scripts handing back
// prepared results, or failing).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/cg/cg_nvshmem_run.hpp"
#include "apps/cg/cg_worker_proto.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/rank_solves.hpp"
#include "apps/stencil/nvshmem_launch.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::cg;
namespace fs = std::filesystem;

namespace {

struct Scratch {
  fs::path dir;
  Scratch() {
    std::string t = (fs::temp_directory_path() / "gpsm-cg-nvshmem-test-XXXXXX").string();
    if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = t;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& n) const { return (dir / n).string(); }
};

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

void write_script(const std::string& path, const std::string& body) {
  {
    std::ofstream f(path);
    f << "#!/bin/sh\n" << body;
  }
  fs::permissions(path, fs::perms::owner_all);
}

std::vector<const char*> argv_of(const std::vector<std::string>& args) {
  static const char* prog = "gpsm-nvshmem-cg";
  std::vector<const char*> v{prog};
  for (const auto& s : args) v.push_back(s.c_str());
  return v;
}

CgWorkerArgs parse(const std::vector<std::string>& args) {
  const auto v = argv_of(args);
  return parse_cg_worker_args(static_cast<int>(v.size()), v.data());
}

CgWorkerArgs sample_args() {
  CgWorkerArgs a;
  a.variant = Variant::pipelined;
  a.matrix = "banded:1000:7@nnz@tol=1e-6";
  a.spmv = "sell";
  a.values = "f32";
  a.index = "i16";
  a.rows_per_thread = "2";
  a.iters = 300;
  a.rank = 2;
  a.ranks = 3;
  a.device = 5;
  a.warmup = 1;
  a.reps = 4;
  a.uid_file = "/tmp/x/uid";
  a.out_file = "/tmp/x/rank2.bin";
  a.timeout_s = 33;
  return a;
}

// The parent's split of a 7 x 5 Poisson matrix (35 rows) over 3 GPUs: 12, 12, 11 rows.
Plan uneven_plan() {
  const Matrix a = load(parse_spec("poisson2d:7x5"));
  return make_plan(a, split_rows(a.n, 3));
}

// What rank r of `plan` would report: `iters` iterations in every rep, history 1, 1/2, ...,
// x_i = global row i.
CgWorkerResult fake_result(const Plan& plan, int r, const std::vector<double>& secs, int iters) {
  CgWorkerResult w;
  w.rank = r;
  w.ranks = plan.ranks;
  w.device = r;
  w.row_begin = plan.rank[r].rows.begin;
  w.rows = plan.rank[r].local_rows();
  w.seconds = secs;
  w.iterations.assign(secs.size(), iters);
  w.last_iterations = iters;
  for (int k = 0; k <= iters; ++k) w.rho.push_back(1.0 / (k + 1));
  for (std::int64_t i = 0; i < w.rows; ++i) w.x.push_back(static_cast<double>(w.row_begin + i));
  return w;
}

std::vector<CgWorkerResult> fake_results(const Plan& plan) {
  std::vector<CgWorkerResult> v;
  for (int r = 0; r < plan.ranks; ++r) v.push_back(fake_result(plan, r, {0.010 + r * 0.001, 0.020}, 9));
  return v;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << part << "'";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

// ---- command line ----------------------------------------------------------------------------

TEST(CgNvshmemProto, CommandLineRoundTrips) {
  const CgWorkerArgs a = sample_args();
  const CgWorkerArgs b = parse(to_args(a));
  EXPECT_EQ(b.variant, Variant::pipelined);
  EXPECT_EQ(b.matrix, a.matrix);
  EXPECT_EQ(b.spmv, "sell");
  EXPECT_EQ(b.values, "f32");
  EXPECT_EQ(b.index, "i16");
  EXPECT_EQ(b.rows_per_thread, "2");
  EXPECT_EQ(b.iters, 300);
  EXPECT_EQ(b.rank, 2);
  EXPECT_EQ(b.ranks, 3);
  EXPECT_EQ(b.device, 5);
  EXPECT_EQ(b.warmup, 1);
  EXPECT_EQ(b.reps, 4);
  EXPECT_EQ(b.uid_file, a.uid_file);
  EXPECT_EQ(b.out_file, a.out_file);
  EXPECT_EQ(b.timeout_s, 33);
  CgWorkerArgs s = a;
  s.variant = Variant::standard;
  s.spmv.clear();  // automatic: "auto" on the command line, empty again after parsing
  const auto args = to_args(s);
  EXPECT_NE(std::find(args.begin(), args.end(), "auto"), args.end());
  const CgWorkerArgs t = parse(args);
  EXPECT_EQ(t.variant, Variant::standard);
  EXPECT_EQ(t.spmv, "");
}

TEST(CgNvshmemProto, BadCommandLinesAreRefusedByName) {
  auto with = [](const std::string& opt, const std::string& val) {
    auto args = to_args(sample_args());
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == opt) args[i + 1] = val;
    return args;
  };
  auto refused = [](const std::vector<std::string>& args, const std::string& part) {
    try {
      parse(args);
      ADD_FAILURE() << "accepted; expected a refusal naming '" << part << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused(with("--variant", "cg"), "--variant 'cg'");
  refused(with("--rank", "3"), "--rank 3 outside [0, 3)");
  refused(with("--reps", "0"), "--reps");
  refused(with("--matrix", ""), "--matrix");
  auto missing = to_args(sample_args());
  missing.erase(missing.begin(), missing.begin() + 2);  // no --variant
  refused(missing, "--variant");
}

// ---- result file -----------------------------------------------------------------------------

TEST(CgNvshmemProto, ResultFileRoundTripsAndRejectsDamage) {
  Scratch s;
  const Plan plan = uneven_plan();
  CgWorkerResult w = fake_result(plan, 2, {0.5, 0.25, 0.125}, 6);
  w.rho[3] = std::numeric_limits<double>::quiet_NaN();  // a poisoned history survives as it is
  const std::string f = s.file("r.bin");
  write_cg_result(f, w);
  const CgWorkerResult r = read_cg_result(f);
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(r.ranks, 3);
  EXPECT_EQ(r.device, 2);
  EXPECT_EQ(r.row_begin, 24);
  EXPECT_EQ(r.rows, 11);
  EXPECT_EQ(r.seconds, w.seconds);
  EXPECT_EQ(r.iterations, w.iterations);
  EXPECT_EQ(r.last_iterations, 6);
  ASSERT_EQ(r.rho.size(), 7u);
  EXPECT_TRUE(std::isnan(r.rho[3]));
  EXPECT_EQ(r.rho[6], w.rho[6]);
  EXPECT_EQ(r.x, w.x);
  // one byte short, one byte long, another magic
  std::string bytes;
  {
    std::ifstream in(f, std::ios::binary);
    bytes.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  auto rewrite = [&](const std::string& b) {
    std::ofstream out(f, std::ios::binary | std::ios::trunc);
    out << b;
  };
  rewrite(bytes.substr(0, bytes.size() - 1));
  expect_error([&] { read_cg_result(f); }, "bytes, expected");
  rewrite(bytes + "x");
  expect_error([&] { read_cg_result(f); }, "bytes, expected");
  std::string other = bytes;
  other[7] = 'J';
  rewrite(other);
  expect_error([&] { read_cg_result(f); }, "bad magic");
  expect_error([&] { read_cg_result(s.file("missing.bin")); }, "cannot open");
  // the writer refuses a result whose history does not match its count
  CgWorkerResult bad = w;
  bad.rho.pop_back();
  expect_error([&] { write_cg_result(s.file("bad.bin"), bad); }, "inconsistent");
}

// ---- gather ----------------------------------------------------------------------------------

TEST(CgNvshmemGather, AssemblesXInRowOrderAndTakesTheSlowestRank) {
  const Plan plan = uneven_plan();
  const CgGathered g = gather_cg_results(fake_results(plan), plan, 9, 2);
  EXPECT_EQ(g.solve.iterations, 9);
  ASSERT_EQ(g.solve.rho.size(), 10u);
  EXPECT_EQ(g.solve.rho[9], 0.1);
  ASSERT_EQ(g.solve.x.size(), 35u);
  for (std::size_t i = 0; i < g.solve.x.size(); ++i) EXPECT_EQ(g.solve.x[i], static_cast<double>(i)) << i;
  ASSERT_EQ(g.sec_per_iter.size(), 2u);
  EXPECT_DOUBLE_EQ(g.sec_per_iter[0], 0.012 / 9);  // rank 2's
  EXPECT_DOUBLE_EQ(g.sec_per_iter[1], 0.020 / 9);
}

TEST(CgNvshmemGather, EveryDisagreementFailsNamingTheRank) {
  const Plan plan = uneven_plan();
  {  // one bit of one history entry
    auto v = fake_results(plan);
    v[1].rho[4] = std::nextafter(v[1].rho[4], 1.0);
    expect_error([&] { gather_cg_results(v, plan, 9, 2); }, "GPU 1's residual history differs");
  }
  {  // another split (another matrix or @nnz on one side only)
    auto v = fake_results(plan);
    v[2].row_begin = 23;
    expect_error([&] { gather_cg_results(v, plan, 9, 2); }, "rank 2 reported rows 23+11, not 24+11");
  }
  {  // results out of rank order
    auto v = fake_results(plan);
    std::swap(v[0], v[1]);
    expect_error([&] { gather_cg_results(v, plan, 9, 2); }, "rank 0 reported rank 1 of 3");
  }
  {  // a rank stopping at another iteration in one rep
    auto v = fake_results(plan);
    v[2].iterations[0] = 8;
    expect_error([&] { gather_cg_results(v, plan, 9, 2); }, "8 iterations in rep 1, rank 0 9");
  }
  {  // past the cap
    const auto v = fake_results(plan);
    expect_error([&] { gather_cg_results(v, plan, 8, 2); }, "did not record how many iterations");
  }
  {  // too few results, too few reps, a zero time
    auto v = fake_results(plan);
    v.pop_back();
    expect_error([&] { gather_cg_results(v, plan, 9, 2); }, "2 worker results for a split over 3");
    auto w = fake_results(plan);
    expect_error([&] { gather_cg_results(w, plan, 9, 3); }, "2 timed reps, not 3");
    w[1].seconds[1] = 0;
    expect_error([&] { gather_cg_results(w, plan, 9, 2); }, "a solve time of 0 s in rep 2");
  }
}

TEST(CgNvshmemGather, RankSolvesCheckTheirLengths) {
  const Plan plan = uneven_plan();
  std::vector<RankSolve> s(3);
  for (int r = 0; r < 3; ++r) {
    s[r].iterations = 2;
    s[r].rho = {3, 2, 1};
    s[r].x.assign(static_cast<std::size_t>(plan.rank[r].local_rows()), r);
  }
  EXPECT_EQ(combine_rank_solves(plan, 5, s).x[30], 2.0);
  s[1].x.pop_back();
  expect_error([&] { combine_rank_solves(plan, 5, s); }, "GPU 1 returned 11 entries of x for its 12 rows");
  s[1].x.push_back(1);
  s[2].rho.pop_back();
  expect_error([&] { combine_rank_solves(plan, 5, s); }, "GPU 2 returned 2 history entries for 2 iterations");
  s[2].rho.push_back(1);
  s[0].iterations = -1;
  expect_error([&] { combine_rank_solves(plan, 5, s); }, "GPU 0 did not record");
}

// ---- parent ----------------------------------------------------------------------------------

namespace {

RunRequest cg_request(int gpus) {
  RunRequest r;
  r.paradigm = Paradigm::nvshmem_pipe;
  for (int g = 0; g < gpus; ++g) r.devices.push_back(2 * g + 1);
  r.problem.graph = "poisson2d:7x5";
  r.problem.iters = 9;
  r.reps = 2;
  r.warmup = 1;
  return r;
}

}  // namespace

TEST(CgNvshmemParent, WorkerArgumentsCarryTheEntryTheDeviceAndTheSpmvChoice) {
  const RunRequest req = cg_request(3);
  const CgWorkerArgs a = cg_worker_args(req, Variant::standard, 9, 2, "csr");
  EXPECT_EQ(a.matrix, "poisson2d:7x5");
  EXPECT_EQ(a.device, 5);
  EXPECT_EQ(a.rank, 2);
  EXPECT_EQ(a.ranks, 3);
  EXPECT_EQ(a.spmv, "csr");
  EXPECT_EQ(a.iters, 9);
  EXPECT_EQ(a.warmup, 1);
  EXPECT_EQ(a.reps, 2);
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr).spmv, "");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, "auto").spmv, "");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, "f64").values, "f64");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, "auto").values, "");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, nullptr, "4").rows_per_thread, "4");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, nullptr, "auto").rows_per_thread, "");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, nullptr, nullptr, "i32").index, "i32");
  EXPECT_EQ(cg_worker_args(req, Variant::standard, 9, 0, nullptr, nullptr, nullptr, "auto").index, "");
  EXPECT_EQ(a.index, "");
  EXPECT_EQ(a.values, "");
  EXPECT_EQ(a.rows_per_thread, "");
}

TEST(CgNvshmemParent, GathersWhatFakeWorkersHandBack) {
  Scratch s;
  const Plan plan = uneven_plan();
  const auto prepared = fake_results(plan);
  for (int r = 0; r < 3; ++r) write_cg_result(s.file("prepared" + std::to_string(r) + ".bin"), prepared[r]);
  // The worker checks the environment and the arguments gpsm must give it, then copies the result
  // prepared for its rank.
  const std::string w = s.file("fake-cg-worker");
  write_script(w,
               "[ \"$NVSHMEM_DISABLE_NVLS\" = 1 ] || { echo 'NVLS not disabled' >&2; exit 9; }\n"
               "case \"$*\" in *'--variant pipe --matrix poisson2d:7x5 --spmv sell --values auto --index auto --rows-per-thread auto --iters 9 '*) ;; "
               "*) echo \"bad args: $*\" >&2; exit 9;; esac\n"
               "while [ $# -gt 0 ]; do case $1 in --out) out=$2; shift 2;; --rank) rank=$2; shift 2;; "
               "*) shift;; esac; done\n"
               "cp \"" + s.dir.string() + "/prepared$rank.bin\" \"$out\"\n");
  EnvVar worker("GPSM_NVSHMEM_CG_WORKER", w.c_str());
  EnvVar nvls("NVSHMEM_DISABLE_NVLS", "0");  // the user's 0 must not reach the workers
  EnvVar spmv("GPSM_CG_SPMV", "sell");
  const CgGathered g = run_cg_nvshmem(cg_request(3), plan, Variant::pipelined, 9);
  EXPECT_EQ(g.solve.iterations, 9);
  EXPECT_EQ(g.solve.x[34], 34.0);
  EXPECT_DOUBLE_EQ(g.sec_per_iter[0], 0.012 / 9);
}

TEST(CgNvshmemParent, AFailingOrMissingWorkerFailsClearly) {
  Scratch s;
  const Plan plan = uneven_plan();
  const std::string w = s.file("failing-cg-worker");
  write_script(w, "echo 'gpsm-nvshmem-cg pipe rank 1 (device 3): NVSHMEM nvshmemx_init_attr returned 7' >&2; exit 1\n");
  EnvVar worker("GPSM_NVSHMEM_CG_WORKER", w.c_str());
  expect_error([&] { run_cg_nvshmem(cg_request(3), plan, Variant::pipelined, 9); }, "nvshmemx_init_attr returned 7");
  {
    EnvVar missing("GPSM_NVSHMEM_CG_WORKER", "/nonexistent/gpsm-nvshmem-cg");
    expect_error([] { jacobi::find_nvshmem_worker(jacobi::kNvshmemCgWorkerName); }, "GPSM_NVSHMEM_CG_WORKER");
  }
  EnvVar unset("GPSM_NVSHMEM_CG_WORKER", nullptr);
  if (!fs::exists(fs::read_symlink("/proc/self/exe").parent_path() / jacobi::kNvshmemCgWorkerName))
    expect_error([] { jacobi::find_nvshmem_worker(jacobi::kNvshmemCgWorkerName); }, "build the target gpsm_nvshmem_cg");
}
