#pragma once
// How the 3D apps' gps step launches its split items (GPSM_3D_GPS_LAUNCH; plain C++, CPU-tested):
//   two (the default): the published items in a kernel of their own on the side stream, the plain
//                      ones beside them on the run's stream, joined before the fence (two kernels
//                      and a fork and join per GPU per iteration);
//   one:               both in one kernel on the run's stream, the published items first, through a
//                      function of their own so the plain items keep the plain kernel's registers
//                      (one kernel per GPU per iteration, as the hand-written steps).
// Why a choice: on 2xH200 at 256^3 gps ran ~1.1x um_hints, the best hand-written paradigm, with
// the same bytes as p2p_inline; what the second kernel and the fork and join cost per iteration
// is unmeasured. experiments/gps-ratio/one_launch_ab.sh measures both in one call.
#include <cstdint>

namespace gpsm::apps::stencil3d {

enum class GpsSplitLaunch : std::uint8_t { two, one };

// null, "" or "two" (the default), or "one". Throws gpsm::Error otherwise.
GpsSplitLaunch parse_gps_split_launch(const char* text);
GpsSplitLaunch gps_split_launch_from_env();
const char* gps_split_launch_name(GpsSplitLaunch l);

}  // namespace gpsm::apps::stencil3d
