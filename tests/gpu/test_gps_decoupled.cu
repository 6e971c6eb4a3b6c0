// The decoupled publish mode on real GPUs: the runtime learns each chunk's store count while
// tracking, then every complete chunk is pushed exactly once to every subscriber by the agent
// (inline warps or persistent polling warps) while the kernel runs; kernels that store fewer or
// more words than learned stay correct after the fence; decoupled and inline arrays mix; a halo
// exchange gives the same result as inline publishing.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gps_test_util.hpp"

using namespace gpsm::gps;
using gpstest::DeviceVec;

namespace {

constexpr std::uint64_t kChunk = 4096;               // bytes: 1024 words
constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kChunkWords = kChunk / 4;

__host__ __device__ std::uint32_t value(std::uint64_t i, std::uint32_t iter) {
  return static_cast<std::uint32_t>(i * 2654435761ull) ^ (iter * 0x9E3779B9u) ^ 1u;
}
__host__ __device__ int owner(std::uint64_t i, int n) { return static_cast<int>((i / kChunkWords) % n); }

// Device `rank` stores every element of the chunks it owns (chunks dealt round robin); with
// `load_all`, it also loads every element (so tracking subscribes it to every page).
// skip_every > 0: elements with i % skip_every == 0 are not stored (fewer stores than learned);
// twice_every > 0: elements with i % twice_every == 0 are stored twice, the second time with
// value(i, iter + 1000) (more stores than learned; the second value is final).
__global__ void owned_stores(View<std::uint32_t> v, std::uint32_t iter, int n, bool load_all, std::uint64_t skip_every,
                             std::uint64_t twice_every, std::uint32_t* sink) {
  std::uint32_t acc = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    if (load_all) acc += v.load(i);
    if (owner(i, n) != v.rank()) continue;
    if (skip_every != 0 && i % skip_every == 0) continue;
    v.store(i, value(i, iter));
    if (twice_every != 0 && i % twice_every == 0) v.store(i, value(i, iter + 1000));
  }
  if (acc == 0x12345678u) *sink = acc;  // keeps the loads
}

// The same stores as 16-byte puts through a span per chunk.
__global__ void owned_puts(View<std::uint32_t> v, std::uint32_t iter, int n) {
  const std::uint64_t quads = v.size() / 4;
  for (std::uint64_t q = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; q < quads;
       q += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t i = q * 4;
    if (owner(i, n) != v.rank()) continue;
    const auto s = v.span(i, 4);
    v.put(s, i, uint4{value(i, iter), value(i + 1, iter), value(i + 2, iter), value(i + 3, iter)});
  }
}

std::vector<std::uint32_t> model_of(std::uint64_t N, std::uint32_t iter, std::uint64_t skip_every = 0,
                                    std::uint64_t twice_every = 0, const std::vector<std::uint32_t>* before = nullptr) {
  std::vector<std::uint32_t> m(N);
  for (std::uint64_t i = 0; i < N; ++i) {
    if (skip_every != 0 && i % skip_every == 0) m[i] = before ? (*before)[i] : 0u;
    else if (twice_every != 0 && i % twice_every == 0) m[i] = value(i, iter + 1000);
    else m[i] = value(i, iter);
  }
  return m;
}

void expect_every_replica(const Context& ctx, const Array<std::uint32_t>& x, const std::vector<std::uint32_t>& want,
                          const std::string& what) {
  for (int r = 0; r < ctx.size(); ++r) {
    const auto got = x.replica(r);
    std::uint64_t bad = 0, first = want.size();
    for (std::uint64_t i = 0; i < want.size(); ++i)
      if (got[i] != want[i]) {
        if (bad++ == 0) first = i;
      }
    EXPECT_EQ(bad, 0u) << what << ": rank " << r << " has " << bad << " stale words, first at " << first;
  }
}

// Learns the counts: two tracking intervals of the same kernel in which every device loads every
// element (so every page has every device as subscriber).
// Under CUDA's lazy module loading a kernel's first launch waits for the kernels already running,
// and a persistent agent starts when the view is taken, before the user's launch: the agent would
// wait for stores that cannot come until its bound passes (the fence then publishes everything:
// correct, but not pushed). Loading the kernels first (cudaFuncGetAttributes, or
// CUDA_MODULE_LOADING=EAGER) is what a user of the persistent agent does; docs/gps.md says so.
void load_kernels(const Context& ctx) {
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    cudaFuncAttributes at{};
    GPSM_CUDA(cudaFuncGetAttributes(&at, owned_stores));
    GPSM_CUDA(cudaFuncGetAttributes(&at, owned_puts));
  }
}

void learn(Context& ctx, Array<std::uint32_t>& x, std::vector<DeviceVec<std::uint32_t>>& sink) {
  const int n = ctx.size();
  load_kernels(ctx);
  ctx.tracking_start();
  for (std::uint32_t it = 0; it < 2; ++it) {
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      owned_stores<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), it, n, true, 0, 0, sink[r].p);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
  }
  ctx.tracking_stop();
}

// Each test runs with both agents, ending its intervals with the host fence or with fence_async
// (settle and drain enqueued on the streams, the persistent agent stopped from the device) and a
// wait for the devices before the replicas are read.
class GpsDecoupled : public ::testing::TestWithParam<std::tuple<DecoupledAgent, bool>> {
 protected:
  DecoupledAgent agent() const { return std::get<0>(GetParam()); }
  void end_interval(Context& ctx) const {
    if (std::get<1>(GetParam())) {
      ctx.fence_async();
      ctx.synchronize();
    } else {
      ctx.fence();
    }
  }
};

// Every chunk is pushed exactly once to every other subscriber per kernel, and the fence publishes
// nothing more: the link counters see one message and the chunk's bytes per chunk and destination.
TEST_P(GpsDecoupled, EveryChunkDeliveredExactlyOnce) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t chunks = 64 * static_cast<std::uint64_t>(n);
  const std::uint64_t N = chunks * kChunkWords;
  AllocOptions o = with_decoupled(agent(), kChunk);
  o.page_bytes = kPage;
  auto x = ctx.alloc<std::uint32_t>(N, o);
  x.set_counting(true);
  std::vector<DeviceVec<std::uint32_t>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);
  learn(ctx, x, sink);
  for (int r = 0; r < n; ++r) EXPECT_EQ(x.learned_chunks(r), chunks / n) << "rank " << r;
  for (std::uint32_t it = 2; it < 6; ++it) {
    x.reset_link_stats();
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      if (it % 2 == 0) {
        owned_stores<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), it, n, false, 0, 0, sink[r].p);
      } else {
        owned_puts<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), it, n);
      }
      GPSM_CUDA_LAUNCH();
    }
    end_interval(ctx);
    const LinkStats s = x.link_stats();
    const std::uint64_t dests = static_cast<std::uint64_t>(n - 1);
    EXPECT_EQ(s.messages, chunks * dests) << "iteration " << it;
    EXPECT_EQ(s.useful_bytes, N * 4 * dests) << "iteration " << it;
    expect_every_replica(ctx, x, model_of(N, it), "iteration " + std::to_string(it));
  }
}

// Kernels that store fewer words than learned (chunks never complete: the fence publishes them)
// or more (the push happens when the count is reached; the later stores go at the fence).
TEST_P(GpsDecoupled, FewerOrMoreStoresThanLearnedStayCorrect) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t N = 32 * static_cast<std::uint64_t>(n) * kChunkWords;
  AllocOptions o = with_decoupled(agent(), kChunk);
  o.page_bytes = kPage;
  auto x = ctx.alloc<std::uint32_t>(N, o);
  std::vector<DeviceVec<std::uint32_t>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);
  learn(ctx, x, sink);
  std::vector<std::uint32_t> model = model_of(N, 1);
  struct Case {
    std::uint64_t skip, twice;
  };
  std::uint32_t it = 10;
  for (const Case c : {Case{3, 0}, Case{0, 0}, Case{0, 5}, Case{7, 11}, Case{kChunkWords * 3, 0}, Case{0, 0}}) {
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      owned_stores<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), it, n, false, c.skip, c.twice, sink[r].p);
      GPSM_CUDA_LAUNCH();
    }
    end_interval(ctx);
    model = model_of(N, it, c.skip, c.twice, &model);
    expect_every_replica(ctx, x, model,
                         "skip " + std::to_string(c.skip) + " twice " + std::to_string(c.twice));
    ++it;
  }
}

// Word 5 of every chunk is stored by the owner's next rank instead of the owner, and the owner
// stores word 0 twice: its count still reaches the learned one, so the chunk is pushed, while the
// foreign word is published by the fence from the other rank.
__global__ void shared_chunk_stores(View<std::uint32_t> v, std::uint32_t iter, int n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const int o = owner(i, n);
    const std::uint64_t w = i % kChunkWords;
    const int writer = w == 5 ? (o + 1) % n : o;
    if (writer == v.rank()) v.store(i, value(i, iter));
    if (o == v.rank() && w == 0) v.store(i, value(i, iter));
  }
}

// A push carries only the pushing rank's dirty words: another rank's word in the same chunk is
// neither overwritten with a stale copy in any replica nor lost.
TEST_P(GpsDecoupled, ForeignWordsInAPushedChunkSurvive) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t chunks = 16 * static_cast<std::uint64_t>(n);
  const std::uint64_t N = chunks * kChunkWords;
  AllocOptions o = with_decoupled(agent(), kChunk);
  o.page_bytes = kPage;
  auto x = ctx.alloc<std::uint32_t>(N, o);
  x.set_counting(true);
  std::vector<DeviceVec<std::uint32_t>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);
  learn(ctx, x, sink);
  for (std::uint32_t it = 40; it < 43; ++it) {
    x.reset_link_stats();
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      shared_chunk_stores<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), it, n);
      GPSM_CUDA_LAUNCH();
    }
    end_interval(ctx);
    // Every chunk was pushed (one message per chunk and destination) minus its foreign word, and
    // the fence sent each foreign word to the other ranks.
    const std::uint64_t dests = static_cast<std::uint64_t>(n - 1);
    EXPECT_EQ(x.link_stats().useful_bytes, N * 4 * dests) << "iteration " << it;
    expect_every_replica(ctx, x, model_of(N, it), "iteration " + std::to_string(it));
  }
}

INSTANTIATE_TEST_SUITE_P(Agents, GpsDecoupled,
                         ::testing::Combine(::testing::Values(DecoupledAgent::inline_warp, DecoupledAgent::persistent),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<DecoupledAgent, bool>>& i) {
                           return std::string(agent_name(std::get<0>(i.param))) +
                                  (std::get<1>(i.param) ? "_fence_async" : "_fence");
                         });

__global__ void store_both(View<std::uint32_t> a, View<std::uint32_t> b, std::uint32_t iter, int n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < a.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    if (owner(i, n) != a.rank()) continue;
    a.store(i, value(i, iter));
    b.store(i, value(i, iter) + 1u);
  }
}

__global__ void add_one_at(View<std::uint32_t> v, std::uint64_t i) {
  if (blockIdx.x == 0 && threadIdx.x == 0) v.atomic_add(i, 1u);
}

// A decoupled array and an inline array in one context, written by the same kernel; and an
// atomic on a learned chunk of the decoupled array (its chunk then goes at the fence).
TEST(GpsDecoupledMix, DecoupledAndInlineArraysInOneContext) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t N = 16 * static_cast<std::uint64_t>(n) * kChunkWords;
  AllocOptions od = with_decoupled(DecoupledAgent::inline_warp, kChunk);
  od.page_bytes = kPage;
  AllocOptions oi = with_mode(PublishMode::inline_store);
  oi.page_bytes = kPage;
  auto a = ctx.alloc<std::uint32_t>(N, od);
  auto b = ctx.alloc<std::uint32_t>(N, oi);
  std::vector<DeviceVec<std::uint32_t>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);
  learn(ctx, a, sink);
  for (int r = 0; r < n; ++r) b.subscribe(0, N, r);  // untouched while tracking: back to every device
  for (std::uint32_t it = 20; it < 23; ++it) {
    for (int r = 0; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      store_both<<<132, 256, 0, ctx.stream(r)>>>(a.view(r), b.view(r), it, n);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
    std::vector<std::uint32_t> ma = model_of(N, it), mb(N);
    for (std::uint64_t i = 0; i < N; ++i) mb[i] = ma[i] + 1u;
    expect_every_replica(ctx, a, ma, "decoupled array, iteration " + std::to_string(it));
    EXPECT_EQ(b.coherent(), mb) << "inline array, iteration " << it;
  }
  // Same stores plus one atomic from rank 1 on a word of a chunk rank 0 owns.
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    store_both<<<132, 256, 0, ctx.stream(r)>>>(a.view(r), b.view(r), 30, n);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  GPSM_CUDA(cudaSetDevice(ctx.device(1)));
  add_one_at<<<1, 32, 0, ctx.stream(1)>>>(a.view(1), 5);
  GPSM_CUDA_LAUNCH();
  ctx.fence();
  std::vector<std::uint32_t> ma = model_of(N, 30);
  ma[5] += 1u;
  expect_every_replica(ctx, a, ma, "after an atomic");
}

// One step of a 1D-decomposed 2D Jacobi: rows [1, rows - 1) of `out` from `in`; rank r owns a
// contiguous band of rows; the band's edge rows are its neighbours' halos.
__global__ void jacobi_rows(View<float> in, View<float> out, std::uint64_t rows, std::uint64_t cols,
                            std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t first = lo < 1 ? 1 : lo, last = hi > rows - 1 ? rows - 1 : hi;
  for (std::uint64_t k = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; k < (last - first) * cols;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t r = first + k / cols, c = k % cols;
    const float up = in.load((r - 1) * cols + c), down = in.load((r + 1) * cols + c);
    const float left = in.load(r * cols + (c == 0 ? cols - 1 : c - 1));
    const float right = in.load(r * cols + (c + 1 == cols ? 0 : c + 1));
    out.store(r * cols + c, 0.25f * (up + down + left + right));
  }
}

std::vector<float> run_halo(Context& ctx, AllocOptions o, int iters) {
  const int n = ctx.size();
  const std::uint64_t cols = 1024, rows = 64 * static_cast<std::uint64_t>(n) + 2;
  o.page_bytes = cols * 4;  // a row per page
  auto a = ctx.alloc<float>(rows * cols, o);
  auto b = ctx.alloc<float>(rows * cols, o);
  std::vector<float> init(rows * cols);
  for (std::uint64_t i = 0; i < init.size(); ++i) init[i] = static_cast<float>((i * 7919) % 1000) * 0.001f;
  a.upload(init);
  b.upload(init);
  auto step = [&](int it) {
    Array<float>& in = it % 2 == 0 ? a : b;
    Array<float>& out = it % 2 == 0 ? b : a;
    for (int r = 0; r < n; ++r) {
      const std::uint64_t lo = rows * r / n, hi = rows * (r + 1) / n;
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      jacobi_rows<<<132, 256, 0, ctx.stream(r)>>>(in.view(r), out.view(r), rows, cols, lo, hi);
      GPSM_CUDA_LAUNCH();
    }
    ctx.fence();
  };
  ctx.tracking_start();
  step(0);
  step(1);
  step(2);
  step(3);
  ctx.tracking_stop();
  for (int it = 4; it < iters; ++it) step(it);
  return (iters % 2 == 0 ? a : b).coherent();
}

// The halo exchange gives bit-identical grids in decoupled mode (each agent) and inline mode.
TEST(GpsDecoupledHalo, SameResultAsInline) {
  GPSM_REQUIRE_GPUS(1);
  Context ctx(gpstest::all_devices());
  const std::vector<float> want = run_halo(ctx, with_mode(PublishMode::inline_store), 40);
  for (DecoupledAgent ag : {DecoupledAgent::inline_warp, DecoupledAgent::persistent}) {
    const std::vector<float> got = run_halo(ctx, with_decoupled(ag, 4096), 40);
    ASSERT_EQ(got.size(), want.size());
    std::uint64_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
    EXPECT_EQ(bad, 0u) << agent_name(ag) << " agent";
  }
}

}  // namespace
