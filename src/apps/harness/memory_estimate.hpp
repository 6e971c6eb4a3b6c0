#pragma once
// What a bench problem needs in memory, estimated from the app's own decomposition before anything
// is allocated, so an impossible size is refused with the figure instead of ending in
// std::bad_alloc or a CUDA out-of-memory error: the host side goes to require_host_memory, the GPU
// side to gpu_memory_refusal with cudaMemGetInfo's free bytes (gpu_memory_cuda.cpp). Plain C++
// (CPU-tested against the allocations they stand for: tests/cpu/test_memory_estimate.cpp).
#include <cstdint>
#include <string>

#include "apps/stencil/decomp.hpp"

namespace gpsm::apps {

// jacobi2d on the host: the CPU reference's two ny x nx float grids while it runs
// (jacobi_reference), later the one it keeps and the grid gathered from the GPUs.
double jacobi2d_host_bytes(std::int64_t nx, std::int64_t ny);
// jacobi2d on one of `gpus` GPUs: the largest slab's two buffers of (chunk + 2) x nx floats
// (jacobi::Slabs); 0 where the grid cannot be split that way (the run reports why).
double jacobi2d_gpu_bytes(std::int64_t nx, std::int64_t ny, int gpus);

// heat3d / wave3d on the host: the CPU reference's two fields of 4-B cells while it runs (heat:
// u and next; wave: prev and cur), later the one it keeps and the field gathered from the GPUs.
double stencil3d_host_bytes(const std::int64_t n[3]);
// heat3d / wave3d on one of `gpus` GPUs: the largest slab's two buffers of local cells
// (stencil3d::Slabs; radius 1 heat, 2 wave); 0 where the box cannot be split that way.
double stencil3d_gpu_bytes(const std::int64_t n[3], Axis axis, int radius, int gpus);

// The gps paradigm of jacobi2d, heat3d / wave3d, fd3d and filter on any GPU: two float arrays of
// `cells`, each allocated whole on every GPU (a GPS array's replicas), whatever the GPU count.
double gps_replica_bytes(double cells);

// "gpsm: <app> <size> on <n> GPUs needs X GiB per GPU, the GPU has Y GiB free; use a smaller size
// or more GPUs" when need exceeds free_bytes, else "" (also when either is unknown: <= 0).
std::string gpu_memory_refusal(const std::string& app, const std::string& size, int gpus, double need,
                               double free_bytes);

}  // namespace gpsm::apps
