#pragma once
// Jacobi 2D on the GPU: launchers for the kernels of every paradigm (jacobi_kernels.cu). Host
// orchestration lives in jacobi_app_cuda.cpp; index math in apps/stencil/decomp.hpp.
#include <cuda_runtime.h>

#include <cstdint>

#include "apps/jacobi/jacobi_poison.hpp"
#include "apps/stencil/iter_sync.hpp"
#include "gpsm/gps/device_fence.hpp"
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::jacobi {

// Initial rows of a slab (or a whole grid): zero interior, columns 0 and nx-1 from bcol[row]
// (boundary values computed on the host, as the CPU reference does), and NaN poison in the
// interior of the rows `poison` names (jacobi_poison.hpp; the kernel is jacobi_device.cuh's).
void launch_init_rows(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison,
                      cudaStream_t st);

// One rank's sweep over its local rows 1..rows of a (rows + 2) x nx slab (rows 0 and rows + 1
// are halos). The first computed row is also stored to push_top and the last to push_bottom
// when those are set (the neighbours' halo rows: peer pointers, or this slab's own halo rows on
// one GPU). norm != nullptr: adds sum (a_new - a)^2 over the computed cells to *norm.
// north / south (rdl): when set, row 1 reads its northern neighbour row from `north` and row
// `rows` its southern one from `south` (peer pointers to the neighbours' edge rows: remote
// demand loads) instead of this slab's halo rows.
// ready (proact): when set, the block that computed row 1 stores ready[0] = phase and the block
// that computed row `rows` stores ready[1] = phase (after a block barrier, release at system
// scope: PROACT dissertation Algorithm 1 with one writer block per edge-row chunk), so copy engines waiting
// on the flags ship the edge rows while the interior is still being swept.
struct Sweep {
  float* a_new = nullptr;
  const float* a = nullptr;
  std::int64_t nx = 0, rows = 0;
  float* push_top = nullptr;
  float* push_bottom = nullptr;
  const float* north = nullptr;
  const float* south = nullptr;
  float* norm = nullptr;
  std::uint32_t* ready = nullptr;
  std::uint32_t phase = 0;
};
void launch_sweep(const Sweep& s, cudaStream_t st);

// Whether the slab sweeps (launch_sweep, the CPU-free kernel) take the float4 path: rows of
// nx % 4 == 0 floats in cudaMalloc'd (256-byte aligned) buffers. It moves whole rows, the
// boundary columns included, where the scalar path moves the nx - 2 inner cells; link-byte
// counts follow it.
inline bool rows_vectorized(std::int64_t nx) { return nx % 4 == 0; }
inline std::int64_t pushed_cells(std::int64_t nx) { return rows_vectorized(nx) ? nx : nx - 2; }

// The sweep on plain pointers to the whole ny x nx grid (managed memory for um / um_hints): rank
// computes global rows [first_row, first_row + rows); the periodic halo is index wrap (row 1's
// north is row ny - 2, row ny - 2's south is row 1), so rows 0 and ny - 1 are never read.
struct GridSweep {
  float* a_new = nullptr;
  const float* a = nullptr;
  std::int64_t nx = 0, ny = 0, first_row = 0, rows = 0;
  float* norm = nullptr;
};
void launch_grid_sweep(const GridSweep& s, cudaStream_t st);


// CPU-free: one persistent cooperative kernel per GPU runs every iteration. Halos are pushed by
// peer stores into the neighbours' slabs as the edge rows are computed (first, so they travel
// while the interior is swept); each iteration ends in IterSync (apps/stencil/iter_sync.hpp),
// which also carries every GPU's norm partial to every GPU. No grid barrier, no host.
struct CpuFree {
  float* buf[2] = {};              // this rank's two slabs ((rows + 2) x nx each)
  float* top_halo[2] = {};         // where row 1 of buf[b] goes: the top neighbour's buf[b] bottom halo row
  float* bottom_halo[2] = {};      // where row `rows` of buf[b] goes: the bottom neighbour's buf[b] row 0
  int* done = nullptr;             // this GPU: [0] = iterations run; float norm at done + 2
  IterSync sync;                   // blocks = the launch's blocks per GPU
  std::int64_t nx = 0, rows = 0;
  int niter = 0, nccheck = 1;
  float tol = 0;
};
// Blocks per GPU the persistent kernel uses (all co-resident); threads per block. The kernel is
// the float4 one when nx % 4 == 0 and every row is 16-byte aligned, else the scalar one.
int cpu_free_blocks(int device);
constexpr int kCpuFreeThreads = 256;
const void* cpu_free_kernel(const CpuFree& c);
void launch_cpu_free(const CpuFree& c, int blocks, cudaStream_t st);

// gps: the CPU-free model on GPS memory, the way a user writes it with the public API. The whole
// ny x nx grid lives in two inline-publishing GPS arrays; one persistent kernel per GPU computes
// global rows [first_row, first_row + rows) of every iteration (index wrap for the periodic halo,
// as GridSweep), row by row through View::span (one subscriber check per row, float4 loads from
// this GPU's replica, float4 stores published to the row's other subscribers), and ends every
// iteration in the runtime's device fence, which also sums the norm. No transfer code: which
// rows go where is what the subscriptions (learned by tracking) say.
struct GpsSolve {
  gps::View<float> a[2];  // a[b]: the grid the iterations of parity b read; they write a[1 - b]
  gps::DeviceFence fence;
  int* done = nullptr;    // this GPU: [0] = iterations run; float norm at done + 2
  std::int64_t nx = 0, ny = 0, first_row = 0, rows = 0;
  int niter = 0, nccheck = 1;
  float tol = 0;
};
int gps_solve_blocks(int device);  // co-resident blocks per GPU (kCpuFreeThreads threads each)
const void* gps_solve_kernel(const GpsSolve& g);
void launch_gps_solve(const GpsSolve& g, int blocks, cudaStream_t st);

}  // namespace gpsm::apps::jacobi
