// CG's gps paradigm on the device: the kernel dispatch, the launch and the sole kernels; the
// kernels' code is cg_gps_std.cuh, the checked kernels are instantiated in cg_gps_checked.cu and
// cg_gps_checked_q.cu.
#include <algorithm>

#include "apps/cg/cg_gps_std.cuh"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const void* gps_std_kernel(int lanes, EntryKind kind, bool sole, bool keep_q) {
  if (!sole) return keep_q ? gps_std_checked_q_kernel(lanes, kind) : gps_std_checked_kernel(lanes, kind);
  const void* k = nullptr;
  with_shape(lanes, kind, [&](auto l, auto v, auto ix) {
    constexpr int kL = decltype(l)::value;
    using V = decltype(v);
    using Ix = decltype(ix);
    k = keep_q ? reinterpret_cast<const void*>(gps_std_kernel_sole<kL, V, Ix, true>)
               : reinterpret_cast<const void*>(gps_std_kernel_sole<kL, V, Ix, false>);
  });
  return k;
}

std::size_t gps_std_smem(int rows_per_thread, int q_slots) { return free_smem(false, rows_per_thread, q_slots); }

int gps_std_blocks(int device, int lanes, EntryKind kind, int rows_per_thread) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaSetDevice(device));
  for (const bool sole : {false, true}) {
    int n = 0;
    GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, gps_std_kernel(lanes, kind, sole), kThreads,
                                                            gps_std_smem(rows_per_thread)));
    per_sm = sole ? std::min(per_sm, n) : n;
  }
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw gpsm::Error("gpsm: cg: the gps kernel does not fit on an SM of device " + std::to_string(device));
  return per_sm * sms;
}

void launch_gps_std(const GpsStd& g, int blocks, cudaStream_t st) {
  GpsStd arg = g;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(gps_std_kernel(g.a.lanes, g.a.kind(), g.sole, g.q_slots > 0), dim3(static_cast<unsigned>(blocks)), dim3(kThreads),
                                        args, gps_std_smem(g.a.rows_per_thread, g.q_slots), st));
}

}  // namespace gpsm::apps::cg
