// Is rdl's 11 % over `infinite` (2xH200, 512^3 and 768^3 at halo 16, split along z) the picking
// kernel's per-item cost rather than the link? On one GPU the neighbours' blocks are just other
// parts of the same memory, so the link's cost is gone and only the kernels differ. Per config
// (rank `rank` of `ranks` slabs along z, x or y) it times, on the current GPU:
//   plain  the step `infinite` runs: the plain kernel over the rank's local box with halo planes
//   one    rdl's step, one kernel picking each load's block (RdlLaunch::one)
//   split  rdl's step, the items near a halo in the picking kernel, the rest in the plain one
// and checks first that one and split store plain's bits in every updated cell.
//
// The steps are built as the product builds them (fd3d_runs_cuda.cpp): plain as LocalRun::step
// (box_piece / box_sink over Slab3D::local buffers), rdl as DistributedRun (distributed_sources /
// distributed_sink over the map of slab_blocks). The rdl volumes are one cudaMalloc each laid out
// by the very OwnershipMap the runtime would build (2 MiB granularity, as on Hopper: regions in
// rank order, padded), so the Sources' three pieces are the product's pointers into one range;
// only the memory behind the remote blocks is local here.
//
// Every cell of both layouts holds a hash of its global index, so the box (its halo planes
// included) and the blocks hold the same value for the same global cell whatever the axis.
//
// Not built by CMake: experiments/fd3d-gps/rdl_pick_probe.sh compiles it against build/src/*.a.
// Usage: rdl_pick_probe [out.json]
// PROBE_ONLY=axis:n:halo:ranks:rank[,...] (e.g. x:512:16:4:1) runs those configs instead of the
// list (under ncu, say). PROBE_REMOTE=host reads the neighbours' blocks from mapped host memory:
// loads with microseconds of latency, as a link's, on one GPU (run()'s comment says more).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "apps/fd3d/fd3d_block.hpp"  // remote_prefix (to report how many items are near a halo)
#include "apps/fd3d/fd3d_kernels.hpp"
#include "apps/fd3d/fd3d_layout.hpp"
#include "apps/stencil/decomp.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"
#include "gpsm/ownership_map.hpp"

namespace fd = gpsm::apps::fd3d;
using gpsm::apps::Slab3D;
using i64 = std::int64_t;

namespace {

constexpr int kWarm = 3, kSteps = 20, kRounds = 3;  // rounds interleave plain, one, split
constexpr std::uint64_t kGranularity = 2u << 20;     // cuMemGetAllocationGranularity on H200

// Deterministic, nonzero, different in every cell (a wrong index shows up): a hash of the global
// cell index g = x + nx * (y + ny * z) mapped to [0.5, 1.5).
__host__ __device__ inline float cell_value(i64 g) {
  std::uint64_t h = static_cast<std::uint64_t>(g) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return 0.5f + static_cast<float>(h & 0xFFFFFF) * (1.0f / 16777216.0f);
}

// A box of global cells [o, o + e) per axis, stored row-major in its own extents (x fastest): a
// rank's local box, or one block of the distributed array (OwnershipLookup's BlockBox).
struct Span3 {
  i64 o[3], e[3];
};
// The global index of the span's i-th stored cell in a volume nx x ny x (any).
__host__ __device__ inline i64 global_index(const Span3& sp, i64 nx, i64 ny, i64 i) {
  const i64 x = i % sp.e[0], yz = i / sp.e[0];
  const i64 y = yz % sp.e[1], z = yz / sp.e[1];
  return (sp.o[0] + x) + nx * ((sp.o[1] + y) + ny * (sp.o[2] + z));
}
// The rank's box with its halo planes: box coordinate l along the split axis is global
// first - R + l, the other axes their whole extent.
Span3 box_span(const Slab3D& s) {
  Span3 sp{};
  for (int d = 0; d < 3; ++d) sp.e[d] = s.local[d];
  sp.o[static_cast<int>(s.axis)] = s.first - s.radius;
  return sp;
}
// Block b of the map as stored at map.block_base(b): origin and widths from the lookup's box of
// its first element.
Span3 block_span(const gpsm::OwnershipMap& map, const gpsm::OwnershipLookup& host, std::uint64_t b) {
  const std::uint64_t i = map.block_first(b), nx = host.extent[0], ny = host.extent[1];
  const gpsm::BlockBox k = host.box(i % nx, i / nx % ny, i / nx / ny);
  if (k.base != map.block_base(b)) throw gpsm::Error("rdl_pick_probe: block base differs from the lookup's");
  Span3 sp{};
  sp.o[0] = static_cast<i64>(k.x0);
  sp.o[1] = static_cast<i64>(k.y0);
  sp.o[2] = static_cast<i64>(k.z0);
  sp.e[0] = static_cast<i64>(k.wx);
  sp.e[1] = static_cast<i64>(k.wy);
  sp.e[2] = static_cast<i64>(k.wz);
  return sp;
}

__global__ void fill_kernel(float* p, Span3 sp, i64 nx, i64 ny) {
  const i64 n = sp.e[0] * sp.e[1] * sp.e[2];
  for (i64 i = blockIdx.x * static_cast<i64>(blockDim.x) + threadIdx.x; i < n; i += static_cast<i64>(gridDim.x) * blockDim.x)
    p[i] = cell_value(global_index(sp, nx, ny, i));
}
// The span's cells of the volume (global extents nx x ny x ...), into p.
void fill(float* p, const Span3& sp, i64 nx, i64 ny) {
  fill_kernel<<<1024, 256>>>(p, sp, nx, ny);
  GPSM_CUDA_LAUNCH();
}

std::vector<float> download(const float* p, i64 n) {
  std::vector<float> h(static_cast<std::size_t>(n));
  GPSM_CUDA(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

// Cells of the updated region (box coordinates) whose bits differ between two sinks' downloads,
// each indexed as its Sink says (relative to the downloaded pointer).
i64 mismatches(const Slab3D& s, const std::vector<float>& a, const fd::Sink& sa, const std::vector<float>& b,
               const fd::Sink& sb) {
  const i64 r = s.radius;
  i64 bad = 0;
  for (i64 z = r; z < s.local[2] - r; ++z)
    for (i64 y = r; y < s.local[1] - r; ++y)
      for (i64 x = r; x < s.local[0] - r; ++x) {
        const float u = a[fd::index_in(sa.off, sa.sy, sa.sz, x, y, z)], v = b[fd::index_in(sb.off, sb.sy, sb.sz, x, y, z)];
        if (std::memcmp(&u, &v, sizeof u) != 0 && bad++ == 0)
          std::printf("  first difference at box (%lld, %lld, %lld): %.9g vs %.9g\n", static_cast<long long>(x),
                      static_cast<long long>(y), static_cast<long long>(z), u, v);
      }
  return bad;
}

struct Config {
  gpsm::apps::Axis axis;
  i64 n;
  int radius, ranks, rank;
};
const char* axis_of(const Config& c) { return gpsm::apps::axis_name(c.axis); }

struct Result {
  Config c;
  fd::Plan plain_plan, rdl_plan;
  i64 near = 0;          // rdl items whose loads may reach a neighbour's block (before rounding to waves)
  int faces = 0;         // remote faces of rdl's step
  bool ok = true;
  std::vector<double> us[3];  // per round: plain, one, split
};

bool host_remote() {
  const char* v = std::getenv("PROBE_REMOTE");
  if (v == nullptr || *v == '\0' || std::strcmp(v, "device") == 0) return false;
  if (std::strcmp(v, "host") == 0) return true;
  throw gpsm::Error(std::string("rdl_pick_probe: PROBE_REMOTE=") + v + " is not device or host");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Result run(const Config& cfg) {
  Result res;
  res.c = cfg;
  const i64 n3[3] = {cfg.n, cfg.n, cfg.n};
  const Slab3D s = gpsm::apps::slab3d(n3, cfg.axis, cfg.radius, cfg.ranks, cfg.rank);

  // plain: the rank's box with its halo planes, holding the volume's planes [first - R, first +
  // count + R) along the split axis: the same values in the halo planes as in the neighbours'
  // planes of the volume.
  float* box[2];
  for (float*& b : box) GPSM_CUDA(cudaMalloc(&b, s.local_cells() * sizeof(float)));
  const auto fill_box = [&] {
    for (float* b : box) fill(b, box_span(s), s.n[0], s.n[1]);
  };
  const auto plain_step = [&](int c) {  // LocalRun::step
    fd::FdStep st;
    st.in.mid = fd::box_piece(s, box[c]);
    st.out = fd::box_sink(s, box[1 - c]);
    st.box = fd::box_of(s);
    st.radius = s.radius;
    st.w = fd::fd_weights(s.radius);
    return st;
  };

  // rdl: both volumes in the runtime's layout of slab_blocks (one block per rank, block r = rank
  // r's span along the split axis and the whole of the other two, stored row-major in its own
  // extents).
  const gpsm::OwnershipMap map(fd::slab_blocks(s), sizeof(float), kGranularity, cfg.ranks);
  const gpsm::OwnershipLookup host = map.lookup();
  char* vol[2];
  for (char*& v : vol) GPSM_CUDA(cudaMalloc(&v, map.range_bytes()));
  const auto fill_vol = [&] {
    for (char* v : vol)
      for (std::uint64_t b = 0; b < map.blocks(); ++b)
        fill(reinterpret_cast<float*>(v + map.block_base(b)), block_span(map, host, b), s.n[0], s.n[1]);
  };
  fd::FdStep rdl[2];  // DistributedRun's steps_[c][rank]
  for (int c = 0; c < 2; ++c) {
    rdl[c].in = fd::distributed_sources(s, host, vol[c]);
    rdl[c].out = fd::distributed_sink(s, host, vol[1 - c]);
    rdl[c].box = fd::box_of(s);
    rdl[c].radius = s.radius;
    rdl[c].w = fd::fd_weights(s.radius);
  }
  // PROBE_REMOTE=host: the neighbours' blocks are read from a mirror of each volume in mapped
  // pinned host memory (cudaHostAllocMapped), so their loads cross PCIe: a remote load with a
  // latency of microseconds, as over NVLink, on one GPU (a proxy for the link's latency, not its
  // bandwidth). The rank's own block and the output stay on the GPU.
  char* mirror[2] = {nullptr, nullptr};
  if (host_remote()) {
    for (int c = 0; c < 2; ++c) {
      GPSM_CUDA(cudaHostAlloc(&mirror[c], map.range_bytes(), cudaHostAllocMapped));
      char* dev = nullptr;
      GPSM_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), mirror[c], 0));
      for (fd::Piece* q : {&rdl[c].in.lo, &rdl[c].in.hi})
        if (q->p != nullptr) q->p = reinterpret_cast<const float*>(dev + (reinterpret_cast<const char*>(q->p) - vol[c]));
    }
  }
  const auto fill_vol_and_mirror = [&] {
    fill_vol();
    if (mirror[0] == nullptr) return;
    for (int c = 0; c < 2; ++c) GPSM_CUDA(cudaMemcpy(mirror[c], vol[c], map.range_bytes(), cudaMemcpyDeviceToHost));
  };
  res.plain_plan = fd::fd_step_plan(plain_step(0));
  res.rdl_plan = fd::fd_step_plan(rdl[0]);
  res.near = fd::remote_prefix(rdl[0].in, rdl[0].box, res.rdl_plan, s.radius, 1);
  res.faces = rdl[0].in.remote_faces();

  // The check: one step each from freshly filled inputs into outputs set to NaN first (so a cell
  // a variant fails to store cannot pass on a value an earlier variant left).
  const i64 block_elems = static_cast<i64>(map.block_elems(static_cast<std::uint64_t>(cfg.rank)));
  fill_box();
  fill_vol_and_mirror();
  GPSM_CUDA(cudaMemset(box[1], 0xFF, s.local_cells() * sizeof(float)));
  fd::launch_fd_step(plain_step(0), nullptr);
  const std::vector<float> want = download(box[1], s.local_cells());
  const fd::RdlLaunch modes[2] = {fd::RdlLaunch::one, fd::RdlLaunch::split};
  for (int m = 0; m < 2; ++m) {
    GPSM_CUDA(cudaMemset(rdl[0].out.p, 0xFF, block_elems * sizeof(float)));  // the rank's block of vol[1]
    fd::launch_fd_step(rdl[0], nullptr, modes[m]);
    const std::vector<float> got = download(rdl[0].out.p, block_elems);
    const i64 bad = mismatches(s, want, plain_step(0).out, got, rdl[0].out);
    if (bad != 0) {
      std::printf("MISMATCH %lld^3 h%d %s rank %d/%d: rdl %s differs from plain in %lld updated cells\n",
                  static_cast<long long>(cfg.n), cfg.radius, axis_of(cfg), cfg.rank, cfg.ranks, m == 0 ? "one" : "split",
                  static_cast<long long>(bad));
      res.ok = false;
    }
  }

  if (res.ok) {
    fill_box();  // the NaN outputs back to data: a real iteration's buffers both hold values
    fill_vol_and_mirror();
    cudaEvent_t e0, e1;
    GPSM_CUDA(cudaEventCreate(&e0));
    GPSM_CUDA(cudaEventCreate(&e1));
    // Steps alternate the buffers as a run's iterations do (it & 1 read, the other written).
    const auto time_steps = [&](auto step) {
      for (int it = 0; it < kWarm; ++it) step(it & 1);
      GPSM_CUDA(cudaEventRecord(e0));
      for (int it = kWarm; it < kWarm + kSteps; ++it) step(it & 1);
      GPSM_CUDA(cudaEventRecord(e1));
      GPSM_CUDA(cudaEventSynchronize(e1));
      float ms = 0;
      GPSM_CUDA(cudaEventElapsedTime(&ms, e0, e1));
      return 1000.0 * ms / kSteps;
    };
    for (int round = 0; round < kRounds; ++round) {
      res.us[0].push_back(time_steps([&](int c) { fd::launch_fd_step(plain_step(c), nullptr); }));
      res.us[1].push_back(time_steps([&](int c) { fd::launch_fd_step(rdl[c], nullptr, fd::RdlLaunch::one); }));
      res.us[2].push_back(time_steps([&](int c) { fd::launch_fd_step(rdl[c], nullptr, fd::RdlLaunch::split); }));
    }
    GPSM_CUDA(cudaEventDestroy(e0));
    GPSM_CUDA(cudaEventDestroy(e1));
  }
  for (float* b : box) GPSM_CUDA(cudaFree(b));
  for (char* v : vol) GPSM_CUDA(cudaFree(v));
  for (char* m : mirror)
    if (m != nullptr) GPSM_CUDA(cudaFreeHost(m));
  return res;
}

std::string plan_json(const fd::Plan& p) {
  char b[160];
  std::snprintf(b, sizeof b, "{\"items\": %lld, \"tiles\": [%lld, %lld], \"chunks\": %lld, \"chunk\": %lld}",
                static_cast<long long>(p.items), static_cast<long long>(p.tiles[0]), static_cast<long long>(p.tiles[1]),
                static_cast<long long>(p.chunks), static_cast<long long>(p.chunk));
  return b;
}

// The configs: 512^3 and 768^3, halo 4 and 16, rank 0 of 2 (one remote face) and rank 1 of 4
// (two), along z (first, as before), then x, then y; or PROBE_ONLY's one.
std::vector<Config> configs() {
  using gpsm::apps::Axis;
  const char* only = std::getenv("PROBE_ONLY");
  if (only != nullptr && *only != '\0') {
    std::vector<Config> list;
    const std::string all_text = only;
    std::size_t at = 0;
    while (at <= all_text.size()) {  // comma-separated
      const std::size_t end = std::min(all_text.find(',', at), all_text.size());
      const std::string one = all_text.substr(at, end - at);
      char a[16] = {};
      long long n = 0;
      int r = 0, ranks = 0, rank = 0, used = 0;
      if (std::sscanf(one.c_str(), "%15[^:]:%lld:%d:%d:%d%n", a, &n, &r, &ranks, &rank, &used) != 5 ||
          one[static_cast<std::size_t>(used)] != '\0')
        throw gpsm::Error("rdl_pick_probe: PROBE_ONLY item '" + one +
                          "' is not axis:n:halo:ranks:rank (e.g. x:512:16:4:1)");
      list.push_back(Config{gpsm::apps::parse_axis(a), n, r, ranks, rank});  // slab3d checks the numbers
      at = end + 1;
    }
    return list;
  }
  std::vector<Config> all;
  for (Axis axis : {Axis::z, Axis::x, Axis::y})
    for (i64 n : {512, 768})
      for (int r : {4, 16})
        for (const auto& [ranks, rank] : {std::pair{2, 0}, std::pair{4, 1}}) all.push_back(Config{axis, n, r, ranks, rank});
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    cudaDeviceProp prop{};
    GPSM_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("rdl_pick_probe on %s: us per step, median of %d rounds of %d steps (%d warm-up); the neighbours' "
                "blocks in %s\n",
                prop.name, kRounds, kSteps, kWarm, host_remote() ? "mapped host memory (PROBE_REMOTE=host)" : "GPU memory");
    std::vector<Result> all;
    bool ok = true;
    for (const Config& cfg : configs()) {
      const Result res = run(cfg);
      ok = ok && res.ok;
      all.push_back(res);
      if (!res.ok) continue;
      const double p = median(res.us[0]), o = median(res.us[1]), sp = median(res.us[2]);
      std::printf("%lld^3:h%d:%s rank %d/%d (%d remote face%s)  plain %9.1f  one %9.1f  split %9.1f  "
                  "one/plain %.3f  split/plain %.3f  | items %lld (near a halo %lld), chunks %lld of %lld planes "
                  "(plain %lld of %lld)\n",
                  static_cast<long long>(cfg.n), cfg.radius, axis_of(cfg), cfg.rank, cfg.ranks, res.faces,
                  res.faces == 1 ? "" : "s", p, o, sp, o / p, sp / p, static_cast<long long>(res.rdl_plan.items),
                  static_cast<long long>(res.near), static_cast<long long>(res.rdl_plan.chunks),
                  static_cast<long long>(res.rdl_plan.chunk), static_cast<long long>(res.plain_plan.chunks),
                  static_cast<long long>(res.plain_plan.chunk));
      std::fflush(stdout);
    }
    if (argc > 1) {
      FILE* f = std::fopen(argv[1], "w");
      if (f == nullptr) throw gpsm::Error(std::string("rdl_pick_probe: cannot write ") + argv[1]);
      std::fprintf(f, "{\"device\": \"%s\", \"remote\": \"%s\", \"warm\": %d, \"steps\": %d, \"rounds\": %d, \"configs\": [\n",
                   prop.name, host_remote() ? "host" : "device", kWarm, kSteps, kRounds);
      for (std::size_t i = 0; i < all.size(); ++i) {
        const Result& r = all[i];
        std::fprintf(f, "  {\"n\": %lld, \"halo\": %d, \"axis\": \"%s\", \"ranks\": %d, \"rank\": %d, \"match\": %s, "
                        "\"remote_faces\": %d, \"near_items\": %lld, \"plain_plan\": %s, \"rdl_plan\": %s",
                     static_cast<long long>(r.c.n), r.c.radius, axis_of(r.c), r.c.ranks, r.c.rank, r.ok ? "true" : "false",
                     r.faces, static_cast<long long>(r.near), plan_json(r.plain_plan).c_str(), plan_json(r.rdl_plan).c_str());
        const char* names[3] = {"plain", "one", "split"};
        for (int v = 0; v < 3 && r.ok; ++v) {
          std::fprintf(f, ", \"%s_us\": [", names[v]);
          for (std::size_t k = 0; k < r.us[v].size(); ++k) std::fprintf(f, "%s%.2f", k ? ", " : "", r.us[v][k]);
          std::fprintf(f, "]");
        }
        if (r.ok)
          std::fprintf(f, ", \"one_over_plain\": %.4f, \"split_over_plain\": %.4f", median(r.us[1]) / median(r.us[0]),
                       median(r.us[2]) / median(r.us[0]));
        std::fprintf(f, "}%s\n", i + 1 < all.size() ? "," : "");
      }
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rdl_pick_probe: %s\n", e.what());
    return 2;
  }
}
