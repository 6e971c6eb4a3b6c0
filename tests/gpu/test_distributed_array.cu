// Distributed arrays on the GPUs (gpsm/distributed_array.hpp): every GPU writes a disjoint share
// of the elements (most of them owned by another GPU), then every GPU reads every element and
// checks it; the driver confirms each block's memory is on its owner; many arrays made and freed
// leave the free memory where it was; bad maps are refused before anything is allocated.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/gps.hpp"
#include "gps_test_util.hpp"

namespace {

using gpsm::Axis;
using gpsm::BlockSpec;
using gpsm::Extents;
namespace blocks = gpsm::blocks;

struct alignas(16) Quad {
  std::uint32_t w[4];
};
static_assert(sizeof(Quad) == 16, "the 16-byte element");

__host__ __device__ inline std::uint32_t mix(std::uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return static_cast<std::uint32_t>(v);
}
// Which GPU writes element i: runs of 61 elements rotated among the GPUs, so each GPU writes
// into every owner's blocks (local and remote stores both).
__host__ __device__ inline int writer_of(std::uint64_t i, int gpus) { return static_cast<int>((i / 61 + i % 3) % gpus); }

__host__ __device__ inline void make_value(std::uint64_t i, int w, std::uint32_t* v) { *v = mix(i * 8 + w) | 1u; }
__host__ __device__ inline void make_value(std::uint64_t i, int w, Quad* v) {
  for (int k = 0; k < 4; ++k) v->w[k] = mix(i * 8 + w + (static_cast<std::uint64_t>(k) << 40));
}
__host__ __device__ inline bool same(const std::uint32_t& a, const std::uint32_t& b) { return a == b; }
__host__ __device__ inline bool same(const Quad& a, const Quad& b) {
  return a.w[0] == b.w[0] && a.w[1] == b.w[1] && a.w[2] == b.w[2] && a.w[3] == b.w[3];
}

template <class T>
__global__ void write_share(gpsm::DistributedView<T> v, int rank, int gpus) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < v.size(); i += std::uint64_t{gridDim.x} * blockDim.x)
    if (writer_of(i, gpus) == rank) {
      T x;
      make_value(i, rank, &x);
      v[i] = x;
    }
}

// Every element read through the coordinates (operator()), through its block (block(), block_data())
// and, for identity maps, through data()[i], and checked; the view's owner must agree with the
// host map's at every element (passed as a plain array).
template <class T>
__global__ void read_all(gpsm::DistributedView<T> v, int gpus, bool identity, const int* owner_ref,
                         unsigned long long* bad, unsigned long long* first_bad) {
  const std::uint64_t X = v.map.extent[0], Y = v.map.extent[1];
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < v.size(); i += std::uint64_t{gridDim.x} * blockDim.x) {
    T want;
    make_value(i, writer_of(i, gpus), &want);
    const std::uint64_t x = i % X, y = i / X % Y, z = i / X / Y;
    const T got = v(x, y, z);
    const gpsm::BlockBox box = v.block(x, y, z);  // the tile-local path
    const T in_block = v.block_data(box)[box.local(x, y, z)];
    if (!same(got, want) || !same(in_block, want) || box.owner != owner_ref[i] || v.owner(i) != owner_ref[i] ||
        (identity && !same(v.data()[i], want))) {
      atomicAdd(bad, 1ull);
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
}

template <class T>
void write_then_read_everywhere(gpsm::gps::Context& ctx, const BlockSpec& spec) {
  SCOPED_TRACE(spec.shape + ", " + std::to_string(sizeof(T)) + "-byte elements");
  const int n = ctx.size();
  auto a = ctx.alloc_distributed<T>(spec);
  const gpsm::OwnershipMap& m = a.map();
  ASSERT_EQ(m.range_bytes() % a.granularity(), 0u);
  std::vector<int> owner_host(m.size());
  for (std::uint64_t i = 0; i < m.size(); ++i) owner_host[i] = m.owner(i);

  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    write_share<T><<<264, 256, 0, ctx.stream(r)>>>(a.view(r), r, n);
    GPSM_CUDA_LAUNCH();
  }
  ctx.synchronize();
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    gpstest::DeviceVec<int> owner_dev(ctx.device(r), owner_host);
    gpstest::DeviceVec<unsigned long long> bad(ctx.device(r), 2);
    const unsigned long long init[2] = {0, ~0ull};
    GPSM_CUDA(cudaMemcpy(bad.p, init, sizeof init, cudaMemcpyHostToDevice));
    GPSM_CUDA(cudaDeviceSynchronize());  // pageable copies may return before they land; the stream is non-blocking
    read_all<T><<<264, 256, 0, ctx.stream(r)>>>(a.view(r), n, m.identity(), owner_dev.p, bad.p, bad.p + 1);
    GPSM_CUDA_LAUNCH();
    GPSM_CUDA(cudaStreamSynchronize(ctx.stream(r)));
    unsigned long long got[2] = {0, 0};
    GPSM_CUDA(cudaMemcpy(got, bad.p, sizeof got, cudaMemcpyDeviceToHost));
    EXPECT_EQ(got[0], 0u) << "rank " << r << " read " << got[0] << " wrong elements, the first at " << got[1];
  }
  // The host sees the same values through the layout copy.
  if (spec.shape.rfind("granule-aligned", 0) == 0) EXPECT_TRUE(m.identity());
  const std::vector<T> host = a.download(n - 1);
  for (std::uint64_t i = 0; i < m.size(); ++i) {
    T want;
    make_value(i, writer_of(i, n), &want);
    ASSERT_TRUE(same(host[i], want)) << "element " << i;
  }
  // Each block's first and last elements are in their owner's memory, as the driver says.
  for (std::uint64_t b = 0; b < m.blocks(); ++b) {
    const std::uint64_t first = m.block_first(b);
    const int want = ctx.device(m.spec().owner[b]);
    EXPECT_EQ(a.backing_device(first), want) << "block " << b;
  }
  for (std::uint64_t i : {std::uint64_t{0}, m.size() / 2, m.size() - 1}) EXPECT_EQ(a.backing_device(i), ctx.device(m.owner(i)));
}

std::vector<BlockSpec> shapes(int n, std::uint64_t gran, std::uint64_t elem) {
  const std::uint64_t per_granule = gran / elem;
  std::vector<double> weights;
  for (int r = 0; r < n; ++r) weights.push_back(1.0 + r);
  const Extents e2{1000 + 3, 700 + 1, 1}, e3{97, 83, 71};
  const Extents tile{64, 48, 1};
  const Extents k = blocks::tile_counts(e2, tile);
  std::vector<int> user(k.x * k.y * k.z);
  for (std::size_t t = 0; t < user.size(); ++t) user[t] = static_cast<int>((t * 5 + t / 7) % n);
  std::vector<BlockSpec> s = {
      blocks::contiguous(per_granule * 3 * n / 2 + 777, n),  // not a multiple of the granularity
      blocks::weighted(per_granule * n + 12345, weights),
      blocks::owner_grid(e2, n, 1),
      blocks::along(e3, Axis::x, n),
      blocks::along(e3, Axis::y, n),
      blocks::along(e3, Axis::z, n),
      blocks::tiles(e2, tile, user),
      blocks::aligned_slabs({128, 128, 32 * static_cast<std::uint64_t>(n) + 5}, n, elem, gran),  // identity: data()[i]
  };
  if (n % 2 == 0 && n > 2) s.push_back(blocks::owner_grid(e2, 2, n / 2));
  return s;
}

std::vector<std::size_t> free_bytes(const gpsm::gps::Context& ctx) {
  std::vector<std::size_t> out;
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    GPSM_CUDA(cudaDeviceSynchronize());
    std::size_t f = 0, t = 0;
    GPSM_CUDA(cudaMemGetInfo(&f, &t));
    out.push_back(f);
  }
  return out;
}

}  // namespace

TEST(GpsDistributedArray, EveryGpuWritesItsShareThenEveryGpuReadsEveryElement4Bytes) {
  GPSM_REQUIRE_GPUS(1);
  gpsm::gps::Context ctx(gpstest::all_devices());
  for (const BlockSpec& s : shapes(ctx.size(), ctx.distributed_granularity(), 4)) write_then_read_everywhere<std::uint32_t>(ctx, s);
}

TEST(GpsDistributedArray, EveryGpuWritesItsShareThenEveryGpuReadsEveryElement16Bytes) {
  GPSM_REQUIRE_GPUS(1);
  gpsm::gps::Context ctx(gpstest::all_devices());
  for (const BlockSpec& s : shapes(ctx.size(), ctx.distributed_granularity(), 16)) write_then_read_everywhere<Quad>(ctx, s);
}

TEST(GpsDistributedArray, ManyArraysMadeAndFreedLeaveFreeMemoryWithinAGranule) {
  GPSM_REQUIRE_GPUS(1);
  gpsm::gps::Context ctx(gpstest::all_devices());
  const std::uint64_t g = ctx.distributed_granularity();
  const int n = ctx.size();
  { auto warm = ctx.alloc_distributed<float>(blocks::contiguous(g, n)); }  // the runtime's own first-use memory
  const std::vector<std::size_t> before = free_bytes(ctx);
  for (int k = 0; k < 40; ++k) {
    auto a = ctx.alloc_distributed<float>(blocks::contiguous(g / 4 * 5 * n + 1, n));  // 5 granules + padding per GPU
    auto b = ctx.alloc_distributed<Quad>(blocks::along({64, 64, 33}, Axis::z, n), {"leak", k % 2 == 1});
    if (k % 2 == 0) a.free();  // the other half freed by their handles going out of scope
  }
  const std::vector<std::size_t> after = free_bytes(ctx);
  for (int r = 0; r < n; ++r) {
    const auto diff = static_cast<long long>(before[r]) - static_cast<long long>(after[r]);
    EXPECT_LE(std::llabs(diff), static_cast<long long>(g)) << "rank " << r << ": " << diff << " B not returned after 80 arrays";
  }
}

TEST(GpsDistributedArray, BadMapsAreRefusedBeforeAllocating) {
  GPSM_REQUIRE_GPUS(1);
  gpsm::gps::Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  const std::vector<std::size_t> before = free_bytes(ctx);
  const Extents e{300, 200, 1}, tile{64, 64, 1};
  const Extents k = blocks::tile_counts(e, tile);
  std::vector<int> user(k.x * k.y, 0);
  user[3] = n;  // a rank the context does not have
  try {
    ctx.alloc_distributed<float>(blocks::tiles(e, tile, user));
    ADD_FAILURE() << "an owner out of range was accepted";
  } catch (const gpsm::Error& err) {
    EXPECT_EQ(std::string(err.what()), "gpsm: distributed array: block 3 is owned by rank " + std::to_string(n) +
                                           ", outside the " + std::to_string(n) + " ranks of the context; name owners 0.." +
                                           std::to_string(n - 1));
  }
  struct Rgb {
    float c[3];
  };
  try {
    ctx.alloc_distributed<Rgb>(blocks::contiguous(1000, n));
    ADD_FAILURE() << "a 12-byte element was accepted";
  } catch (const gpsm::Error& err) {
    EXPECT_NE(std::string(err.what()).find("element size 12 B does not divide the allocation granularity"), std::string::npos)
        << err.what();
  }
  // Any chunk is a whole granule: a refused array must not have taken one (nor left one behind).
  const std::vector<std::size_t> after = free_bytes(ctx);
  const auto g = static_cast<long long>(ctx.distributed_granularity());
  for (int r = 0; r < n; ++r)
    EXPECT_LT(std::llabs(static_cast<long long>(before[r]) - static_cast<long long>(after[r])), g) << "rank " << r;
}

TEST(GpsDistributedArray, ReplicatedCopiesLiveOnEachGpuAndAreSeparate) {
  GPSM_REQUIRE_GPUS(1);
  gpsm::gps::Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto a = ctx.alloc_distributed<std::uint32_t>(blocks::owner_grid({513, 257, 1}, n, 1), {"filter", true});
  ASSERT_TRUE(a.replicated());
  std::vector<std::uint32_t> v(a.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = mix(i) | 1u;
  a.upload(v);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(a.download(r), v) << "copy of rank " << r;
    EXPECT_EQ(a.backing_device(0, r), ctx.device(r));
    EXPECT_EQ(a.backing_device(a.size() - 1, r), ctx.device(r));
  }
  // Rank 0 overwrites its own copy; the others keep the upload.
  GPSM_CUDA(cudaSetDevice(ctx.device(0)));
  write_share<std::uint32_t><<<64, 256, 0, ctx.stream(0)>>>(a.view(0), 0, 1);
  GPSM_CUDA_LAUNCH();
  ctx.synchronize();
  const std::vector<std::uint32_t> mine = a.download(0);
  std::uint32_t x = 0;
  make_value(7, 0, &x);
  EXPECT_EQ(mine[7], x);
  for (int r = 1; r < n; ++r) EXPECT_EQ(a.download(r), v) << "copy of rank " << r << " changed by rank 0's stores";
}

TEST(GpsDistributedArray, GpsPagesHomedAtTheDistributedOwners) {
  GPSM_REQUIRE_GPUS(2);
  gpsm::gps::Context ctx(gpstest::all_devices());
  const int n = ctx.size();
  auto d = ctx.alloc_distributed<float>(blocks::along({1536, 700, 1}, Axis::y, n));  // row slabs: pages change owner
  gpsm::gps::AllocOptions o;
  o.page_bytes = 16 * 1024;
  auto g = ctx.alloc<float>(d.size(), o);
  std::vector<float> v(d.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  g.upload(v);
  ctx.home_pages_at_owners(g, d.map());
  const std::vector<int> owner = d.page_owners(g.page_bytes());
  ASSERT_EQ(owner.size(), g.subscriptions().pages());
  EXPECT_EQ(owner.front(), 0);
  EXPECT_EQ(owner.back(), n - 1);
  for (std::uint64_t p = 0; p < owner.size(); ++p) {
    ASSERT_EQ(g.subscriptions().home(p), owner[p]) << "page " << p;
    ASSERT_EQ(g.subscriptions().mask(p), gpsm::gps::bit(owner[p])) << "page " << p;
  }
  EXPECT_EQ(g.coherent(), v) << "moving the homes lost data";
}
