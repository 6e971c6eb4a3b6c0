#include "scope/remote_kernels.cuh"

#include <functional>

#include "common/cuda_check.hpp"
#include "common/pattern.hpp"
#include "scope/kernels.cuh"  // globaltimer_ns

namespace gpsm::scope::remote {

namespace {

// Blocks per SM at full occupancy (2048 threads): the launch bounds keep the registers low enough
// that the threads, not the registers, set the occupancy the study lowers with shared memory.
constexpr int kFullBlocks = 2048 / kThreads;

// One element per thread, as the paper's microbenchmark: read, work, write. Plain loads and
// stores: what a kernel indexing a distributed array issues.
template <bool kTrace>
__global__ void __launch_bounds__(kThreads, kFullBlocks) mix_kernel(MixArgs a, unsigned long long* start_ns,
                                                       unsigned long long* end_ns) {
  const bool lead = threadIdx.x == 0 && threadIdx.y == 0;
  unsigned long long t0 = 0;
  if (kTrace && lead) t0 = globaltimer_ns();
  const std::uint32_t x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x < a.n && y < a.n) {
    const std::uint64_t i = std::uint64_t(y) * a.n + x;
    const float v = is_remote(a.dist, x, y, a.read_cut) ? a.in_remote[i] : a.in_local[i];
    const float r = work(v, a.flops);
    (is_remote(a.dist, x, y, a.write_cut) ? a.out_remote : a.out_local)[i] = r;
  }
  if (kTrace) {
    __syncthreads();  // the block's stores issued before its end is stamped
    if (lead) {
      const std::uint64_t b = std::uint64_t(blockIdx.y) * gridDim.x + blockIdx.x;
      start_ns[b] = t0;
      end_ns[b] = globaltimer_ns();
    }
  }
}

__global__ void mix_check_kernel(MixArgs a, unsigned long long* bad) {
  unsigned long long local = 0;
  const std::uint64_t total = std::uint64_t(a.n) * a.n;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint32_t x = std::uint32_t(i % a.n), y = std::uint32_t(i / a.n);
    const bool rr = is_remote(a.dist, x, y, a.read_cut), rw = is_remote(a.dist, x, y, a.write_cut);
    const float want = work(input_value(i, rr ? kSeedRemote : kSeedLocal), a.flops);
    const float got = __ldcv((rw ? a.out_remote : a.out_local) + i);
    local += __float_as_uint(got) != __float_as_uint(want);
  }
  if (local) atomicAdd(bad, local);
}

__global__ void fill_inputs_kernel(float* p, std::uint64_t count, std::uint32_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    p[i] = input_value(i, seed);
}

// ldg: const __restrict__ and __ldg, the read-only (texture / L1) path GPU-SM calls caching;
// ldcg: cached in L2 only, the L1 bypassed: every warp's load goes to the memory system.
template <bool kLdg>
__global__ void __launch_bounds__(kThreads, kFullBlocks) cache_kernel(const float* __restrict__ structure, float* __restrict__ out,
                                                         std::uint32_t n, std::uint32_t mask, int flops) {
  const std::uint32_t x = blockIdx.x * kBlockX + threadIdx.x, y = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= n || y >= n) return;
  const std::uint64_t i = std::uint64_t(y) * n + x;
  const float v = kLdg ? __ldg(structure + (i & mask)) : __ldcg(structure + (i & mask));
  out[i] = work(v, flops);
}

__global__ void cache_check_kernel(const float* out, std::uint64_t total, std::uint32_t mask, int flops,
                                   std::uint32_t seed, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    local += __float_as_uint(out[i]) != __float_as_uint(work(input_value(i & mask, seed), flops));
  if (local) atomicAdd(bad, local);
}

__global__ void write_pattern_kernel(uint4* dst, std::size_t n16, std::uint32_t seed) {
  for (std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; k < n16; k += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t w = 4 * std::uint64_t(k);
    dst[k] = make_uint4(pattern_word(w, seed), pattern_word(w + 1, seed), pattern_word(w + 2, seed), pattern_word(w + 3, seed));
  }
}

dim3 grid_of(std::uint32_t n) { return dim3((n + kBlockX - 1) / kBlockX, (n + kBlockY - 1) / kBlockY); }

// Shared memory only where occupancy is lowered: then the largest carveout, so that the blocks
// asked for fit; otherwise the default (the L1 keeps its share, which H5's read-only cache uses).
template <class K>
int prepare(K kernel, std::size_t smem) {
  GPSM_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  GPSM_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 smem > 0 ? int(cudaSharedmemCarveoutMaxShared) : int(cudaSharedmemCarveoutDefault)));
  int blocks = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, smem));
  return blocks;
}

unsigned long long count_bad(const std::function<void(unsigned long long*)>& launch, cudaStream_t s) {
  unsigned long long* bad = nullptr;
  GPSM_CUDA(cudaMallocAsync(&bad, sizeof(*bad), s));
  GPSM_CUDA(cudaMemsetAsync(bad, 0, sizeof(*bad), s));
  launch(bad);
  unsigned long long h = 0;
  GPSM_CUDA(cudaMemcpyAsync(&h, bad, sizeof(h), cudaMemcpyDeviceToHost, s));
  GPSM_CUDA(cudaFreeAsync(bad, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
  return h;
}

}  // namespace

int mix_prepare(std::size_t smem) { return prepare(mix_kernel<false>, smem); }

void mix_launch(const MixArgs& a, std::size_t smem, cudaStream_t s) {
  mix_kernel<false><<<grid_of(a.n), dim3(kBlockX, kBlockY), smem, s>>>(a, nullptr, nullptr);
  GPSM_CUDA_LAUNCH();
}

void mix_launch_traced(const MixArgs& a, unsigned long long* start_ns, unsigned long long* end_ns, cudaStream_t s) {
  mix_kernel<true><<<grid_of(a.n), dim3(kBlockX, kBlockY), 0, s>>>(a, start_ns, end_ns);
  GPSM_CUDA_LAUNCH();
}

unsigned long long mix_check(const MixArgs& a, cudaStream_t s) {
  return count_bad([&](unsigned long long* bad) {
    mix_check_kernel<<<1024, 256, 0, s>>>(a, bad);
    GPSM_CUDA_LAUNCH();
  }, s);
}

void fill_inputs(float* p, std::uint64_t count, std::uint32_t seed, cudaStream_t s) {
  fill_inputs_kernel<<<1024, 256, 0, s>>>(p, count, seed);
  GPSM_CUDA_LAUNCH();
}

int cache_prepare(bool ldg, std::size_t smem) {
  return ldg ? prepare(cache_kernel<true>, smem) : prepare(cache_kernel<false>, smem);
}

void cache_launch(const CacheArgs& a, std::size_t smem, cudaStream_t s) {
  if (a.ldg)
    cache_kernel<true><<<grid_of(a.n), dim3(kBlockX, kBlockY), smem, s>>>(a.structure, a.out, a.n, a.mask, a.flops);
  else
    cache_kernel<false><<<grid_of(a.n), dim3(kBlockX, kBlockY), smem, s>>>(a.structure, a.out, a.n, a.mask, a.flops);
  GPSM_CUDA_LAUNCH();
}

unsigned long long cache_check(const CacheArgs& a, std::uint32_t seed, cudaStream_t s) {
  return count_bad([&](unsigned long long* bad) {
    cache_check_kernel<<<1024, 256, 0, s>>>(a.out, std::uint64_t(a.n) * a.n, a.mask, a.flops, seed, bad);
    GPSM_CUDA_LAUNCH();
  }, s);
}

void write_pattern_launch(void* dst, std::size_t bytes, int blocks, std::uint32_t seed, cudaStream_t s) {
  write_pattern_kernel<<<blocks, 512, 0, s>>>(static_cast<uint4*>(dst), bytes / 16, seed);
  GPSM_CUDA_LAUNCH();
}

}  // namespace gpsm::scope::remote
