#include "common/sizes.hpp"

#include <cctype>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpsm {

std::uint64_t parse_size(const std::string& in) {
  std::string s;
  for (char c : in)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) throw std::invalid_argument("bad size '" + in + "' (expected e.g. 4, 64K, 1MiB, 1G)");
  // digits past 2^64 are an overflow to report, not std::stoull's bare out_of_range
  std::uint64_t v = 0;
  for (size_t k = 0; k < i; ++k) {
    const unsigned d = static_cast<unsigned>(s[k] - '0');
    if (v > (UINT64_MAX - d) / 10) throw std::invalid_argument("size too large: '" + in + "' (at most 2^64-1 bytes)");
    v = v * 10 + d;
  }
  std::string suf = s.substr(i);
  for (auto& c : suf) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suf.empty() || suf == "B") shift = 0;
  else if (suf == "K" || suf == "KB" || suf == "KIB") shift = 10;
  else if (suf == "M" || suf == "MB" || suf == "MIB") shift = 20;
  else if (suf == "G" || suf == "GB" || suf == "GIB") shift = 30;
  else throw std::invalid_argument("bad size suffix in '" + in + "' (use K, M or G)");
  if (v == 0) throw std::invalid_argument("size must be positive: '" + in + "'");
  if (v > (UINT64_MAX >> shift)) throw std::invalid_argument("size too large: '" + in + "'");
  return v << shift;
}

std::string format_size(std::uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && b >= 1024 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + units[u];
}

}  // namespace gpsm
