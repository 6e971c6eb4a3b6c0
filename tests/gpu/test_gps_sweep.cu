// The combine sweep (GPSM_COMBINE_SWEEP, Array::set_combine_sweep) on real GPUs: sweeper blocks
// send dirty words while the kernels store, the fence drains the rest, and every replica ends
// bit-identical to the same stores published by the fence alone, including words stored several
// times (the last value wins), stores that land after a pass, lines sent directly and then as
// packed records, and inbound areas that fill while sweeping. The sweeper's own count of words
// sent must be > 0, and the fence must drain fewer words than without it, so a sweeper that sent
// nothing (or a test that stored too briefly) fails instead of passing vacuously.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gps_test_util.hpp"

using namespace gpsm::gps;

namespace {

__host__ __device__ std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
__host__ __device__ std::uint32_t value(std::uint64_t i, std::uint32_t iter, int round) {
  return mix(i * 131 + iter * 7919 + static_cast<std::uint64_t>(round) * 104729) | 1u;
}
// Lines are owned round robin (no two GPUs store one word: that would be a race).
__host__ __device__ int owner(std::uint64_t i, int n) { return static_cast<int>((i / kLineWords) % n); }

enum class Shape : int { sparse = 0, mixed = 1 };
// Whether word i is stored in round r. sparse: about one word in six per round, scattered, so
// most words stored are stored in several rounds with different values. mixed: every third line
// is stored whole in even rounds (a dense line: sent directly while its block has no record yet)
// and sparsely in odd ones (packed), the other lines sparsely in every round.
__host__ __device__ bool stored(std::uint64_t i, int r, Shape s) {
  if (s == Shape::mixed && (i / kLineWords) % 3 == 0 && r % 2 == 0) return true;
  return mix(i * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(r)) % 6 == 0;
}

// `rounds` rounds of stores, each thread sleeping `gap_ns` between rounds, so sweeper passes run
// between (and during) the rounds and later rounds store words a pass already sent.
__global__ void rounds_kernel(View<std::uint32_t> v, int n, int rounds, std::uint32_t iter, Shape s,
                              std::uint64_t gap_ns) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (int r = 0; r < rounds; ++r) {
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size(); i += stride)
      if (owner(i, n) == v.rank() && stored(i, r, s)) v.store(i, value(i, iter, r));
    const std::uint64_t t0 = globaltimer_ns();
    while (globaltimer_ns() - t0 < gap_ns) __nanosleep(2000);
  }
}

// What every replica must hold after the fence: each word's value from the last round that
// stored it, else what it held before.
void advance_model(std::vector<std::uint32_t>& m, int rounds, std::uint32_t iter, Shape s) {
  for (std::uint64_t i = 0; i < m.size(); ++i)
    for (int r = rounds - 1; r >= 0; --r)
      if (stored(i, r, s)) {
        m[i] = value(i, iter, r);
        break;
      }
}
std::uint64_t words_stored(std::uint64_t N, int rounds, Shape s) {
  std::uint64_t c = 0;
  for (std::uint64_t i = 0; i < N; ++i)
    for (int r = 0; r < rounds; ++r)
      if (stored(i, r, s)) {
        ++c;
        break;
      }
  return c;
}

void expect_replicas(const Context& ctx, const Array<std::uint32_t>& x, const std::vector<std::uint32_t>& want,
                     const std::string& what) {
  for (int r = 0; r < ctx.size(); ++r) {
    const auto got = x.replica(r);
    std::uint64_t bad = 0, first = want.size();
    for (std::uint64_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i] && bad++ == 0) first = i;
    EXPECT_EQ(bad, 0u) << what << ": rank " << r << " has " << bad << " wrong words, first at " << first
                       << (first < want.size() ? " (got " + std::to_string(got[first]) + ", want " +
                                                     std::to_string(want[first]) + ")"
                                               : std::string());
  }
}

// Loads the kernel on every device before any sweeper runs: under lazy module loading a kernel's
// first launch waits for the kernels already running (the sweeper would idle out first).
void load_kernel(const Context& ctx) {
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    cudaFuncAttributes attr{};
    GPSM_CUDA(cudaFuncGetAttributes(&attr, rounds_kernel));
  }
}

// Two combine arrays in one context, the same stores into each: `swept` with the sweep on, `plain`
// with the fence alone. Several fences (chains restart every fence), both shapes.
void run_ab(Shape shape, const char* label) {
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t N = gpstest::scaled(std::uint64_t{16} << 20, 64 * 1024);  // 64 MiB
  const int rounds = 8;
  const std::uint64_t gap_ns = 200 * 1000;  // 8 x 0.2 ms: passes run while the stores go on
  auto swept = ctx.alloc<std::uint32_t>(N, with_mode(PublishMode::combine));
  auto plain = ctx.alloc<std::uint32_t>(N, with_mode(PublishMode::combine));
  swept.set_combine_sweep(true);
  plain.set_combine_sweep(false);
  ASSERT_TRUE(swept.combine_sweep());
  std::vector<std::uint32_t> model(N);
  for (std::uint64_t i = 0; i < N; ++i) model[i] = mix(i + 12345);
  swept.upload(model);
  plain.upload(model);
  load_kernel(ctx);
  const std::uint64_t distinct = words_stored(N, rounds, shape);
  for (std::uint32_t iter = 1; iter <= 3; ++iter) {
    swept.set_counting(true);
    plain.set_counting(true);
    swept.reset_link_stats();
    plain.reset_link_stats();
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      rounds_kernel<<<264, 256, 0, ctx.stream(r)>>>(swept.view(r), n, rounds, iter, shape, gap_ns);
      GPSM_CUDA_LAUNCH();
      rounds_kernel<<<264, 256, 0, ctx.stream(r)>>>(plain.view(r), n, rounds, iter, shape, gap_ns);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
    advance_model(model, rounds, iter, shape);
    const std::string what = std::string(label) + " iteration " + std::to_string(iter);
    expect_replicas(ctx, swept, model, what + " (sweep)");
    expect_replicas(ctx, plain, model, what + " (fence only)");
    const LinkStats s = swept.link_stats(), p = plain.link_stats();
    // Without the sweep the fence sends each stored word exactly once.
    EXPECT_EQ(p.swept_words, 0u) << what;
    EXPECT_EQ(p.fence_words, distinct) << what;
    // With it the sweepers sent words while the stores ran, and the fence drained fewer; every
    // stored word went at least once (a word stored again after a pass goes again).
    EXPECT_GT(s.swept_words, 0u) << what << ": the sweeper sent nothing";
    EXPECT_LT(s.fence_words, p.fence_words) << what << ": the fence drained as much as without the sweep";
    EXPECT_GE(s.swept_words + s.fence_words, distinct) << what;
    EXPECT_EQ(s.useful_bytes % 4, 0u);
    EXPECT_GE(s.useful_bytes, 4ull * distinct * static_cast<std::uint64_t>(n - 1)) << what;
    EXPECT_GT(s.messages, 0u);
    EXPECT_GE(s.fence_rounds, 1u);
    ::testing::Test::RecordProperty((std::string(label) + "_swept_words_" + std::to_string(iter)).c_str(),
                   std::to_string(s.swept_words));
    ::testing::Test::RecordProperty((std::string(label) + "_fence_words_" + std::to_string(iter)).c_str(),
                   std::to_string(s.fence_words));
  }
}

}  // namespace

TEST(GpsCombineSweep, RepeatedScatteredStoresMatchTheFenceOnlyRun) {
  GPSM_REQUIRE_GPUS(2);
  run_ab(Shape::sparse, "sparse");
}

// Dense lines go directly while their block has no record; once it has one, every line of the
// block is packed, so a direct write never lands under an older record of the same word.
TEST(GpsCombineSweep, DenseAndSparseLinesOfOneBlockKeepTheLastValue) {
  GPSM_REQUIRE_GPUS(2);
  run_ab(Shape::mixed, "mixed");
}

// Inbound areas far too small for one fence's words: sweepers fill them, give the bits of the
// records that did not fit back and stop; the fence then needs several rounds, and the result is
// still exact.
TEST(GpsCombineSweep, FullInboundAreasGiveTheBitsBack) {
  GPSM_REQUIRE_GPUS(2);
  const char* old = std::getenv("GPSM_INBOUND_ENTRIES");
  const std::string saved = old != nullptr ? old : "";
  setenv("GPSM_INBOUND_ENTRIES", "1024", 1);
  Context ctx(gpstest::all_devices());
  if (old != nullptr) setenv("GPSM_INBOUND_ENTRIES", saved.c_str(), 1);
  else unsetenv("GPSM_INBOUND_ENTRIES");
  const int n = ctx.size();
  const std::uint64_t N = gpstest::scaled(std::uint64_t{4} << 20, 64 * 1024);
  auto x = ctx.alloc<std::uint32_t>(N, with_mode(PublishMode::combine));
  x.set_combine_sweep(true);
  std::vector<std::uint32_t> model(N, 7u);
  x.upload(model);
  load_kernel(ctx);
  for (std::uint32_t iter = 1; iter <= 3; ++iter) {  // the areas double after each overflowing fence
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      rounds_kernel<<<264, 256, 0, ctx.stream(r)>>>(x.view(r), n, 4, iter, Shape::sparse, 100 * 1000);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
    advance_model(model, 4, iter, Shape::sparse);
    expect_replicas(ctx, x, model, "iteration " + std::to_string(iter));
  }
}

// A sweeper with no kernel to sweep: a fence right after the view stops it, one left alone ends by
// itself (kSweepIdleExitNs) and the kernel launched after it is published by the fence; neither
// hangs, both are exact.
TEST(GpsCombineSweep, SweeperWithoutStoresEndsAndTheFencePublishes) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t N = 1 << 20;
  auto x = ctx.alloc<std::uint32_t>(N, with_mode(PublishMode::combine));
  x.set_combine_sweep(true);
  std::vector<std::uint32_t> model(N, 3u);
  x.upload(model);
  load_kernel(ctx);
  for (int r = 0; r < n; ++r) (void)x.view(r);  // armed, nothing stored
  ctx.fence();
  expect_replicas(ctx, x, model, "no stores");
  std::vector<View<std::uint32_t>> views;
  for (int r = 0; r < n; ++r) views.push_back(x.view(r));
  ctx.synchronize();  // stops them; the views stay valid, the next fence drains everything
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    rounds_kernel<<<132, 256, 0, ctx.stream(r)>>>(views[r], n, 3, 5, Shape::mixed, 0);
    GPSM_CUDA_LAUNCH();
  }
  ctx.fence();
  advance_model(model, 3, 5, Shape::mixed);
  expect_replicas(ctx, x, model, "stores after the sweeper ended");
}
