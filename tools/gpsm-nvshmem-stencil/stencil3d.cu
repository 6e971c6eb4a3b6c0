// One PE of the nvshmem heat3d / wave3d: the slab3d box of this rank in two symmetric buffers
// (every PE allocates the largest PE's box), initialized as the other paradigms' (Slabs::init:
// buffer 1's halo planes that a neighbour fills are NaN). Per iteration: the app's own step kernel
// (stencil3d::launch_step, unchanged), whose Push targets are the neighbours' copies of the buffer
// it writes, mapped by nvshmem_ptr (NVLink / PCIe P2P: the kernel stores the interior cells of its
// first and last `radius` planes straight into the neighbours' halos, as p2p_inline does between
// the GPUs of one process and NVIDIA's NVSHMEM stencils do within a node), then
// nvshmemx_barrier_all_on_stream: every PE's stores of the iteration are complete and visible
// before any PE reads them, and no PE overwrites a halo a slower PE still reads. Same kernels,
// same arithmetic: the result is the CPU reference's, bit for bit.
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "gpsm/error.hpp"
#include "pe.hpp"
#include "common/cuda_check.hpp"
#include "solve.hpp"

namespace gpsm::nvshmem_worker {

using apps::Slab3D;
using apps::jacobi::WorkerApp;
using apps::jacobi::WorkerArgs;
using apps::jacobi::WorkerResult;
namespace s3 = apps::stencil3d;

WorkerResult solve_stencil3d(const WorkerArgs& a) {
  if (a.app != WorkerApp::heat3d && a.app != WorkerApp::wave3d)
    throw gpsm::Error(fmt::format("solve_stencil3d called for {}", apps::jacobi::worker_app_name(a.app)));
  const s3::Kind kind = a.app == WorkerApp::heat3d ? s3::Kind::heat : s3::Kind::wave;
  const std::int64_t n[3] = {a.nx, a.ny, a.nz};
  std::vector<Slab3D> slab;
  std::int64_t most = 0;  // cells of the largest local box: every PE allocates the same
  for (int r = 0; r < a.ranks; ++r) {
    slab.push_back(apps::slab3d(n, a.axis, s3::radius_of(kind), a.ranks, r));
    most = std::max(most, slab.back().local_cells());
  }
  const Slab3D& me = slab[a.rank];
  const std::size_t bytes = static_cast<std::size_t>(most) * sizeof(float);

  start_pe(a, 2 * static_cast<std::uint64_t>(bytes) + 2 * 256);
  float* buf[2];
  buf[0] = static_cast<float*>(symmetric_alloc(bytes, "buffer 0"));
  buf[1] = static_cast<float*>(symmetric_alloc(bytes, "buffer 1"));
  // pushes[b]: the step that writes buffer b stores the boundary planes into the neighbours' b.
  s3::Push lower[2], upper[2];
  for (int b = 0; b < 2; ++b) {
    if (me.has_lower())
      lower[b] = s3::push_between(me, slab[a.rank - 1], static_cast<float*>(peer_address(buf[b], a.rank, a.rank - 1)));
    if (me.has_upper())
      upper[b] = s3::push_between(me, slab[a.rank + 1], static_cast<float*>(peer_address(buf[b], a.rank, a.rank + 1)));
  }
  cudaStream_t st;
  GPSM_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));

  WorkerResult res = result_of(a);
  res.first_row = me.first;
  res.chunk = me.count;
  timed_reps(
      a, st, res,
      [&](cudaStream_t s) {  // initial values, buffer 1's filled halos poisoned (Slabs::init(true))
        for (int b = 0; b < 2; ++b) s3::launch_init(s3::init_of(kind, me, a.seed, b, b == 1, buf[b]), s);
      },
      [&](cudaStream_t s) {
        for (int it = 0; it < a.iters; ++it) {
          const int c = it & 1;
          s3::Step step;
          step.in = buf[c];
          step.out = buf[1 - c];
          step.box = s3::box_of(me);
          step.lower = lower[1 - c];
          step.upper = upper[1 - c];
          s3::launch_step(kind, step, s);
          nvshmemx_barrier_all_on_stream(s);
        }
        return a.iters;
      });
  // Buffer iters % 2 holds the last iteration's result (its halos: the neighbours' last stores).
  res.rows.resize(static_cast<std::size_t>(me.local_cells()));
  GPSM_CUDA(cudaMemcpy(res.rows.data(), buf[a.iters % 2], res.rows.size() * sizeof(float), cudaMemcpyDeviceToHost));

  GPSM_CUDA(cudaStreamDestroy(st));
  nvshmem_barrier_all();  // nobody still stores into this PE's heap
  nvshmem_free(buf[1]);
  nvshmem_free(buf[0]);
  nvshmem_finalize();
  return res;
}

}  // namespace gpsm::nvshmem_worker
