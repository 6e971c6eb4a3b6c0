#include "apps/harness/loop_launch.hpp"

#include <cstdlib>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps {

LoopLaunch loop_launch_from_env() {
  const char* v = std::getenv("GPSM_HOST_LOOP");
  if (v == nullptr || *v == '\0' || std::string(v) == "graph") return LoopLaunch::graph;
  if (std::string(v) == "stream") return LoopLaunch::stream;
  throw gpsm::Error(std::string("gpsm: GPSM_HOST_LOOP='") + v +
                    "' is not a host-loop launch mode; use graph (one CUDA graph of all iterations, the default) or "
                    "stream (a launch per GPU per iteration)");
}

}  // namespace gpsm::apps
