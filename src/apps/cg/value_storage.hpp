#pragma once
// How a GPU keeps its matrix values for CG's SpMV (plain C++, CPU-tested): as doubles, as floats
// when every value of the matrix is exactly a float, or, in the sliced layout, as 1-byte indices
// into a table of the matrix's distinct doubles when it has at most 256 (padding's 0 included).
// The kernels widen each float to the double it was (exact) and read each table entry as the
// double it holds, so the arithmetic and the bits are unchanged (cg_math.hpp); a sliced or CSR
// entry's value reads 4 or 1 bytes instead of 8. Value compression after Kourtis, Goumas and
// Koziris, "Optimizing sparse matrix-vector multiplication using index and value compression" (CF
// 2008), whose value-indexed formats keep the unique values once: SpMV is bound by the bytes it
// reads, and many SPD operators hold few, short values (Poisson's 4 and -1, the elasticity
// stand-in's 26, -1, 1/4, pattern and integer Matrix Market files). A matrix with any value a
// float cannot hold (0.1, most assembled FEM matrices, the `banded` generator's random weights)
// and more than 256 distinct values stays double. GPSM_CG_VALUES forces a choice.
//
// The table is the sliced layout's only (with 16-bit column indices or without): every kernel
// instantiation is per (lanes, value type, index type), and the CSR path serves rows of 16 or
// more nonzeros, whose kernels keep two value types (sell_deltas.hpp, cg_device.cuh).
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::cg {

enum class ValueStorage : std::uint8_t { f64, f32, table };
const char* value_storage_name(ValueStorage s);  // "f64", "f32", "table"
constexpr int value_bytes(ValueStorage s) { return s == ValueStorage::table ? 1 : s == ValueStorage::f32 ? 4 : 8; }

// What the user asks for (GPSM_CG_VALUES): the automatic choice, or one storage forced.
enum class ValueChoice : std::uint8_t { automatic, f64, f32, table };
// GPSM_CG_VALUES's value: null or "" or "auto", "f64", "f32", "table". Throws gpsm::Error otherwise.
ValueChoice parse_value_choice(const char* text);
const char* value_choice_name(ValueChoice c);  // "auto", "f64", "f32", "table"

constexpr int kTableValues = 256;  // a 1-byte index

// Index of the first value that is not exactly a float (double(float(v)) != v), or -1.
std::int64_t first_inexact_float(const std::vector<double>& values);

struct ValuesChoice {
  ValueStorage storage = ValueStorage::f64;
  std::string reason;
};
// sliced: the run's layout is SELL-32. Automatic: a table when sliced and the values with 0 hold
// at most kTableValues distinct doubles, else f32 when every value is exactly a float, else f64.
// Forced: throws gpsm::Error when the storage would change the matrix (naming the first value
// that is not a float, or the count past 256) or, for a table, when the layout is CSR.
ValuesChoice choose_values(const std::vector<double>& values, ValueChoice want, bool sliced);

// The values as floats (each exact: the caller chose f32).
std::vector<float> to_floats(const std::vector<double>& values);

// Distinct doubles by bit pattern (-0 and +0 apart: the table gives back each value's bits),
// ascending by bits, +0 always among them (the sliced layout's padding); stops counting past
// `most` (then holds most + 1).
std::vector<double> distinct_values(const std::vector<double>& values, int most);

// The values as indices into a table: values[k] == table[index[k]] bit for bit.
struct ValueTable {
  std::vector<double> table;          // distinct_values, at most kTableValues
  std::vector<std::uint8_t> index;    // per value
};
// Throws gpsm::Error when the values hold more than kTableValues distinct doubles (with +0).
ValueTable make_value_table(const std::vector<double>& values);

}  // namespace gpsm::apps::cg
