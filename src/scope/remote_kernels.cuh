#pragma once
// The remote-access study's kernels (GPU-SM paper §4), behind small launchers: the mixed
// local/remote matrix kernel of H2-H4 (and its traced form for H2's timeline), the small remotely
// read structure of H5, the store stream of H1, and device-side checks of what each produced.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "scope/remote_layout.hpp"

namespace gpsm::scope::remote {

// One n x n matrix kernel: element (x, y) is read from in_remote when it lies in the first
// read_cut rows (batch) or columns (spread), else from in_local; its result goes to out_remote in
// the first write_cut rows or columns, else to out_local. Every buffer holds all n * n elements
// (the same index everywhere), so a kernel that read or wrote the wrong side fails the check.
struct MixArgs {
  const float* in_local = nullptr;
  const float* in_remote = nullptr;
  float* out_local = nullptr;
  float* out_remote = nullptr;
  std::uint32_t n = 0;
  Distribution dist = Distribution::spread;
  std::uint32_t read_cut = 0, write_cut = 0;
  int flops = 0;
};

// Seeds of the two inputs' values (input_value(i, seed)).
inline constexpr std::uint32_t kSeedLocal = 0x5eed1u, kSeedRemote = 0x5eed2u;

// Sets the kernel's shared-memory attributes for `smem` dynamic bytes per block (a larger
// carveout only where smem > 0: the all-local full-occupancy run keeps the default L1) and returns
// the blocks per SM CUDA's occupancy calculator gives for it.
int mix_prepare(std::size_t smem);
void mix_launch(const MixArgs& a, std::size_t smem, cudaStream_t s);
// The same kernel with each block's start and end (%globaltimer, ns) stored at its linear id.
void mix_launch_traced(const MixArgs& a, unsigned long long* start_ns, unsigned long long* end_ns, cudaStream_t s);
// Elements whose output (on the side the layout says) differs from work(input); synchronous.
unsigned long long mix_check(const MixArgs& a, cudaStream_t s);

// input_value(i, seed) for i in [0, count).
void fill_inputs(float* p, std::uint64_t count, std::uint32_t seed, cudaStream_t s);

// H5: thread i of the n x n grid reads structure[i & mask] (mask + 1 words, a power of two)
// through the read-only cache (ldg) or with L1 bypassed (ldcg), does work(v, flops) and stores
// out[i] (its own GPU's memory).
struct CacheArgs {
  const float* structure = nullptr;
  float* out = nullptr;
  std::uint32_t n = 0;
  std::uint32_t mask = 0;
  int flops = 0;
  bool ldg = true;
};
int cache_prepare(bool ldg, std::size_t smem);
void cache_launch(const CacheArgs& a, std::size_t smem, cudaStream_t s);
// Outputs that differ from work(input_value(i & mask, seed), flops); synchronous.
unsigned long long cache_check(const CacheArgs& a, std::uint32_t seed, cudaStream_t s);

// H1's store stream: 16-B stores of pattern words [0, bytes / 4) (check_pattern_device checks them).
void write_pattern_launch(void* dst, std::size_t bytes, int blocks, std::uint32_t seed, cudaStream_t s);

}  // namespace gpsm::scope::remote
