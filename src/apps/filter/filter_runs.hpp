#pragma once
// The image filter's runs, one per paradigm (filter_runs_cuda.cpp), for `gpsm bench --app filter`
// and `gpsm filter`: set up on a context's GPUs (untimed), apply the filter `iters` times
// ping-pong (timed), gather the image.
#include <memory>
#include <string>
#include <vector>

#include "apps/filter/filter_reference.hpp"
#include "apps/filter/filter_spec.hpp"
#include "apps/harness/paradigm.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::filter {

struct FilterJob {
  const Image* input = nullptr;
  std::vector<float> weights;  // k*k, row-major
  int k = 0;
  WeightsAt at = WeightsAt::constant;
};

class FilterRun {
 public:
  virtual ~FilterRun() = default;
  virtual void init() = 0;                    // the input image in place (untimed)
  virtual double solve(int iters) = 0;        // host wall clock of `iters` passes, every GPU idle at the end
  virtual Image gather() = 0;                 // after solve: the last pass's output
  virtual double link_bytes_per_iter() const = 0;  // < 0: not known
  virtual std::string timing() const {
    return "host wall clock of the passes (setup excluded), every GPU idle at the end, divided by the passes";
  }
};

// Paradigms: single, memcpy, um, p2p_inline, rdl (the distributed array), gps, infinite. Throws
// gpsm::Error for another one, and when the rows cannot be split (split_problem).
std::unique_ptr<FilterRun> make_filter_run(gps::Context& ctx, Paradigm par, const FilterJob& job);
bool filter_has(Paradigm p);

}  // namespace gpsm::apps::filter
