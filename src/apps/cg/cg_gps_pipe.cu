// CG's gps_pipe paradigm on the device: the kernel dispatch, the launch and the sole kernels; the
// kernels' code is cg_gps_pipe_std.cuh, the checked kernels are instantiated in
// cg_gps_pipe_checked.cu.
#include <algorithm>

#include "apps/cg/cg_gps_pipe_std.cuh"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

const void* gps_pipe_kernel(int lanes, EntryKind kind, bool sole) {
  if (!sole) return gps_pipe_checked_kernel(lanes, kind);
  const void* k = nullptr;
  with_shape(lanes, kind, [&](auto l, auto v, auto ix) {
    constexpr int kL = decltype(l)::value;
    k = reinterpret_cast<const void*>(gps_pipe_kernel_impl<kL, decltype(v), decltype(ix), true>);
  });
  return k;
}

std::size_t gps_pipe_smem(int rows_per_thread) {
  return static_cast<std::size_t>(chunk_rows(rows_per_thread)) * sizeof(double) *
         static_cast<std::size_t>(pipe_slots(rows_per_thread));
}

int gps_pipe_blocks(int device, int lanes, EntryKind kind, int rows_per_thread) {
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaSetDevice(device));
  for (const bool sole : {false, true}) {
    int n = 0;
    GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, gps_pipe_kernel(lanes, kind, sole), kThreads,
                                                            gps_pipe_smem(rows_per_thread)));
    per_sm = sole ? std::min(per_sm, n) : n;
  }
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw gpsm::Error("gpsm: cg: the gps_pipe kernel does not fit on an SM of device " + std::to_string(device));
  return per_sm * sms;
}

void launch_gps_pipe(const GpsPipe& g, int blocks, cudaStream_t st) {
  GpsPipe arg = g;
  void* args[] = {&arg};
  GPSM_CUDA(cudaLaunchCooperativeKernel(gps_pipe_kernel(g.a.lanes, g.a.kind(), g.sole), dim3(static_cast<unsigned>(blocks)),
                                        dim3(kThreads), args, gps_pipe_smem(g.a.rows_per_thread), st));
}

}  // namespace gpsm::apps::cg
