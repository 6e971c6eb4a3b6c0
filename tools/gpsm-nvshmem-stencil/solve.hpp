#pragma once
// One PE's whole part of an nvshmem run: NVSHMEM start-up through the unique ID (pe.hpp), its part
// of the grid on the symmetric heap, warm-up and timed solves, its cells of the last one.
//   solve (solve.cu): jacobi2d, the rows of a jacobi_slab;
//   solve_stencil3d (stencil3d.cu): heat3d / wave3d, the local box of a slab3d.
#include "apps/stencil/nvshmem_proto.hpp"

namespace gpsm::nvshmem_worker {

// Throw gpsm::Error (CUDA and NVSHMEM failures, an unreachable neighbour PE, a missing unique
// ID). NVSHMEM aborts the process itself when its initialization fails.
apps::jacobi::WorkerResult solve(const apps::jacobi::WorkerArgs& a);
apps::jacobi::WorkerResult solve_stencil3d(const apps::jacobi::WorkerArgs& a);

}  // namespace gpsm::nvshmem_worker
