#pragma once
// heat3d and wave3d on the GPU: launchers for the kernels of every paradigm (stencil3d_kernels.cu).
// Host orchestration lives in stencil3d_app_cuda.cpp; the decomposition in apps/stencil/decomp.hpp.
//
// Every kernel works on one rank's local box (Slab3D::local, x fastest): `radius` halo planes on
// both sides of the split axis, the whole extent of the two other axes. The cells it updates are
// local coordinates [radius, local - radius) on every axis: the boundary layer of the other two
// axes is as thick as the halo, so one rule covers both.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpsm/gps/barrier.hpp"

namespace gpsm::apps::stencil3d {

enum class Kind : std::uint8_t {
  heat,  // 7-point explicit diffusion, radius 1: out = heat_point(in)
  wave,  // 4th-order 13-point star, radius 2, leapfrog: out holds prev on entry and next on exit
};
constexpr int radius_of(Kind k) { return k == Kind::heat ? 1 : 2; }

// One rank's local box: extents (x fastest), the split axis (0 = x, 1 = y, 2 = z) and the planes
// it owns along that axis, local [radius, radius + count).
struct Box {
  std::int64_t n[3] = {0, 0, 0};
  int axis = 2;
  std::int64_t count = 0;
};

// Where updated cells also go by peer store: a neighbour's buffer (dst), its y and z strides, and
// the shift from this rank's split coordinate to the neighbour's (the other two coordinates are
// the same on both ranks). dst == nullptr: no push on that side.
struct Push {
  float* dst = nullptr;
  std::int64_t sy = 0, sz = 0;
  std::int64_t shift = 0;
};

// One iteration on one rank: reads `in` (halos included), writes the updated cells of `out`. The
// first `radius` owned planes also go to `lower`, the last `radius` to `upper` (p2p_inline).
struct Step {
  const float* in = nullptr;
  float* out = nullptr;
  Box box;
  Push lower, upper;
};
void launch_step(Kind k, const Step& s, cudaStream_t st);

// Initial values of one local buffer, computed on the device from the global cell index: cells in
// the global interior get initial_value(cell, seed_interior), the boundary layer seed_boundary.
// poison_lower / poison_upper: the interior cells of the lower / upper halo planes are NaN instead
// (halos a neighbour must fill before they are read).
struct Init {
  float* buf = nullptr;
  Box box;
  int radius = 1;
  std::int64_t global[3] = {0, 0, 0};  // global extents
  std::int64_t offset = 0;             // global split coordinate of local plane 0
  std::uint32_t seed_interior = 1, seed_boundary = 1;
  bool poison_lower = false, poison_upper = false;
};
void launch_init(const Init& s, cudaStream_t st);

// Copies a box of e[0] x e[1] x e[2] cells between two strided layouts (x stride 1): packs a
// strided halo region into a contiguous buffer (dst_sy = e[0], dst_sz = e[0] * e[1]) or unpacks one.
struct BoxCopy {
  const float* src = nullptr;
  std::int64_t src_sy = 0, src_sz = 0;
  float* dst = nullptr;
  std::int64_t dst_sy = 0, dst_sz = 0;
  std::int64_t e[3] = {0, 0, 0};
};
void launch_box_copy(const BoxCopy& c, cudaStream_t st);

// CPU-free: one persistent cooperative kernel per GPU runs every iteration. Boundary planes go to
// the neighbours' halos by peer stores; a device barrier across the GPUs (block 0 of each) ends
// each iteration.
struct CpuFree {
  float* buf[2] = {};          // this rank's two buffers; iteration t reads buf[t % 2], writes the other
  Push lower[2], upper[2];     // [b]: pushes into the neighbours' buf[b]
  Box box;
  gps::BarrierHandle barrier;  // one participant block per GPU
  int iters = 0;
  int* done = nullptr;         // this GPU: iterations run (written at the end)
};
// Blocks per GPU the persistent kernel uses (all co-resident); threads per block.
int cpu_free_blocks(Kind k, int device);
constexpr int kCpuFreeThreads = 256;
const void* cpu_free_kernel(Kind k);
void launch_cpu_free(Kind k, const CpuFree& c, int blocks, cudaStream_t st);

}  // namespace gpsm::apps::stencil3d
