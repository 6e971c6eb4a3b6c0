#include "common/self_exe.hpp"

#include <filesystem>
#include <system_error>

#include "gpsm/error.hpp"

namespace gpsm {

std::string self_exe(const std::string& what) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("gpsm: " + what + ": cannot read /proc/self/exe (" + ec.message() + ")");
  return p.string();
}

}  // namespace gpsm
