#pragma once
// gpsm sim --explain: what set each kernel's time in the model, for a run's last traced iteration.

#include <string>

#include "sim/engine.hpp"

namespace gpsm::sim {

// One line per kernel of r.kernels, e.g.
//   "gpu0 step: 68.20 us, serial bound; roofline 57.05 us x1.00 wave (dram 57.05 us / 201.33 MB,
//    l2 9.86 us / 69.00 MB, flops 1.21 us); serial 68.20 us; chain -; issue -"
// (one line each; "-" where a bound does not apply; the issue term names its warp instructions
// where the trace gives them). Empty when r has no kernels.
std::string explain_kernels(const SimResult& r);

// One line for r.loop, e.g.
//   "loop: 38.38 us, host bound; GPUs 20.19 us + hop 5.36 us, host 38.38 us (calls named), read-back -"
std::string explain_loop(const SimResult& r);

}  // namespace gpsm::sim
