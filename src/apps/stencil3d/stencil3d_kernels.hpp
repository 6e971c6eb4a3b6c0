#pragma once
// heat3d and wave3d on the GPU: launchers for the kernels of every paradigm (stencil3d_kernels.cu).
// Host orchestration lives in stencil3d_app_cuda.cpp; the decomposition in apps/stencil/decomp.hpp.
//
// Every kernel works on one rank's local box (Slab3D::local, x fastest; for um a GPU's sub-box
// of the managed grid, see Step): `radius` halo planes on both sides of the split axis, the whole
// extent of the two other axes. The cells it updates are
// local coordinates [radius, local - radius) on every axis: the boundary layer of the other two
// axes is as thick as the halo, so one rule covers both. Boundary-layer and halo cells are never
// written by the rank that holds them (halos are written only by the neighbour's pushes).
//
// The step (stencil3d_kernels.cu has the design and its byte counts): a thread owns a column of
// 4 cells along x (float4, when the row length nx is a multiple of 4; 1 cell otherwise) and
// marches along the march axis (the split axis when that is y or z, else z), keeping the 2R + 1
// planes of its column along that axis in registers, so each cell of `in` comes from memory about
// once per iteration: heat3d moves 8 bytes per cell (read, write), wave3d 12 (read cur and prev,
// write next).
#include <cuda_runtime.h>

#include <cstdint>

#include "apps/stencil/iter_sync.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"  // Box

namespace gpsm::apps::stencil3d {

enum class Kind : std::uint8_t {
  heat,  // 7-point explicit diffusion, radius 1: out = heat_point(in)
  wave,  // 4th-order 13-point star, radius 2, leapfrog: out holds prev on entry and next on exit
};
constexpr int radius_of(Kind k) { return k == Kind::heat ? 1 : 2; }

// Whether the kernels take the float4 path on this box: rows of nx % 4 == 0 cells (buffers from
// cudaMalloc are 256-byte aligned, so every row then starts 16-byte aligned; the launchers check
// the pointers and strides, those of remote sources too, and fall back to the scalar path
// otherwise: um's sub-box split along x starts 16-byte aligned only where first - radius is a
// multiple of 4). Either path writes exactly the updated cells and pushes exactly the interior
// cells of the pushed planes (the float4 path stores the first and last vector of a row lane by
// lane), so pushed link bytes do not depend on it; rdl's float4 loads of remote planes carry
// whole rows (its link bytes say so).
inline bool rows_vectorized(const Box& b) { return b.n[0] % 4 == 0; }

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
// sy, sz: the row and plane strides of both `in` and `out` (0: the box's extents); um's box is a
// rank's sub-box of the global grid (stencil3d_cells.hpp sub_box), with the grid's strides.
// from_lower / from_upper (rdl): the halo cells below the first owned plane / above the last are
// loaded from these neighbours' boxes instead of `in` (planes of the march axis when the split is
// along y or z, the x neighbours of the centre row when it is along x), so the values of the
// box's own halo planes are never used.
// ready (proact, split along y or z, no remote sources): after a block has written its tile of a
// chunk that holds planes the lower (ready[0]) or upper (ready[1]) neighbour reads as halo
// (chunk_touches_edge), it adds 1 to that counter (block barrier, then one thread: system-scope
// fence, atomic add), so copy engines waiting for ready_target (stencil3d_proact_plan.hpp) more
// per iteration ship the edge planes while the interior is computed. The plan then has edge
// chunks (as with pushes): the first items of the launch. Every default leaves the plain
// per-box step.
struct Step {
  const float* in = nullptr;
  float* out = nullptr;
  Box box;
  Push lower, upper;
  std::int64_t sy = 0, sz = 0;
  Remote from_lower, from_upper;
  std::uint32_t* ready[2] = {nullptr, nullptr};
};
void launch_step(Kind k, const Step& s, cudaStream_t st);
// The work plan launch_step runs s with on the current device (proact's wait targets come from it).
Plan step_plan(Kind k, const Step& s);
// Whether launch_step takes the float4 path for s (rows_vectorized, and every row of in, out,
// the pushes and the remote sources 16-byte aligned).
bool step_float4(const Step& s);

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

// CPU-free: one persistent cooperative kernel per GPU runs every iteration with the step's column
// march. The work items holding the pushed planes come first, so their peer stores travel while
// the interior is computed; each iteration ends in IterSync (apps/stencil/iter_sync.hpp): every
// block arrives once, the last block of a GPU publishes one tagged word to every GPU, and every
// block waits for all GPUs' words. No grid barrier, no host.
struct CpuFree {
  float* buf[2] = {};       // this rank's two buffers; iteration t reads buf[t % 2], writes the other
  Push lower[2], upper[2];  // [b]: pushes into the neighbours' buf[b] (or local scratch: elided)
  bool peer = true;         // the pushes store into other GPUs (false: elided into local scratch)
  Box box;
  IterSync sync;            // blocks = the launch's blocks per GPU
  int iters = 0;
  int* done = nullptr;      // this GPU: iterations run (written at the end)
};
// Blocks per GPU the persistent kernel uses (all co-resident, whichever variant a rank takes);
// threads per block. The variant (float4 or scalar, march axis) follows the box and pointers.
int cpu_free_blocks(Kind k, int device);
constexpr int kCpuFreeThreads = 256;
const void* cpu_free_kernel(Kind k, const CpuFree& c);
void launch_cpu_free(Kind k, const CpuFree& c, int blocks, cudaStream_t st);

}  // namespace gpsm::apps::stencil3d
