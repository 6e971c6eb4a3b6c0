#pragma once
// The kernels of the `gps` paradigm (ct_multi.hpp): the image and the subset's residual are GPS
// arrays (include/gpsm/gps), each GPU storing its part through its views and the runtime
// publishing the stores to the subscribers at the next fence. The arithmetic is the other
// paradigms' (ct_kernels.hpp): the same device functions, reading through GpsRead while the
// subscriptions are learned (View::load marks the pages read) and from the local replica once
// the GPU subscribes to every page, and storing through GpsWrite (View::store).
#include <cuda_runtime.h>

#include <cstdint>

#include "apps/ct/ct_kernels.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::ct {

// Reads x[i] through a view: the local replica, or the page's home where this GPU does not
// subscribe; marks the page touched while tracking.
struct GpsRead {
  gps::View<float> v;
#ifdef __CUDACC__
  __device__ __forceinline__ float operator[](std::int64_t i) const { return v.load(static_cast<std::uint64_t>(i)); }
#endif
};
// Stores through a view (the local replica, published to the page's other subscribers).
struct GpsWrite {
  gps::View<float> v;
};

// launch_forward_project reading the image through its view (the tracking pass; afterwards the
// plain launcher reads the local replica). `out` is plain memory.
void launch_forward_project_gps(const Geometry& g, const ViewPose* poses, const gps::View<float>& image,
                                const std::int32_t* views, int count, int tile_rows, float* out, cudaStream_t st,
                                ForwardSplit split = {});

// r[first + i] = w (ax[i] - y) at views[i / cells], stored through r's view: the weighted residual
// of launch_weighted_residual (the same arithmetic), A x in plain memory, the result published.
void launch_weighted_residual_gps(const Geometry& g, const float* y, const float* w, const std::int32_t* views,
                                  int count, const float* ax, const gps::View<float>& r, std::int64_t first,
                                  cudaStream_t st);

// launch_update_planes storing through x_new's view. x_local and r_local: the local replicas to
// read (a GPU subscribed to every page, tracking off), or both null to read through x and r.
void launch_update_planes_gps(const Geometry& g, const Penalty& pen, const float* d, int subsets,
                              const gps::View<float>& x, const float* x_local, const ViewPose* poses,
                              const gps::View<float>& r, const float* r_local, const std::int32_t* views, int count,
                              int y0, int y1, const gps::View<float>& x_new, cudaStream_t st);

}  // namespace gpsm::apps::ct
