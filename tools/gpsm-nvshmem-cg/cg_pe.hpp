#pragma once
// One PE's whole part of a CG nvshmem run (cg_pe.cu).
#include "apps/cg/cg_worker_proto.hpp"

namespace gpsm::nvshmem_worker {

// Builds the matrix, split and start of a.matrix as the parent does, starts NVSHMEM as PE a.rank,
// runs a.warmup + a.reps solves of its rows and returns its times, its last history and x.
// Throws gpsm::Error (CUDA and NVSHMEM failures, an unreachable peer PE, a missing unique ID,
// a matrix that does not split over a.ranks) and std::invalid_argument (a bad matrix entry).
apps::cg::CgWorkerResult solve_cg(const apps::cg::CgWorkerArgs& a);

}  // namespace gpsm::nvshmem_worker
