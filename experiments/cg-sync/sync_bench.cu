// What does one device-side reduction of the CPU-free CG kernels cost on one GPU, and what is the
// floor? A persistent cooperative kernel runs N iterations of two reductions each, with no SpMV:
// every block stores its round-robin chunks' partials, then the reduction runs. Variants:
//   cgsync     cg_sync.hpp as free_std_kernel uses it (arrive, exchange, broadcast, wait)
//   noexch     the same without the inbox exchange (one GPU: the GPU's sum is the global one)
//   gpuscope   noexch with gpu-scope fences and polling instead of system scope
//   gridsync   cooperative_groups grid.sync() twice, no sums: the hardware-style barrier floor
// Usage: sync_bench [blocks_per_sm] [chunks] [iters]
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "apps/cg/cg_device.cuh"

using namespace gpsm::apps::cg;
namespace cgs = cooperative_groups;

struct Args {
  CgSync sync;
  double* part;
  std::int64_t chunks;
  int iters;
  int variant;
  double* out;
};

__device__ __forceinline__ std::uint64_t ld_acq_gpu(const std::uint64_t* p) {
  std::uint64_t v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_rel_gpu(std::uint64_t* p, std::uint64_t v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__global__ void __launch_bounds__(kThreads) bench(Args a) {
  __shared__ double vals[4];
  __shared__ int last;
  const CgSync& s = a.sync;
  double acc = 0;
  std::uint64_t seq = 0;
  for (int k = 0; k < a.iters; ++k) {
    for (int ph = 0; ph < 2; ++ph, ++seq) {
      for (std::int64_t c = blockIdx.x; c < a.chunks; c += gridDim.x)
        if (threadIdx.x == 0) a.part[c] = 1.0 + c;
      if (a.variant == 3) {
        cgs::this_grid().sync();
        if (threadIdx.x == 0) vals[0] = 1.0;
        __syncthreads();
      } else if (a.variant == 0) {
        if (s.arrive(seq, false)) {
          s.exchange(seq, a.part, a.chunks, 1, vals);
          if (threadIdx.x == 0) s.broadcast(seq, vals);
          __syncthreads();
        } else {
          s.wait_broadcast(seq, vals);
        }
      } else if (a.variant == 1) {
        if (s.arrive(seq, false)) {
          const double t = gpu_partial(a.part, a.chunks, 1, 0);
          if (threadIdx.x == 0) {
            vals[0] = t;
            s.broadcast(seq, vals);
          }
          __syncthreads();
        } else {
          s.wait_broadcast(seq, vals);
        }
      } else {  // 2: gpu scope
        __syncthreads();
        if (threadIdx.x == 0) {
          __threadfence();
          const auto old = atomicAdd(reinterpret_cast<unsigned long long*>(&s.self->arrive), 1ull);
          last = old + 1 == static_cast<std::uint64_t>(s.blocks) * (seq + 1);
          if (last) __threadfence();
        }
        __syncthreads();
        if (last) {
          const double t = gpu_partial(a.part, a.chunks, 1, 0);
          if (threadIdx.x == 0) {
            vals[0] = t;
            s.self->bcast[0] = t;
            st_rel_gpu(&s.self->bcast_tag, seq + 1);
          }
          __syncthreads();
        } else {
          if (threadIdx.x == 0) {
            while (ld_acq_gpu(&s.self->bcast_tag) < seq + 1) {
            }
            vals[0] = *(volatile double*)&s.self->bcast[0];
          }
          __syncthreads();
        }
      }
      acc += vals[0];
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.out = acc;
}

int main(int argc, char** argv) {
  const int per_sm_ask = argc > 1 ? atoi(argv[1]) : 4;
  const std::int64_t chunks = argc > 2 ? atoll(argv[2]) : 4096;
  const int iters = argc > 3 ? atoi(argv[3]) : 2000;
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bench, kThreads, 0);
  if (per_sm_ask < per_sm) per_sm = per_sm_ask;
  const unsigned blocks = static_cast<unsigned>(per_sm * sms);
  CgSyncState* st;
  double *part, *out;
  cudaMalloc(&st, sizeof(CgSyncState));
  cudaMalloc(&part, chunks * sizeof(double));
  cudaMalloc(&out, sizeof(double));
  const char* names[] = {"cgsync", "noexch", "gpuscope", "gridsync"};
  for (int v = 0; v < 4; ++v) {
    float best = 1e30f;
    for (int rep = 0; rep < 5; ++rep) {
      cudaMemset(st, 0, sizeof(CgSyncState));
      Args a{};
      a.sync.self = st;
      a.sync.all[0] = st;
      a.sync.rank = 0;
      a.sync.ranks = 1;
      a.sync.blocks = blocks;
      a.part = part;
      a.chunks = chunks;
      a.iters = iters;
      a.variant = v;
      a.out = out;
      void* args[] = {&a};
      cudaEvent_t e0, e1;
      cudaEventCreate(&e0);
      cudaEventCreate(&e1);
      cudaEventRecord(e0);
      cudaError_t err = cudaLaunchCooperativeKernel((const void*)bench, dim3(blocks), dim3(kThreads), args, 0, 0);
      cudaEventRecord(e1);
      if (err == cudaSuccess) err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        printf("%s: %s\n", names[v], cudaGetErrorString(err));
        return 1;
      }
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      if (ms < best) best = ms;
    }
    printf("variant %-9s blocks %u (%d/SM) chunks %lld: %.3f us per reduction\n", names[v], blocks, per_sm,
           static_cast<long long>(chunks), best * 1000.0 / (2.0 * iters));
  }
  return 0;
}
