#pragma once
// CG's `gps_pipe` paradigm, device side (cg_gps_pipe.cu): Pipelined CG in one persistent kernel
// per GPU over the public GPS API. The vector the SpMV gathers, w, lives in two GPS arrays (one
// per iteration parity, inline publishing, subscriptions learned by tracking); each GPU stores its
// rows of the next w through the view, and the runtime's split-phase device fence (count_in,
// wait_local, publish_values in block 0, wait_all) reduces the dot products while the other
// blocks run the SpMV over chunks that read only pages no other GPU holds. Same arithmetic as
// cpu_free_pipe (cg_device.cuh, cg_math.hpp).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "apps/cg/cg_kernels.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::cg {

struct GpsPipe {
  DevMatrix a;                              // this GPU's rows; col holds global column ids
  std::int64_t first_row = 0;               // global index of local row 0
  const std::int32_t* col_range = nullptr;  // per chunk: lowest and highest column read
  gps::View<double> w[2];                   // iteration i reads w[i & 1], writes w[1 - (i & 1)] (global rows)
  double* x = nullptr;                      // own rows
  double* r = nullptr;
  double* z = nullptr;
  double* s = nullptr;
  double* p = nullptr;
  const std::int32_t* order = nullptr;  // chunks, interior (only pages no other GPU holds) first
  std::int32_t boundary_chunks = 0;     // the last this many of `order` may read other GPUs' rows
  double* part = nullptr;               // (r, r), (w, r) chunk partials, interleaved
  gps::DeviceFence fence;
  double* hist = nullptr;
  std::int32_t* iterations = nullptr;
  int iters = 0;
  double threshold = 0;
  bool tracking = false;  // every gather through View::load, so the runtime sees each page read
  bool sole = false;      // this GPU alone holds both arrays (Array::sole): the plain variant
};

// Resident blocks per GPU (the smaller of the two variants', so either may run on the same fences).
int gps_pipe_blocks(int device, int lanes, EntryKind kind, int rows_per_thread);  // kind: DevMatrix::kind
const void* gps_pipe_kernel(int lanes, EntryKind kind, bool sole);
std::size_t gps_pipe_smem(int rows_per_thread);
void launch_gps_pipe(const GpsPipe& g, int blocks, cudaStream_t st);

}  // namespace gpsm::apps::cg
