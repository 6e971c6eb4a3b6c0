#include "scope/numa_bind.hpp"

#include <cerrno>
#include <cstring>

#include <sys/syscall.h>
#include <unistd.h>

#include "gpsm/error.hpp"
#include "scope/sysfs_probe.hpp"

namespace gpsm::scope {

namespace {
constexpr int kMpolDefault = 0;
constexpr int kMpolBind = 2;
}  // namespace

NumaBinding::NumaBinding(int node, const std::string& cpulist) {
  if (sched_getaffinity(0, sizeof(saved_), &saved_) != 0)
    throw gpsm::Error(std::string("gpsm: sched_getaffinity: ") + std::strerror(errno));
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : gpsm::topo::parse_cpulist(cpulist))
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  if (CPU_COUNT(&set) > 0 && sched_setaffinity(0, sizeof(set), &set) != 0)
    throw gpsm::Error("gpsm: cannot bind thread to CPUs " + cpulist + ": " + std::strerror(errno));
  if (node >= 0 && node < 64) {
    unsigned long mask = 1ul << node;
    if (syscall(SYS_set_mempolicy, kMpolBind, &mask, sizeof(mask) * 8 + 1) != 0) {
      const int e = errno;
      sched_setaffinity(0, sizeof(saved_), &saved_);
      throw gpsm::Error("gpsm: cannot bind memory to NUMA node " + std::to_string(node) + ": " + std::strerror(e));
    }
    policy_set_ = true;
  }
}

NumaBinding::~NumaBinding() {
  if (policy_set_) syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0);
  sched_setaffinity(0, sizeof(saved_), &saved_);
}

}  // namespace gpsm::scope
