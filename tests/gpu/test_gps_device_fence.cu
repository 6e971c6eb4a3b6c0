// The device-side fence of persistent GPS kernels (device_fence.hpp) and the span accessors
// (View::span, View::put): message passing across GPUs through the fence alone, persistent halo
// iterations over learned subscriptions with no lost update, the fence's norm sum, spans in every
// publish mode, and the refusal of arrays the fence cannot publish.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gps_test_util.hpp"

using namespace gpsm::gps;
using gpstest::DeviceVec;

namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 8;
constexpr std::uint64_t kWordsPerThread = 32;  // each thread's uint4 starts its own 128-byte line

// Element where (rank, block, thread) writes its uint4 each round.
__device__ __forceinline__ std::uint64_t litmus_slot(int rank, unsigned block, unsigned thread) {
  return ((static_cast<std::uint64_t>(rank) * kBlocks + block) * kThreads + thread) * kWordsPerThread;
}

// Round t: every thread of every block of every GPU stores {t, t, t, t} into its own slot through
// a span, the device fence, then every thread reads the slot of the same (block, thread) of every
// other GPU (local replica when subscribed, else the writer's home copy) and counts words < t.
// Writers store t + 1 only after the fence of round t + 1 started, so a value < t is stale.
__global__ void fence_litmus(const __grid_constant__ View<std::uint32_t> v, DeviceFence f, int ranks, int trials,
                             unsigned long long* stale) {
  unsigned long long bad = 0;
  const std::uint64_t mine = litmus_slot(v.rank(), blockIdx.x, threadIdx.x);
  for (int t = 1; t <= trials; ++t) {
    const auto s = v.span(mine, 4);
    v.put(s, mine, make_uint4(t, t, t, t));
    f.sync(t - 1, s.others != 0u);
    for (int q = 0; q < ranks; ++q) {
      if (q == v.rank()) continue;
      const std::uint64_t at = litmus_slot(q, blockIdx.x, threadIdx.x);
      const auto r = v.span(at, 4);
      const uint4 x = *reinterpret_cast<const uint4*>(r.from + at);  // plain: the fence ordered it
      bad += (x.x < static_cast<unsigned>(t)) + (x.y < static_cast<unsigned>(t)) + (x.z < static_cast<unsigned>(t)) +
             (x.w < static_cast<unsigned>(t));
    }
  }
  if (bad != 0) atomicAdd(stale, bad);
}

void run_fence_litmus(bool readers_subscribed) {
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t per_rank = static_cast<std::uint64_t>(kBlocks) * kThreads * kWordsPerThread;
  auto data = ctx.alloc<std::uint32_t>(per_rank * n, with_mode(PublishMode::inline_store));
  if (!readers_subscribed)  // each rank's slots live only in its replica: readers load remotely
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < n; ++o)
        if (o != r) data.unsubscribe(r * per_rank, per_rank, o);
  ctx.check_coresident(reinterpret_cast<const void*>(&fence_litmus), kBlocks, kThreads, 0);
  const int trials = static_cast<int>(gpstest::scaled(1000000, 100));
  std::vector<DeviceVec<unsigned long long>> stale;
  for (int r = 0; r < n; ++r) stale.emplace_back(ctx.device(r), 1);
  const std::vector<DeviceFence> f = ctx.device_fences(kBlocks);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    fence_litmus<<<kBlocks, kThreads, 0, ctx.stream(r)>>>(data.view(r), f[r], n, trials, stale[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  for (int r = 0; r < n; ++r) EXPECT_EQ(stale[r].download()[0], 0ull) << "rank " << r << " read stale words";
  const std::vector<std::uint32_t> got = data.coherent();
  for (std::uint64_t i = 0; i < got.size(); i += kWordsPerThread)
    ASSERT_EQ(got[i], static_cast<std::uint32_t>(trials)) << "element " << i;
  std::printf("[fence litmus] %d GPUs x %d blocks x %d threads x %d rounds, readers %s: no stale word\n", n, kBlocks,
              kThreads, trials, readers_subscribed ? "subscribed (local loads)" : "not subscribed (remote loads)");
}

// A ring of n segments of `seg` elements, one per GPU; iteration t reads buffer t % 2 (every
// element must hold t: written in iteration t - 1, or initially 0) including the two halo elements
// just outside the segment (the neighbours' edges), and writes t + 1 to its segment of the other
// buffer through spans. Any halo that was not published, or published late, reads < t.
struct Ring {
  View<std::uint32_t> a[2];
  DeviceFence f;
  std::uint64_t seg = 0, total = 0, first = 0;
  int iters = 0;
  unsigned long long* lost = nullptr;
  int* done = nullptr;
};

__device__ __forceinline__ unsigned long long ring_step(const Ring& g, const View<std::uint32_t>& in,
                                                        const View<std::uint32_t>& out, std::uint32_t t,
                                                        bool& published) {
  unsigned long long bad = 0;
  const std::uint64_t page = in.page_elems();
  // Pages of the segment, the two edge pages first (the order the halo-publishing apps use).
  const std::uint64_t pages = g.seg / page;
  for (std::uint64_t k = blockIdx.x; k < pages; k += gridDim.x) {
    const std::uint64_t local = k == 0 ? 0 : k == 1 ? pages - 1 : k - 1;
    const std::uint64_t i0 = g.first + local * page;
    const auto r = in.span(i0, page);
    const auto w = out.span(i0, page);
    for (std::uint64_t j = threadIdx.x; j < page; j += blockDim.x) bad += r.from[i0 + j] != t;
    for (std::uint64_t j = threadIdx.x * 4; j < page; j += blockDim.x * 4) out.put(w, i0 + j, make_uint4(t + 1, t + 1, t + 1, t + 1));
    published = published || w.others != 0u;
    if (local == 0 && threadIdx.x == 0) {  // the halo on each side: the neighbours' edge elements
      const std::uint64_t lo = (g.first + g.total - 1) % g.total, hi = (g.first + g.seg) % g.total;
      bad += in.span(lo, 1).from[lo] != t;
      bad += in.span(hi, 1).from[hi] != t;
    }
  }
  return bad;
}

__global__ void ring_kernel(const __grid_constant__ Ring g) {
  unsigned long long bad = 0;
  int t = 0;
  for (; t < g.iters; ++t) {
    bool published = false;
    bad += (t & 1) ? ring_step(g, g.a[1], g.a[0], static_cast<std::uint32_t>(t), published)
                   : ring_step(g, g.a[0], g.a[1], static_cast<std::uint32_t>(t), published);
    g.f.sync(t, published);
  }
  if (bad != 0) atomicAdd(g.lost, bad);
  if (blockIdx.x == 0 && threadIdx.x == 0) *g.done = t;
}

// The fence's sum: every thread of every GPU adds rank + 1 in round t, for every t.
__global__ void sum_kernel(DeviceFence f, int rounds, float* out) {
  float last = 0;
  for (int t = 0; t < rounds; ++t) {
    const float s = f.arrive_and_wait(t, static_cast<float>(f.rank + 1), true, false);
    if (t == 0) last = s;
    else if (s != last) last = -1.0f;  // every round must give the same total
  }
  if (threadIdx.x == 0) out[blockIdx.x] = last;
}

// arrive_and_reduce: round 2t, block b of rank r stores two values into its slot of this GPU's
// partials (by parity of t); the GPU's last block adds them in block order (thread 0, a fixed
// order), every block gets the GPUs' sums in rank order. Odd rounds are plain fences: the two
// calls share the round numbering. The values mix magnitudes (1e16 and ~1), so any other order
// of additions gives other bits.
__host__ __device__ inline double reduce_value(int r, int b, int t, int k) {
  return (b % 3 == 0 ? 1e16 : 1.0) * (1 + r) + 0.25 * t + b - 3.5 * k;
}
__global__ void reduce_kernel(DeviceFence f, int rounds, double* part, double* out) {
  for (int t = 0; t < rounds; ++t) {
    double* mine = part + (t & 1) * 2 * kBlocks;
    if (threadIdx.x == 0)
      for (int k = 0; k < 2; ++k) mine[2 * blockIdx.x + k] = reduce_value(f.rank, blockIdx.x, t, k);
    double got[2];
    f.arrive_and_reduce<2>(2 * t, false, [&](double* o) {
      if (threadIdx.x == 0)
        for (int k = 0; k < 2; ++k) {
          double s = 0.0;
          for (unsigned b = 0; b < gridDim.x; ++b) s = s + __ldcg(mine + 2 * b + k);
          o[k] = s;
        }
    }, got);
    if (threadIdx.x == 0)
      for (int k = 0; k < 2; ++k) out[(static_cast<std::size_t>(blockIdx.x) * rounds + t) * 2 + k] = got[k];
    f.sync(2 * t + 1, false);
  }
}

// The split phase (arrive, wait_local, wait), as Pipelined CG uses it. Round t, parity p = t & 1:
// thread 0 of block b stores t + 1 into this GPU's local[p][b] (plain memory) and into element
// (p, rank, b) of a GPS array every GPU subscribes to (published inline), and the reduce value of
// (rank, b, t) into part[p][b]; arrive<1>; wait_local: every block's local[p][.] of this GPU must
// hold t + 1 (no block writes parity p again before every block of every GPU finished wait_all(t));
// wait_all<1>: the sum must be the GPUs' block-ordered sums in rank order, and this GPU's replica must
// hold t + 1 at every (p, g, b). A block with stale data or a wrong sum counts it in *bad.
// reducer < 0: arrive<1> (the GPU's last block to arrive reduces); else block specialization:
// every block count_in, and block `reducer` publish_values after its wait_local.
__global__ void split_kernel(DeviceFence f, const __grid_constant__ View<std::uint32_t> pub, std::uint32_t* local,
                             double* part, int rounds, int reducer, unsigned long long* bad) {
  const unsigned nb = gridDim.x;
  const std::uint32_t* replica = pub.local();
  unsigned long long miss = 0;
  for (int t = 0; t < rounds; ++t) {
    const int p = t & 1;
    const auto stamp = static_cast<std::uint32_t>(t + 1);
    if (threadIdx.x == 0) {
      local[p * nb + blockIdx.x] = stamp;
      pub.store((static_cast<std::uint64_t>(p) * f.ranks + f.rank) * nb + blockIdx.x, stamp);
      part[p * nb + blockIdx.x] = reduce_value(f.rank, static_cast<int>(blockIdx.x), t, 0);
    }
    auto gpu_values = [&](double* o) {
      if (threadIdx.x == 0) {
        double s = 0.0;
        for (unsigned b = 0; b < nb; ++b) s = s + __ldcg(part + p * nb + b);
        o[0] = s;
      }
    };
    if (reducer < 0) {
      f.arrive<1>(t, true, gpu_values);
      f.wait_local(t);
    } else {
      f.count_in(t, true);
      f.wait_local(t);
      if (static_cast<int>(blockIdx.x) == reducer) f.publish_values<1>(t, gpu_values);
    }
    for (unsigned b = threadIdx.x; b < nb; b += blockDim.x) miss += local[p * nb + b] != stamp;  // plain loads
    double got[1];
    f.wait_all<1>(t, got);
    const unsigned every = static_cast<unsigned>(f.ranks) * nb;
    for (unsigned i = threadIdx.x; i < every; i += blockDim.x) miss += replica[p * every + i] != stamp;
    if (threadIdx.x == 0) {
      double want = 0.0;
      for (int g = 0; g < f.ranks; ++g) {
        double s = 0.0;
        for (unsigned b = 0; b < nb; ++b) s = s + reduce_value(g, static_cast<int>(b), t, 0);
        want = want + s;
      }
      miss += got[0] != want;
    }
  }
  if (miss != 0) atomicAdd(bad, miss);
}

// Spans over [i, i + n): where loads read and whether a put applies.
__global__ void span_probe(View<std::uint32_t> v, std::uint64_t i, std::uint64_t n, unsigned long long* out) {
  const auto s = v.span(i, n);
  out[0] = s.from == nullptr ? 0 : s.from == v.local() ? 1 : 2;
  out[1] = s.here != nullptr;
  out[2] = s.others;
  out[3] = s.uniform;
}

// put() of uint4 runs over [0, count) with value base + element index, from rank `writer`'s view.
__global__ void put_runs(View<std::uint32_t> v, std::uint64_t count, std::uint32_t base) {
  const std::uint64_t page = v.page_elems();
  for (std::uint64_t p = blockIdx.x; p * page < count; p += gridDim.x) {
    const std::uint64_t i0 = p * page, n = count - i0 < page ? count - i0 : page;
    const auto s = v.span(i0, n);
    for (std::uint64_t j = threadIdx.x * 4; j < n; j += blockDim.x * 4) {
      const std::uint32_t x = base + static_cast<std::uint32_t>(i0 + j);
      if (s.uniform)
        v.put(s, i0 + j, make_uint4(x, x + 1, x + 2, x + 3));
      else
        for (int k = 0; k < 4; ++k) v.store(i0 + j + k, x + k);
    }
  }
}

}  // namespace

TEST(GpsDeviceFence, MessagePassingNeverReadsStaleData) {
  GPSM_REQUIRE_GPUS(2);
  run_fence_litmus(true);
}

TEST(GpsDeviceFence, MessagePassingWithRemoteLoadsNeverReadsStaleData) {
  GPSM_REQUIRE_GPUS(2);
  run_fence_litmus(false);
}

// 10^5 iterations of one persistent kernel per GPU publishing halos over subscriptions learned by
// tracking: every halo read holds the previous iteration's value, and the final grid is exact.
TEST(GpsDeviceFence, PersistentHaloIterationsLoseNoUpdate) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  AllocOptions o = with_mode(PublishMode::inline_store);
  o.page_bytes = 4096;
  const std::uint64_t page = o.page_bytes / sizeof(std::uint32_t), seg = 8 * page, total = seg * n;
  Array<std::uint32_t> a[2] = {ctx.alloc<std::uint32_t>(total, o), ctx.alloc<std::uint32_t>(total, o)};
  ctx.check_coresident(reinterpret_cast<const void*>(&ring_kernel), kBlocks, kThreads, 0);
  std::vector<DeviceVec<unsigned long long>> lost;
  std::vector<DeviceVec<int>> done;
  for (int r = 0; r < n; ++r) {
    lost.emplace_back(ctx.device(r), 1);
    done.emplace_back(ctx.device(r), 1);
  }
  auto run = [&](int iters) {
    for (auto& x : a) x.upload(std::vector<std::uint32_t>(total, 0u));
    const std::vector<DeviceFence> f = ctx.device_fences(kBlocks);
    for (int r = 0; r < n; ++r) {
      Ring g;
      g.a[0] = a[0].view(r);
      g.a[1] = a[1].view(r);
      g.f = f[r];
      g.seg = seg;
      g.total = total;
      g.first = r * seg;
      g.iters = iters;
      g.lost = lost[r].p;
      g.done = done[r].p;
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      ring_kernel<<<kBlocks, kThreads, 0, ctx.stream(r)>>>(g);
      GPSM_CUDA_LAUNCH();
    }
    ctx.synchronize();
  };
  ctx.tracking_start();
  run(2);
  ctx.tracking_stop();
  // Learned: each segment's edge pages have the neighbour as a second subscriber, the rest none.
  for (const auto& x : a) {
    const auto m = x.subscriptions().masks();
    for (int r = 0; r < n; ++r)
      for (std::uint64_t p = 0; p < seg / page; ++p) {
        const std::uint64_t page_index = r * (seg / page) + p;
        std::uint32_t want = 1u << r;
        if (p == 0) want |= 1u << ((r + n - 1) % n);
        if (p == seg / page - 1) want |= 1u << ((r + 1) % n);
        EXPECT_EQ(m[page_index], want) << "rank " << r << " page " << p;
      }
  }
  const int iters = static_cast<int>(gpstest::scaled(100000, 50));
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    GPSM_CUDA(cudaMemset(lost[r].p, 0, sizeof(unsigned long long)));
  }
  run(iters);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(lost[r].download()[0], 0ull) << "rank " << r << " read a halo that was not published in time";
    EXPECT_EQ(done[r].download()[0], iters) << "rank " << r;
  }
  const std::vector<std::uint32_t> last = a[iters % 2].coherent();
  for (std::uint64_t i = 0; i < total; ++i) ASSERT_EQ(last[i], static_cast<std::uint32_t>(iters)) << "element " << i;
  std::printf("[fence halo] %d GPUs x %d iterations, %llu-element segments: no lost update\n", n, iters,
              static_cast<unsigned long long>(seg));
}

TEST(GpsDeviceFence, SumIsTheSameOnEveryGpuAndRound) {
  GPSM_REQUIRE_GPUS(1);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  std::vector<DeviceVec<float>> out;
  for (int r = 0; r < n; ++r) out.emplace_back(ctx.device(r), kBlocks);
  const std::vector<DeviceFence> f = ctx.device_fences(kBlocks);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    sum_kernel<<<kBlocks, kThreads, 0, ctx.stream(r)>>>(f[r], 1000, out[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  float want = 0;  // exact in float: small integers
  for (int r = 0; r < n; ++r) want += static_cast<float>((r + 1) * kBlocks * kThreads);
  for (int r = 0; r < n; ++r)
    for (float x : out[r].download()) EXPECT_EQ(x, want) << "rank " << r;
}

TEST(GpsDeviceFence, ReduceGivesTheSameBitsInRankOrderEverywhere) {
  GPSM_REQUIRE_GPUS(1);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size(), rounds = 1000;
  std::vector<DeviceVec<double>> part, out;
  for (int r = 0; r < n; ++r) {
    part.emplace_back(ctx.device(r), 4 * kBlocks);
    out.emplace_back(ctx.device(r), static_cast<std::size_t>(kBlocks) * rounds * 2);
  }
  const std::vector<DeviceFence> f = ctx.device_fences(kBlocks);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    reduce_kernel<<<kBlocks, kThreads, 0, ctx.stream(r)>>>(f[r], rounds, part[r].p, out[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  for (int r = 0; r < n; ++r) {
    const std::vector<double> got = out[r].download();
    for (int t = 0; t < rounds; ++t)
      for (int k = 0; k < 2; ++k) {
        double want = 0.0;
        for (int g = 0; g < n; ++g) {
          double s = 0.0;
          for (int b = 0; b < kBlocks; ++b) s = s + reduce_value(g, b, t, k);
          want = want + s;
        }
        for (int b = 0; b < kBlocks; ++b)
          ASSERT_EQ(got[(static_cast<std::size_t>(b) * rounds + t) * 2 + k], want)
              << "rank " << r << " block " << b << " round " << t << " value " << k;
      }
  }
}

static void run_split_phase(int reducer) {
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const int rounds = static_cast<int>(gpstest::scaled(100000, 100));
  auto pub = ctx.alloc<std::uint32_t>(2ull * n * kBlocks, with_mode(PublishMode::inline_store));
  std::vector<DeviceVec<std::uint32_t>> local;
  std::vector<DeviceVec<double>> part;
  std::vector<DeviceVec<unsigned long long>> bad;
  for (int r = 0; r < n; ++r) {
    local.emplace_back(ctx.device(r), 2 * kBlocks);
    part.emplace_back(ctx.device(r), 2 * kBlocks);
    bad.emplace_back(ctx.device(r), 1);
  }
  ctx.check_coresident(reinterpret_cast<const void*>(&split_kernel), kBlocks, kThreads, 0);
  const std::vector<DeviceFence> f = ctx.device_fences(kBlocks);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    split_kernel<<<kBlocks, kThreads, 0, ctx.stream(r)>>>(f[r], pub.view(r), local[r].p, part[r].p, rounds, reducer, bad[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  for (int r = 0; r < n; ++r) EXPECT_EQ(bad[r].download()[0], 0ull) << "rank " << r << " saw stale data or a wrong sum";
  std::printf("[split fence, %s] %d GPUs x %d blocks x %d rounds: local, published and summed all fresh\n",
              reducer < 0 ? "last block reduces" : "block 0 reduces", n, kBlocks, rounds);
}

TEST(GpsDeviceFence, SplitPhaseSeesLocalThenEveryGpusStoresAndSum) {
  GPSM_REQUIRE_GPUS(1);
  run_split_phase(-1);
}

// Block specialization: the same checks with block 0 publishing every round's values (count_in,
// then publish_values after wait_local) while the last block to arrive only raises `local`.
TEST(GpsDeviceFence, SplitPhaseWithACommunicationBlockSeesTheSame) {
  GPSM_REQUIRE_GPUS(1);
  run_split_phase(0);
}

TEST(GpsDeviceFence, RefusesArraysThatWaitForTheHostDrain) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<float>(1024, with_mode(PublishMode::inline_store));
  EXPECT_NO_THROW(ctx.device_fences(4));
  AllocOptions o = with_mode(PublishMode::combine);
  o.name = "combined";
  auto y = ctx.alloc<float>(1024, o);
  try {
    ctx.device_fences(4);
    ADD_FAILURE() << "device_fences() accepted a combine array";
  } catch (const gpsm::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("device_fences()"), std::string::npos) << m;
    EXPECT_NE(m.find("'combined' in combine mode"), std::string::npos) << m;
  }
  EXPECT_THROW(ctx.device_fences(0), gpsm::Error);
}

// Spans: one subscriber set per run, or none (element by element); `from` is the local replica
// where this GPU subscribes, else the home.
TEST(GpsSpan, ReportsWhereARunReadsAndWhetherPutApplies) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  AllocOptions o = with_mode(PublishMode::inline_store);
  o.page_bytes = 4096;
  const std::uint64_t page = 1024;
  auto x = ctx.alloc<std::uint32_t>(4 * page, o);
  x.unsubscribe(page, page, 0);      // page 1: rank 0 is not a subscriber
  x.unsubscribe(2 * page, page, 1);  // page 2: only rank 0 of ranks 0 and 1
  DeviceVec<unsigned long long> out(ctx.device(0), 4);
  const int n = ctx.size();
  const std::uint32_t all = (n >= 32 ? 0u : (1u << n)) - 1u;
  auto probe = [&](std::uint64_t i, std::uint64_t len) {
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    span_probe<<<1, 32, 0, ctx.stream(0)>>>(x.view(0), i, len, out.p);
    GPSM_CUDA_LAUNCH();
    ctx.synchronize();
    return out.download();
  };
  auto s = probe(0, page);  // page 0, every rank: local, put reaches the others
  EXPECT_EQ(s[0], 1u);
  EXPECT_EQ(s[1], 1u);
  EXPECT_EQ(s[2], all & ~1u);
  EXPECT_EQ(s[3], 1u);
  s = probe(page + 5, 10);  // page 1 without rank 0: the home (rank 1), no local replica
  EXPECT_EQ(s[0], 2u);
  EXPECT_EQ(s[1], 0u);
  EXPECT_EQ(s[2], all & ~1u);
  EXPECT_EQ(s[3], 1u);
  s = probe(page - 2, 4);  // pages 0 and 1: different subscribers, not uniform
  EXPECT_EQ(s[0], 0u);
  EXPECT_EQ(s[3], 0u);
  s = probe(2 * page - 2, 4);  // pages 1 and 2: not uniform, rank 0 not subscribed to page 1
  EXPECT_EQ(s[0], 0u);
  s = probe(2 * page, page);  // page 2: rank 0 and ranks >= 2
  EXPECT_EQ(s[0], 1u);
  EXPECT_EQ(s[2], all & ~3u);
}

// put() and span fallbacks publish like store() in every mode: after a host fence every
// subscriber holds every value, whoever wrote it.
TEST(GpsSpan, PutPublishesInEveryMode) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  for (PublishMode m : {PublishMode::inline_store, PublishMode::combine, PublishMode::bulk}) {
    SCOPED_TRACE(mode_name(m));
    AllocOptions o = with_mode(m);
    o.page_bytes = 4096;
    const std::uint64_t page = 1024, count = 16 * page;
    auto x = ctx.alloc<std::uint32_t>(count, o);
    x.unsubscribe(3 * page, page, 1);  // a page rank 1 does not hold (stores from 1 go to the home)
    for (int w = 0; w < n; ++w) {
      GPSM_CUDA(cudaSetDevice(ctx.device(w)));
      put_runs<<<8, 128, 0, ctx.stream(w)>>>(x.view(w), count, 1000u * (w + 1));
      GPSM_CUDA_LAUNCH();
      ctx.fence();
      for (int r = 0; r < n; ++r) {
        const std::vector<std::uint32_t> rep = x.replica(r);
        for (std::uint64_t i = 0; i < count; ++i) {
          if (r == 1 && i / page == 3) continue;  // not a subscriber: its copy is stale by design
          ASSERT_EQ(rep[i], 1000u * (w + 1) + i) << "writer " << w << " replica " << r << " element " << i;
        }
      }
    }
  }
}
