#pragma once
// CG run options read from the environment (plain C++, CPU-tested), read per run so that one
// process can compare them (docs/cg.md). The SpMV layout, the value and index storage and the rows
// a thread shape the plan (sell.hpp, value_storage.hpp, sell_deltas.hpp, partition.hpp); the host
// threads how a CPU-controlled run is driven.
#include "apps/cg/q_storage.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/sell_deltas.hpp"
#include "apps/cg/value_storage.hpp"

namespace gpsm::apps::cg {

// GPSM_CG_HOST_THREADS: whether the CPU-controlled paradigms (cpu_ctrl_std, cpu_ctrl_pipe) issue
// each GPU's calls from a host thread of its own ("1") or every GPU's from one thread (unset, ""
// or "0": the default). Throws gpsm::Error on any other value.
bool parse_host_threads(const char* text);

struct CgEnv {
  SpmvChoice spmv = SpmvChoice::automatic;        // GPSM_CG_SPMV
  ValueChoice values = ValueChoice::automatic;    // GPSM_CG_VALUES
  IndexChoice index = IndexChoice::automatic;     // GPSM_CG_INDEX
  int rows_per_thread = 0;                        // GPSM_CG_ROWS_PER_THREAD (0: the plan's rule)
  bool host_threads = false;                      // GPSM_CG_HOST_THREADS
  QStorage q = QStorage::shared;                  // GPSM_CG_Q
};
// All six, each checked: throws gpsm::Error naming the first bad value.
CgEnv cg_env();

}  // namespace gpsm::apps::cg
