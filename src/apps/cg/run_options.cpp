// CG run options from the environment (run_options.hpp).
#include "apps/cg/run_options.hpp"

#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

bool parse_host_threads(const char* text) {
  const std::string t = text == nullptr ? "" : text;
  if (t.empty() || t == "0") return false;
  if (t == "1") return true;
  throw gpsm::Error("gpsm: GPSM_CG_HOST_THREADS=" + t + ": use 1 (a host thread per GPU) or 0 (one host thread, the default)");
}

}  // namespace gpsm::apps::cg
