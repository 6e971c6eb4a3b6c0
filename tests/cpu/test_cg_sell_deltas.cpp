// CG's sliced columns as 16-bit deltas from a base per slot (sell_deltas.hpp): the fit on Poisson
// 2D and 3D, banded and uneven matrices in both numberings (local with halo slots, global), on one
// GPU and split; the deltas' columns and the emulated SpMV through them (and through a value table)
// against the CSR lanes bit for bit; a slot spanning 65536 columns or more, which keeps 32-bit
// columns or refuses GPSM_CG_INDEX=i16 naming it; the option's values; and the bytes the traffic
// model counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/gps_layout.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/run_options.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/sell_deltas.hpp"
#include "apps/cg/traffic.hpp"
#include "apps/cg/value_storage.hpp"
#include "gpsm/error.hpp"
#include "test_support.hpp"

using namespace gpsm::apps::cg;

namespace {

using gpsm::test::error_of;

// n rows, each its diagonal (4), row `far_row` also column `far_col` (-1): a slot that spans
// far_col - (the slot's smallest column) in slice far_row / 32, slot 1. Not SPD: a shape only.
Matrix one_far_entry(std::int64_t n, std::int64_t far_row, std::int32_t far_col) {
  Matrix a;
  a.n = n;
  a.row_ptr.push_back(0);
  for (std::int64_t i = 0; i < n; ++i) {
    a.col.push_back(static_cast<std::int32_t>(i));
    a.val.push_back(4.0);
    if (i == far_row) {
      a.col.push_back(far_col);
      a.val.push_back(-1.0);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
  }
  return a;
}

struct Named {
  std::string name;
  Matrix a;
};

std::vector<double> random_x(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<double> x(n);
  for (double& v : x) v = u(rng) * std::pow(10.0, static_cast<int>(u(rng) * 3));  // cancellations in the sums
  return x;
}

// Every entry of rank p's sliced layout (pad_base: make_sell's) through its deltas: the same
// column, the base the slot's smallest, and the SpMV emulated through deltas and through deltas
// and a value table equal to the CSR lanes' bit for bit.
void expect_deltas_are_the_columns(const Plan& plan, const RankPlan& p, const std::vector<std::int32_t>& cols,
                                   std::int64_t pad_base, std::mt19937_64& rng) {
  const Sell s = make_sell(p.row_ptr, cols, p.val, pad_base);
  const SellDeltas d = make_deltas(s);
  ASSERT_EQ(d.delta.size(), s.col.size());
  ASSERT_EQ(d.base.size(), s.col.size() / 32);
  for (std::int64_t sl = 0; sl < s.slices(); ++sl)
    for (int k = 0; k < s.width(sl); ++k) {
      const std::int64_t e0 = s.slice_ptr[sl] + 32 * k;
      std::int32_t lo = s.col[static_cast<std::size_t>(e0)];
      for (std::int64_t e = e0; e < e0 + 32; ++e) {
        lo = std::min(lo, s.col[static_cast<std::size_t>(e)]);
        ASSERT_EQ(d.base[static_cast<std::size_t>(e0 / 32)] + d.delta[static_cast<std::size_t>(e)], s.col[static_cast<std::size_t>(e)])
            << "slice " << sl << " slot " << k << " entry " << e;
      }
      ASSERT_EQ(d.base[static_cast<std::size_t>(e0 / 32)], lo) << "slice " << sl << " slot " << k;
    }
  // The emulated SpMV in the numbering the columns are in (pad_base 0: local, rows + halo; else
  // global).
  const std::size_t n = pad_base == 0 ? static_cast<std::size_t>(p.local_rows() + p.halo_size()) : static_cast<std::size_t>(plan.n);
  const std::vector<double> x = random_x(n, rng);
  const auto at = [&](std::int32_t j) { return x[static_cast<std::size_t>(j)]; };
  // The table where the values allow one (banded's random weights do not: the deltas alone).
  const bool tabled = distinct_values(s.val, kTableValues).size() <= static_cast<std::size_t>(kTableValues);
  const ValueTable t = tabled ? make_value_table(s.val) : ValueTable{s.val, {}};
  for (int lanes : {2, 4, 8, plan.lanes}) {
    int differ = 0;
    for (std::int64_t i = 0; i < p.local_rows(); ++i) {
      const double want = row_times(p.row_ptr[i], p.row_ptr[i + 1], cols.data(), p.val.data(), lanes, at);
      const double plain = sell_row_times(s, i, lanes, at);
      const double delta = sell_delta_row_times(s, d, i, lanes, at);
      const double both = sliced_row_times(
          s.slice_ptr, i, lanes,
          [&](std::int64_t e, std::int64_t slot) { return d.base[static_cast<std::size_t>(slot)] + d.delta[static_cast<std::size_t>(e)]; },
          [&](std::int64_t e) {
            return tabled ? t.table[t.index[static_cast<std::size_t>(e)]] : s.val[static_cast<std::size_t>(e)];
          },
          at);
      for (const double got : {plain, delta, both})
        if (std::memcmp(&want, &got, sizeof want) != 0 && ++differ <= 3)
          ADD_FAILURE() << "row " << i << ", " << lanes << " lanes: CSR " << want << ", sliced " << got;
    }
    EXPECT_EQ(differ, 0) << lanes << " lanes";
  }
}

}  // namespace

TEST(CgSellDeltas, EnvironmentValues) {
  EXPECT_EQ(parse_index_choice(nullptr), IndexChoice::automatic);
  EXPECT_EQ(parse_index_choice(""), IndexChoice::automatic);
  EXPECT_EQ(parse_index_choice("auto"), IndexChoice::automatic);
  EXPECT_EQ(parse_index_choice("i32"), IndexChoice::i32);
  EXPECT_EQ(parse_index_choice("i16"), IndexChoice::i16);
  EXPECT_EQ(error_of([] { parse_index_choice("u16"); }),
            "gpsm: GPSM_CG_INDEX=u16: not an index storage; use i32, i16 or auto (the default)");
  EXPECT_STREQ(index_choice_name(IndexChoice::automatic), "auto");
  EXPECT_STREQ(index_choice_name(IndexChoice::i16), "i16");
  EXPECT_STREQ(index_storage_name(IndexStorage::i16), "i16");
  EXPECT_STREQ(index_storage_name(IndexStorage::i32), "i32");
  EXPECT_EQ(index_bytes(IndexStorage::i16), 2);
  EXPECT_EQ(index_bytes(IndexStorage::i32), 4);
}

TEST(CgSellDeltas, RunOptionsReadTheIndexChoice) {
  setenv("GPSM_CG_INDEX", "i16", 1);
  EXPECT_EQ(cg_env().index, IndexChoice::i16);
  setenv("GPSM_CG_INDEX", "16", 1);
  EXPECT_NE(error_of([] { cg_env(); }).find("GPSM_CG_INDEX=16"), std::string::npos);
  unsetenv("GPSM_CG_INDEX");
  EXPECT_EQ(cg_env().index, IndexChoice::automatic);
}

// The plan's automatic choice keeps 32-bit columns (sell_deltas.cpp: measured no faster) but says
// whether the deltas fit; a misfit's reason names the slot instead.
bool deltas_fit(const Plan& p) {
  return p.index.storage == IndexStorage::i16 || p.index.reason.find("16-bit deltas fit") != std::string::npos;
}

// Poisson 2D (a short last slice: 37 x 29 = 1073 rows; a width that is a multiple of 32 on
// splits whose GPUs hold more than 65536 rows, so a slot mixing own columns and halo slots would
// not fit), Poisson 3D, banded: every slot fits in both numberings, the plan takes i16, and the
// deltas give back every column and the CSR's bits.
TEST(CgSellDeltas, StencilsAndBandsFitAndComputeTheCsrBits) {
  std::mt19937_64 rng(11);
  const std::vector<Named> shapes = {{"poisson2d:37x29", poisson2d(37, 29)},
                                     {"poisson2d:2048x80", poisson2d(2048, 80)},
                                     {"poisson3d:9x8x7", poisson3d7(9, 8, 7)},
                                     {"poisson3d:40", poisson3d7(40, 40, 40)},
                                     {"banded:3001:9", banded(3001, 9, 7)}};
  for (const Named& m : shapes)
    for (int parts : {1, 2, 3, 4}) {
      SCOPED_TRACE(m.name + " over " + std::to_string(parts));
      const Plan plan = make_plan(m.a, split_rows(m.a.n, parts), SpmvChoice::sell);
      ASSERT_EQ(plan.spmv.layout, SpmvLayout::sell) << plan.spmv.reason;
      EXPECT_TRUE(deltas_fit(plan)) << plan.index.reason;
      EXPECT_EQ(make_plan(m.a, split_rows(m.a.n, parts), SpmvChoice::sell, ValueChoice::automatic, Variant::standard, 0,
                          IndexChoice::i16)
                    .index.storage,
                IndexStorage::i16);
      for (int r = 0; r < plan.ranks; ++r) {
        const RankPlan& p = plan.rank[r];
        EXPECT_EQ(delta_misfit(p, r), "");
        expect_deltas_are_the_columns(plan, p, p.col, 0, rng);
        expect_deltas_are_the_columns(plan, p, global_columns(p), p.rows.begin, rng);
      }
    }
}

// The fit the plan computes from the CSR is the one on the layout make_sell builds, padding
// included, in both numberings.
TEST(CgSellDeltas, TheCsrFitIsTheBuiltLayouts) {
  for (const Matrix& a : {poisson2d(100, 700), one_far_entry(70000, 3, 65535), one_far_entry(70000, 3, 65536),
                          one_far_entry(70000, 69990, 5)})
    for (int parts : {1, 2}) {
      const Plan plan = make_plan(a, split_rows(a.n, parts), SpmvChoice::sell, ValueChoice::automatic, Variant::standard,
                                  0, IndexChoice::i32);
      for (const RankPlan& p : plan.rank)
        for (const bool global : {false, true}) {
          const std::vector<std::int32_t> cols = global ? global_columns(p) : p.col;
          const std::int64_t pad = global ? p.rows.begin : 0;
          const WideSlot built = first_wide_slot(make_sell(p.row_ptr, cols, p.val, pad));
          const WideSlot csr = first_wide_slot(p.row_ptr, [&](std::int64_t k) { return cols[static_cast<std::size_t>(k)]; }, pad);
          EXPECT_EQ(csr.slice, built.slice);
          EXPECT_EQ(csr.slot, built.slot);
          EXPECT_EQ(csr.lo, built.lo);
          EXPECT_EQ(csr.hi, built.hi);
        }
    }
}

// A slot whose columns span 65536 or more: one GPU's row 3 reads column 65536, its slot's other
// entries are the padding at rows 0..31: 65536 apart. 65535 still fits.
TEST(CgSellDeltas, ASlotSpanningTooFarKeeps32BitColumnsOrRefusesI16) {
  const Matrix fits = one_far_entry(70000, 3, 65535);
  const Plan ok = make_plan(fits, split_rows(fits.n, 1));
  ASSERT_EQ(ok.spmv.layout, SpmvLayout::sell);
  EXPECT_TRUE(deltas_fit(ok)) << ok.index.reason;
  const Matrix far = one_far_entry(70000, 3, 65536);
  const Plan plan = make_plan(far, split_rows(far.n, 1));
  ASSERT_EQ(plan.spmv.layout, SpmvLayout::sell);
  EXPECT_EQ(plan.index.storage, IndexStorage::i32);
  EXPECT_EQ(plan.index.reason,
            "columns i32: GPU 0's slice 0, slot 1 spans columns 0 to 65536 (65536 apart; 16-bit deltas reach 65535) "
            "(local columns: halo slots after the rows)");
  const std::string e = error_of([&] {
    make_plan(far, split_rows(far.n, 1), SpmvChoice::automatic, ValueChoice::automatic, Variant::standard, 0, IndexChoice::i16);
  });
  EXPECT_EQ(e, "gpsm: cg: GPSM_CG_INDEX=i16, but GPU 0's slice 0, slot 1 spans columns 0 to 65536 (65536 apart; 16-bit "
               "deltas reach 65535) (local columns: halo slots after the rows) (use i32 or auto)");
  const Sell s = make_sell(plan.rank[0].row_ptr, plan.rank[0].col, plan.rank[0].val);
  EXPECT_NE(error_of([&] { make_deltas(s); }).find("slice 0, slot 1 spans columns 0 to 65536"), std::string::npos);
  // Split over 2, column 65536 is GPU 1's: a halo slot 35000 columns from GPU 0's own, which fits,
  // but the gps runs' global columns do not: named with the numbering.
  const Plan two = make_plan(far, split_rows(far.n, 2));
  EXPECT_EQ(two.index.storage, IndexStorage::i32);
  EXPECT_NE(two.index.reason.find("GPU 0's slice 0, slot 1 spans columns 0 to 65536"), std::string::npos) << two.index.reason;
  EXPECT_NE(two.index.reason.find("(global columns: gps, gps_pipe)"), std::string::npos) << two.index.reason;
}

// A split GPU's first rows read the rank above through halo slots numbered after its rows: with
// more than 65536 rows on the GPU, a slice holding both rows that read it and rows that read their
// own north neighbour spans too far in the local numbering (a grid width not a multiple of 32),
// though not in the global one. The plan keeps 32-bit columns and says which numbering.
TEST(CgSellDeltas, AHaloSlotBesideOwnColumnsFallsBackWhereItSpansTooFar) {
  const Matrix a = poisson2d(100, 1400);  // 140000 rows: 70000 a GPU on 2
  const Plan one = make_plan(a, split_rows(a.n, 1));
  EXPECT_TRUE(deltas_fit(one)) << one.index.reason;
  const Plan two = make_plan(a, split_rows(a.n, 2));
  EXPECT_EQ(two.index.storage, IndexStorage::i32);
  EXPECT_EQ(delta_misfit(two.rank[0], 0), "");  // its south halo follows its last rows
  const std::string why = delta_misfit(two.rank[1], 1);
  EXPECT_NE(why.find("GPU 1's slice 3, slot 0"), std::string::npos) << why;  // rows 96..127: 100 reads the own row 0
  EXPECT_NE(why.find("(local columns"), std::string::npos) << why;
  EXPECT_NE(two.index.reason.find(why), std::string::npos) << two.index.reason;
  EXPECT_NE(error_of([&] {
              make_plan(a, split_rows(a.n, 2), SpmvChoice::automatic, ValueChoice::automatic, Variant::standard, 0,
                        IndexChoice::i16);
            }).find("GPSM_CG_INDEX=i16, but GPU 1's slice 3, slot 0"),
            std::string::npos);
  // A width of 128 puts the rows reading the halo in whole slices: fits on the same split.
  const Matrix b = poisson2d(128, 1100);
  EXPECT_TRUE(deltas_fit(make_plan(b, split_rows(b.n, 2))));
}

TEST(CgSellDeltas, ChoiceFollowsTheLayoutAndTheForcedValue) {
  // Automatic keeps 32-bit columns where the deltas fit (measured no faster) and says they fit.
  EXPECT_EQ(choose_index(true, IndexChoice::automatic, "").storage, IndexStorage::i32);
  EXPECT_NE(choose_index(true, IndexChoice::automatic, "").reason.find("16-bit deltas fit"), std::string::npos);
  EXPECT_EQ(choose_index(true, IndexChoice::i16, "").storage, IndexStorage::i16);
  EXPECT_EQ(choose_index(true, IndexChoice::i32, "").storage, IndexStorage::i32);
  EXPECT_EQ(choose_index(true, IndexChoice::i32, "x").storage, IndexStorage::i32);
  EXPECT_EQ(choose_index(false, IndexChoice::automatic, "").storage, IndexStorage::i32);
  EXPECT_EQ(choose_index(true, IndexChoice::automatic, "GPU 2's ...").reason, "columns i32: GPU 2's ...");
  EXPECT_NE(error_of([] { choose_index(false, IndexChoice::i16, ""); }).find("CSR"), std::string::npos);
  // On the generators: CSR rows (16 lanes and more) keep 32-bit columns; forcing i16 there is refused.
  const Matrix wide = poisson3d27(9, 8, 7);
  const Plan p = make_plan(wide, split_rows(wide.n, 1));
  ASSERT_EQ(p.spmv.layout, SpmvLayout::csr);
  EXPECT_EQ(p.index.storage, IndexStorage::i32);
  EXPECT_THROW(make_plan(wide, split_rows(wide.n, 1), SpmvChoice::automatic, ValueChoice::automatic, Variant::standard,
                         0, IndexChoice::i16),
               gpsm::Error);
  const Matrix poisson = poisson2d(64, 64);
  EXPECT_EQ(make_plan(poisson, split_rows(poisson.n, 1), SpmvChoice::csr).index.storage, IndexStorage::i32);
}

// Memory bytes: 2 bytes a stored entry and a 4-byte base a slot of 32 instead of 4 bytes an entry.
TEST(CgSellDeltas, TrafficCountsDeltasAndBases) {
  const Matrix a = poisson2d(100, 100);
  const Plan i32 = make_plan(a, split_rows(a.n, 2), SpmvChoice::sell, ValueChoice::f32, Variant::standard, 0, IndexChoice::i32);
  const Plan i16 = make_plan(a, split_rows(a.n, 2), SpmvChoice::sell, ValueChoice::f32, Variant::standard, 0, IndexChoice::i16);
  ASSERT_EQ(i16.index.storage, IndexStorage::i16);
  double entries = 0;
  for (const RankPlan& p : i32.rank) entries += static_cast<double>(p.sell_entries);
  for (const Variant v : {Variant::standard, Variant::pipelined})
    for (const bool discrete : {false, true})
      EXPECT_EQ(mem_bytes_per_iter(i32, v, discrete) - mem_bytes_per_iter(i16, v, discrete), (2.0 - 4.0 / 32) * entries);
}
