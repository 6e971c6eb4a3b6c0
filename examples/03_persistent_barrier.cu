// Example 3: a persistent kernel with device-side flags and the device barrier across GPUs.
//
// Examples 1 and 2 let the host order everything: launch, fence, launch. A persistent kernel
// stays on the GPUs for many iterations and orders them itself, with no host round trip. Each
// iteration here is a broadcast followed by an all-gather:
//   1. GPU 0 stores a new seed and raises a flag on every GPU: a release store (st_release_sys)
//      after its data, so a GPU that waits for the flag (wait_geq_sys, an acquire) sees the seed;
//   2. every GPU stores its contribution, computed from the seed, into a replicated array;
//   3. the device barrier (Context::barrier) waits until every GPU has stored, so each GPU can
//      then read every contribution. It also keeps GPU 0 from storing the next seed while a
//      GPU may still be reading this one.
// Every read is checked on the GPU; the host checks the counts and the final arrays.
// (A persistent solver can take these pieces ready-made: Context::device_fences, in
// gpsm/gps/device_fence.hpp, is a publish fence, a barrier and a sum in one call.)
//
//   ./example_03_persistent_barrier [--devices 0,1 | --gpus N]      (default: every GPU)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"

using gpsm::gps::BarrierHandle;
using gpsm::gps::Context;
using gpsm::gps::kMaxDevices;
using gpsm::gps::View;
using gpsm::gps::WaitPolicy;

constexpr int kBlocks = 4;     // blocks per GPU; all must be resident at once (the barrier waits)
constexpr int kThreads = 128;  // one contribution per thread
constexpr std::uint32_t kIters = 1000;

// The seed of iteration `it` for block column b, and what thread t of rank q contributes.
__host__ __device__ inline std::uint64_t seed_of(std::uint32_t it, int b) {
  return (static_cast<std::uint64_t>(it) << 32) * 0x9e3779b97f4a7c15ull + b;
}
__host__ __device__ inline std::uint64_t contribution(std::uint64_t seed, int q, int t) {
  return seed ^ (static_cast<std::uint64_t>(q) << 48) ^ static_cast<std::uint64_t>(t) * 2654435761u;
}

// Where thread t of block b on rank q puts its contribution. Iterations alternate between two
// halves, so a GPU that runs ahead into the next iteration does not overwrite values another
// GPU is still reading.
__host__ __device__ inline std::uint64_t slot(std::uint32_t it, int q, int n, int b, int t) {
  return ((static_cast<std::uint64_t>(it & 1u) * n + q) * kBlocks + b) * kThreads + t;
}

// Plain device memory (not GPS memory) on one GPU, zeroed. Flags live outside replicated
// memory: a system-scope flag in a replicated page would be demoted to a single copy anyway.
template <class T>
struct DeviceMemory {
  int device = 0;
  T* p = nullptr;
  DeviceMemory(int dev, std::size_t n) : device(dev) {
    example::check(cudaSetDevice(dev), "cudaSetDevice");
    example::check(cudaMalloc(&p, n * sizeof(T)), "cudaMalloc");
    example::check(cudaMemset(p, 0, n * sizeof(T)), "cudaMemset");
    example::check(cudaDeviceSynchronize(), "zeroing");  // zero before any other GPU may see it
  }
  DeviceMemory(DeviceMemory&& o) noexcept : device(o.device), p(o.p) { o.p = nullptr; }
  DeviceMemory& operator=(DeviceMemory&&) = delete;
  ~DeviceMemory() {
    if (p == nullptr) return;
    cudaSetDevice(device);
    cudaFree(p);
  }
};

struct Args {
  View<std::uint64_t> seed;      // kBlocks seeds, stored by rank 0
  View<std::uint64_t> gathered;  // 2 halves x n ranks x kBlocks x kThreads contributions
  std::uint32_t* go_mine;        // on this GPU, one flag per block: "the seed of iteration it is there"
  std::uint32_t* go[kMaxDevices];  // rank 0 raises these: every GPU's go_mine (peer pointers)
  BarrierHandle barrier;
  WaitPolicy wait;  // how long a device wait may spin before it reports and traps
  int rank, n;
  unsigned long long* bad;  // reads that did not hold what was stored
};

__global__ void broadcast_gather(Args a) {
  using namespace gpsm::gps;  // the device-side sync: fence_sys, st_release_sys, wait_geq_sys
  const int b = blockIdx.x, t = threadIdx.x;
  std::uint64_t round = 0;  // barriers this block has passed in this launch
  unsigned long long bad = 0;
  for (std::uint32_t it = 1; it <= kIters; ++it) {
    // 1. Broadcast. One thread of GPU 0's block b stores the seed, then raises every GPU's flag.
    //    The seed array publishes inline (see run()), so the store is in every replica before
    //    fence_sys() completes, and the release store orders the flag after it.
    if (a.rank == 0 && t == 0) {
      a.seed.store(b, seed_of(it, b));
      fence_sys();
      for (int d = 0; d < a.n; ++d) st_release_sys(&a.go[d][b], it);
    }
    // Bounded: a flag that never comes ends in a message naming this wait and a gpsm::Error on
    // the host, not a hang.
    if (t == 0) wait_geq_sys<std::uint32_t>(&a.go_mine[b], it, a.wait, "go flag");
    __syncthreads();  // the other threads read after thread 0's acquire
    const std::uint64_t s = a.seed.load(b);

    // 2. Every thread of every GPU stores its contribution (inline too: in every replica now).
    a.gathered.store(slot(it, a.rank, a.n, b, t), contribution(s, a.rank, t));

    // 3. The barrier: block-collective; it orders every thread's stores before the arrival.
    a.barrier.sync(round);
    for (int q = 0; q < a.n; ++q)
      bad += a.gathered.load(slot(it, q, a.n, b, t)) != contribution(seed_of(it, b), q, t);
  }
  if (bad != 0) atomicAdd(a.bad, bad);
}

static int run(const std::vector<int>& devices) {
  Context ctx(devices);
  const int n = ctx.size();
  // Inline stores: each store is written into every other replica as it is issued, which is what
  // device-side flags and barriers can order. (The default mode, combine, publishes at the host's
  // Context::fence(), which a persistent kernel never reaches.)
  const auto inline_mode = gpsm::gps::with_mode(gpsm::gps::PublishMode::inline_store);
  auto seed = ctx.alloc<std::uint64_t>(kBlocks, inline_mode);
  auto gathered = ctx.alloc<std::uint64_t>(2ull * n * kBlocks * kThreads, inline_mode);

  std::vector<DeviceMemory<std::uint32_t>> go;  // go[r] lives on rank r: its wait polls local memory
  std::vector<DeviceMemory<unsigned long long>> bad;
  for (int r = 0; r < n; ++r) {
    go.emplace_back(ctx.device(r), kBlocks);
    bad.emplace_back(ctx.device(r), 1);
  }

  // A device barrier deadlocks unless all its blocks run at once: check that with a clear message
  // first, then launch cooperatively (the driver refuses a cooperative grid that cannot be
  // resident instead of running its blocks in turns).
  ctx.check_coresident(reinterpret_cast<const void*>(&broadcast_gather), kBlocks, kThreads, 0);
  // Barrier handles read the barrier's counters: take every rank's before the first launch.
  std::vector<Args> args(n);
  for (int r = 0; r < n; ++r) {
    Args& a = args[r];
    a.seed = seed.view(r);
    a.gathered = gathered.view(r);
    a.go_mine = go[r].p;
    for (int d = 0; d < n; ++d) a.go[d] = go[d].p;
    a.barrier = ctx.barrier(r, kBlocks);
    a.wait = ctx.wait_policy(r);
    a.rank = r;
    a.n = n;
    a.bad = bad[r].p;
  }
  for (int r = 0; r < n; ++r) {
    example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
    void* params[] = {&args[r]};
    example::check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&broadcast_gather), dim3(kBlocks),
                                               dim3(kThreads), params, 0, ctx.stream(r)),
                   "cooperative launch");
  }
  ctx.fence();  // waits for every kernel (a timed-out device wait becomes gpsm::Error here)

  std::uint64_t wrong = 0;
  for (int r = 0; r < n; ++r) {
    unsigned long long got = 0;
    example::check(cudaMemcpy(&got, bad[r].p, sizeof(got), cudaMemcpyDeviceToHost), "copy back");
    if (got != 0) std::printf("  rank %d: %llu reads did not hold what was stored\n", r, got);
    wrong += got;
  }
  // Every replica ends with the last two iterations' contributions, one in each half.
  for (int r = 0; r < n; ++r) {
    const std::vector<std::uint64_t> rep = gathered.replica(r);
    for (std::uint32_t it = kIters - 1; it <= kIters; ++it)
      for (int q = 0; q < n; ++q)
        for (int b = 0; b < kBlocks; ++b)
          for (int t = 0; t < kThreads; ++t)
            if (rep[slot(it, q, n, b, t)] != contribution(seed_of(it, b), q, t)) ++wrong;
  }
  std::printf("persistent kernel on %d GPU(s) (%s): %u iterations of broadcast (flags) + all-gather (barrier), "
              "%d blocks x %d threads per GPU: %llu wrong\n",
              n, example::join(devices).c_str(), kIters, kBlocks, kThreads, static_cast<unsigned long long>(wrong));
  return wrong == 0 ? 0 : example::kWrongResult;
}

int main(int argc, char** argv) {
  const std::vector<int> devices = example::devices_from_args(argc, argv);  // exits 77 without a GPU
  try {
    return run(devices);
  } catch (const gpsm::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return example::kRuntimeError;
  }
}
