// GPSM_3D_GPS_LAUNCH (stencil3d_gps_launch.hpp).
#include "apps/stencil3d/stencil3d_gps_launch.hpp"

#include <cstdlib>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::stencil3d {

GpsSplitLaunch parse_gps_split_launch(const char* text) {
  const std::string v = text == nullptr ? "" : text;
  if (v.empty() || v == "two") return GpsSplitLaunch::two;
  if (v == "one") return GpsSplitLaunch::one;
  throw gpsm::Error("gpsm: GPSM_3D_GPS_LAUNCH='" + v +
                    "' is not a launch of heat3d's and wave3d's gps step; use two (the default: the published items "
                    "in a kernel of their own beside the plain ones) or one (both in one kernel)");
}

GpsSplitLaunch gps_split_launch_from_env() { return parse_gps_split_launch(std::getenv("GPSM_3D_GPS_LAUNCH")); }

const char* gps_split_launch_name(GpsSplitLaunch l) { return l == GpsSplitLaunch::one ? "one" : "two"; }

}  // namespace gpsm::apps::stencil3d
