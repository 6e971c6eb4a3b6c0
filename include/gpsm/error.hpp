#pragma once
// gpsm's one error type: what failed, where, and what to do about it.
#include <stdexcept>
#include <string>

namespace gpsm {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace gpsm
