// Automatic subscription (tracking) and home-based atomics on real GPUs.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gps_test_util.hpp"

using namespace gpsm::gps;
using gpstest::DeviceVec;

namespace {

// Rank r owns pages [r*P, (r+1)*P): it reads them all, plus the last page of r-1 and the first
// page of r+1 (a 1-D halo, not periodic), and writes its own pages (stencil-like).
__global__ void halo_pass(View<float> v, std::uint64_t per_page, std::uint64_t P, int rank, int devices,
                          float* sink) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t first = rank * P * per_page, own = P * per_page;
  float acc = 0.f;
  for (std::uint64_t i = t; i < own; i += stride) acc += v.load(first + i);
  if (rank > 0)
    for (std::uint64_t i = t; i < per_page; i += stride) acc += v.load(first - per_page + i);
  if (rank + 1 < devices)
    for (std::uint64_t i = t; i < per_page; i += stride) acc += v.load(first + own + i);
  for (std::uint64_t i = t; i < own; i += stride) v.store(first + i, static_cast<float>(rank + 1) + 0.5f);
  if (acc == -1.f) *sink = acc;  // keep the loads
}

__global__ void read_everything(View<float> v, float* sink) {
  float acc = 0.f;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < v.size();
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    acc += v.load(i);
  if (acc == -1.f) *sink = acc;
}

__global__ void whole_local_flag(View<float> v, int* out) {
  *out = v.whole_local() == v.local() ? 1 : (v.whole_local() == nullptr ? 0 : -1);
}

__global__ void sole_flag(View<float> v, int* out) { *out = v.sole() ? 1 : 0; }

// Per rank, what a one-thread kernel `probe` writes about rank r's view of x.
std::vector<int> device_flags(Context& ctx, const Array<float>& x, std::vector<DeviceVec<int>>& flag,
                              void (*probe)(View<float>, int*)) {
  const int n = ctx.size();
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    probe<<<1, 1, 0, ctx.stream(r)>>>(x.view(r), flag[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  std::vector<int> f;
  for (int r = 0; r < n; ++r) f.push_back(flag[r].download()[0]);
  return f;
}

__global__ void atomics_kernel(View<unsigned> add32, View<unsigned long long> add64, View<int> mn, View<int> mx,
                               View<float> fadd, View<unsigned> cas, int rank, int per_thread, std::uint64_t slots) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < per_thread; ++k) {
    const std::uint64_t s = (t + k) % slots;
    add32.atomic_add(s, 1u);
    add64.atomic_add(s, 3ull);
    const int key = static_cast<int>((t * 7919u + k * 104729u + rank * 15485863u) % 1000003u) - 500000;
    mn.atomic_min(s, key);
    mx.atomic_max(s, key);
    fadd.atomic_add(s, 1.0f);
  }
  // CAS increment loop on one word (one lane per warp): exact only if every CAS is performed at
  // one copy.
  if ((threadIdx.x & 31u) == 0u) {
    unsigned old = cas.load_home(0), seen;
    while ((seen = cas.atomic_cas(0, old, old + 1)) != old) old = seen;
  }
}

}  // namespace

TEST(GpsTracking, HaloPatternGivesNeighbourSubscribers) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t P = 4;  // pages per rank
  auto x = ctx.alloc<float>(P * n * (kDefaultPageBytes / 4) + (kDefaultPageBytes / 4),  // + one untouched page
                            with_mode(PublishMode::combine));
  const std::uint64_t per_page = x.page_bytes() / 4;
  std::vector<float> init(x.size());
  for (std::size_t i = 0; i < init.size(); ++i) init[i] = static_cast<float>(i % 1000) + 0.25f;
  x.upload(init);
  std::vector<DeviceVec<float>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);

  ctx.tracking_start();
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    halo_pass<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), per_page, P, r, n, sink[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.tracking_stop();

  const auto& t = x.subscriptions();
  for (std::uint64_t p = 0; p < t.pages(); ++p) {
    std::uint32_t want;
    if (p >= P * n) {
      want = 1u;  // untouched: keeps its home (rank 0)
    } else {
      const int owner = static_cast<int>(p / P);
      want = 1u << owner;
      if (p % P == 0 && owner > 0) want |= 1u << (owner - 1);          // first page: left neighbour's halo
      if (p % P == P - 1 && owner + 1 < n) want |= 1u << (owner + 1);  // last page: right neighbour's halo
    }
    EXPECT_EQ(t.mask(p), want) << "page " << p;
  }
  // The stores of the tracking pass were published before subscriptions changed.
  std::vector<float> model = init;
  for (int r = 0; r < n; ++r)
    for (std::uint64_t i = 0; i < P * per_page; ++i) model[r * P * per_page + i] = static_cast<float>(r + 1) + 0.5f;
  EXPECT_EQ(x.coherent(), model);

  // A second pass under the learned subscriptions: data reaches exactly the neighbours that read it.
  x.set_counting(true);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    halo_pass<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), per_page, P, r, n, sink[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.fence();
  EXPECT_EQ(x.coherent(), model);
  for (int r = 0; r < n; ++r) {
    const auto rep = x.replica(r);
    for (std::uint64_t p = 0; p < P * n; ++p)
      if (t.subscribed(p, r)) {
        EXPECT_EQ(rep[p * per_page], model[p * per_page]) << "rank " << r << " page " << p;
        EXPECT_EQ(rep[(p + 1) * per_page - 1], model[(p + 1) * per_page - 1]) << "rank " << r << " page " << p;
      }
  }
  // Only halo pages are published: two per interior boundary, one neighbour each.
  EXPECT_EQ(x.link_stats().useful_bytes, 2ull * (n - 1) * per_page * 4);
}

TEST(GpsTracking, AllToAllPatternKeepsEveryone) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto x = ctx.alloc<float>(gpstest::scaled(1u << 20, 1u << 16));
  std::vector<DeviceVec<float>> sink;
  for (int r = 0; r < n; ++r) sink.emplace_back(ctx.device(r), 1);
  ctx.tracking_start();
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    read_everything<<<132, 256, 0, ctx.stream(r)>>>(x.view(r), sink[r].p);
    GPSM_CUDA_LAUNCH();
  }
  ctx.tracking_stop();
  for (std::uint64_t p = 0; p < x.subscriptions().pages(); ++p)
    EXPECT_EQ(x.subscriptions().mask(p), (1u << n) - 1) << "page " << p;
}

// View::whole_local (loads without a mask check) holds exactly while this device subscribes to
// every page and tracking is off; it follows unsubscribe and re-subscribe.
TEST(GpsTracking, WholeLocalFollowsSubscriptions) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto x = ctx.alloc<float>(4 * (kDefaultPageBytes / 4));
  std::vector<DeviceVec<int>> flag;
  for (int r = 0; r < n; ++r) flag.emplace_back(ctx.device(r), 1);
  auto flags = [&] { return device_flags(ctx, x, flag, whole_local_flag); };
  EXPECT_EQ(flags(), std::vector<int>(n, 1));
  x.unsubscribe_bytes(2 * x.page_bytes(), 3 * x.page_bytes(), 1);
  std::vector<int> want(n, 1);
  want[1] = 0;
  EXPECT_EQ(flags(), want);
  ctx.tracking_start();
  EXPECT_EQ(flags(), std::vector<int>(n, 0));
  ctx.tracking_stop();  // nothing touched: every page keeps only its home, rank 0
  want.assign(n, 0);
  want[0] = 1;
  EXPECT_EQ(flags(), want);
  x.subscribe_bytes(0, x.bytes(), 1);
  want[1] = 1;
  EXPECT_EQ(flags(), want);
}

// Array::sole(rank) on the host (where apps choose the plain kernel) says what View::sole() reads
// on the device, through every change of the subscriptions; one GPU's array is sole from the start.
TEST(GpsTracking, HostSoleAgreesWithTheViewsThroughSubscriptionChanges) {
  GPSM_REQUIRE_GPUS(1);
  {
    Context one({gpstest::all_devices().front()});
    auto y = one.alloc<float>(3 * (kDefaultPageBytes / 4));
    EXPECT_TRUE(y.sole(0));
    one.tracking_start();
    EXPECT_FALSE(y.sole(0));
    one.tracking_stop();
    EXPECT_TRUE(y.sole(0));
    EXPECT_THROW(y.sole(1), gpsm::Error);
  }
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto x = ctx.alloc<float>(4 * (kDefaultPageBytes / 4));
  std::vector<DeviceVec<int>> flag;
  for (int r = 0; r < n; ++r) flag.emplace_back(ctx.device(r), 1);
  // Per rank: the device's View::sole(), checked equal to the host's Array::sole(rank).
  auto flags = [&] {
    const std::vector<int> f = device_flags(ctx, x, flag, sole_flag);
    for (int r = 0; r < n; ++r) EXPECT_EQ(f[r] == 1, x.sole(r)) << "rank " << r;
    return f;
  };
  EXPECT_EQ(flags(), std::vector<int>(n, 0));  // every GPU holds every page
  ctx.tracking_start();
  EXPECT_EQ(flags(), std::vector<int>(n, 0));
  ctx.tracking_stop();  // nothing touched: every page keeps only its home, rank 0
  std::vector<int> want(n, 0);
  want[0] = 1;
  EXPECT_EQ(flags(), want);
  x.subscribe_bytes(x.page_bytes(), 2 * x.page_bytes(), 1);  // rank 1 now holds page 1 too
  EXPECT_EQ(flags(), std::vector<int>(n, 0));
  x.unsubscribe_bytes(0, x.bytes(), 1);
  EXPECT_EQ(flags(), want);
}

class GpsAtomics : public ::testing::TestWithParam<PublishMode> {};

TEST_P(GpsAtomics, ConcurrentAtomicsGiveExactTotals) {
  GPSM_REQUIRE_GPUS(2);
  Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::uint64_t slots = 64;
  const auto m = with_mode(GetParam());
  auto a32 = ctx.alloc<unsigned>(slots, m);
  auto a64 = ctx.alloc<unsigned long long>(slots, m);
  auto mn = ctx.alloc<int>(slots, m);
  auto mx = ctx.alloc<int>(slots, m);
  auto fa = ctx.alloc<float>(slots, m);
  auto cas = ctx.alloc<unsigned>(1, m);
  mn.upload(std::vector<int>(slots, 1 << 30));
  mx.upload(std::vector<int>(slots, -(1 << 30)));
  const int blocks = 66, threads = 256, per_thread = static_cast<int>(gpstest::scaled(16, 1));
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    atomics_kernel<<<blocks, threads, 0, ctx.stream(r)>>>(a32.view(r), a64.view(r), mn.view(r), mx.view(r),
                                                           fa.view(r), cas.view(r), r, per_thread, slots);
    GPSM_CUDA_LAUNCH();
  }
  ctx.fence();
  // CPU model of the same keys.
  std::vector<unsigned long long> cnt(slots, 0);
  std::vector<int> wmin(slots, 1 << 30), wmax(slots, -(1 << 30));
  for (int r = 0; r < n; ++r)
    for (unsigned t = 0; t < static_cast<unsigned>(blocks * threads); ++t)
      for (int k = 0; k < per_thread; ++k) {
        const std::uint64_t s = (t + k) % slots;
        const int key = static_cast<int>((t * 7919u + k * 104729u + r * 15485863u) % 1000003u) - 500000;
        cnt[s] += 1;
        wmin[s] = std::min(wmin[s], key);
        wmax[s] = std::max(wmax[s], key);
      }
  for (int r = 0; r < n; ++r) {
    const auto g32 = a32.replica(r);
    const auto g64 = a64.replica(r);
    const auto gmn = mn.replica(r);
    const auto gmx = mx.replica(r);
    const auto gfa = fa.replica(r);
    for (std::uint64_t s = 0; s < slots; ++s) {
      EXPECT_EQ(g32[s], cnt[s]) << "rank " << r << " slot " << s;
      EXPECT_EQ(g64[s], 3 * cnt[s]) << "rank " << r << " slot " << s;
      EXPECT_EQ(gmn[s], wmin[s]) << "rank " << r << " slot " << s;
      EXPECT_EQ(gmx[s], wmax[s]) << "rank " << r << " slot " << s;
      EXPECT_EQ(gfa[s], static_cast<float>(cnt[s])) << "rank " << r << " slot " << s;  // exact below 2^24
    }
    EXPECT_EQ(cas.replica(r)[0], static_cast<unsigned>(n * blocks * (threads / 32))) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Gps, GpsAtomics,
                         ::testing::Values(PublishMode::inline_store, PublishMode::combine, PublishMode::bulk),
                         [](const ::testing::TestParamInfo<PublishMode>& i) { return std::string(mode_name(i.param)); });
