#include "pe.hpp"

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::nvshmem_worker {
namespace {


const char* env_or_unset(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "unset";
}

void check_nvshmem(int rc, const char* call) {
  if (rc != 0) throw gpsm::Error(fmt::format("NVSHMEM {} returned {}", call, rc));
}

// The symmetric heap must hold the caller's buffers (at the largest PE's size: every PE allocates
// the same) plus NVSHMEM's own use of it; NVSHMEM's 1 GiB default is too small for large grids.
// A value the user set is kept (nvshmem_malloc then fails clearly if too small).
void size_symmetric_heap(std::uint64_t need) {
  const char* cur = std::getenv("NVSHMEM_SYMMETRIC_SIZE");
  if (cur != nullptr && *cur != '\0') return;
  const std::uint64_t size = std::max<std::uint64_t>(std::uint64_t{1} << 30, need + (need >> 3) + (std::uint64_t{256} << 20));
  setenv("NVSHMEM_SYMMETRIC_SIZE", std::to_string(size).c_str(), 1);
}

// Rank 0 creates the unique ID and hands it over through the file; the others wait for it.
nvshmemx_uniqueid_t exchange_uid(const PeStart& a) {
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  if (a.rank == 0) {
    check_nvshmem(nvshmemx_get_uniqueid(&id), "nvshmemx_get_uniqueid");
    apps::jacobi::write_file_atomic(a.uid_file, std::string(reinterpret_cast<const char*>(&id), sizeof(id)));
  } else {
    const std::string b = apps::jacobi::wait_for_file(a.uid_file, sizeof(id), a.timeout_s);
    std::memcpy(&id, b.data(), sizeof(id));
  }
  return id;
}

}  // namespace

void start_pe(const PeStart& a, std::uint64_t heap_bytes) {
  GPSM_CUDA(cudaSetDevice(a.device));
  GPSM_CUDA(cudaFree(nullptr));  // the context exists before NVSHMEM binds this PE to the device
  size_symmetric_heap(heap_bytes);
  nvshmemx_uniqueid_t id = exchange_uid(a);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  check_nvshmem(nvshmemx_set_attr_uniqueid_args(a.rank, a.ranks, &id, &attr), "nvshmemx_set_attr_uniqueid_args");
  check_nvshmem(nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr), "nvshmemx_init_attr");
  if (nvshmem_my_pe() != a.rank || nvshmem_n_pes() != a.ranks)
    throw gpsm::Error(fmt::format("NVSHMEM made this PE {} of {}, expected {} of {}", nvshmem_my_pe(), nvshmem_n_pes(),
                                  a.rank, a.ranks));
}

void* symmetric_alloc(std::size_t bytes, const char* what, std::size_t alignment) {
  void* p = nvshmem_align(alignment, bytes);
  if (p == nullptr)
    throw gpsm::Error(fmt::format("nvshmem_align of {} bytes for {} failed (symmetric heap too small? "
                                  "NVSHMEM_SYMMETRIC_SIZE={})",
                                  bytes, what, env_or_unset("NVSHMEM_SYMMETRIC_SIZE")));
  return p;
}

void* peer_address(void* sym, int my_pe, int pe) {
  if (pe == my_pe) return sym;
  void* p = nvshmem_ptr(sym, pe);
  if (p == nullptr)
    throw gpsm::Error(fmt::format("PE {} cannot reach PE {} by peer-to-peer loads and stores (gpsm's nvshmem "
                                  "run is single-node, P2P only; NVSHMEM_REMOTE_TRANSPORT={})",
                                  my_pe, pe, env_or_unset("NVSHMEM_REMOTE_TRANSPORT")));
  return p;
}

}  // namespace gpsm::nvshmem_worker
