// Example 4: PROACT readiness tracking on a user's kernel, from the runtime alone.
//
// In the combine and bulk modes a store only marks its word dirty, and everything is published
// at the fence, after the kernel: the links idle while the GPUs compute, then the GPUs idle while
// the links drain. PROACT overlaps the two: it counts the writes to each chunk of the output
// (readiness counters) and has a transfer agent push each chunk to the GPUs that read it as soon
// as its last write lands, while the kernel still runs. Done by hand, that means counters and
// agents in every kernel. PublishMode::decoupled does it for a kernel written with plain
// View::store:
//   - during tracking (tracking_start .. tracking_stop) the runtime learns which pages each GPU
//     reads (its subscriptions) and how many words each GPU stores into each chunk per fence;
//   - afterwards each store adds to its chunk's counter (one atomic per warp and chunk), and the
//     store that reaches the learned count has the chunk pushed to its subscribers: by the warp
//     that made it (agent "inline") or by a block of polling warps (agent "persistent");
//   - the fence publishes whatever was not pushed (a kernel that stored differently stays correct).
// Choose the agent with GPSM_DECOUPLED_AGENT=inline|persistent and the chunk size with
// GPSM_DECOUPLED_CHUNK (here a chunk is one grid row, and a page holds one row).
//
// The Jacobi stencil of example 2 runs once with inline publishing and once decoupled; both must
// match the host. Link byte counting shows that after tracking every chunk the agents pushed was
// one the neighbour reads, each pushed once, and the fence found nothing left to publish.
//
//   ./example_04_decoupled_readiness [--devices 0,1 | --gpus N]      (default: every GPU)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "example_args.hpp"
#include "gpsm/gps.hpp"

using gpsm::gps::AllocOptions;
using gpsm::gps::Array;
using gpsm::gps::Context;
using gpsm::gps::PublishMode;
using gpsm::gps::View;

constexpr std::uint64_t kNx = 4096;  // a row: 16 KiB, one page and one readiness chunk
constexpr std::uint64_t kNy = 1024 + 2;
constexpr int kIters = 10;  // an iteration is two sweeps, a -> b then b -> a

float initial(std::uint64_t x, std::uint64_t y) { return static_cast<float>((x * 7 + y * 13) % 17) / 16.0f; }
std::uint64_t band_begin(int r, int n) { return 1 + (kNy - 2) * r / n; }
std::uint64_t band_end(int r, int n) { return 1 + (kNy - 2) * (r + 1) / n; }

// The user's kernel: nothing in it knows about chunks, counters or agents.
__global__ void sweep(View<float> in, View<float> out, std::uint64_t y0, std::uint64_t y1) {
  const std::uint64_t x = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (x == 0 || x >= kNx - 1) return;
  for (std::uint64_t y = y0 + blockIdx.y; y < y1; y += gridDim.y) {
    const std::uint64_t i = y * kNx + x;
    out.store(i, 0.25f * (in.load(i - kNx) + in.load(i + kNx) + in.load(i - 1) + in.load(i + 1)));
  }
}

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
  std::uint64_t messages_per_iter = 0;   // chunk pushes (decoupled) or sectors (inline), all GPU pairs
  std::uint64_t useful_per_iter = 0;     // value bytes delivered to other replicas
  std::uint64_t learned = 0;             // chunks of a and b with a learned store count, all GPUs
};

Outcome run_stencil(Context& ctx, const std::vector<float>& init, PublishMode mode) {
  const int n = ctx.size();
  AllocOptions o = gpsm::gps::with_mode(mode);
  o.page_bytes = kNx * sizeof(float);
  Array<float> a = ctx.alloc<float>(kNx * kNy, o), b = ctx.alloc<float>(kNx * kNy, o);
  a.upload(init);
  b.upload(init);
  a.set_counting(true);  // views taken after this count (it costs time: off when timing)
  b.set_counting(true);

  auto sweep_all = [&](const Array<float>& in, const Array<float>& out) {
    for (int r = 0; r < n; ++r) {
      example::check(cudaSetDevice(ctx.device(r)), "cudaSetDevice");
      sweep<<<dim3(kNx / 256, 64), 256, 0, ctx.stream(r)>>>(in.view(r), out.view(r), band_begin(r, n), band_end(r, n));
      example::check(cudaGetLastError(), "sweep launch");
    }
    ctx.fence();  // publishes what the agents did not push (nothing, once the counts are learned)
  };

  for (int it = 0; it < kIters; ++it) {
    // The first iteration is the profiling phase: subscriptions and store counts are learned.
    if (it == 0) ctx.tracking_start();
    sweep_all(a, b);
    sweep_all(b, a);
    if (it == 0) {
      ctx.tracking_stop();
      a.reset_link_stats();
      b.reset_link_stats();
    }
  }
  Outcome out;
  const auto sa = a.link_stats(), sb = b.link_stats();
  out.messages_per_iter = (sa.messages + sb.messages) / (kIters - 1);
  out.useful_per_iter = (sa.useful_bytes + sb.useful_bytes) / (kIters - 1);
  for (int r = 0; r < n; ++r) out.learned += a.learned_chunks(r) + b.learned_chunks(r);
  out.grid = a.coherent();
  return out;
}

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

  const Outcome inl = run_stencil(ctx, init, PublishMode::inline_store);
  const Outcome dec = run_stencil(ctx, init, PublishMode::decoupled);
  const std::vector<float> want = host_reference(init);
  const double err_inline = max_error(inl.grid, want), err_dec = max_error(dec.grid, want);

  std::printf("%llux%llu Jacobi stencil on %d GPU(s) (%s), %d iterations of two sweeps; decoupled agent: %s\n",
              static_cast<unsigned long long>(kNx), static_cast<unsigned long long>(kNy), n,
              example::join(devices).c_str(), kIters, gpsm::gps::agent_name(ctx.settings().decoupled_agent));
  std::printf("  inline:    %8llu remote sectors, %9.3f MB of values per iteration\n",
              static_cast<unsigned long long>(inl.messages_per_iter), inl.useful_per_iter / 1e6);
  std::printf("  decoupled: %8llu chunk pushes,   %9.3f MB of values per iteration (%llu chunks learned)\n",
              static_cast<unsigned long long>(dec.messages_per_iter), dec.useful_per_iter / 1e6,
              static_cast<unsigned long long>(dec.learned));
  std::printf("  max |difference| from the host: %.3g (inline), %.3g (decoupled)\n", err_inline, err_dec);

  const double tolerance = 1e-5;
  if (err_inline > tolerance || err_dec > tolerance) {
    std::printf("WRONG: a result differs from the host computation by more than %g\n", tolerance);
    return example::kWrongResult;
  }
  if (n > 1) {
    // A halo row has one reader (the neighbour), so each learned chunk is one push per sweep of
    // its array: one iteration (a sweep of each array) pushes every learned chunk exactly once.
    // The fence had nothing left: its drain would have added sectors or packed entries.
    if (dec.learned == 0 || dec.messages_per_iter != dec.learned) {
      std::printf("WRONG: expected %llu chunk pushes per iteration (one per learned chunk), counted %llu\n",
                  static_cast<unsigned long long>(dec.learned),
                  static_cast<unsigned long long>(dec.messages_per_iter));
      return example::kWrongResult;
    }
    std::printf("  every learned chunk was pushed once per iteration while the kernel ran; the fences published nothing more\n");
  } else {
    std::printf("  one GPU: nothing to push\n");
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
