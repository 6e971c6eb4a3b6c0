// CG's matrix values stored as floats where every value is exactly one, or in the sliced layout as
// indices into a table of the distinct doubles (value_storage.hpp): the choice, its refusals, the
// table's bits, the plan's choice per generator, and the bytes the model counts; and the
// host-thread option of the CPU-controlled runs (run_options.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/run_options.hpp"
#include "apps/cg/traffic.hpp"
#include "apps/cg/value_storage.hpp"
#include "gpsm/error.hpp"
#include "test_support.hpp"

using namespace gpsm::apps::cg;

namespace {

using gpsm::test::error_of;

}  // namespace

TEST(CgValues, ParsesTheEnvironmentsChoiceAndRefusesOthers) {
  EXPECT_EQ(parse_value_choice(nullptr), ValueChoice::automatic);
  EXPECT_EQ(parse_value_choice(""), ValueChoice::automatic);
  EXPECT_EQ(parse_value_choice("auto"), ValueChoice::automatic);
  EXPECT_EQ(parse_value_choice("f64"), ValueChoice::f64);
  EXPECT_EQ(parse_value_choice("f32"), ValueChoice::f32);
  EXPECT_EQ(parse_value_choice("table"), ValueChoice::table);
  const std::string e = error_of([] { parse_value_choice("half"); });
  EXPECT_EQ(e, "gpsm: GPSM_CG_VALUES=half: not a value storage; use f64, f32, table or auto (the default)");
  EXPECT_STREQ(value_choice_name(ValueChoice::automatic), "auto");
  EXPECT_STREQ(value_choice_name(ValueChoice::table), "table");
  EXPECT_STREQ(value_storage_name(ValueStorage::table), "table");
  EXPECT_EQ(value_bytes(ValueStorage::f32), 4);
  EXPECT_EQ(value_bytes(ValueStorage::f64), 8);
  EXPECT_EQ(value_bytes(ValueStorage::table), 1);
}

TEST(CgValues, ExactlyAFloatMeansTheSameDoubleBack) {
  EXPECT_EQ(first_inexact_float({4.0, -1.0, 0.25, -0.25, 26.0, -0.0, 1.0 / 1024}), -1);
  EXPECT_EQ(first_inexact_float({4.0, 0.1}), 1);                  // 0.1 is not a float
  EXPECT_EQ(first_inexact_float({1.0 + 0x1p-30}), 0);              // more mantissa bits than a float has
  EXPECT_EQ(first_inexact_float({1e39}), 0);                       // beyond float's range
  EXPECT_EQ(first_inexact_float({1e-310}), 0);                     // a double subnormal, far below float's
  EXPECT_EQ(first_inexact_float({std::numeric_limits<float>::denorm_min()}), -1);  // a float subnormal is a float
  // What the kernels rely on: a float widened is the double it came from, sign of zero included.
  const std::vector<double> v = {4.0, -1.0, -0.25, -0.0, 0x1p127, 0x1.fffffep-1};
  const std::vector<float> f = to_floats(v);
  for (std::size_t k = 0; k < v.size(); ++k) {
    EXPECT_EQ(static_cast<double>(f[k]), v[k]);
    EXPECT_EQ(std::signbit(static_cast<double>(f[k])), std::signbit(v[k]));
  }
}

TEST(CgValues, AutomaticTakesFloatsOnlyWhenNothingChanges) {
  const ValuesChoice exact = choose_values({4.0, -1.0}, ValueChoice::automatic, false);
  EXPECT_EQ(exact.storage, ValueStorage::f32);
  EXPECT_NE(exact.reason.find("exactly a float"), std::string::npos) << exact.reason;
  const ValuesChoice inexact = choose_values({4.0, -1.0, 0.1}, ValueChoice::automatic, false);
  EXPECT_EQ(inexact.storage, ValueStorage::f64);
  EXPECT_NE(inexact.reason.find("value 2"), std::string::npos) << inexact.reason;
  EXPECT_EQ(choose_values({4.0, -1.0}, ValueChoice::f64, true).storage, ValueStorage::f64);
  EXPECT_EQ(choose_values({4.0, -1.0}, ValueChoice::f32, true).storage, ValueStorage::f32);
  // Forcing floats on a matrix they would change is refused, naming the value.
  const std::string e = error_of([] { choose_values({4.0, 0.1}, ValueChoice::f32, false); });
  EXPECT_NE(e.find("value 1 (0.10000000000000001)"), std::string::npos) << e;
}

// The table holds each distinct double once by its bits (-0 apart from +0, any NaN), +0 always
// (the padding), and gives every value back bit for bit; past 256 it does not exist.
TEST(CgValues, TheTableGivesEveryValueBackBitForBit) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> v = {4.0, -1.0, 4.0, -0.0, 0.1, -1.0, nan, 1e-310, 4.0};
  const std::vector<double> d = distinct_values(v, kTableValues);
  ASSERT_EQ(d.size(), 7u);  // +0, 4, -1, -0, 0.1, NaN, 1e-310
  EXPECT_EQ(d[0], 0.0);
  EXPECT_FALSE(std::signbit(d[0]));
  const ValueTable t = make_value_table(v);
  ASSERT_EQ(t.index.size(), v.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    EXPECT_EQ(std::memcmp(&t.table[t.index[k]], &v[k], sizeof(double)), 0) << "value " << k;
  EXPECT_EQ(make_value_table({4.0, 0.0}).table.size(), 2u);  // +0 not twice
  std::vector<double> many;
  for (int k = 1; k <= 255; ++k) many.push_back(k);
  EXPECT_EQ(make_value_table(many).table.size(), 256u);  // 255 and +0: the largest table
  many.push_back(256);
  EXPECT_EQ(distinct_values(many, kTableValues).size(), 257u);  // counting stops there
  EXPECT_THROW(make_value_table(many), gpsm::Error);
}

TEST(CgValues, TheTableIsTheSlicedLayoutsWhereAtMost256ValuesAre) {
  const ValuesChoice three = choose_values({4.0, -1.0, 4.0}, ValueChoice::automatic, true);
  EXPECT_EQ(three.storage, ValueStorage::table);
  EXPECT_EQ(three.reason, "values as 1-byte indices into a table of 3 doubles (padding's 0 included)");
  EXPECT_EQ(choose_values({4.0, 0.1}, ValueChoice::automatic, true).storage, ValueStorage::table);  // 0.1: no float, but one of 3
  EXPECT_EQ(choose_values({4.0, -1.0}, ValueChoice::table, true).storage, ValueStorage::table);
  std::vector<double> many;
  for (int k = 1; k <= 300; ++k) many.push_back(k);
  const ValuesChoice floats = choose_values(many, ValueChoice::automatic, true);
  EXPECT_EQ(floats.storage, ValueStorage::f32);
  EXPECT_NE(floats.reason.find("more than 256 distinct, no table"), std::string::npos) << floats.reason;
  EXPECT_EQ(error_of([&] { choose_values(many, ValueChoice::table, true); }),
            "gpsm: cg: GPSM_CG_VALUES=table, but the matrix holds more than 256 distinct values (with the padding's 0): "
            "a 1-byte index cannot name them (use f64, f32 or auto)");
  EXPECT_NE(error_of([] { choose_values({4.0}, ValueChoice::table, false); }).find("SpMV layout is CSR"), std::string::npos);
  EXPECT_EQ(choose_values({4.0, -1.0}, ValueChoice::automatic, false).storage, ValueStorage::f32);  // CSR: no table
}

TEST(CgValues, PlansStoreTheGeneratorsValuesAsTheyAre) {
  // Poisson (4, -1) sliced: a table of 3; Poisson 27-point and the elasticity stand-in (26, -1
  // times 1 or 1/4) run CSR: floats; the banded generator's random weights and the arrow's
  // -1/ROWS: doubles.
  for (const Matrix& a : {poisson2d(37, 29), poisson3d7(20, 20, 20)}) {
    const Plan plan = make_plan(a, split_rows(a.n, 3));
    ASSERT_EQ(plan.spmv.layout, SpmvLayout::sell);
    EXPECT_EQ(plan.values.storage, ValueStorage::table) << plan.values.reason;
    EXPECT_EQ(make_plan(a, split_rows(a.n, 3), SpmvChoice::sell, ValueChoice::f32).values.storage, ValueStorage::f32);
    EXPECT_EQ(make_plan(a, split_rows(a.n, 3), SpmvChoice::csr).values.storage, ValueStorage::f32);
    EXPECT_THROW(make_plan(a, split_rows(a.n, 3), SpmvChoice::csr, ValueChoice::table), gpsm::Error);
  }
  for (const Matrix& a : {poisson3d27(6, 5, 4), elastic3d(4, 3, 5)}) {
    const Plan plan = make_plan(a, split_rows(a.n, 3));
    ASSERT_EQ(plan.spmv.layout, SpmvLayout::csr);
    EXPECT_EQ(plan.values.storage, ValueStorage::f32) << plan.values.reason;
  }
  for (const Matrix& a : {banded(3001, 9, 7), arrow(2000, 7, 3)}) {
    const Plan plan = make_plan(a, split_rows(a.n, 2));
    EXPECT_EQ(plan.values.storage, ValueStorage::f64) << plan.values.reason;
    EXPECT_THROW(make_plan(a, split_rows(a.n, 2), SpmvChoice::automatic, ValueChoice::f32), gpsm::Error);
  }
  const Matrix p = poisson2d(37, 29);
  EXPECT_EQ(make_plan(p, split_rows(p.n, 1), SpmvChoice::automatic, ValueChoice::f64).values.storage, ValueStorage::f64);
}

TEST(CgValues, FloatValuesCountFourBytesLessPerEntryAndTableIndicesSevenLess) {
  const Matrix a = poisson2d(100, 100);
  for (const SpmvChoice layout : {SpmvChoice::csr, SpmvChoice::sell}) {
    const Plan f64 = make_plan(a, split_rows(a.n, 2), layout, ValueChoice::f64);
    const Plan f32 = make_plan(a, split_rows(a.n, 2), layout, ValueChoice::f32);
    ASSERT_EQ(f32.values.storage, ValueStorage::f32);
    double entries = 0;
    for (const RankPlan& p : f64.rank)
      entries += static_cast<double>(layout == SpmvChoice::sell ? p.sell_entries : p.nnz());
    for (const Variant v : {Variant::standard, Variant::pipelined})
      for (const bool discrete : {false, true})
        EXPECT_EQ(mem_bytes_per_iter(f64, v, discrete) - mem_bytes_per_iter(f32, v, discrete), 4.0 * entries);
    if (layout == SpmvChoice::sell) {
      const Plan table = make_plan(a, split_rows(a.n, 2), layout, ValueChoice::automatic);
      ASSERT_EQ(table.values.storage, ValueStorage::table);
      EXPECT_EQ(mem_bytes_per_iter(f64, Variant::standard, false) - mem_bytes_per_iter(table, Variant::standard, false),
                7.0 * entries);
    }
  }
}

TEST(CgRunOptions, HostThreadsAreOneOrZero) {
  EXPECT_FALSE(parse_host_threads(nullptr));
  EXPECT_FALSE(parse_host_threads(""));
  EXPECT_FALSE(parse_host_threads("0"));
  EXPECT_TRUE(parse_host_threads("1"));
  const std::string e = error_of([] { parse_host_threads("yes"); });
  EXPECT_NE(e.find("GPSM_CG_HOST_THREADS=yes"), std::string::npos) << e;
}
