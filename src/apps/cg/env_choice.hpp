#pragma once
// CG's storage and layout knobs (GPSM_CG_SPMV, GPSM_CG_VALUES, GPSM_CG_INDEX) are each an enum
// whose first value is `automatic`, named "auto". One table per enum gives both directions, so the
// parser, the name and the error's list of accepted words cannot drift apart.
#include <cstddef>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

template <class E>
struct ChoiceName {
  const char* name;
  E value;
};

// `text` (an environment variable's value, may be null) against `names`, whose first entry is the
// default ("auto"), also taken for null and "". Else throws gpsm::Error:
// "gpsm: VAR=text: not WHAT; use a, b or auto (the default)".
template <class E, std::size_t N>
E parse_choice(const char* var, const char* what, const char* text, const ChoiceName<E> (&names)[N]) {
  static_assert(N >= 2, "a choice names its default and at least one other value");
  const std::string t = text == nullptr ? "" : text;
  if (t.empty()) return names[0].value;
  for (const ChoiceName<E>& c : names)
    if (t == c.name) return c.value;
  std::string use;
  for (std::size_t k = 1; k < N; ++k) use += std::string(k > 1 ? ", " : "") + names[k].name;
  throw gpsm::Error("gpsm: " + std::string(var) + "=" + t + ": not " + what + "; use " + use + " or " + names[0].name +
                    " (the default)");
}

// The name of `v` in `names` (the default's name for a value not listed).
template <class E, std::size_t N>
const char* choice_name(E v, const ChoiceName<E> (&names)[N]) {
  for (const ChoiceName<E>& c : names)
    if (c.value == v) return c.name;
  return names[0].name;
}

}  // namespace gpsm::apps::cg
