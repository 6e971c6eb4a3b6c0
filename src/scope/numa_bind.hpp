#pragma once
// Binds the calling thread (CPU affinity) and its future page allocations (memory policy) to one
// NUMA node for the life of the object, so host buffers and the thread driving copies sit where a
// test says they do. Restores the previous affinity and the default policy on destruction.
#include <string>

#include <sched.h>

namespace gpsm::scope {

class NumaBinding {
 public:
  // cpulist like "0-15,32-47"; node < 0 binds CPUs only. Throws gpsm::Error on failure.
  NumaBinding(int node, const std::string& cpulist);
  ~NumaBinding();
  NumaBinding(const NumaBinding&) = delete;
  NumaBinding& operator=(const NumaBinding&) = delete;

 private:
  cpu_set_t saved_{};
  bool policy_set_ = false;
};

}  // namespace gpsm::scope
