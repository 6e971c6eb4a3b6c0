// CG run options from the environment (run_options.hpp).
#include "apps/cg/run_options.hpp"

#include <cstdlib>
#include <string>

#include "apps/cg/partition.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

bool parse_host_threads(const char* text) {
  const std::string t = text == nullptr ? "" : text;
  if (t.empty() || t == "0") return false;
  if (t == "1") return true;
  throw gpsm::Error("gpsm: GPSM_CG_HOST_THREADS=" + t + ": use 1 (a host thread per GPU) or 0 (one host thread, the default)");
}

CgEnv cg_env() {
  CgEnv e;
  e.spmv = parse_spmv_choice(std::getenv("GPSM_CG_SPMV"));
  e.values = parse_value_choice(std::getenv("GPSM_CG_VALUES"));
  e.index = parse_index_choice(std::getenv("GPSM_CG_INDEX"));
  e.rows_per_thread = parse_rows_per_thread(std::getenv("GPSM_CG_ROWS_PER_THREAD"));
  e.host_threads = parse_host_threads(std::getenv("GPSM_CG_HOST_THREADS"));
  e.q = parse_q_storage(std::getenv("GPSM_CG_Q"));
  return e;
}

}  // namespace gpsm::apps::cg
