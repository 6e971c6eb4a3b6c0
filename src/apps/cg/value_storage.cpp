// How a GPU keeps CG's matrix values (value_storage.hpp).
#include "apps/cg/value_storage.hpp"

#include <fmt/format.h>

#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const char* value_storage_name(ValueStorage s) { return s == ValueStorage::f32 ? "f32" : "f64"; }

const char* value_choice_name(ValueChoice c) {
  switch (c) {
    case ValueChoice::f64: return "f64";
    case ValueChoice::f32: return "f32";
    default: return "auto";
  }
}

ValueChoice parse_value_choice(const char* text) {
  const std::string t = text == nullptr ? "" : text;
  if (t.empty() || t == "auto") return ValueChoice::automatic;
  if (t == "f64") return ValueChoice::f64;
  if (t == "f32") return ValueChoice::f32;
  throw gpsm::Error("gpsm: GPSM_CG_VALUES=" + t + ": not a value storage; use f64, f32 or auto (the default)");
}

std::int64_t first_inexact_float(const std::vector<double>& values) {
  for (std::size_t k = 0; k < values.size(); ++k)
    if (static_cast<double>(static_cast<float>(values[k])) != values[k]) return static_cast<std::int64_t>(k);
  return -1;
}

ValuesChoice choose_values(const std::vector<double>& values, ValueChoice want) {
  if (want == ValueChoice::f64) return {ValueStorage::f64, "values f64 (GPSM_CG_VALUES=f64)"};
  const std::int64_t bad = first_inexact_float(values);
  if (bad < 0)
    return {ValueStorage::f32, want == ValueChoice::f32 ? "values f32 (GPSM_CG_VALUES=f32; every value is exactly a float)"
                                                        : "values f32: every value is exactly a float (read as the same doubles)"};
  if (want == ValueChoice::f32)
    throw gpsm::Error(fmt::format("gpsm: cg: GPSM_CG_VALUES=f32, but stored value {} ({:.17g}) is not exactly a float: "
                                  "storing it as one would change the matrix (use f64 or auto)",
                                  bad, values[static_cast<std::size_t>(bad)]));
  return {ValueStorage::f64, fmt::format("values f64: value {} ({:.17g}) is not exactly a float", bad,
                                         values[static_cast<std::size_t>(bad)])};
}

std::vector<float> to_floats(const std::vector<double>& values) {
  std::vector<float> f(values.size());
  for (std::size_t k = 0; k < values.size(); ++k) f[k] = static_cast<float>(values[k]);
  return f;
}

}  // namespace gpsm::apps::cg
