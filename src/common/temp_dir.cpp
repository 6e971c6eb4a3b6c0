#include "common/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "gpsm/error.hpp"

namespace gpsm {

TempDir::TempDir(const std::string& prefix, const std::string& what) {
  const char* t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t != nullptr && *t != '\0' ? t : "/tmp") + "/" + prefix + "-XXXXXX";
  const std::string asked = tmpl;  // mkdtemp overwrites the Xs even when it fails
  if (mkdtemp(tmpl.data()) == nullptr)
    throw gpsm::Error("gpsm: " + what + ": cannot create a temporary folder " + asked + " (" + std::strerror(errno) + ")");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace gpsm
