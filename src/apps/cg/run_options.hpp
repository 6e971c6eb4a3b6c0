#pragma once
// CG run options read from the environment (plain C++, CPU-tested). The SpMV layout and the value
// storage are the plan's (sell.hpp, value_storage.hpp); these shape how a run is driven.
namespace gpsm::apps::cg {

// GPSM_CG_HOST_THREADS: whether the CPU-controlled paradigms (cpu_ctrl_std, cpu_ctrl_pipe) issue
// each GPU's calls from a host thread of its own ("1") or every GPU's from one thread (unset, ""
// or "0": the default). Throws gpsm::Error on any other value.
bool parse_host_threads(const char* text);

}  // namespace gpsm::apps::cg
