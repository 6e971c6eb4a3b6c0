#pragma once
// A private temporary folder (mkdtemp under $TMPDIR, else /tmp), removed with everything in it
// when the object goes: the nvshmem workers' unique ID and results, and `gpsm bench --isolate`'s
// child logs and outcomes, live in one each. Plain POSIX C++, CPU-tested.
#include <string>

namespace gpsm {

class TempDir {
 public:
  // prefix: the folder name's start ("gpsm-nvshmem"); what is for, in the error when it fails.
  // Throws gpsm::Error naming the path and the reason.
  TempDir(const std::string& prefix, const std::string& what);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace gpsm
