// How a GPU keeps CG's matrix values (value_storage.hpp).
#include "apps/cg/value_storage.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "apps/cg/env_choice.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const char* value_storage_name(ValueStorage s) {
  return s == ValueStorage::table ? "table" : s == ValueStorage::f32 ? "f32" : "f64";
}

namespace {
constexpr ChoiceName<ValueChoice> kValueChoices[] = {{"auto", ValueChoice::automatic},
                                                     {"f64", ValueChoice::f64},
                                                     {"f32", ValueChoice::f32},
                                                     {"table", ValueChoice::table}};
}  // namespace

const char* value_choice_name(ValueChoice c) { return choice_name(c, kValueChoices); }

ValueChoice parse_value_choice(const char* text) {
  return parse_choice("GPSM_CG_VALUES", "a value storage", text, kValueChoices);
}

std::int64_t first_inexact_float(const std::vector<double>& values) {
  for (std::size_t k = 0; k < values.size(); ++k)
    if (static_cast<double>(static_cast<float>(values[k])) != values[k]) return static_cast<std::int64_t>(k);
  return -1;
}

namespace {
std::uint64_t bits_of(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
double of_bits(std::uint64_t b) {
  double v = 0;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
}  // namespace

std::vector<double> distinct_values(const std::vector<double>& values, int most) {
  std::vector<std::uint64_t> seen = {0};  // +0, ascending; a binary search per value
  for (double v : values) {
    const std::uint64_t b = bits_of(v);
    const auto it = std::lower_bound(seen.begin(), seen.end(), b);
    if (it != seen.end() && *it == b) continue;
    seen.insert(it, b);
    if (static_cast<int>(seen.size()) > most) break;
  }
  std::vector<double> out;
  for (std::uint64_t b : seen) out.push_back(of_bits(b));
  return out;
}

ValuesChoice choose_values(const std::vector<double>& values, ValueChoice want, bool sliced) {
  if (want == ValueChoice::f64) return {ValueStorage::f64, "values f64 (GPSM_CG_VALUES=f64)"};
  if (want == ValueChoice::table || (want == ValueChoice::automatic && sliced)) {
    const auto n = static_cast<int>(distinct_values(values, kTableValues).size());
    if (want == ValueChoice::table && !sliced)
      throw gpsm::Error("gpsm: cg: GPSM_CG_VALUES=table, but this run's SpMV layout is CSR: the value table is a "
                        "form of the sliced layout (use f64, f32 or auto, or GPSM_CG_SPMV=sell where rows are short)");
    if (n <= kTableValues)
      return {ValueStorage::table,
              fmt::format("values as 1-byte indices into a table of {} doubles{} (padding's 0 included)", n,
                          want == ValueChoice::table ? " (GPSM_CG_VALUES=table)" : "")};
    if (want == ValueChoice::table)
      throw gpsm::Error(fmt::format("gpsm: cg: GPSM_CG_VALUES=table, but the matrix holds more than {} distinct values "
                                    "(with the padding's 0): a 1-byte index cannot name them (use f64, f32 or auto)",
                                    kTableValues));
  }
  const std::int64_t bad = first_inexact_float(values);
  if (bad < 0)
    return {ValueStorage::f32,
            want == ValueChoice::f32
                ? "values f32 (GPSM_CG_VALUES=f32; every value is exactly a float)"
                : fmt::format("values f32: every value is exactly a float (read as the same doubles){}",
                              sliced ? fmt::format("; more than {} distinct, no table", kTableValues) : "")};
  if (want == ValueChoice::f32)
    throw gpsm::Error(fmt::format("gpsm: cg: GPSM_CG_VALUES=f32, but stored value {} ({:.17g}) is not exactly a float: "
                                  "storing it as one would change the matrix (use f64 or auto)",
                                  bad, values[static_cast<std::size_t>(bad)]));
  return {ValueStorage::f64, fmt::format("values f64: value {} ({:.17g}) is not exactly a float{}", bad,
                                         values[static_cast<std::size_t>(bad)],
                                         sliced ? fmt::format(", and more than {} distinct", kTableValues) : "")};
}

ValueTable make_value_table(const std::vector<double>& values) {
  ValueTable t;
  t.table = distinct_values(values, kTableValues);
  if (static_cast<int>(t.table.size()) > kTableValues)
    throw gpsm::Error(fmt::format("gpsm: cg: a value table takes at most {} distinct values", kTableValues));
  std::vector<std::uint64_t> bits;
  for (double v : t.table) bits.push_back(bits_of(v));
  t.index.resize(values.size());
  for (std::size_t k = 0; k < values.size(); ++k)
    t.index[k] = static_cast<std::uint8_t>(std::lower_bound(bits.begin(), bits.end(), bits_of(values[k])) - bits.begin());
  return t;
}

std::vector<float> to_floats(const std::vector<double>& values) {
  std::vector<float> f(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) f[k] = static_cast<float>(values[k]);
  return f;
}

}  // namespace gpsm::apps::cg
