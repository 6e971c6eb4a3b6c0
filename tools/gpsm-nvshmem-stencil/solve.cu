// One PE of the nvshmem Jacobi: NVIDIA multi-gpu-programming-models' "nvshmem" variant on gpsm's
// jacobi2d problem. Per iteration: one sweep kernel whose threads computing the first and last
// row also store them into the neighbours' halo rows with nvshmem_float_p (device-initiated
// puts: direct stores over NVLink/PCIe P2P), then nvshmemx_barrier_all_on_stream (all puts of
// the iteration complete and visible before any PE reads them, and no PE overwrites a halo row a
// slower PE still reads). Every nccheck iterations the per-PE norm partials are gathered on every
// PE (nvshmemx_float_fcollect_on_stream) and summed on the host in rank order in double, as
// HostLoop sums them: every PE computes the same sum and stops at the same iteration (a float
// sum-reduction could round differently on different PEs, and PEs that disagree deadlock).
#include "solve.hpp"

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/jacobi/jacobi_device.cuh"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "pe.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::nvshmem_worker {
namespace {

using apps::JacobiSlab;
using apps::jacobi::Poison;
using apps::jacobi::WorkerArgs;
using apps::jacobi::WorkerResult;

constexpr int kBx = 32, kBy = 8;  // as gpsm's other Jacobi sweeps

[[noreturn]] void nvshmem_fail(int rc, const char* call, const char* file, int line) {
  throw gpsm::Error(fmt::format("NVSHMEM {} returned {} at {}:{}", call, rc, file, line));
}
#define WORKER_NVSHMEM(call)                                                             \
  do {                                                                                   \
    const int worker_rc_ = (call);                                                       \
    if (worker_rc_ != 0) nvshmem_fail(worker_rc_, #call, __FILE__, __LINE__);            \
  } while (0)

struct SweepArgs {
  float* a_new = nullptr;        // symmetric: the same offsets address the neighbours' copies
  const float* a = nullptr;
  std::int64_t nx = 0, rows = 0;
  int top_pe = 0, bottom_pe = 0;
  std::int64_t top_row = 0;      // the top neighbour's bottom halo row (its chunk + 1)
  std::int64_t bottom_row = 0;   // the bottom neighbour's top halo row (0)
  float* norm = nullptr;         // sum (a_new - a)^2 is added here when set
};

template <bool kNorm>
__global__ void __launch_bounds__(kBx* kBy) sweep_kernel(SweepArgs s) {
  const std::int64_t ix = static_cast<std::int64_t>(blockIdx.x) * kBx + threadIdx.x + 1;
  const std::int64_t iy = static_cast<std::int64_t>(blockIdx.y) * kBy + threadIdx.y + 1;
  float d2 = 0;
  if (ix < s.nx - 1 && iy <= s.rows) {
    const std::int64_t i = iy * s.nx + ix;
    const float v = apps::jacobi_point(s.a[i + 1], s.a[i - 1], s.a[i + s.nx], s.a[i - s.nx]);
    s.a_new[i] = v;
    if (iy == 1) nvshmem_float_p(s.a_new + s.top_row * s.nx + ix, v, s.top_pe);
    if (iy == s.rows) nvshmem_float_p(s.a_new + s.bottom_row * s.nx + ix, v, s.bottom_pe);
    if (kNorm) {
      const float d = v - s.a[i];
      d2 = d * d;
    }
  }
  if (kNorm) apps::jacobi::block_add(d2, s.norm);
}

__global__ void init_kernel(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows, Poison poison) {
  apps::jacobi::init_rows(buf, bcol, nx, rows, poison);
}

void launch_sweep(const SweepArgs& s, cudaStream_t st) {
  const dim3 block(kBx, kBy);
  const dim3 grid(static_cast<unsigned>((s.nx - 2 + kBx - 1) / kBx), static_cast<unsigned>((s.rows + kBy - 1) / kBy));
  if (s.norm != nullptr) sweep_kernel<true><<<grid, block, 0, st>>>(s);
  else sweep_kernel<false><<<grid, block, 0, st>>>(s);
  GPSM_CUDA_LAUNCH();
}

}  // namespace

WorkerResult solve(const WorkerArgs& a) {
  const JacobiSlab me = apps::jacobi_slab(a.nx, a.ny, a.ranks, a.rank);
  // Smaller chunks first (decomp.hpp): the last rank's chunk is the largest.
  const std::int64_t chunk_high = apps::jacobi_slab(a.nx, a.ny, a.ranks, a.ranks - 1).chunk;
  const std::int64_t slab_floats = (chunk_high + 2) * a.nx;
  const std::int64_t local_rows = me.local_rows();

  // both slabs and the norm buffers, plus each one's alignment padding
  start_pe(a, 2 * static_cast<std::uint64_t>(slab_floats) * sizeof(float) +
                  static_cast<std::uint64_t>(a.ranks + 1) * sizeof(float) + 4 * 256);

  float* buf[2];
  buf[0] = static_cast<float*>(symmetric_alloc(slab_floats * sizeof(float), "slab 0"));
  buf[1] = static_cast<float*>(symmetric_alloc(slab_floats * sizeof(float), "slab 1"));
  auto* part = static_cast<float*>(symmetric_alloc(sizeof(float), "the norm partial"));
  auto* all = static_cast<float*>(symmetric_alloc(a.ranks * sizeof(float), "the gathered norm partials"));
  // This run is single-node and has no remote transport: a neighbour must be reachable by
  // load/store, or nvshmem_float_p would have no path to it.
  for (const int pe : {me.top, me.bottom}) peer_address(buf[0], a.rank, pe);

  // Boundary column of every local row (halo rows included), on the host as the reference does.
  std::vector<float> col(static_cast<std::size_t>(local_rows));
  for (std::int64_t lr = 0; lr < local_rows; ++lr) col[lr] = apps::jacobi_boundary(me.global_row(lr), a.ny);
  float* bcol = nullptr;
  GPSM_CUDA(cudaMalloc(&bcol, col.size() * sizeof(float)));
  GPSM_CUDA(cudaMemcpy(bcol, col.data(), col.size() * sizeof(float), cudaMemcpyHostToDevice));
  float* host_norms = nullptr;
  GPSM_CUDA(cudaMallocHost(&host_norms, a.ranks * sizeof(float)));
  cudaStream_t st;
  GPSM_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  SweepArgs sw;
  sw.nx = a.nx;
  sw.rows = me.chunk;
  sw.top_pe = me.top;
  sw.bottom_pe = me.bottom;
  sw.top_row = apps::jacobi_slab(a.nx, a.ny, a.ranks, me.top).chunk + 1;
  sw.bottom_row = 0;

  WorkerResult res = result_of(a);
  res.first_row = me.first_row;
  res.chunk = me.chunk;
  int cur = 0;
  double norm = 1.0;
  timed_reps(
      a, st, res,
      [&](cudaStream_t s) {  // as the other paradigms' (SlabRun): the second buffer's halo rows poisoned
        init_kernel<<<1024, 256, 0, s>>>(buf[0], bcol, a.nx, local_rows, Poison::none);
        GPSM_CUDA_LAUNCH();
        init_kernel<<<1024, 256, 0, s>>>(buf[1], bcol, a.nx, local_rows, Poison::halo_rows);
        GPSM_CUDA_LAUNCH();
      },
      [&](cudaStream_t s) {
        norm = 1.0;
        int iter = 0;
        cur = 0;
        while (norm > a.tol && iter < a.iters) {
          const bool calc = iter % a.nccheck == 0;
          if (calc) GPSM_CUDA(cudaMemsetAsync(part, 0, sizeof(float), s));
          sw.a = buf[cur];
          sw.a_new = buf[1 - cur];
          sw.norm = calc ? part : nullptr;
          launch_sweep(sw, s);
          if (calc) {
            WORKER_NVSHMEM(nvshmemx_float_fcollect_on_stream(NVSHMEM_TEAM_WORLD, all, part, 1, s));
            GPSM_CUDA(cudaMemcpyAsync(host_norms, all, a.ranks * sizeof(float), cudaMemcpyDeviceToHost, s));
          }
          nvshmemx_barrier_all_on_stream(s);
          if (calc) {
            GPSM_CUDA(cudaStreamSynchronize(s));
            double sum = 0;
            for (int r = 0; r < a.ranks; ++r) sum += host_norms[r];
            norm = std::sqrt(sum);
          }
          cur = 1 - cur;
          ++iter;
        }
        return iter;
      });
  res.norm = norm;
  // buf[cur] holds the last iteration's result.
  res.rows.resize(static_cast<std::size_t>(me.chunk * a.nx));
  GPSM_CUDA(cudaMemcpy(res.rows.data(), buf[cur] + a.nx, res.rows.size() * sizeof(float), cudaMemcpyDeviceToHost));

  GPSM_CUDA(cudaStreamDestroy(st));
  GPSM_CUDA(cudaFreeHost(host_norms));
  GPSM_CUDA(cudaFree(bcol));
  nvshmem_barrier_all();  // nobody still reads this PE's heap
  nvshmem_free(all);
  nvshmem_free(part);
  nvshmem_free(buf[1]);
  nvshmem_free(buf[0]);
  nvshmem_finalize();
  return res;
}

}  // namespace gpsm::nvshmem_worker
