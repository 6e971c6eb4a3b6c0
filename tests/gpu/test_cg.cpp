// Conjugate gradient on GPUs: every paradigm on 1, 2 and all GPUs, on matrices whose rows do not
// divide evenly, one with a dense row and column, nonzero-balanced splits, and the row-group widths
// of 4, 16 and 32 lanes; each run verified by the app against the CPU reference (residual history
// and solution within 1e-10, the true residual within the gap bound). The checker is shown to catch
// a wrong halo: the `infinite` bound, whose pushes are elided, must disagree with the reference.
// The gps paradigm (r in a GPS array, subscriptions learned by tracking) runs in every one of them,
// and its link bytes are checked against the pages the host predicts it learns; so does gps_pipe
// (w in GPS arrays, the split-phase device fence), which must compute cpu_free_pipe's bits. Every run goes
// through both SpMV layouts (CSR lanes and sliced ELL, GPSM_CG_SPMV) where the rows allow.
// nvshmem_std and nvshmem_pipe (one gpsm-nvshmem-cg worker process per GPU) run in all of them
// too, on fewer GPU counts where a test has several matrices: a launch of the workers costs 2-7 s
// (NVSHMEM's start-up in every process; the 14 tests took 283 s on 2 GPUs and over 450 s on 4 with
// NVSHMEM on every count), and their kernels are cpu_free's, whose every count is checked; in a
// build without NVSHMEM they must say why they are unsupported.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "app_test_util.hpp"
#include "apps/cg/gps_layout.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/sell.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "apps/stencil/nvshmem_launch.hpp"

using namespace gpsm::apps;

namespace {

std::unique_ptr<App> cg_app() { return apptest::nvshmem_app("cg"); }
using apptest::run;

const Paradigm kAll[] = {Paradigm::single,        Paradigm::cpu_ctrl_std, Paradigm::cpu_ctrl_pipe,
                         Paradigm::cpu_free_std,  Paradigm::cpu_free_pipe, Paradigm::nvshmem_std,
                         Paradigm::nvshmem_pipe,  Paradigm::gps,           Paradigm::gps_pipe,
                         Paradigm::infinite};

bool needs_nccl(Paradigm p) { return p == Paradigm::cpu_ctrl_std || p == Paradigm::cpu_ctrl_pipe; }
bool is_nvshmem(Paradigm p) { return p == Paradigm::nvshmem_std || p == Paradigm::nvshmem_pipe; }

// A run this build cannot do: an nccl one on several GPUs without NCCL, an nvshmem one without
// NVSHMEM. It must report unsupported, naming what is missing.
bool unavailable(Paradigm p, int gpus) {
  return (gpus > 1 && needs_nccl(p) && !gpsm::nccl_built()) || (is_nvshmem(p) && !jacobi::nvshmem_built());
}

// GPSM_CG_SPMV for its lifetime: the app reads it at every run (docs/cg.md).
class ForceLayout {
 public:
  explicit ForceLayout(const char* layout) { setenv("GPSM_CG_SPMV", layout, 1); }
  ~ForceLayout() { unsetenv("GPSM_CG_SPMV"); }
  ForceLayout(const ForceLayout&) = delete;
  ForceLayout& operator=(const ForceLayout&) = delete;
};

// The SpMV layout a run reports (its "spmv" choice), or "" when it reports none.
std::string layout_of(const RunOutcome& o) {
  for (const RunChoice& c : o.choices)
    if (c.name == "spmv") return c.value;
  return "";
}

// Whether the matrix of `size` can take the sliced layout (rows short enough: sell.hpp).
bool sliceable(const std::string& size) {
  const cg::Matrix a = cg::load(cg::parse_spec(size));
  return cg::lanes_for(static_cast<double>(a.nnz()) / static_cast<double>(a.n)) <= cg::kSellMaxLanes;
}

// Where the NVSHMEM paradigms run in every_paradigm: on every GPU count, or only on all the GPUs
// (where the halos reach the most peers; the other counts are cpu_free's, the same kernels).
enum class NvshmemOn { every_count, all_gpus };

// Every paradigm on every GPU count for one matrix (the NVSHMEM ones as `nv` says), in both SpMV
// layouts where the matrix allows the sliced one (forced, whatever its padding): both verified
// against the one CPU reference, and with the same error, since both layouts compute the same bits.
void every_paradigm(App& app, const std::string& size, int iters, NvshmemOn nv = NvshmemOn::all_gpus) {
  const bool sell = sliceable(size);
  const std::vector<int> counts = apptest::gpu_counts();
  for (int g : counts)
    for (Paradigm par : kAll) {
      if (par == Paradigm::single && g != 1) continue;
      if (is_nvshmem(par) && nv == NvshmemOn::all_gpus && g != counts.back()) continue;
      double csr_error = 0;
      for (const char* layout : {"csr", "sell"}) {
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size +
                     ", GPSM_CG_SPMV=" + layout);
        const ForceLayout force(layout);
        const RunOutcome o = run(app, par, g, app.problem(size, iters));
        if (unavailable(par, g)) {
          EXPECT_EQ(o.status, RunStatus::unsupported);
          if (is_nvshmem(par)) EXPECT_NE(o.reason.find("NVSHMEM"), std::string::npos) << o.reason;
          continue;
        }
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        const bool csr = std::string(layout) == "csr";
        EXPECT_EQ(layout_of(o), csr || !sell ? "csr" : "sell");
        EXPECT_EQ(o.iterations, iters);
        ASSERT_EQ(o.sec_per_iter.size(), 1u);
        EXPECT_GT(o.sec_per_iter[0], 0.0);
        EXPECT_GT(o.mem_bytes_per_iter, 0.0);
        if (par == Paradigm::infinite && g > 1) {
          // Pushes elided: the history must differ from the reference, or the check proves nothing.
          EXPECT_GT(o.error, 1e-6);
        } else {
          EXPECT_LE(o.error, 1e-10);
          if (csr) csr_error = o.error;
          else EXPECT_EQ(o.error, csr_error);  // the same bits in both layouts
        }
        if (g == 1) EXPECT_EQ(o.link_bytes_per_iter, 0.0);
        else EXPECT_GT(o.link_bytes_per_iter, 0.0);
      }
    }
}

}  // namespace

TEST(CgGpu, PoissonUnevenRows) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  ASSERT_NE(app, nullptr);
  // 1073 rows: no GPU count from 2 to 8 divides them
  every_paradigm(*app, "poisson2d:37x29", 60, NvshmemOn::every_count);
}

// Unforced, the layout follows the padding: a stencil slices, a dense row keeps CSR.
TEST(CgGpu, LayoutFollowsThePadding) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  unsetenv("GPSM_CG_SPMV");
  for (const auto& [size, layout] : {std::pair<std::string, std::string>{"poisson2d:37x29", "sell"},
                                     {"arrow:3001:7", "csr"}, {"poisson27:9x8x7", "csr"}}) {
    SCOPED_TRACE(size);
    const RunOutcome o = run(*app, Paradigm::cpu_free_std, 1, app->problem(size, 20));
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
    EXPECT_LE(o.error, 1e-10);
    EXPECT_EQ(layout_of(o), layout);
  }
  // A bad value is bad input, refused before any work (the CLI exits 2), not a failed run.
  const ForceLayout bad("ell");
  try {
    const RunOutcome o = run(*app, Paradigm::single, 1, app->problem("poisson2d:16", 5));
    ADD_FAILURE() << "GPSM_CG_SPMV=ell was accepted: " << o.reason;
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPSM_CG_SPMV=ell: not a layout"), std::string::npos) << e.what();
  }
}

TEST(CgGpu, DenseRowAndColumn) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  every_paradigm(*app, "arrow:3001:7", 40);      // row 0 holds 3001 entries; every GPU needs x_0
  every_paradigm(*app, "arrow:3001:7@nnz", 40);  // split by nonzeros: row 0 nearly alone
}

TEST(CgGpu, WideRowsAndBandedNonzeroSplit) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  every_paradigm(*app, "poisson27:9x8x7", 30);   // 16 lanes per row
  every_paradigm(*app, "elastic:5x4x3", 30);     // 32 lanes per row
  // b = A.1 of the banded generator is zero away from the first and last 7 rows (its diagonal is the
  // sum of the row's weights), and a Krylov step reaches 7 rows further: 203 rows put every split
  // within 30 iterations' reach, so the halos carry data and eliding them (infinite) must show.
  // (5003 rows left the halos zero for all 30 iterations: infinite matched the reference to 1e-12.)
  every_paradigm(*app, "banded:203:9@nnz", 30);
}

TEST(CgGpu, SeveralRowsPerThread) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  // 1.1 M rows: 2 rows per thread on one GPU (chunks of 512 rows), 1 on two; both layouts. The
  // NVSHMEM paradigms on one GPU only: the only count with several rows a thread.
  for (int g : apptest::gpu_counts())
    for (Paradigm par : {Paradigm::single, Paradigm::cpu_free_std, Paradigm::cpu_free_pipe, Paradigm::cpu_ctrl_pipe,
                         Paradigm::nvshmem_std, Paradigm::nvshmem_pipe, Paradigm::gps, Paradigm::gps_pipe})
      for (const char* layout : {"csr", "sell"}) {
        if ((par == Paradigm::single && g != 1) || unavailable(par, g)) continue;
        if (is_nvshmem(par) && g != 1) continue;
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + layout);
        const ForceLayout force(layout);
        const RunOutcome o = run(*app, par, g, app->problem("poisson2d:1100x1000", 12));
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        EXPECT_EQ(layout_of(o), layout);
        EXPECT_EQ(o.iterations, 12);
        EXPECT_LE(o.error, 1e-10);
      }
}

TEST(CgGpu, ToleranceStopsWhereTheReferenceStops) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  const int g = std::min<int>(2, static_cast<int>(gpstest::all_devices().size()));
  for (Paradigm par : kAll) {
    if ((par == Paradigm::single && g != 1) || unavailable(par, g)) continue;
    SCOPED_TRACE(paradigm_name(par));
    const RunOutcome o = run(*app, par, g, app->problem("poisson2d:30x27@tol=1e-6", 5000));
    ASSERT_EQ(o.status, RunStatus::ok) << o.reason;  // includes: the reference's iteration count
    EXPECT_LT(o.iterations, 5000);
    EXPECT_GT(o.iterations, 10);
  }
}

using apptest::ScopedEnv;  // GPSM_CG_VALUES / GPSM_CG_HOST_THREADS for a scope

std::string choice_of(const RunOutcome& o, const std::string& name) {
  for (const RunChoice& c : o.choices)
    if (c.name == name) return c.value;
  return "";
}

// Values stored as the floats they are or (sliced) as table indices (value_storage.hpp) compute
// the doubles' bits, in both layouts and every kind of kernel (host-launched, persistent, GPS); a
// matrix with a value no float holds and many distinct ones stays double.
TEST(CgGpu, FloatStoredValuesComputeTheDoublesBits) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  for (int g : apptest::gpu_counts())
    for (Paradigm par : {Paradigm::single, Paradigm::cpu_ctrl_pipe, Paradigm::cpu_free_std, Paradigm::cpu_free_pipe,
                         Paradigm::gps, Paradigm::gps_pipe}) {
      if (par == Paradigm::single && g != 1) continue;
      if (unavailable(par, g)) continue;
      for (const char* layout : {"csr", "sell"}) {
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + layout);
        const ForceLayout force(layout);
        double f64_error = -1;
        for (const char* values : {"f64", "f32", "table", "auto"}) {
          const bool csr = std::string(layout) == "csr";
          if (csr && std::string(values) == "table") continue;  // the sliced layout's only
          const ScopedEnv env("GPSM_CG_VALUES", values);
          const RunOutcome o = run(*app, par, g, app->problem("poisson2d:37x29", 40));
          ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
          EXPECT_LE(o.error, 1e-10);
          const std::string want = std::string(values) != "auto" ? values : csr ? "f32" : "table";
          EXPECT_EQ(choice_of(o, "values"), want);
          if (f64_error < 0) f64_error = o.error;
          else EXPECT_EQ(o.error, f64_error);  // the same bits
        }
      }
    }
  const ScopedEnv env("GPSM_CG_VALUES", "auto");
  const RunOutcome o = run(*app, Paradigm::cpu_free_std, 1, app->problem("banded:3001:9", 40));
  ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
  EXPECT_EQ(choice_of(o, "values"), "f64");
}

// 16-bit column deltas (GPSM_CG_INDEX=i16, sell_deltas.hpp) and the value table
// (GPSM_CG_VALUES=table) compute what 32-bit columns and floats compute, to the last bit (the same
// error against the reference), in every kind of kernel that reads the sliced layout:
// host-launched, persistent, NVSHMEM where built (on the grid with the short last slice only: a
// launch of its workers costs seconds), GPS (global columns). A grid whose width is a multiple of
// 32 and one with a short last slice (37 x 29 = 1073 rows); unforced, both take the compressed forms.
static void compressed_forms_compute_the_same_bits(int g) {
  auto app = cg_app();
  const ForceLayout force("sell");
  for (Paradigm par : {Paradigm::single, Paradigm::cpu_ctrl_pipe, Paradigm::cpu_free_std, Paradigm::cpu_free_pipe,
                       Paradigm::nvshmem_std, Paradigm::nvshmem_pipe, Paradigm::gps, Paradigm::gps_pipe})
    for (const std::string size : {"poisson2d:64x48", "poisson2d:37x29"}) {
      if ((par == Paradigm::single && g != 1) || unavailable(par, g)) continue;
      if (is_nvshmem(par) && size != "poisson2d:37x29") continue;
      double plain_error = -1;
      for (const char* index : {"i32", "i16", "auto"})
        for (const char* values : {"f32", "table"}) {
          SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size +
                       ", GPSM_CG_INDEX=" + index + ", GPSM_CG_VALUES=" + values);
          const ScopedEnv ie("GPSM_CG_INDEX", index);
          const ScopedEnv ve("GPSM_CG_VALUES", values);
          const RunOutcome o = run(*app, par, g, app->problem(size, 40));
          ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
          EXPECT_EQ(choice_of(o, "index"), std::string(index) == "auto" ? "i32" : index);  // auto keeps i32 (sell_deltas.cpp)
          EXPECT_EQ(choice_of(o, "values"), values);
          EXPECT_EQ(o.iterations, 40);
          EXPECT_LE(o.error, 1e-10);
          if (plain_error < 0) plain_error = o.error;  // i32, f32: the uncompressed run
          else EXPECT_EQ(o.error, plain_error);
        }
    }
}

TEST(CgGpu, CompressedColumnsAndValueTableComputeTheSameBitsOnOneGpu) {
  GPSM_REQUIRE_GPUS(1);
  compressed_forms_compute_the_same_bits(1);
}

TEST(CgGpu, CompressedColumnsAndValueTableComputeTheSameBitsOnTwoGpus) {
  GPSM_REQUIRE_GPUS(2);
  compressed_forms_compute_the_same_bits(2);
}

// q kept in shared memory between the Standard kernels' phases (GPSM_CG_Q=shared, q_storage.hpp)
// computes the bits q in global memory computes, in cpu_free_std's kernel and gps's, with one slot a
// block (37 x 29: few chunks) and two (400 x 400 at one row a thread: 625 chunks, more than an
// H200's resident blocks), and the run says which it ran.
TEST(CgGpu, QKeptInSharedMemoryComputesTheSameBits) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  const ScopedEnv rows("GPSM_CG_ROWS_PER_THREAD", "1");
  for (int g : apptest::gpu_counts())
    for (Paradigm par : {Paradigm::cpu_free_std, Paradigm::gps})
      for (const std::string size : {"poisson2d:37x29", "poisson2d:400x400"}) {
        if (unavailable(par, g)) continue;
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size);
        double error[2] = {-1, -1};
        for (const char* q : {"global", "shared"}) {
          const ScopedEnv env("GPSM_CG_Q", q);
          const RunOutcome o = run(*app, par, g, app->problem(size, 40));
          ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
          EXPECT_EQ(o.iterations, 40);
          EXPECT_LE(o.error, 1e-10);
          const bool shared = std::string(q) == "shared";
          EXPECT_NE(o.timing.find(shared ? "q kept in shared memory" : "q in global memory (GPSM_CG_Q=global"),
                    std::string::npos)
              << o.timing;
          error[shared ? 1 : 0] = o.error;
        }
        EXPECT_EQ(error[0], error[1]);  // the same bits
      }
}

// The CPU-controlled paradigms driven by a host thread per GPU compute what one thread computes.
TEST(CgGpu, HostThreadPerGpuComputesWhatOneThreadComputes) {
  GPSM_REQUIRE_GPUS(2);
  auto app = cg_app();
  const int all = static_cast<int>(gpstest::all_devices().size());
  for (int g : std::set<int>{2, all})
    for (Paradigm par : {Paradigm::cpu_ctrl_std, Paradigm::cpu_ctrl_pipe})
      for (const std::string size : {"poisson2d:37x29", "arrow:3001:7@tol=1e-6"}) {
        SCOPED_TRACE(std::string(paradigm_name(par)) + " on " + std::to_string(g) + " GPUs, " + size);
        double error[2] = {-1, -1};
        int iterations[2] = {-1, -1};
        for (const char* threads : {"0", "1"}) {
          const ScopedEnv env("GPSM_CG_HOST_THREADS", threads);
          const RunOutcome o = run(*app, par, g, app->problem(size, 200));
          ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
          EXPECT_LE(o.error, 1e-10);
          const bool one = std::string(threads) == "0";
          EXPECT_NE(o.timing.find(one ? "one host thread issues" : "one host thread per GPU"), std::string::npos) << o.timing;
          error[one ? 0 : 1] = o.error;
          iterations[one ? 0 : 1] = o.iterations;
        }
        EXPECT_EQ(error[0], error[1]);
        EXPECT_EQ(iterations[0], iterations[1]);  // under a tolerance, both stop at the same iteration
      }
}

TEST(CgGpu, SingleRefusesMoreGpus) {
  GPSM_REQUIRE_GPUS(2);
  auto app = cg_app();
  const RunOutcome o = run(*app, Paradigm::single, 2, app->problem("poisson2d:16", 5));
  EXPECT_EQ(o.status, RunStatus::unsupported);
  const RunOutcome m = run(*app, Paradigm::memcpy, 2, app->problem("poisson2d:16", 5));
  EXPECT_EQ(m.status, RunStatus::unsupported);
}

// gps: what the runtime counted on the links is what the host predicts from the pages each GPU's
// SpMV reads (one chunk of rows per page, a 32-byte sector per warp and destination, two fence
// rounds), and never less than cpu_free_std's packed halo (page-granular publishing).
TEST(CgGpu, GpsPublishesThePagesTheSpmvReads) {
  GPSM_REQUIRE_GPUS(2);
  auto app = cg_app();
  const int all = static_cast<int>(gpstest::all_devices().size());
  for (const std::string size : {"poisson2d:512", "poisson2d:101x70"})
    for (int g : std::set<int>{2, all}) {
      SCOPED_TRACE(size + " on " + std::to_string(g) + " GPUs");
      const RunOutcome o = run(*app, Paradigm::gps, g, app->problem(size, 20));
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      EXPECT_LE(o.error, 1e-10);
      const cg::Matrix a = cg::load(cg::parse_spec(size));
      const cg::Plan plan = cg::make_plan(a, cg::split_rows(a.n, g));
      const std::uint64_t page = cg::gps_page_bytes(plan);
      EXPECT_EQ(o.link_bytes_per_iter, cg::gps_link_bytes_per_iter(plan, cg::gps_learned_masks(plan, page), page));
      const RunOutcome f = run(*app, Paradigm::cpu_free_std, g, app->problem(size, 20));
      ASSERT_EQ(f.status, RunStatus::ok) << f.reason;
      EXPECT_GE(o.link_bytes_per_iter, f.link_bytes_per_iter);
    }
}

// gps_pipe runs cpu_free_pipe's arithmetic in its order (the chunk partials, the GPU's sum over
// them, the GPUs' in rank order): the same error against the reference to the last digit, the same
// iterations, on uneven rows and a dense row (whose column every GPU reads: no chunk of the other
// GPUs is interior). Its pages carry at least the packed halo: never fewer link bytes. And w's
// pages are learned from the same gathers and stored by the same loop as gps's r, so per update
// it publishes gps's bytes exactly; its one fence round carries two doubles per GPU pair where
// gps's two rounds carry one each: R(R - 1) * 8 bytes fewer.
TEST(CgGpu, GpsPipeComputesWhatCpuFreePipeComputes) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  for (int g : apptest::gpu_counts())
    for (const std::string size : {"poisson2d:37x29", "arrow:3001:7@nnz", "poisson2d:300"}) {
      SCOPED_TRACE("gps_pipe on " + std::to_string(g) + " GPUs, " + size);
      const RunOutcome o = run(*app, Paradigm::gps_pipe, g, app->problem(size, 50));
      const RunOutcome f = run(*app, Paradigm::cpu_free_pipe, g, app->problem(size, 50));
      ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
      ASSERT_EQ(f.status, RunStatus::ok) << f.reason;
      EXPECT_EQ(o.iterations, f.iterations);
      EXPECT_EQ(o.error, f.error);
      if (g > 1) {
        EXPECT_GE(o.link_bytes_per_iter, f.link_bytes_per_iter);
        const RunOutcome s = run(*app, Paradigm::gps, g, app->problem(size, 50));
        ASSERT_EQ(s.status, RunStatus::ok) << s.reason;
        EXPECT_EQ(o.link_bytes_per_iter, s.link_bytes_per_iter - 8.0 * g * (g - 1));
      }
    }
}

// nvshmem_std / nvshmem_pipe run cpu_free_std's / cpu_free_pipe's kernel, one process per GPU:
// the same bits (the same error against the reference, to the last digit), the same iterations,
// the same modelled link and memory bytes. The NVSHMEM worker keeps q in global memory (it takes
// no GPSM_CG_Q), so cpu_free_std is asked for the same here.
TEST(CgGpu, NvshmemComputesWhatCpuFreeComputes) {
  GPSM_REQUIRE_GPUS(1);
  auto app = cg_app();
  if (!jacobi::nvshmem_built()) GTEST_SKIP() << "gpsm built without NVSHMEM";
  for (int g : apptest::gpu_counts())
    for (const auto& [shm, free] : {std::pair{Paradigm::nvshmem_std, Paradigm::cpu_free_std},
                                    std::pair{Paradigm::nvshmem_pipe, Paradigm::cpu_free_pipe}})
      for (const std::string size : {"poisson2d:37x29", "arrow:3001:7@nnz"}) {
        SCOPED_TRACE(std::string(paradigm_name(shm)) + " on " + std::to_string(g) + " GPUs, " + size);
        const ScopedEnv q("GPSM_CG_Q", "global");
        const RunOutcome o = run(*app, shm, g, app->problem(size, 50));
        const RunOutcome f = run(*app, free, g, app->problem(size, 50));
        ASSERT_EQ(o.status, RunStatus::ok) << o.reason;
        ASSERT_EQ(f.status, RunStatus::ok) << f.reason;
        EXPECT_EQ(o.iterations, f.iterations);
        EXPECT_EQ(o.error, f.error);
        EXPECT_EQ(o.link_bytes_per_iter, f.link_bytes_per_iter);
        EXPECT_EQ(o.mem_bytes_per_iter, f.mem_bytes_per_iter);
      }
}
