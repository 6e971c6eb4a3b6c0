#pragma once
// fd3d's steps on GPS arrays (fd3d_gps_kernels.cu), for the gps paradigm (fd3d_gps_run_cuda.cpp).
// Both take a step whose source and sink are global_piece / global_sink (fd3d_gps_layout.hpp) over
// the views' local replicas, so the index of a box cell is its global cell, the views' element.
//   launch_fd_gps_step      fd3d's tile kernel (fd3d_block.hpp's phases) loading from this GPU's
//                           replica, valid when the GPU holds every page of read_boxes, and asking
//                           the output view per work item: an item whose stored planes no other
//                           GPU subscribes to stores plainly, else each cell goes through `out` (a
//                           span per row of its tile and plane), which publishes it.
//   launch_fd_checked_step  one thread per updated cell, every load and store through the views:
//                           a page's mask per access (marked touched while tracking). The tracking
//                           pass, and a GPU that lacks a page it reads.
#include <cuda_runtime.h>

#include "apps/fd3d/fd3d_step.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::fd3d {

// On the current device; s.radius one of kHalos (fd3d_spec.hpp), s.in without remote pieces.
// Throws gpsm::Error.
void launch_fd_gps_step(const FdStep& s, const gps::View<float>& out, cudaStream_t st);
void launch_fd_checked_step(const FdStep& s, const gps::View<float>& in, const gps::View<float>& out,
                            cudaStream_t st);

}  // namespace gpsm::apps::fd3d
