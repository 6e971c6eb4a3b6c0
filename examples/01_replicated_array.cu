// Example 1: a replicated array.
//
// A GPS array has a full replica on every GPU of the context. A kernel reads its own replica at
// local speed and writes through a view; the runtime publishes those writes to the other GPUs'
// replicas, and after Context::fence() every replica holds every value.
//
// Here each GPU writes its own share of the array, one fence makes the shares meet, and the host
// checks every element of every replica.
//
//   ./example_01_replicated_array [--devices 0,1 | --gpus N]      (default: every GPU)
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"  // the whole GPS API: Context, Array, View, sync, barrier

using gpsm::gps::Context;
using gpsm::gps::View;

// What element i must hold; the host recomputes it to check.
__host__ __device__ inline std::uint32_t value_of(std::uint64_t i) {
  return static_cast<std::uint32_t>(i * 2654435761u) ^ 0x9e3779b9u;
}

// Writes elements [first, last). The view is a small struct passed by value; v.store(i, x)
// writes this GPU's replica and marks the word so the next fence publishes it to the others.
__global__ void write_share(View<std::uint32_t> v, std::uint64_t first, std::uint64_t last) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = first + blockIdx.x * blockDim.x + threadIdx.x; i < last; i += stride)
    v.store(i, value_of(i));
}

static int run(const std::vector<int>& devices) {
  // The context enables peer access between every pair of GPUs (and checks it with a test
  // pattern), and owns one stream per GPU. GPUs are named by rank: rank r is devices[r].
  Context ctx(devices);
  const int n = ctx.size();

  // 4M elements (16 MiB), a replica on every GPU; every GPU starts subscribed to every page.
  const std::uint64_t count = std::uint64_t{1} << 22;
  auto x = ctx.alloc<std::uint32_t>(count);

  for (int r = 0; r < n; ++r) {
    const std::uint64_t first = count * r / n, last = count * (r + 1) / n;
    // A kernel runs on the current device: select rank r's GPU, launch on rank r's stream.
    example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
    write_share<<<264, 256, 0, ctx.stream(r)>>>(x.view(r), first, last);
    example::check(cudaGetLastError(), "write_share launch");
  }

  // Waits for every GPU's kernels, then publishes every pending store: afterwards each replica
  // holds what every GPU wrote.
  ctx.fence();

  // Copy each GPU's replica to the host and check every element.
  std::uint64_t wrong = 0;
  for (int r = 0; r < n; ++r) {
    const std::vector<std::uint32_t> replica = x.replica(r);
    for (std::uint64_t i = 0; i < count; ++i) {
      if (replica[i] == value_of(i)) continue;
      if (wrong++ < 5)
        std::printf("  wrong: replica of rank %d (GPU %d), element %llu: %u, expected %u\n", r, ctx.device(r),
                    static_cast<unsigned long long>(i), replica[i], value_of(i));
    }
  }
  std::printf("replicated array on %d GPU(s) (%s): %llu elements, each GPU wrote its share, every replica "
              "checked: %llu wrong\n",
              n, example::join(devices).c_str(), static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(wrong));
  return wrong == 0 ? 0 : example::kWrongResult;
}

int main(int argc, char** argv) {
  const std::vector<int> devices = example::devices_from_args(argc, argv);  // exits 77 without a GPU
  try {
    return run(devices);
  } catch (const gpsm::Error& e) {  // every runtime failure arrives as gpsm::Error, with what to do
    std::fprintf(stderr, "%s\n", e.what());
    return example::kRuntimeError;
  }
}
