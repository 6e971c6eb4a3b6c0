#pragma once
// This process's executable, read from /proc/self/exe: what `gpsm bench --isolate` starts for its
// children, and the folder the NVSHMEM workers and report.py are looked for beside. Plain C++.
#include <string>

namespace gpsm {

// The executable's path. Throws gpsm::Error "gpsm: <what>: cannot read /proc/self/exe (<reason>)".
std::string self_exe(const std::string& what);

}  // namespace gpsm
