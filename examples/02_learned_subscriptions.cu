// Example 2: learned subscriptions on a halo stencil.
//
// By default every GPU subscribes to every page of a GPS array, so every store is published to
// every other GPU. A stencil split by rows only needs its neighbours' edge rows, though. Between
// Context::tracking_start() and tracking_stop() the GPUs record which pages they touch, and at
// stop each GPU stays subscribed to exactly those pages: from then on a store goes only to the
// GPUs that read it.
//
// The same Jacobi stencil runs twice, once with every GPU subscribed to every page and once with
// subscriptions learned in its first iteration. Link byte counting (Array::set_counting) shows
// what each put on the links per iteration. Both results are checked against the host.
//
//   ./example_02_learned_subscriptions [--devices 0,1 | --gpus N]      (default: every GPU)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"

using gpsm::gps::Array;
using gpsm::gps::Context;
using gpsm::gps::View;

// The grid: kNy rows of kNx floats, row-major. The first and last rows and columns are fixed;
// the rows in between are split into one contiguous band per GPU. A row is 8 KiB, so a 64 KiB
// page holds 8 rows and a GPU's band spans many pages, of which only the edge pages are read by
// a neighbour.
constexpr std::uint64_t kNx = 2048;
constexpr std::uint64_t kNy = 2048 + 2;
constexpr int kIters = 10;  // an iteration is two sweeps, a -> b then b -> a

float initial(std::uint64_t x, std::uint64_t y) { return static_cast<float>((x * 7 + y * 13) % 17) / 16.0f; }

// First and last+1 row of rank r's band.
std::uint64_t band_begin(int r, int n) { return 1 + (kNy - 2) * r / n; }
std::uint64_t band_end(int r, int n) { return 1 + (kNy - 2) * (r + 1) / n; }

// One sweep over rows [y0, y1): each cell becomes the mean of its four neighbours. Loads read
// this GPU's replica (the rows next to the band are a neighbour's, published at the last fence);
// stores write this GPU's replica and are published to the page's other subscribers at the fence.
__global__ void sweep(View<float> in, View<float> out, std::uint64_t y0, std::uint64_t y1) {
  const std::uint64_t x = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (x == 0 || x >= kNx - 1) return;
  for (std::uint64_t y = y0 + blockIdx.y; y < y1; y += gridDim.y) {
    const std::uint64_t i = y * kNx + x;
    out.store(i, 0.25f * (in.load(i - kNx) + in.load(i + kNx) + in.load(i - 1) + in.load(i + 1)));
  }
}

// The same sweeps on the host, in the same order of additions.
std::vector<float> host_reference(std::vector<float> a) {
  std::vector<float> b = a;
  for (int s = 0; s < 2 * kIters; ++s) {
    for (std::uint64_t y = 1; y + 1 < kNy; ++y)
      for (std::uint64_t x = 1; x + 1 < kNx; ++x) {
        const std::uint64_t i = y * kNx + x;
        b[i] = 0.25f * (a[i - kNx] + a[i + kNx] + a[i - 1] + a[i + 1]);
      }
    a.swap(b);
  }
  return a;
}

struct Outcome {
  std::vector<float> grid;
  double link_bytes_per_iter = 0;  // what the runtime put on links, summed over all GPU pairs
  std::vector<std::uint64_t> pages_per_rank;  // pages of `a` each GPU subscribes to at the end
  std::uint64_t pages = 0;
};

Outcome run_stencil(Context& ctx, const std::vector<float>& init, bool learn) {
  const int n = ctx.size();
  Array<float> a = ctx.alloc<float>(kNx * kNy), b = ctx.alloc<float>(kNx * kNy);
  a.upload(init);  // upload writes every replica; the fixed edges must be in both buffers
  b.upload(init);
  // Count link bytes. It slows the stores down, so a timed run leaves it off; views taken after
  // this call count.
  a.set_counting(true);
  b.set_counting(true);

  auto sweep_all = [&](const Array<float>& in, const Array<float>& out) {
    for (int r = 0; r < n; ++r) {
      example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
      sweep<<<dim3(kNx / 256, 64), 256, 0, ctx.stream(r)>>>(in.view(r), out.view(r), band_begin(r, n), band_end(r, n));
      example::check(cudaGetLastError(), "sweep launch");
    }
    // The next sweep reads the rows the neighbours just wrote: publish them first.
    ctx.fence();
  };

  for (int it = 0; it < kIters; ++it) {
    // Learn from the first iteration: it touches both buffers the way every later one will.
    // tracking_stop() fences, then keeps each GPU subscribed only to the pages it touched.
    if (learn && it == 0) ctx.tracking_start();
    sweep_all(a, b);
    sweep_all(b, a);
    if (learn && it == 0) ctx.tracking_stop();
    // Measure the iterations after the first, the same in both runs.
    if (it == 0) {
      a.reset_link_stats();
      b.reset_link_stats();
    }
  }

  Outcome o;
  o.link_bytes_per_iter =
      static_cast<double>(a.link_stats().link_bytes + b.link_stats().link_bytes) / (kIters - 1);
  o.grid = a.coherent();  // each page from its home: what every subscriber holds after the fence
  o.pages = a.subscriptions().pages();
  o.pages_per_rank = a.subscriptions().summary().pages_per_device;
  return o;
}

// Largest |difference| from the host result.
double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) e = std::fmax(e, std::fabs(static_cast<double>(got[i]) - want[i]));
  return e;
}

static int run(const std::vector<int>& devices) {
  Context ctx(devices);
  const int n = ctx.size();
  std::vector<float> init(kNx * kNy);
  for (std::uint64_t y = 0; y < kNy; ++y)
    for (std::uint64_t x = 0; x < kNx; ++x) init[y * kNx + x] = initial(x, y);

  const Outcome all = run_stencil(ctx, init, false);
  const Outcome learned = run_stencil(ctx, init, true);
  const std::vector<float> want = host_reference(init);
  const double err_all = max_error(all.grid, want), err_learned = max_error(learned.grid, want);

  std::printf("%llux%llu Jacobi stencil on %d GPU(s) (%s), %d iterations of two sweeps\n",
              static_cast<unsigned long long>(kNx), static_cast<unsigned long long>(kNy), n,
              example::join(devices).c_str(), kIters);
  std::printf("  every GPU subscribed to every page: %10.3f MB on links per iteration\n", all.link_bytes_per_iter / 1e6);
  std::printf("  subscriptions learned in iteration 1: %8.3f MB on links per iteration\n",
              learned.link_bytes_per_iter / 1e6);
  for (int r = 0; r < n; ++r)
    std::printf("    rank %d subscribes to %llu of %llu pages\n", r,
                static_cast<unsigned long long>(learned.pages_per_rank[r]),
                static_cast<unsigned long long>(learned.pages));
  if (n > 1 && all.link_bytes_per_iter > 0 && learned.link_bytes_per_iter > 0)
    std::printf("  saving: %.1f %% of the link bytes (%.0fx fewer)\n",
                100.0 * (1.0 - learned.link_bytes_per_iter / all.link_bytes_per_iter),
                all.link_bytes_per_iter / learned.link_bytes_per_iter);
  else if (n == 1)
    std::printf("  one GPU: nothing to publish either way\n");
  std::printf("  max |difference| from the host: %.3g (every page subscribed), %.3g (learned)\n", err_all, err_learned);

  // The float sums are the same on both sides, in the same order; the tolerance only covers a
  // compiler that reorders them. A missed halo update is off by far more.
  const double tolerance = 1e-5;
  if (err_all > tolerance || err_learned > tolerance) {
    std::printf("WRONG: a result differs from the host computation by more than %g\n", tolerance);
    return example::kWrongResult;
  }
  if (n > 1 && !(learned.link_bytes_per_iter < all.link_bytes_per_iter)) {
    std::printf("WRONG: learned subscriptions did not put fewer bytes on the links\n");
    return example::kWrongResult;
  }
  return 0;
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
