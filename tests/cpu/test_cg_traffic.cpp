// The CG app's byte counts (link and memory per iteration, per paradigm), the bench table's and
// results file's memory line, and the app as gpsm bench sees it (sizes, paradigms).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "app_named.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/traffic.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/bench_report.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::cg;

TEST(CgTraffic, LinkBytesAreTheHaloAndTheReductions) {
  const Matrix a = poisson2d(37, 29);
  const Plan one = make_plan(a, split_rows(a.n, 1));
  for (Exchange e : {Exchange::none, Exchange::host, Exchange::device, Exchange::elided})
    EXPECT_EQ(link_bytes_per_iter(one, Variant::standard, e), 0.0);
  const Plan three = make_plan(a, split_rows(a.n, 3));
  ASSERT_EQ(three.halo_total(), 37 + 2 * 37 + 37);  // a grid row each way at each of the two cuts
  const double halo = 8.0 * 148, pairs = 6;
  EXPECT_EQ(link_bytes_per_iter(three, Variant::standard, Exchange::device), halo + pairs * 16 * 2);
  EXPECT_EQ(link_bytes_per_iter(three, Variant::pipelined, Exchange::device), halo + pairs * 24);
  EXPECT_EQ(link_bytes_per_iter(three, Variant::standard, Exchange::host), halo + pairs * 8 * 2);
  EXPECT_EQ(link_bytes_per_iter(three, Variant::pipelined, Exchange::host), halo + pairs * 16);
  EXPECT_EQ(link_bytes_per_iter(three, Variant::pipelined, Exchange::elided), pairs * 24);
  EXPECT_EQ(link_bytes_per_iter(three, Variant::standard, Exchange::none), 0.0);
}

TEST(CgTraffic, MemoryBytesModelTheCompulsoryTraffic) {
  const Matrix a = poisson2d(100, 100);
  // CSR's bytes (test_cg_sell.cpp: the sliced layout's).
  // Doubles: float-stored values' bytes are test_cg_values.cpp's.
  const Plan one = make_plan(a, split_rows(a.n, 1), SpmvChoice::csr, ValueChoice::f64);
  const double n = 10000, nnz = static_cast<double>(a.nnz());
  const double matrix = 12 * nnz + 4 * (n + 1);
  EXPECT_EQ(mem_bytes_per_iter(one, Variant::standard, true), matrix + 80 * n);
  EXPECT_EQ(mem_bytes_per_iter(one, Variant::standard, false), matrix + 72 * n);  // x moved into the SpMV
  EXPECT_EQ(mem_bytes_per_iter(one, Variant::pipelined, false), matrix + 96 * n);
  EXPECT_EQ(mem_bytes_per_iter(one, Variant::pipelined, true), matrix + 112 * n);
  // Split: the halo entries and the sent ones add a little; the largest GPU carries about half.
  const Plan two = make_plan(a, split_rows(a.n, 2), SpmvChoice::csr, ValueChoice::f64);
  const double whole = mem_bytes_per_iter(two, Variant::standard, false);
  EXPECT_EQ(whole, matrix + 4 + 72 * n + 24 * 200 + 16 * 200);
  EXPECT_NEAR(max_rank_mem_bytes(two, Variant::standard, false), whole / 2, 0.01 * whole);
  EXPECT_EQ(syncs_per_iter(Variant::standard), 2);
  EXPECT_EQ(syncs_per_iter(Variant::pipelined), 1);
}

TEST(CgTraffic, TableAndResultsCarryTheMemoryBandwidth) {
  Problem p;
  p.graph = "poisson2d:512";
  RunRecord with;
  with.paradigm = Paradigm::cpu_free_std;
  with.gpus = 2;
  with.out.sec_per_iter = {10e-6, 10e-6, 10e-6};
  with.out.iterations = 1000;
  with.out.mem_bytes_per_iter = 30e6;  // 30 MB in 10 us: 3000 GB/s, 1500 per GPU
  with.out.tolerance = 1e-10;
  RunRecord without = with;
  without.paradigm = Paradigm::cpu_ctrl_std;
  without.out.mem_bytes_per_iter = -1;
  const std::string t = format_table("cg", p, summarize({with, without}));
  EXPECT_NE(t.find("^ memory 30.00 MB per iteration: 3000 GB/s achieved (1500 GB/s per GPU)"), std::string::npos) << t;
  EXPECT_EQ(t.find("memory", t.find("cpu_ctrl_std")), std::string::npos) << t;  // unknown: no line
  const nlohmann::json j = bench_test_json("cg", "d", p, {with, without});
  const auto& pts = j["series"];
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_DOUBLE_EQ(pts[0]["points"][0]["mem_GBps"].get<double>(), 3000.0);
  EXPECT_DOUBLE_EQ(pts[0]["points"][0]["mem_bytes_per_iter"].get<double>(), 30e6);
  EXPECT_FALSE(pts[1]["points"][0].contains("mem_GBps"));
}

TEST(CgApp, SizesAndParadigms) {
  const std::unique_ptr<App> cg = gpsm::test::app_named("cg");
  ASSERT_NE(cg, nullptr);
  const Problem p = cg->problem("poisson2d:512@nnz", 0);
  EXPECT_EQ(p.iters, 1000);
  EXPECT_EQ(p.label(), "poisson2d:512@nnz");
  EXPECT_TRUE(p.balance_nnz);
  EXPECT_EQ(p.n[0], 512 * 512);
  EXPECT_EQ(cg->problem("banded:1M:41@tol=1e-8", 50).iters, 50);
  EXPECT_FLOAT_EQ(cg->problem("banded:1M:41@tol=1e-8", 50).tol, 1e-8f);
  EXPECT_THROW(cg->problem("poisson2d", 0), std::invalid_argument);
  for (Paradigm par : {Paradigm::single, Paradigm::cpu_ctrl_std, Paradigm::cpu_ctrl_pipe, Paradigm::cpu_free_std,
                       Paradigm::cpu_free_pipe, Paradigm::gps, Paradigm::gps_pipe, Paradigm::infinite})
    EXPECT_TRUE(cg->has(par)) << paradigm_name(par);
  for (Paradigm par : {Paradigm::memcpy, Paradigm::gps_all, Paradigm::nvshmem, Paradigm::cpu_free})
    EXPECT_FALSE(cg->has(par)) << paradigm_name(par);
  // The other apps do not claim the CG paradigms.
  for (auto& a : make_apps())
    if (std::string(a->name()) != "cg") {
      EXPECT_FALSE(a->has(Paradigm::cpu_free_pipe)) << a->name();
      EXPECT_FALSE(a->has(Paradigm::gps_pipe)) << a->name();
    }
  EXPECT_STREQ(paradigm_name(Paradigm::cpu_ctrl_pipe), "cpu_ctrl_pipe");
  EXPECT_STREQ(paradigm_name(Paradigm::gps_pipe), "gps_pipe");
  EXPECT_EQ(parse_paradigms("gps_pipe"), std::vector<Paradigm>{Paradigm::gps_pipe});
  EXPECT_EQ(parse_paradigms("cpu_free_std,cpu_ctrl_std").size(), 2u);
}
