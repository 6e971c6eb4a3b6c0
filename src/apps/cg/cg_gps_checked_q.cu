// CG's gps paradigm: the checked Standard kernels with q kept in the block's shared memory (GpsStd::q_slots > 0),
// one file of their own so that the build compiles them beside the rest (cg_gps_std.cuh).
#include "apps/cg/cg_gps_std.cuh"

namespace gpsm::apps::cg {

const void* gps_std_checked_q_kernel(int lanes, EntryKind kind) {
  const void* k = nullptr;
  with_shape(lanes, kind, [&](auto l, auto v, auto ix) {
    constexpr int kL = decltype(l)::value;
    k = reinterpret_cast<const void*>(gps_std_kernel_gps<kL, decltype(v), decltype(ix), true>);
  });
  return k;
}

}  // namespace gpsm::apps::cg
