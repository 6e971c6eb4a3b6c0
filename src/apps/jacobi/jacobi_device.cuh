#pragma once
// Device helpers shared by gpsm's Jacobi kernels (jacobi_kernels.cu) and the nvshmem worker's
// (tools/gpsm-nvshmem-stencil): the same initial rows and the same norm partial sums, so every
// paradigm starts from the same grid and reduces the same way. Include from .cu files only.
#include <cstdint>

#include "apps/jacobi/jacobi_poison.hpp"

namespace gpsm::apps::jacobi {

// Sum of `v` over the block, added to *out by one thread (block of <= 1024 threads).
__device__ __forceinline__ void block_add(float v, float* out) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
  const unsigned t = threadIdx.y * blockDim.x + threadIdx.x, warps = (blockDim.x * blockDim.y + 31) / 32;
  if ((t & 31u) == 0) part[t >> 5] = v;
  __syncthreads();
  if (t == 0) {
    float s = 0;
    for (unsigned w = 0; w < warps; ++w) s += part[w];
    atomicAdd(out, s);
  }
}

// Initial rows of a `rows` x nx block (grid-stride over a 1D grid): zero interior, columns 0 and
// nx-1 from bcol[row] (boundary values computed on the host, as the CPU reference does), NaN in
// the interior of the rows `poison` names.
__device__ __forceinline__ void init_rows(float* buf, const float* bcol, std::int64_t nx, std::int64_t rows,
                                          Poison poison) {
  const std::int64_t total = nx * rows, stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::int64_t r = i / nx, c = i % nx;
    const bool halo = r == 0 || r == rows - 1;
    const bool poisoned = poison == Poison::all_rows || (poison == Poison::halo_rows && halo) ||
                          (poison == Poison::inner_rows && !halo);
    buf[i] = (c == 0 || c == nx - 1) ? bcol[r] : (poisoned ? __int_as_float(0x7FC00000) : 0.0f);
  }
}

}  // namespace gpsm::apps::jacobi
