// CG's sliced-ELL SpMV layout (sell.hpp): the conversion from each GPU's local CSR (uneven row
// counts, empty rows, a dense row, halo columns), the host emulation of the device's sliced SpMV
// against the CSR lanes' row sums bit for bit, the padding bound that picks the layout, the
// GPSM_CG_SPMV values, and the bytes the traffic model counts for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/traffic.hpp"
#include "apps/harness/bench_report.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::cg;

namespace {

// A matrix with empty rows (0, 5, every row from 40 to 70) and rows of 1 to 9 entries: not SPD,
// only a shape for the conversion (make_plan does not ask for SPD).
Matrix ragged() {
  Matrix a;
  a.n = 101;
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < a.n; ++i) {
    const bool empty = i == 0 || i == 5 || (i >= 40 && i <= 70);
    const std::int64_t len = empty ? 0 : 1 + (i * 7) % 9;
    for (std::int64_t k = 0; k < len; ++k) {
      a.col.push_back(static_cast<std::int32_t>((i + k * 11) % a.n));
      a.val.push_back(0.25 * static_cast<double>(k + 1) - 0.1 * static_cast<double>(i % 5));
    }
    std::sort(a.col.end() - len, a.col.end());
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
  }
  return a;
}

struct Named {
  std::string name;
  Matrix a;
};
std::vector<Named> shapes() {
  return {{"poisson2d:37x29", poisson2d(37, 29)},  // 1073 rows: no multiple of 32
          {"poisson3d:9x8x7", poisson3d7(9, 8, 7)},
          {"banded:1000:9", banded(1000, 9, 3)},
          {"arrow:300:7", arrow(300, 7, 1)},        // row 0 holds 300 entries
          {"ragged", ragged()}};
}

// Every GPU's local CSR of a split into `parts`.
Plan split(const Matrix& a, int parts) { return make_plan(a, split_rows(a.n, parts)); }

}  // namespace

TEST(CgSell, ConversionHoldsEveryCsrEntryColumnMajorAndPadsWithTheOwnRow) {
  for (const Named& m : shapes())
    for (int parts : {1, 3}) {
      SCOPED_TRACE(m.name + " over " + std::to_string(parts));
      const Plan plan = split(m.a, parts);
      for (const RankPlan& p : plan.rank)
        for (std::int64_t pad_base : {std::int64_t{0}, p.rows.begin}) {
          const Sell s = make_sell(p.row_ptr, p.col, p.val, pad_base);
          const std::int64_t rows = p.local_rows(), slices = (rows + 31) / 32;
          ASSERT_EQ(s.rows, rows);
          ASSERT_EQ(s.slices(), slices);
          std::int64_t stored = 0;
          for (std::int64_t sl = 0; sl < slices; ++sl) {
            int w = 0;
            const std::int64_t end = std::min(rows, (sl + 1) * 32);
            for (std::int64_t i = sl * 32; i < end; ++i) w = std::max(w, p.row_ptr[i + 1] - p.row_ptr[i]);
            ASSERT_EQ(s.width(sl), w) << "slice " << sl;
            stored += 32 * w;
          }
          EXPECT_EQ(p.sell_entries, stored);  // the plan's count, what the traffic model charges
          EXPECT_EQ(sell_entries(p.row_ptr), stored);
          EXPECT_EQ(s.slice_ptr.back(), stored);
          ASSERT_EQ(s.col.size(), static_cast<std::size_t>(stored));
          ASSERT_EQ(s.val.size(), static_cast<std::size_t>(stored));
          for (std::int64_t i = 0; i < rows; ++i) {
            const std::int64_t sl = i / 32, len = p.row_ptr[i + 1] - p.row_ptr[i];
            for (int k = 0; k < s.width(sl); ++k) {
              const std::size_t e = static_cast<std::size_t>(s.slice_ptr[sl] + 32 * k + i % 32);
              if (k < len) {
                ASSERT_EQ(s.col[e], p.col[static_cast<std::size_t>(p.row_ptr[i] + k)]) << "row " << i << " entry " << k;
                ASSERT_EQ(s.val[e], p.val[static_cast<std::size_t>(p.row_ptr[i] + k)]) << "row " << i << " entry " << k;
              } else {
                ASSERT_EQ(s.val[e], 0.0) << "padding of row " << i;
                ASSERT_EQ(s.col[e], pad_base + i) << "padding of row " << i;
              }
            }
          }
          // A short last slice's missing rows: computed by their lanes, so valid entries that add 0.
          for (std::int64_t i = rows; i < slices * 32; ++i)
            for (int k = 0; k < s.width(slices - 1); ++k) {
              const std::size_t e = static_cast<std::size_t>(s.slice_ptr[slices - 1] + 32 * k + i % 32);
              ASSERT_EQ(s.val[e], 0.0);
              ASSERT_EQ(s.col[e], pad_base + rows - 1);
            }
        }
    }
}

TEST(CgSell, EmulatedSlicedSpmvEqualsTheCsrLanesBitForBit) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (const Named& m : shapes())
    for (int parts : {1, 3}) {
      const Plan plan = split(m.a, parts);
      for (const RankPlan& p : plan.rank) {
        const Sell s = make_sell(p.row_ptr, p.col, p.val);
        std::vector<double> x(static_cast<std::size_t>(p.local_rows() + p.halo_size()));
        for (double& v : x) v = u(rng) * std::pow(10.0, static_cast<int>(u(rng) * 3));  // cancellations in the sums
        const auto at = [&](std::int32_t j) { return x[static_cast<std::size_t>(j)]; };
        for (int lanes : {2, 4, 8, plan.lanes}) {
          SCOPED_TRACE(m.name + " over " + std::to_string(parts) + ", " + std::to_string(lanes) + " lanes");
          int differ = 0;
          for (std::int64_t i = 0; i < p.local_rows(); ++i) {
            const double want = row_times(p.row_ptr[i], p.row_ptr[i + 1], p.col.data(), p.val.data(), lanes, at);
            const double got = sell_row_times(s, i, lanes, at);
            if (std::memcmp(&want, &got, sizeof want) != 0 && ++differ <= 3)
              ADD_FAILURE() << "row " << i << ": CSR " << want << ", sliced " << got;
          }
          EXPECT_EQ(differ, 0);
        }
      }
    }
  // The lanes' order is what makes them equal: summed in plain k order (one lane), some row of a
  // poisson2d differs from the 4-lane sum, so this test would catch a sliced SpMV that ignored it.
  const Plan plan = split(poisson2d(37, 29), 1);
  const RankPlan& p = plan.rank[0];
  ASSERT_EQ(plan.lanes, 4);
  const Sell s = make_sell(p.row_ptr, p.col, p.val);
  std::vector<double> x(static_cast<std::size_t>(p.local_rows()));
  for (double& v : x) v = u(rng) * std::pow(10.0, static_cast<int>(u(rng) * 3));
  const auto at = [&](std::int32_t j) { return x[static_cast<std::size_t>(j)]; };
  int differ = 0;
  for (std::int64_t i = 0; i < p.local_rows(); ++i)
    differ += sell_row_times(s, i, 1, at) != row_times(p.row_ptr[i], p.row_ptr[i + 1], p.col.data(), p.val.data(), 4, at);
  EXPECT_GT(differ, 0);
}

TEST(CgSell, ThePaddingBoundChoosesTheLayout) {
  // The rule.
  EXPECT_EQ(choose_layout(4, 1.0, SpmvChoice::automatic).layout, SpmvLayout::sell);
  EXPECT_EQ(choose_layout(8, kSellPaddingBound, SpmvChoice::automatic).layout, SpmvLayout::sell);
  EXPECT_EQ(choose_layout(4, 1.26, SpmvChoice::automatic).layout, SpmvLayout::csr);
  EXPECT_EQ(choose_layout(16, 1.0, SpmvChoice::automatic).layout, SpmvLayout::csr);  // wide rows load coalesced
  EXPECT_EQ(choose_layout(2, 1.0, SpmvChoice::csr).layout, SpmvLayout::csr);
  EXPECT_EQ(choose_layout(2, 30.0, SpmvChoice::sell).layout, SpmvLayout::sell);      // forced past the bound
  EXPECT_EQ(choose_layout(32, 1.0, SpmvChoice::sell).layout, SpmvLayout::csr);       // no sliced kernel that wide
  const LayoutChoice no = choose_layout(4, 1.5, SpmvChoice::automatic);
  EXPECT_NE(no.reason.find("1.5000 entries per nonzero > 1.25"), std::string::npos) << no.reason;
  EXPECT_NE(choose_layout(32, 1.0, SpmvChoice::sell).reason.find("GPSM_CG_SPMV=sell applies to shorter rows only"),
            std::string::npos);
  // On the generators: a stencil slices with next to no padding; a dense row pads its whole slice.
  const Plan poisson = split(poisson2d(512, 512), 4);
  EXPECT_EQ(poisson.spmv.layout, SpmvLayout::sell) << poisson.spmv.reason;
  EXPECT_LT(poisson.spmv.padding, 1.01);
  EXPECT_GE(poisson.spmv.padding, 1.0);
  const Plan arrow3001 = split(arrow(3001, 7, 1), 1);
  EXPECT_EQ(arrow3001.spmv.layout, SpmvLayout::csr) << arrow3001.spmv.reason;
  EXPECT_GT(arrow3001.spmv.padding, 3.0);  // slice 0: 32 rows of 3001 entries
  // Split by nonzeros the dense row sits nearly alone on GPU 0, still padding its slice: the
  // largest GPU's padding decides for all.
  const Matrix ar = arrow(3001, 7, 1);
  EXPECT_EQ(make_plan(ar, split_rows_by_nnz(ar.row_ptr, 3)).spmv.layout, SpmvLayout::csr);
  EXPECT_EQ(make_plan(ar, split_rows(ar.n, 1), SpmvChoice::sell).spmv.layout, SpmvLayout::sell);
  EXPECT_EQ(split(poisson3d27(9, 8, 7), 1).spmv.layout, SpmvLayout::csr);  // 16 lanes
  EXPECT_EQ(make_plan(poisson2d(64, 64), split_rows(4096, 2), SpmvChoice::csr).spmv.layout, SpmvLayout::csr);
}

TEST(CgSell, EnvironmentValues) {
  EXPECT_EQ(parse_spmv_choice(nullptr), SpmvChoice::automatic);
  EXPECT_EQ(parse_spmv_choice(""), SpmvChoice::automatic);
  EXPECT_EQ(parse_spmv_choice("auto"), SpmvChoice::automatic);
  EXPECT_EQ(parse_spmv_choice("csr"), SpmvChoice::csr);
  EXPECT_EQ(parse_spmv_choice("sell"), SpmvChoice::sell);
  try {
    parse_spmv_choice("ell");
    ADD_FAILURE() << "accepted ell";
  } catch (const gpsm::Error& e) {
    EXPECT_STREQ(e.what(), "gpsm: GPSM_CG_SPMV=ell: not a layout; use csr, sell or auto (the default)");
  }
}

TEST(CgSell, TrafficCountsTheEntriesTheSlicedSpmvReads) {
  const Matrix a = poisson2d(100, 100);  // 10000 rows: 312 full slices and one of 16 rows
  // Values as doubles and 32-bit columns (12 bytes an entry); as floats or a table,
  // test_cg_values.cpp; as 16-bit deltas, test_cg_sell_deltas.cpp.
  const Plan csr = make_plan(a, split_rows(a.n, 1), SpmvChoice::csr, ValueChoice::f64);
  const Plan sell = make_plan(a, split_rows(a.n, 1), SpmvChoice::automatic, ValueChoice::f64, Variant::standard, 0,
                              IndexChoice::i32);
  ASSERT_EQ(sell.spmv.layout, SpmvLayout::sell);
  // Independently of sell.cpp: 32 rows per slice (the last one's 16 missing rows included, its
  // warp computes them) times the slice's longest row.
  double read = 0;
  for (std::int64_t s = 0; s * 32 < a.n; ++s) {
    std::int64_t w = 0;
    for (std::int64_t i = s * 32; i < std::min<std::int64_t>(a.n, s * 32 + 32); ++i) w = std::max(w, a.row_nnz(i));
    read += static_cast<double>(32 * w);
  }
  EXPECT_GT(read, static_cast<double>(a.nnz()));  // the grid's edge rows are padded
  const double vectors = 72.0 * 10000;  // the persistent kernels' Standard vectors
  EXPECT_EQ(mem_bytes_per_iter(csr, Variant::standard, false), 12.0 * a.nnz() + 4.0 * 10001 + vectors);
  EXPECT_EQ(mem_bytes_per_iter(sell, Variant::standard, false), 12.0 * read + 4.0 * (313 + 1) + vectors);
}

TEST(CgSell, TableAndResultsCarryTheChoice) {
  Problem p;
  p.graph = "poisson2d:512";
  RunRecord r;
  r.paradigm = Paradigm::single;
  r.gpus = 1;
  r.out.sec_per_iter = {10e-6};
  r.out.iterations = 10;
  r.out.tolerance = 1e-10;
  r.out.choices.push_back({"spmv", "sell", "SELL-32: padding 1.0001 entries per nonzero <= 1.25"});
  const std::string t = format_table("cg", p, summarize({r}));
  EXPECT_NE(t.find("^ spmv: sell (SELL-32: padding 1.0001 entries per nonzero <= 1.25)"), std::string::npos) << t;
  const nlohmann::json j = bench_test_json("cg", "d", p, {r});
  const auto& pt = j["series"][0]["points"][0];
  EXPECT_EQ(pt["spmv"], "sell");
  EXPECT_EQ(pt["spmv_why"], "SELL-32: padding 1.0001 entries per nonzero <= 1.25");
}
