#pragma once
// The host-driven Jacobi runs kept in their own files (um, um_hints, rdl, nccl): what
// jacobi_app_cuda.cpp needs to drive them like its other host-loop paradigms.
#include <string>
#include <vector>

namespace gpsm::apps::jacobi {

struct LoopTiming {
  double seconds = 0;  // host wall clock of the solve loop
  int iterations = 0;
  double norm = 0;
};

class HostLoopRun {
 public:
  virtual ~HostLoopRun() = default;
  virtual void init() = 0;                         // initial grid (setup, untimed)
  virtual LoopTiming solve() = 0;                  // the timed loop
  virtual std::vector<float> gather() = 0;         // ny x nx, interior rows filled
  virtual double link_bytes_per_iter() const = 0;  // < 0: not known (page migrations)
  // Empty when the run's set-up is as asked (um_hints: every hint read back), else why not.
  virtual std::string check() const { return ""; }
};

}  // namespace gpsm::apps::jacobi
