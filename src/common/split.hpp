#pragma once
// Splitting option values and specs at a separator: one place for what the CLI parsers share.
#include <string>
#include <vector>

namespace gpsm {

// Every field, empty ones kept ("a,,b" -> a, "", b; "" -> one empty field; "a," -> a, ""), so a
// parser can name an empty entry as an error instead of skipping it.
inline std::vector<std::string> split_fields(const std::string& s, char sep = ',') {
  std::vector<std::string> out{""};
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

// The non-empty fields only ("a,,b," -> a, b): lists where a stray separator means nothing.
inline std::vector<std::string> split_nonempty(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  for (std::string& f : split_fields(s, sep))
    if (!f.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace gpsm
