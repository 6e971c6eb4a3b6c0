#pragma once
// One PE's whole part of an nvshmem run (solve.cu): NVSHMEM start-up through the unique ID, the
// slab on the symmetric heap, warm-up and timed solves, the rows of the last one.
#include "apps/jacobi/jacobi_nvshmem_proto.hpp"

namespace gpsm::nvshmem_worker {

// Throws gpsm::Error (CUDA and NVSHMEM failures, an unreachable neighbour PE, a missing unique
// ID). NVSHMEM aborts the process itself when its initialization fails.
apps::jacobi::WorkerResult solve(const apps::jacobi::WorkerArgs& a);

}  // namespace gpsm::nvshmem_worker
