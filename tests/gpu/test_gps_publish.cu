// GPS runtime on real GPUs: stores from every GPU reach every replica after a fence, in every
// publish mode; wrong subscription hints stay correct; queue overflow takes extra rounds and
// loses nothing; strong accesses demote their page.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gps_test_util.hpp"
#include "runtime/finepack.hpp"

using namespace gpsm::gps;
using gpstest::DeviceVec;

namespace {

template <class T>
__global__ void scatter_store(View<T> v, const std::uint64_t* idx, const T* val, std::uint64_t n) {
  for (std::uint64_t k = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; k < n;
       k += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    v.store(idx[k], val[k]);
}

template <class T>
__global__ void load_all(View<T> v, T* out) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    out[i] = v.load(i);
}

__global__ void strong_flag(View<std::uint32_t> v, std::uint64_t i) {
  if (threadIdx.x == 0 && blockIdx.x == 0) v.st_release_sys(i, 7u);
}

template <class T>
T value_of(std::mt19937_64& rng) {
  return static_cast<T>(rng() | 1u);  // never zero: a lost store can't look like the initial value
}

// Random disjoint stores from every GPU: each stored index has one owner; stores are issued in a
// random order. Returns the model (initial contents overwritten by the stores).
template <class T>
std::vector<T> run_random_stores(Context& ctx, Array<T>& x, PublishMode mode, std::uint64_t seed, double density) {
  const int n = ctx.size();
  const std::uint64_t N = x.size();
  std::mt19937_64 rng(seed);
  std::vector<T> model(N);
  for (auto& m : model) m = value_of<T>(rng);
  x.upload(model);
  std::vector<std::vector<std::uint64_t>> idx(n);
  std::vector<std::vector<T>> val(n);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (std::uint64_t i = 0; i < N; ++i) {
    if (u(rng) >= density) continue;
    const int owner = static_cast<int>(rng() % n);
    idx[owner].push_back(i);
  }
  for (int r = 0; r < n; ++r) {
    std::shuffle(idx[r].begin(), idx[r].end(), rng);
    for (std::uint64_t i : idx[r]) {
      val[r].push_back(value_of<T>(rng));
      model[i] = val[r].back();
    }
  }
  std::vector<DeviceVec<std::uint64_t>> di;
  std::vector<DeviceVec<T>> dv;
  for (int r = 0; r < n; ++r) {
    di.emplace_back(ctx.device(r), idx[r]);
    dv.emplace_back(ctx.device(r), val[r]);
  }
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    scatter_store<T><<<132, 256, 0, ctx.stream(r)>>>(x.view(r, mode), di[r].p, dv[r].p, idx[r].size());
    GPSM_CUDA_LAUNCH();
  }
  ctx.fence();
  return model;
}

// Every subscriber's replica matches the model on its subscribed pages; coherent() everywhere.
template <class T>
void expect_replicas_match(const Array<T>& x, const std::vector<T>& model, int devices) {
  const auto& t = x.subscriptions();
  const std::uint64_t per_page = x.page_bytes() / sizeof(T);
  for (int r = 0; r < devices; ++r) {
    const std::vector<T> rep = x.replica(r);
    std::uint64_t bad = 0, first = 0;
    for (std::uint64_t i = 0; i < model.size(); ++i) {
      if (!t.subscribed(i / per_page, r)) continue;
      if (rep[i] != model[i] && bad++ == 0) first = i;
    }
    EXPECT_EQ(bad, 0u) << "rank " << r << ": " << bad << " wrong words, first at " << first;
  }
  const std::vector<T> coh = x.coherent();
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < model.size(); ++i) bad += coh[i] != model[i];
  EXPECT_EQ(bad, 0u) << "coherent view: " << bad << " wrong words";
}

class GpsModes : public ::testing::TestWithParam<PublishMode> {};

}  // namespace

TEST_P(GpsModes, RandomDisjointStoresMatchModelU32) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint32_t>(gpstest::scaled(3u << 20, 4096) + 17, with_mode(GetParam()));  // odd tail
  const auto model = run_random_stores(ctx, x, GetParam(), 11, 0.3);
  expect_replicas_match(x, model, ctx.size());
}

TEST_P(GpsModes, RandomDisjointStoresMatchModelF64Dense) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint64_t>(gpstest::scaled(1u << 20, 4096), with_mode(GetParam()));
  const auto model = run_random_stores(ctx, x, GetParam(), 12, 0.9);  // dense: direct lines
  expect_replicas_match(x, model, ctx.size());
}

TEST_P(GpsModes, WrongHintsStayCorrect) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto x = ctx.alloc<std::uint32_t>(gpstest::scaled(2u << 20, 1u << 16), with_mode(GetParam()));
  // Random non-empty subscriber set per page, unrelated to who stores or loads there.
  std::mt19937_64 rng(5);
  const std::uint64_t pages = x.subscriptions().pages();
  const std::uint64_t per_page = x.page_bytes() / 4;
  for (std::uint64_t p = 0; p < pages; ++p) {
    std::uint32_t keep = static_cast<std::uint32_t>(rng() % ((1u << n) - 1)) + 1;  // non-empty
    for (int r = 0; r < n; ++r)
      if (!((keep >> r) & 1u)) x.unsubscribe(p * per_page, 1, r);
  }
  ASSERT_GT(x.subscriptions().summary().demoted_pages + x.subscriptions().summary().replicated_pages, 0u);
  const auto model = run_random_stores(ctx, x, GetParam(), 21, 0.5);
  expect_replicas_match(x, model, n);
  // Loads from every device, subscribed or not, see the model.
  for (int r = 0; r < n; ++r) {
    DeviceVec<std::uint32_t> out(ctx.device(r), x.size());
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    load_all<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), out.p);
    GPSM_CUDA_LAUNCH();
    ctx.synchronize();
    const auto got = out.download();
    std::uint64_t bad = 0;
    for (std::uint64_t i = 0; i < got.size(); ++i) bad += got[i] != model[i];
    EXPECT_EQ(bad, 0u) << "loads on rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Gps, GpsModes,
                         ::testing::Values(PublishMode::inline_store, PublishMode::combine, PublishMode::bulk),
                         [](const ::testing::TestParamInfo<PublishMode>& i) { return std::string(mode_name(i.param)); });

TEST(GpsFence, QueueOverflowTakesMoreRoundsAndLosesNothing) {
  GPSM_REQUIRE_GPUS(2);
  Settings s = Settings::from_env();
  s.inbound_entries = 1024;  // far fewer than the scattered words: many drain rounds
  s.verify_p2p = false;      // checked by every other test's context
  Context ctx(gpstest::all_devices(), s);
  // Not scaled: ~13K scattered words, ~3.3K per source and destination, always several rounds.
  auto x = ctx.alloc<std::uint32_t>(1u << 18, with_mode(PublishMode::combine));
  x.set_counting(true);
  const auto model = run_random_stores(ctx, x, PublishMode::combine, 31, 0.05);
  expect_replicas_match(x, model, ctx.size());
  const LinkStats st = x.link_stats();
  EXPECT_GT(st.fence_rounds, 2u);
  EXPECT_GT(st.useful_bytes, 0u);
  EXPECT_GE(st.link_bytes, st.useful_bytes);  // packed entries carry 6 B per 4 B word
}

TEST(GpsFence, CountedBytesMatchTheStores) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  // One word per line, each stored by one GPU: in combine mode each is one packed 6 B entry per
  // other subscriber; inline puts one 32 B sector per store per other subscriber.
  const std::uint64_t lines = gpstest::scaled(1u << 14, 256);
  for (PublishMode m : {PublishMode::inline_store, PublishMode::combine}) {
    auto x = ctx.alloc<std::uint32_t>(lines * 32, with_mode(m));
    x.set_counting(true);
    std::vector<std::vector<std::uint64_t>> idx(n);
    std::vector<std::vector<std::uint32_t>> val(n);
    for (std::uint64_t l = 0; l < lines; ++l) {
      idx[l % n].push_back(l * 32 + 5);
      val[l % n].push_back(static_cast<std::uint32_t>(l) | 1u);
    }
    for (int r = 0; r < n; ++r) {
      DeviceVec<std::uint64_t> di(ctx.device(r), idx[r]);
      DeviceVec<std::uint32_t> dv(ctx.device(r), val[r]);
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      scatter_store<std::uint32_t><<<64, 256, 0, ctx.stream(r)>>>(x.view(r), di.p, dv.p, idx[r].size());
      GPSM_CUDA_LAUNCH();
      ctx.synchronize();
    }
    ctx.fence();
    const LinkStats st = x.link_stats();
    EXPECT_EQ(st.useful_bytes, lines * 4 * (n - 1)) << mode_name(m);
    // combine: per (block of 128 lines, source, destination) one record: 6 B per entry, padded
    // to 8 entries, plus an 8 B directory entry. inline: a 32 B sector per store.
    std::uint64_t combine_link = 0;
    for (int r = 0; r < n; ++r)
      for (std::uint64_t b0 = 0; b0 < lines; b0 += kMaxBlockLines) {
        std::uint32_t k = 0;
        for (std::uint64_t l = b0; l < b0 + kMaxBlockLines && l < lines; ++l) k += l % n == static_cast<std::uint64_t>(r);
        if (k != 0) combine_link += (std::uint64_t{kPackedEntryBytes} * padded_entries(k) + kDirEntryBytes) * (n - 1);
      }
    EXPECT_EQ(st.link_bytes, m == PublishMode::combine ? combine_link : lines * 32u * (n - 1)) << mode_name(m);
    EXPECT_EQ(st.messages, lines * (n - 1)) << mode_name(m);
  }
}

TEST(GpsSubscription, UnsubscribingTheLastSubscriberFailsAndKeepsTheData) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto x = ctx.alloc<std::uint32_t>(1u << 16);
  std::vector<std::uint32_t> v(x.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint32_t>(i * 2654435761u) | 1u;
  x.upload(v);
  for (int r = 1; r < n; ++r) x.unsubscribe(0, x.size(), r);
  const auto before = x.subscriptions().masks();
  EXPECT_THROW(x.unsubscribe(0, x.size(), 0), gpsm::Error);
  EXPECT_EQ(x.subscriptions().masks(), before);
  EXPECT_TRUE(x.subscriptions().demoted(0));
  EXPECT_EQ(x.coherent(), v);
  // Subscribing again copies the page data to the new subscriber.
  x.subscribe(0, x.size(), n - 1);
  EXPECT_EQ(x.replica(n - 1), v);
  EXPECT_THROW(x.view(n), gpsm::Error);
}

TEST(GpsSubscription, StrongAccessDemotesItsPage) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint32_t>(1u << 16);  // 4 pages of 64 KiB
  const std::uint64_t flag = (x.page_bytes() / 4) * 2 + 3;  // in page 2
  GPSM_CUDA(cudaSetDevice(ctx.device(1)));
  strong_flag<<<1, 32, 0, ctx.stream(1)>>>(x.view(1), flag);
  GPSM_CUDA_LAUNCH();
  ctx.fence();
  EXPECT_TRUE(x.subscriptions().demoted(2));
  EXPECT_FALSE(x.subscriptions().demoted(1));
  EXPECT_EQ(x.coherent()[flag], 7u);
}

TEST(GpsContext, RejectsBadDevices) {
  GPSM_REQUIRE_GPUS(1);
  EXPECT_THROW(Context({0, 0}), gpsm::Error);
  EXPECT_THROW(Context({999}), gpsm::Error);
  EXPECT_THROW(Context(std::vector<int>{}), gpsm::Error);
}

namespace {
__global__ void increment_all(View<std::uint32_t> v) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    v.store(i, v.load(i) + 1u);
}
}  // namespace

// fence_async orders the GPUs on their streams alone: a chain of read-increment-store steps that
// passes from GPU to GPU with no host wait ends at the step count only if every step saw the
// previous GPU's stores in its own replica (an unordered or stale step loses increments).
TEST(GpsFenceAsync, OrdersInlineStoresAcrossGpusWithoutTheHost) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint32_t>(gpstest::scaled(1u << 22, 1u << 12), with_mode(PublishMode::inline_store));
  x.upload(std::vector<std::uint32_t>(x.size(), 0u));
  const int steps = 64;
  for (int s = 0; s < steps; ++s) {
    const int r = s % ctx.size();
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    increment_all<<<264, 256, 0, ctx.stream(r)>>>(x.view(r));
    GPSM_CUDA_LAUNCH();
    ctx.fence_async();
  }
  ctx.fence();
  for (int r = 0; r < ctx.size(); ++r) {
    const std::vector<std::uint32_t> v = x.replica(r);
    const auto bad = std::count_if(v.begin(), v.end(), [&](std::uint32_t w) { return w != steps; });
    EXPECT_EQ(bad, 0) << "rank " << r << " word 0 holds " << v[0] << " of " << steps;
  }
}

TEST(GpsFenceAsync, StrongAccessBetweenAsyncFencesIsAnError) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  auto x = ctx.alloc<std::uint32_t>(1u << 16, with_mode(PublishMode::inline_store));
  GPSM_CUDA(cudaSetDevice(ctx.device(1)));
  strong_flag<<<1, 32, 0, ctx.stream(1)>>>(x.view(1), 5);
  GPSM_CUDA_LAUNCH();
  ctx.fence_async();
  EXPECT_THROW(ctx.fence(), gpsm::Error);
}

// Array::publish_box_async: cells rank 0 wrote into its own replica (a plain copy into local(), no
// view) reach rank 1's replica inside the box only, and only on the pages rank 1 subscribes to; a
// rank not subscribed anywhere in the box gets nothing. Counted bytes are the box's.
TEST(GpsPublishBox, CopiesTheBoxToEachSubscriberOnItsPages) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const std::uint64_t n[3] = {48, 20, 10}, cells = n[0] * n[1] * n[2];
  AllocOptions o = with_mode(PublishMode::inline_store);
  o.page_bytes = 1024;  // 256 floats: rows (48) cross pages
  auto x = ctx.alloc<float>(cells, o);
  std::vector<float> before(cells), mine(cells);
  for (std::uint64_t i = 0; i < cells; ++i) before[i] = -1.0f - static_cast<float>(i), mine[i] = static_cast<float>(i);
  x.upload(before);
  const std::uint64_t lo[3] = {3, 2, 1}, hi[3] = {45, 19, 9};
  const auto in_box = [&](std::uint64_t i) {
    const std::uint64_t c[3] = {i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])};
    return c[0] >= lo[0] && c[0] < hi[0] && c[1] >= lo[1] && c[1] < hi[1] && c[2] >= lo[2] && c[2] < hi[2];
  };
  for (int round = 0; round < 2; ++round) {
    if (round == 1) x.unsubscribe(0, 2048, 1);  // rank 1 leaves the first 8 pages: those rows are not copied
    x.upload(before);
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    GPSM_CUDA(cudaMemcpy(x.view(0).local(), mine.data(), cells * sizeof(float), cudaMemcpyHostToDevice));
    x.set_counting(true);
    x.reset_link_stats();
    x.publish_box_async(n, lo, hi, 0);
    ctx.fence_async();
    ctx.synchronize();
    const LinkStats st = x.link_stats();
    x.set_counting(false);
    const std::vector<float> got = x.replica(1);
    std::uint64_t want_bytes = 0;
    for (std::uint64_t i = 0; i < cells; ++i) {
      const bool sub = round == 0 || i >= 2048;
      const float want = in_box(i) && sub ? mine[i] : before[i];
      if (in_box(i) && sub) want_bytes += sizeof(float);
      if (sub) ASSERT_EQ(got[i], want) << "round " << round << " cell " << i;
    }
    if (ctx.size() == 2) EXPECT_EQ(st.link_bytes, want_bytes) << "round " << round;
  }
}
