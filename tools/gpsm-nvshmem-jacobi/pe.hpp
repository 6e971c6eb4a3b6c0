#pragma once
// What every solve of the worker shares (pe.cu): NVSHMEM start-up as one PE through the unique ID
// (rank 0 writes it to the parent's file, the others wait for it), the symmetric heap sized for
// the caller's buffers, symmetric allocations that fail clearly, and the check that a neighbour
// PE is reachable by loads and stores (the only path of these single-node, P2P-only runs).
#include <cstddef>
#include <cstdint>

#include "apps/jacobi/jacobi_nvshmem_proto.hpp"

namespace gpsm::nvshmem_worker {

// Binds this process to a.device (its CUDA context first), sizes the symmetric heap for
// `heap_bytes` of the caller's allocations (unless NVSHMEM_SYMMETRIC_SIZE is set) and initializes
// NVSHMEM as PE a.rank of a.ranks. Throws gpsm::Error; NVSHMEM aborts the process itself when
// its initialization fails.
void start_pe(const apps::jacobi::WorkerArgs& a, std::uint64_t heap_bytes);

// nvshmem_align(alignment, bytes), or gpsm::Error naming `what` and the heap size.
void* symmetric_alloc(std::size_t bytes, const char* what, std::size_t alignment = 256);

// gpsm::Error unless PE `pe` (not this one) maps `sym` (a symmetric address) for loads and stores;
// returns the address of pe's copy (this PE's own address for pe == my_pe).
void* peer_address(void* sym, int my_pe, int pe);

}  // namespace gpsm::nvshmem_worker
