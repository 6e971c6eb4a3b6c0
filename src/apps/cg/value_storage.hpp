#pragma once
// How a GPU keeps its matrix values for CG's SpMV (plain C++, CPU-tested): as doubles, or as
// floats when every value of the matrix is exactly a float. The kernels widen each float to the
// double it was (exact), so the arithmetic and the bits are unchanged (cg_math.hpp); a sliced or
// CSR entry then reads 8 bytes instead of 12. Value compression after Kourtis, Goumas and Koziris,
// "Optimizing sparse matrix-vector multiplication using index and value compression" (CF 2008):
// SpMV is bound by the bytes it reads, and many SPD operators hold few, short values (Poisson's
// 4 and -1, the elasticity stand-in's 26, -1, 1/4, pattern and integer Matrix Market files). A
// matrix with any value a float cannot hold (0.1, most assembled FEM matrices, the `banded`
// generator's random weights) stays double. GPSM_CG_VALUES forces a choice.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::cg {

enum class ValueStorage : std::uint8_t { f64, f32 };
const char* value_storage_name(ValueStorage s);
constexpr int value_bytes(ValueStorage s) { return s == ValueStorage::f32 ? 4 : 8; }

// What the user asks for (GPSM_CG_VALUES): the automatic choice, or one storage forced.
enum class ValueChoice : std::uint8_t { automatic, f64, f32 };
// GPSM_CG_VALUES's value: null or "" or "auto", "f64", "f32". Throws gpsm::Error otherwise.
ValueChoice parse_value_choice(const char* text);
const char* value_choice_name(ValueChoice c);  // "auto", "f64", "f32"

// Index of the first value that is not exactly a float (double(float(v)) != v), or -1.
std::int64_t first_inexact_float(const std::vector<double>& values);

struct ValuesChoice {
  ValueStorage storage = ValueStorage::f64;
  std::string reason;
};
// f32 when every value is exactly a float (automatic) or when forced (throws gpsm::Error, naming
// the first value that is not, when one is not: forcing must not change the matrix).
ValuesChoice choose_values(const std::vector<double>& values, ValueChoice want);

// The values as floats (each exact: the caller chose f32).
std::vector<float> to_floats(const std::vector<double>& values);

}  // namespace gpsm::apps::cg
