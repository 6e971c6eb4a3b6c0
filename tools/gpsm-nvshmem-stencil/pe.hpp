#pragma once
// What every solve of the worker shares (pe.cu): NVSHMEM start-up as one PE through the unique ID
// (rank 0 writes it to the parent's file, the others wait for it), the symmetric heap sized for
// the caller's buffers, symmetric allocations that fail clearly, and the check that a neighbour
// PE is reachable by loads and stores (the only path of these single-node, P2P-only runs).
#include <cuda_runtime.h>
#include <nvshmem.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/stencil/nvshmem_proto.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::nvshmem_worker {

// Who this PE is, from any worker's command line (the stencils' and CG's: tools/gpsm-nvshmem-cg
// starts its PEs with this same code).
struct PeStart {
  int rank = 0, ranks = 1, device = 0;
  std::string uid_file;  // rank 0 writes NVSHMEM's unique ID here, the others wait for it
  int timeout_s = 120;   // how long a PE waits for it
};

// Binds this process to a.device (its CUDA context first), sizes the symmetric heap for
// `heap_bytes` of the caller's allocations (unless NVSHMEM_SYMMETRIC_SIZE is set) and initializes
// NVSHMEM as PE a.rank of a.ranks. Throws gpsm::Error; NVSHMEM aborts the process itself when
// its initialization fails.
void start_pe(const PeStart& a, std::uint64_t heap_bytes);
inline void start_pe(const apps::jacobi::WorkerArgs& a, std::uint64_t heap_bytes) {
  start_pe(PeStart{a.rank, a.ranks, a.device, a.uid_file, a.timeout_s}, heap_bytes);
}

// nvshmem_align(alignment, bytes), or gpsm::Error naming `what` and the heap size.
void* symmetric_alloc(std::size_t bytes, const char* what, std::size_t alignment = 256);

// gpsm::Error unless PE `pe` (not this one) maps `sym` (a symmetric address) for loads and stores;
// returns the address of pe's copy (this PE's own address for pe == my_pe).
void* peer_address(void* sym, int my_pe, int pe);

// A result file's header fields from the worker's arguments (rank, ranks, device, extents); the
// solve fills in its part of the grid, times and cells.
inline apps::jacobi::WorkerResult result_of(const apps::jacobi::WorkerArgs& a) {
  apps::jacobi::WorkerResult r;
  r.rank = a.rank;
  r.ranks = a.ranks;
  r.device = a.device;
  r.nx = a.nx;
  r.ny = a.ny;
  r.nz = a.nz;
  return r;
}

// The warm-up and timed solves of every app: per rep, init(st) (initial values, untimed; its
// work on `st` is complete before every PE's barrier), then solve(st) -> iterations run, timed
// by the host wall clock from after that barrier until `st` is idle. Timed reps append their
// seconds and iterations to `res`.
template <class Init, class Solve>
void timed_reps(const apps::jacobi::WorkerArgs& a, cudaStream_t st, apps::jacobi::WorkerResult& res, Init&& init,
                Solve&& solve) {
  for (int k = 0; k < a.warmup + a.reps; ++k) {
    init(st);
    GPSM_CUDA(cudaStreamSynchronize(st));
    // Every PE initialized (and done with the previous solve, whose last barrier completed all
    // stores) before any PE's first store of this one.
    nvshmem_barrier_all();
    const auto t0 = std::chrono::steady_clock::now();
    const int iters = solve(st);
    GPSM_CUDA(cudaStreamSynchronize(st));
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (k >= a.warmup) {
      res.seconds.push_back(sec);
      res.iterations.push_back(iters);
    }
  }
}

}  // namespace gpsm::nvshmem_worker
