// gpsm sim traces: the binary format's round trip and errors, and the instrumented generator
// (sim/trace_gen.hpp): byte counts by hand, remote stores into the neighbours' halos, the
// computed values against the CPU references, determinism and sampling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <tuple>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil/reference.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"
#include "gpsm/error.hpp"
#include "sim/trace.hpp"
#include "sim/trace_gen.hpp"

using namespace gpsm;
using namespace gpsm::sim;

namespace {

std::string tmp_path(const std::string& name) {
  return testing::TempDir() + "gpsm_sim_trace_" + name + "_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed());
}

bool same_run(const AccessRun& a, const AccessRun& b) {
  return a.op == b.op && a.bytes == b.bytes && a.count == b.count && a.addr == b.addr && a.stride == b.stride;
}

void expect_same(const Trace& a, const Trace& b) {
  EXPECT_EQ(a.app, b.app);
  EXPECT_EQ(a.problem, b.problem);
  EXPECT_EQ(a.gpus, b.gpus);
  EXPECT_EQ(a.layout, b.layout);
  ASSERT_EQ(a.allocations.size(), b.allocations.size());
  for (size_t i = 0; i < a.allocations.size(); ++i) {
    const Allocation &x = a.allocations[i], &y = b.allocations[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.gpu, y.gpu);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.base, y.base);
    EXPECT_EQ(x.bytes, y.bytes);
  }
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    ASSERT_EQ(a.iterations[i].kernels.size(), b.iterations[i].kernels.size());
    for (size_t k = 0; k < a.iterations[i].kernels.size(); ++k) {
      const KernelTrace &x = a.iterations[i].kernels[k], &y = b.iterations[i].kernels[k];
      EXPECT_EQ(x.name, y.name);
      EXPECT_EQ(x.gpu, y.gpu);
      EXPECT_EQ(x.grid_blocks, y.grid_blocks);
      EXPECT_EQ(x.threads_per_block, y.threads_per_block);
      EXPECT_EQ(x.blocks_per_sm, y.blocks_per_sm);
      EXPECT_EQ(x.gather_bytes, y.gather_bytes);
      EXPECT_EQ(x.chain_adds, y.chain_adds);
      EXPECT_EQ(x.compute_s, y.compute_s);
      ASSERT_EQ(x.blocks.size(), y.blocks.size());
      for (size_t b = 0; b < x.blocks.size(); ++b) {
        EXPECT_EQ(x.blocks[b].block, y.blocks[b].block);
        EXPECT_EQ(x.blocks[b].weight, y.blocks[b].weight);
        EXPECT_EQ(x.blocks[b].flops, y.blocks[b].flops);
        EXPECT_EQ(x.blocks[b].serial_steps, y.blocks[b].serial_steps);
        EXPECT_EQ(x.blocks[b].chain_steps, y.blocks[b].chain_steps);
        EXPECT_EQ(x.blocks[b].gather_steps, y.blocks[b].gather_steps);
        ASSERT_EQ(x.blocks[b].runs.size(), y.blocks[b].runs.size());
        for (size_t r = 0; r < x.blocks[b].runs.size(); ++r)
          EXPECT_TRUE(same_run(x.blocks[b].runs[r], y.blocks[b].runs[r])) << "iter " << i << " kernel " << k << " block " << b << " run " << r;
      }
    }
  }
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}
void put_bytes(const std::string& path, const std::vector<char>& d) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(d.data(), static_cast<std::streamsize>(d.size()));
}

// The error read_trace throws for `path`, or "" when it throws none.
std::string read_error(const std::string& path) {
  try {
    read_trace(path);
  } catch (const gpsm::Error& e) {
    return e.what();
  }
  return "";
}

const Allocation& alloc_named(const Trace& t, const std::string& name) {
  for (const auto& a : t.allocations)
    if (a.name == name) return a;
  throw std::runtime_error("no allocation " + name);
}

TraceRequest jacobi_req(std::int64_t nx, std::int64_t ny, int gpus, int iters, const std::string& layout = "slabs") {
  TraceRequest r;
  r.app = "jacobi2d";
  r.problem.n[0] = nx;
  r.problem.n[1] = ny;
  r.problem.iters = iters;
  r.problem.tol = 0;
  r.gpus = gpus;
  r.layout = layout;
  return r;
}

TraceRequest s3d_req(const std::string& app, std::int64_t x, std::int64_t y, std::int64_t z, apps::Axis axis, int gpus,
                     int iters, const std::string& layout = "slabs") {
  TraceRequest r;
  r.app = app;
  r.problem.n[0] = x;
  r.problem.n[1] = y;
  r.problem.n[2] = z;
  r.problem.axis = axis;
  r.problem.iters = iters;
  r.problem.seed = 7;
  r.gpus = gpus;
  r.layout = layout;
  return r;
}

struct Bytes {
  std::int64_t load = 0, store = 0, atomic = 0;
  std::map<int, std::int64_t> store_to_gpu;  // stores by the GPU whose allocation they land in
  std::map<int, std::int64_t> load_from_gpu;  // loads by the GPU whose allocation they read
};
Bytes count_bytes(const Trace& t, const KernelTrace& k) {
  Bytes b;
  for (const auto& bl : k.blocks)
    for (const auto& r : bl.runs) {
      const std::int64_t n = std::int64_t{r.count} * r.bytes;
      if (r.op == Op::load) {
        b.load += n;
        const int a = allocation_of(t, r.addr);
        const int a_last = allocation_of(t, r.addr + static_cast<std::uint64_t>(static_cast<std::int64_t>(r.count - 1) * r.stride));
        EXPECT_EQ(a, a_last) << "a load run crosses allocations";
        if (a >= 0) b.load_from_gpu[t.allocations[a].gpu] += n;
      }
      if (r.op == Op::atomic) b.atomic += n;
      if (r.op == Op::store) {
        b.store += n;
        const int a = allocation_of(t, r.addr);
        const int a_last = allocation_of(t, r.addr + static_cast<std::uint64_t>(static_cast<std::int64_t>(r.count - 1) * r.stride));
        EXPECT_GE(a, 0);
        EXPECT_EQ(a, a_last) << "a run crosses allocations";
        if (a >= 0) b.store_to_gpu[t.allocations[a].gpu] += n;
      }
    }
  return b;
}

}  // namespace

TEST(SimTrace, WriteReadRoundTrip) {
  Trace t = make_trace(jacobi_req(8, 10, 2, 3));
  t.allocations.push_back({"extra.replica", MemKind::replica, 1, 3, 1ull << 50, 4096});
  t.iterations[0].kernels[0].blocks[0].runs.push_back({Op::atomic, 8, 7, 123456789012345ull, -8});
  t.iterations[1].kernels[1].blocks[0].weight = 2.5;
  t.iterations[1].kernels[1].blocks_per_sm = 3;
  t.iterations[1].kernels[1].blocks[0].serial_steps = 19;
  t.iterations[1].kernels[1].blocks[0].chain_steps = 7;
  t.iterations[1].kernels[1].blocks[0].gather_steps = 3;
  t.iterations[1].kernels[1].gather_bytes = (std::uint64_t{5} << 32) + 17;
  t.iterations[1].kernels[1].chain_adds = 1;
  t.iterations[1].kernels[1].compute_s = 1.5e-3;
  const std::string p = tmp_path("rt");
  write_trace(t, p);
  const Trace u = read_trace(p);
  expect_same(t, u);
  EXPECT_EQ(t.total_runs(), u.total_runs());
  std::remove(p.c_str());
}

// Older files still read: a one-block trace without runs ends with its block's serial_steps,
// chain_steps, gather_steps and run count (4 bytes each); before the 4-byte block count lie the
// kernel's compute_s (8 bytes, version 9), chain_adds (1 byte, version 8) and gather_bytes (8
// bytes). Version 4: without the gather fields (read with 0); version 3: without chain_steps either.
Trace one_block_trace() {
  Trace t;
  t.app = "scatter";
  t.problem = "hand";
  t.gpus = 1;
  t.layout = "slabs";
  t.allocations.push_back({"gpu0.a", MemKind::device, 0, -1, 0, 4096});
  t.iterations.resize(1);
  t.iterations[0].host_named = true;
  t.iterations[0].peer_waits = 3;
  t.iterations[0].memsets = 1;
  KernelTrace k;
  k.name = "k";
  k.grid_blocks = 1;
  k.gather_bytes = 77;
  k.chain_adds = 1;
  k.compute_s = 0.25;
  BlockTrace b;
  b.serial_steps = 5;
  b.chain_steps = 9;
  b.gather_steps = 6;
  b.warp_insts = 11;
  b.push_insts = 13;
  k.blocks.push_back(b);
  t.iterations[0].kernels.push_back(k);
  return t;
}

TEST(SimTrace, Version3To8FilesReadWithTheNewFieldsZero) {
  const Trace t = one_block_trace();
  {
    const std::string p = tmp_path("v8");
    write_trace(t, p);
    const Trace u = read_trace(p);
    EXPECT_EQ(u.iterations.at(0).kernels.at(0).blocks.at(0).warp_insts, 11u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].push_insts, 13u);
    EXPECT_TRUE(u.iterations[0].host_named);
    EXPECT_EQ(u.iterations[0].peer_waits, 3);
    EXPECT_EQ(u.iterations[0].memsets, 1);
    EXPECT_EQ(u.iterations[0].kernels[0].chain_adds, 1);
    EXPECT_EQ(u.iterations[0].kernels[0].compute_s, 0.25);
    std::remove(p.c_str());
  }
  // the iteration's host_sync byte: after the header, the one allocation record and the iteration count
  const std::size_t host_sync_at = 8 + 4 + (4 + t.app.size()) + (4 + t.problem.size()) + 4 + (4 + t.layout.size()) + 4 +
                                   (4 + t.allocations[0].name.size() + 1 + 4 + 4 + 8 + 8) + 4;
  for (int version : {8, 7, 6, 5, 4, 3}) {
    const std::string p = tmp_path("v" + std::to_string(version));
    write_trace(t, p);
    std::vector<char> d = file_bytes(p);
    ASSERT_GT(d.size(), 64u);
    EXPECT_EQ(d[8], 9);  // written as version 9
    EXPECT_EQ(d[host_sync_at], 0);  // host_sync
    EXPECT_EQ(d[host_sync_at + 1], 1);  // host_named
    EXPECT_EQ(d[host_sync_at + 2], 3);  // peer_waits
    EXPECT_EQ(d[host_sync_at + 3], 1);  // memsets
    EXPECT_EQ(d[d.size() - 24], 5);  // serial_steps
    EXPECT_EQ(d[d.size() - 20], 9);  // chain_steps
    EXPECT_EQ(d[d.size() - 16], 6);  // gather_steps
    EXPECT_EQ(d[d.size() - 12], 11); // warp_insts
    EXPECT_EQ(d[d.size() - 8], 13);  // push_insts
    EXPECT_EQ(d[d.size() - 57], 1);  // the kernel's chain_adds
    EXPECT_EQ(d[d.size() - 65], 77); // the kernel's gather_bytes
    // the block fields a version lacks: v5 warp/push_insts, v4 also gather_steps, v3 also chain_steps
    const std::ptrdiff_t n = version >= 6 ? 0 : version == 5 ? 8 : version == 4 ? 12 : 16;
    d.erase(d.end() - 4 - n, d.end() - 4);
    {  // every version before 9 lacks the kernel's compute_s, before the block count and record
      const std::ptrdiff_t after = (44 - n) + 4;
      d.erase(d.end() - after - 8, d.end() - after);
    }
    if (version < 8) {  // and before 8 its chain_adds
      const std::ptrdiff_t after = (44 - n) + 4;
      d.erase(d.end() - after - 1, d.end() - after);
    }
    if (version <= 4) {  // and the kernel's gather_bytes, before the block count and the block record
      const std::ptrdiff_t after = (44 - n) + 4;
      d.erase(d.end() - after - 8, d.end() - after);
    }
    // every version before 7 lacks the three host-loop bytes after host_sync
    if (version < 7) {
      const auto host = d.begin() + static_cast<std::ptrdiff_t>(host_sync_at) + 1;
      d.erase(host, host + 3);
    }
    d[8] = static_cast<char>(version);
    put_bytes(p, d);
    const Trace u = read_trace(p);
    ASSERT_EQ(u.iterations.size(), 1u);
    ASSERT_EQ(u.iterations[0].kernels.at(0).blocks.size(), 1u) << version;
    EXPECT_EQ(u.iterations[0].host_named, version >= 7) << version;
    EXPECT_EQ(u.iterations[0].peer_waits, version >= 7 ? 3 : 0);
    EXPECT_EQ(u.iterations[0].memsets, version >= 7 ? 1 : 0);
    EXPECT_EQ(u.iterations[0].kernels[0].chain_adds, version == 8 ? 1 : 0) << version;
    EXPECT_EQ(u.iterations[0].kernels[0].compute_s, 0) << version;
    EXPECT_EQ(u.iterations[0].kernels[0].gather_bytes, version >= 5 ? 77u : 0u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].serial_steps, 5u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].chain_steps, version >= 4 ? 9u : 0u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].gather_steps, version >= 5 ? 6u : 0u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].warp_insts, version >= 6 ? 11u : 0u);
    EXPECT_EQ(u.iterations[0].kernels[0].blocks[0].push_insts, version >= 6 ? 13u : 0u);
    std::remove(p.c_str());
  }
  // host calls for a loop that is not named: a malformed file
  {
    Trace unnamed = t;
    unnamed.iterations[0].host_named = false;
    const std::string p = tmp_path("unnamed");
    write_trace(unnamed, p);
    EXPECT_THROW(read_trace(p), Error);
    std::remove(p.c_str());
  }
  // chain_adds other than 0 or 1: a malformed file
  {
    Trace two = t;
    two.iterations[0].kernels[0].chain_adds = 2;
    const std::string p = tmp_path("adds");
    write_trace(two, p);
    EXPECT_THROW(read_trace(p), Error);
    std::remove(p.c_str());
  }
  // more gathers than chain steps: a malformed file
  Trace bad = t;
  bad.iterations[0].kernels[0].blocks[0].gather_steps = 10;
  const std::string p = tmp_path("gather");
  write_trace(bad, p);
  EXPECT_THROW(read_trace(p), Error);
  std::remove(p.c_str());
}

TEST(SimTrace, TruncatedAndBadFilesThrowNamingTheFile) {
  const Trace t = make_trace(jacobi_req(8, 10, 2, 2));
  const std::string p = tmp_path("bad");
  write_trace(t, p);
  const std::vector<char> good = file_bytes(p);
  ASSERT_GT(good.size(), 100u);
  for (size_t cut : {size_t{3}, size_t{10}, size_t{40}, good.size() / 2, good.size() - 1}) {
    put_bytes(p, std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)));
    const std::string e = read_error(p);
    EXPECT_NE(e.find(p), std::string::npos) << "cut " << cut << ": " << e;
    EXPECT_NE(e.find("truncated"), std::string::npos) << "cut " << cut << ": " << e;
  }
  std::vector<char> d = good;
  d[0] = 'X';
  put_bytes(p, d);
  std::string e = read_error(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("magic"), std::string::npos) << e;
  d = good;
  d[8] = 10;  // version 10 (this gpsm writes 9 and reads 2 to 9)
  put_bytes(p, d);
  e = read_error(p);
  EXPECT_NE(e.find("version 10"), std::string::npos) << e;
  d = good;
  d.push_back(0);
  put_bytes(p, d);
  e = read_error(p);
  EXPECT_NE(e.find("after the last iteration"), std::string::npos) << e;
  std::remove(p.c_str());
  EXPECT_NE(read_error(p).find(p), std::string::npos);  // missing file
}

// 8 x 10 on 2 GPUs: interior rows 1..8, 4 per GPU; nx % 4 == 0: float4 path.
TEST(SimTrace, JacobiSlabsByteCountsAndHaloStoresFloat4) {
  const std::int64_t nx = 8, ny = 10;
  const Trace t = make_trace(jacobi_req(nx, ny, 2, 2));
  ASSERT_EQ(t.iterations.size(), 2u);
  for (int it = 0; it < 2; ++it) {
    ASSERT_EQ(t.iterations[it].kernels.size(), 2u);
    const int ob = 1 - it % 2;
    for (int g = 0; g < 2; ++g) {
      const KernelTrace& k = t.iterations[it].kernels[g];
      EXPECT_EQ(k.gpu, g);
      EXPECT_EQ(k.grid_blocks, 4u);
      ASSERT_EQ(k.blocks.size(), 4u);
      const Bytes b = count_bytes(t, k);
      // Per row: centre, north, south as nx/4 float4 loads, west and east as nx/4 scalars.
      EXPECT_EQ(b.load, 4 * (3 * (nx / 4) * 16 + 2 * (nx / 4) * 4));
      // Own rows (whole rows as float4) + the first and last row pushed to the neighbour.
      EXPECT_EQ(b.store, 4 * nx * 4 + 2 * nx * 4);
      const int other = 1 - g;
      EXPECT_EQ(b.store_to_gpu.at(other), 2 * nx * 4);
      EXPECT_EQ(b.atomic, 4 * 4);  // norm every iteration (nccheck 1): one atomic per block
      // The pushes: row 1 into the top neighbour's bottom halo (local row 5), row 4 into the
      // bottom neighbour's top halo (row 0); with 2 GPUs both neighbours are the other one
      // (rank 0's top is the last rank: periodic wrap).
      const Allocation& dst = alloc_named(t, "gpu" + std::to_string(other) + ".buf" + std::to_string(ob));
      std::vector<std::uint64_t> remote;
      for (const auto& bl : k.blocks)
        for (const auto& r : bl.runs)
          if (r.op == Op::store && allocation_of(t, r.addr) >= 0 && t.allocations[allocation_of(t, r.addr)].gpu == other) {
            EXPECT_EQ(r.bytes, 16);
            EXPECT_EQ(r.count, static_cast<std::uint32_t>(nx / 4));
            EXPECT_EQ(r.stride, 16);
            remote.push_back((r.addr - dst.base) / 4);
            EXPECT_EQ(allocation_of(t, r.addr), &dst - t.allocations.data());
          }
      std::sort(remote.begin(), remote.end());
      EXPECT_EQ(remote, (std::vector<std::uint64_t>{0, 5 * nx}));  // cell index: row 0, row 5
    }
  }
}

// 3 GPUs, nx = 7 (scalar path): rank 0's top neighbour is rank 2 (wrap).
TEST(SimTrace, JacobiSlabsScalarPathAndPeriodicWrap) {
  const std::int64_t nx = 7, ny = 11;  // 9 interior rows: 3 per GPU
  const Trace t = make_trace(jacobi_req(nx, ny, 3, 1));
  const KernelTrace& k = t.iterations[0].kernels[0];
  const Bytes b = count_bytes(t, k);
  EXPECT_EQ(b.load, 3 * 5 * (nx - 2) * 4);  // centre, east, west, south, north: scalars
  EXPECT_EQ(b.store, 3 * (nx - 2) * 4 + 2 * (nx - 2) * 4);
  EXPECT_EQ(b.store_to_gpu.at(2), (nx - 2) * 4);  // row 1 -> rank 2's bottom halo (local row 4)
  EXPECT_EQ(b.store_to_gpu.at(1), (nx - 2) * 4);  // row 3 -> rank 1's top halo (local row 0)
  for (const auto& bl : k.blocks)
    for (const auto& r : bl.runs) {
      EXPECT_EQ(r.bytes, 4);
      const int a = allocation_of(t, r.addr);
      if (r.op != Op::store || t.allocations[a].gpu == 0) continue;
      const Allocation& al = t.allocations[a];
      EXPECT_EQ(al.name, t.allocations[a].gpu == 2 ? "gpu2.buf1" : "gpu1.buf1");
      const std::uint64_t cell = (r.addr - al.base) / 4;
      EXPECT_EQ(cell, static_cast<std::uint64_t>(al.gpu == 2 ? 4 * nx + 1 : 1));
      EXPECT_EQ(r.count, static_cast<std::uint32_t>(nx - 2));
    }
}

TEST(SimTrace, JacobiComputesTheReference) {
  for (auto [nx, ny, gpus] : {std::tuple{8, 10, 2}, std::tuple{7, 11, 3}, std::tuple{16, 9, 1}, std::tuple{12, 12, 4}}) {
    for (const char* layout : {"slabs", "grid", "replicas"}) {
      apps::JacobiProblem p;
      p.nx = nx;
      p.ny = ny;
      p.niter = 5;
      p.tol = 0;
      const apps::JacobiResult ref = apps::jacobi_reference(p);
      ASSERT_EQ(ref.iterations, 5);
      std::vector<float> got;
      const Trace t = make_trace(jacobi_req(nx, ny, gpus, 5, layout), &got);
      EXPECT_EQ(t.iterations.size(), 5u);
      // Interior rows are bit-identical (same point update, same order).
      EXPECT_EQ(apps::max_rel_error(got.data() + nx, ref.a.data() + nx, static_cast<size_t>(nx * (ny - 2))), 0.0)
          << nx << "x" << ny << " on " << gpus << " " << layout;
      EXPECT_EQ(got, ref.a) << nx << "x" << ny << " on " << gpus << " " << layout;
    }
  }
}

// Remote stores of the 3D slabs = interior cells of the pushed planes x radius x 4 B per
// neighbour side (Slabs::halo_bytes(false), slab3d_halo_bytes: replicated here).
TEST(SimTrace, Stencil3DRemoteStoresAreTheInteriorOfThePushedPlanes) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const int R = std::string(app) == "heat3d" ? 1 : 2;
    for (apps::Axis axis : {apps::Axis::z, apps::Axis::y, apps::Axis::x}) {
      const std::int64_t n[3] = {16, 13, 18};
      const int G = 3;
      const Trace t = make_trace(s3d_req(app, n[0], n[1], n[2], axis, G, 2));
      const int a = static_cast<int>(axis), b = (a + 1) % 3, c = (a + 2) % 3;
      const std::int64_t side = R * (n[b] - 2 * R) * (n[c] - 2 * R) * 4;
      std::int64_t total = 0;
      for (const auto& it : t.iterations)
        for (int g = 0; g < G; ++g) {
          const KernelTrace& k = it.kernels[g];
          const Bytes by = count_bytes(t, k);
          for (int o = 0; o < G; ++o) {
            const std::int64_t want = (o == g - 1 || o == g + 1) ? side : 0;
            const std::int64_t got = o == g ? 0 : (by.store_to_gpu.count(o) ? by.store_to_gpu.at(o) : 0);
            EXPECT_EQ(got, want) << app << " axis " << apps::axis_name(axis) << " gpu " << g << " -> " << o;
            if (o != g) total += got;
          }
        }
      const double formula = 2.0 * (G - 1) * R * static_cast<double>(n[b] - 2 * R) * static_cast<double>(n[c] - 2 * R) * 4;
      EXPECT_EQ(static_cast<double>(total), 2 * formula) << app;  // 2 iterations
    }
  }
}

// Loads and stores of one heat3d step on one GPU, float4 path, by hand.
TEST(SimTrace, Heat3DSingleGpuByteCounts) {
  const std::int64_t n[3] = {8, 6, 5};  // nx % 4 == 0: float4 columns
  const Trace t = make_trace(s3d_req("heat3d", n[0], n[1], n[2], apps::Axis::z, 1, 1));
  const Bytes b = count_bytes(t, t.iterations[0].kernels[0]);
  // Stores: exactly the updated cells (the first and last vector of a row lane by lane).
  EXPECT_EQ(b.store, (n[0] - 2) * (n[1] - 2) * (n[2] - 2) * 4);
  // Loads per thread (column of 4 cells at one y) marching z over the interior planes: the 2
  // prologue planes + one new plane per step (the march's plane loads: planes z0-1 .. z1, i.e.
  // (steps + 2) float4), 2 y-neighbour float4 and 2 scalar edges per step.
  const std::int64_t cols = n[0] / 4, rows = n[1] - 2, steps = n[2] - 2;
  EXPECT_EQ(b.load, cols * rows * ((steps + 2) * 16 + steps * (2 * 16 + 2 * 4)));
  EXPECT_EQ(b.atomic, 0);
  double flops = 0;
  for (const auto& bl : t.iterations[0].kernels[0].blocks) flops += bl.flops;
  EXPECT_EQ(flops, 9.0 * (n[0] - 2) * (n[1] - 2) * (n[2] - 2));
}

// Every 3D step block carries its march: its chunk's planes plus 2R priming planes, so over one
// tile's column of items the marched planes (steps - 2R) add up to the rank's planes once each;
// the kernel carries the step's residency (heat3d 5, wave3d 4 blocks per SM).
TEST(SimTrace, Stencil3DBlocksCarryTheirMarchSteps) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const int R = std::string(app) == "heat3d" ? 1 : 2;
    for (int G : {1, 2}) {
      const Trace t = make_trace(s3d_req(app, 64, 24, 40, apps::Axis::z, G, 1));
      for (const KernelTrace& k : t.iterations[0].kernels) {
        EXPECT_EQ(k.blocks_per_sm, R == 1 ? 5u : 4u);
        ASSERT_EQ(k.blocks.size(), k.grid_blocks);  // not sampled
        std::int64_t marched = 0;
        for (const BlockTrace& b : k.blocks) {
          EXPECT_GE(b.serial_steps, static_cast<std::uint32_t>(3 * R)) << app;
          marched += static_cast<std::int64_t>(b.serial_steps) - 2 * R;
        }
        // x tiles: 64 / 4 cells per thread / 32 threads = 1 (float4 rows); y tiles: ceil((24 - 2R) / 8)
        const std::int64_t tiles = (24 - 2 * R + 7) / 8;
        const std::int64_t planes = G == 1 ? 40 - 2 * R : (40 - 2 * R) / 2;  // z interior split in two
        EXPECT_EQ(marched, tiles * planes) << app << " on " << G << " GPUs";
      }
    }
  }
}

// The 3D step plans for the request's SMs (sms x blocks per SM slots), as the launcher plans for
// its device: a plan made for 132 SMs and replayed on one SM's 5 slots stacks its 30 short items
// six to a slot (36 steps); the plan for 5 slots has fewer, longer items and a shorter busiest slot.
TEST(SimTrace, Stencil3DPlanFollowsTheRequestsSms) {
  const auto busiest = [](const KernelTrace& k, std::uint32_t slots) {
    std::vector<std::uint32_t> slot(slots, 0);
    for (const BlockTrace& b : k.blocks) slot[b.block % slots] += b.serial_steps;
    return *std::max_element(slot.begin(), slot.end());
  };
  TraceRequest r = s3d_req("heat3d", 64, 24, 40, apps::Axis::z, 1, 1);
  const KernelTrace wide = make_trace(r).iterations[0].kernels[0];  // default: 132 SMs
  r.sms = 1;
  const KernelTrace narrow = make_trace(r).iterations[0].kernels[0];
  ASSERT_EQ(wide.blocks_per_sm, 5u);
  ASSERT_EQ(narrow.blocks_per_sm, 5u);
  apps::stencil3d::Box box;
  box.n[0] = 64;
  box.n[1] = 24;
  box.n[2] = 40;
  box.axis = 2;
  box.count = 38;
  EXPECT_EQ(wide.grid_blocks, apps::stencil3d::make_plan(1, 4, box, false, 132 * 5).items);
  EXPECT_EQ(narrow.grid_blocks, apps::stencil3d::make_plan(1, 4, box, false, 5).items);
  EXPECT_EQ(busiest(wide, 5), 36u);  // 30 items of 4 planes + 2 priming, 6 per slot
  EXPECT_LT(busiest(narrow, 5), busiest(wide, 5));
  r.sms = 0;
  EXPECT_THROW(make_trace(r), std::invalid_argument);
}

TEST(SimTrace, Stencil3DComputesTheReference) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const bool wave = std::string(app) == "wave3d";
    for (apps::Axis axis : {apps::Axis::z, apps::Axis::y, apps::Axis::x}) {
      for (auto [x, y, z, gpus] : {std::tuple{16, 13, 18, 3}, std::tuple{13, 12, 11, 2}, std::tuple{12, 9, 10, 1}}) {
        apps::Stencil3DProblem p;
        p.n[0] = x;
        p.n[1] = y;
        p.n[2] = z;
        p.iters = 3;
        p.seed = 7;
        const std::vector<float> ref = wave ? apps::wave3d_reference(p) : apps::heat3d_reference(p);
        for (const char* layout : {"slabs", "remote", "grid", "replicas"}) {
          std::vector<float> got;
          make_trace(s3d_req(app, x, y, z, axis, gpus, 3, layout), &got);
          EXPECT_EQ(got, ref) << app << " " << x << "x" << y << "x" << z << " axis " << apps::axis_name(axis) << " on "
                              << gpus << " " << layout;
        }
      }
    }
  }
}

// rdl ("remote" layout): the step pushes nothing; each GPU loads its halo planes from its
// neighbours' boxes, R planes per side per iteration, as whole float4 rows along x (the kPlanes
// variant loads rows x = 0 .. nx - 1 of the n[O] - 2R interior rows: RdlRun::link_bytes_per_iter),
// and marches every owned plane once (no pushed-plane chunks), planned for the remote variant's
// residency (heat3d 4, wave3d 3 blocks per SM; a lone GPU has no neighbour: the plain 5 / 4).
TEST(SimTrace, Stencil3DRdlLoadsTheHaloPlanesFromTheNeighbours) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const int R = std::string(app) == "heat3d" ? 1 : 2;
    for (apps::Axis axis : {apps::Axis::z, apps::Axis::y}) {
      // 24 interior planes along the split: 8 per GPU, whole chunks (a chunk shorter than R
      // would make its neighbour chunk load a remote plane again, as the kernel does too)
      std::int64_t n[3] = {16, 20, 20};
      n[static_cast<int>(axis)] = 24 + 2 * R;
      for (int G : {1, 3}) {
        const Trace t = make_trace(s3d_req(app, n[0], n[1], n[2], axis, G, 2, "remote"));
        EXPECT_EQ(t.layout, "remote");
        const int M = static_cast<int>(axis), O = 3 - M;
        const std::int64_t side = R * n[0] * (n[O] - 2 * R) * 4;
        for (const auto& it : t.iterations)
          for (int g = 0; g < G; ++g) {
            const KernelTrace& k = it.kernels[g];
            EXPECT_EQ(k.blocks_per_sm, G == 1 ? (R == 1 ? 5u : 4u) : (R == 1 ? 4u : 3u)) << app << " gpu " << g;
            const Bytes by = count_bytes(t, k);
            for (int o = 0; o < G; ++o) {
              if (o == g) continue;
              const std::int64_t want = (o == g - 1 || o == g + 1) ? side : 0;
              EXPECT_EQ(by.load_from_gpu.count(o) ? by.load_from_gpu.at(o) : 0, want)
                  << app << " axis " << apps::axis_name(axis) << " gpu " << g << " <- " << o;
              EXPECT_EQ(by.store_to_gpu.count(o), 0u) << app << " gpu " << g << " stores into " << o;
            }
            // every owned plane marched once per (x tile, other-axis tile)
            const apps::Slab3D s = apps::slab3d(n, axis, R, G, g);
            const std::int64_t tiles = (n[O] - 2 * R + 7) / 8;  // one x tile: 16 / 4 cells < 32 threads
            std::int64_t marched = 0;
            for (const BlockTrace& b : k.blocks) marched += static_cast<std::int64_t>(b.serial_steps) - 2 * R;
            EXPECT_EQ(marched, tiles * s.count) << app << " gpu " << g;
          }
      }
    }
  }
  // Split along x: the halo columns' cells come from the neighbours (kColumns), nothing is pushed.
  const Trace t = make_trace(s3d_req("wave3d", 24, 12, 10, apps::Axis::x, 3, 1, "remote"));
  for (int g = 0; g < 3; ++g) {
    const Bytes by = count_bytes(t, t.iterations[0].kernels[g]);
    EXPECT_EQ(t.iterations[0].kernels[g].blocks_per_sm, 2u);
    for (int o = 0; o < 3; ++o) {
      if (o == g) continue;
      EXPECT_EQ(by.store_to_gpu.count(o), 0u);
      EXPECT_EQ(by.load_from_gpu.count(o) > 0, o == g - 1 || o == g + 1) << "gpu " << g << " <- " << o;
    }
  }
}

// um / um_hints ("grid"): each GPU marches its sub-box of the managed grid (the step kernel with
// the plain variant's residency, every owned plane once), stores only its owned cells (its span's
// pages along z), and reads R planes of each neighbour's span per iteration, whole float4 rows:
// the same bytes as rdl, from managed pages. Along y the planes interleave in one allocation:
// every store lands in the GPU's owned rows.
TEST(SimTrace, Stencil3DUmMarchesItsSubBoxOfTheGrid) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const int R = std::string(app) == "heat3d" ? 1 : 2;
    const int G = 3;
    for (apps::Axis axis : {apps::Axis::z, apps::Axis::y}) {
      std::int64_t n[3] = {16, 20, 20};
      n[static_cast<int>(axis)] = 24 + 2 * R;  // 8 planes per GPU: whole chunks
      const Trace t = make_trace(s3d_req(app, n[0], n[1], n[2], axis, G, 2, "grid"));
      const int M = static_cast<int>(axis), O = 3 - M;
      for (const auto& it : t.iterations)
        for (int g = 0; g < G; ++g) {
          const KernelTrace& k = it.kernels[g];
          EXPECT_EQ(k.name, R == 1 ? "heat3d_step" : "wave3d_step");
          EXPECT_EQ(k.blocks_per_sm, R == 1 ? 5u : 4u);
          const apps::Slab3D s = apps::slab3d(n, axis, R, G, g);
          std::int64_t marched = 0;
          for (const BlockTrace& b : k.blocks) marched += static_cast<std::int64_t>(b.serial_steps) - 2 * R;
          EXPECT_EQ(marched, (n[O] - 2 * R + 7) / 8 * s.count) << app << " gpu " << g;
          const Bytes by = count_bytes(t, k);
          if (axis == apps::Axis::z) {
            const std::int64_t side = R * n[0] * (n[O] - 2 * R) * 4;
            for (int o = 0; o < G; ++o) {
              if (o == g) continue;
              EXPECT_EQ(by.load_from_gpu.count(o) ? by.load_from_gpu.at(o) : 0, (o == g - 1 || o == g + 1) ? side : 0)
                  << app << " gpu " << g << " <- " << o;
              EXPECT_EQ(by.store_to_gpu.count(o), 0u) << app << " gpu " << g << " stores into " << o;
            }
          }
          // stores: exactly the owned cells, all inside the owned planes (y decoded from the address)
          std::int64_t stored = 0;
          for (const BlockTrace& b : k.blocks)
            for (const AccessRun& r : b.runs) {
              if (r.op != Op::store) continue;
              for (std::uint32_t i = 0; i < r.count; i += std::max<std::uint32_t>(1, r.count - 1)) {
                const std::uint64_t addr = r.addr + static_cast<std::uint64_t>(static_cast<std::int64_t>(i) * r.stride);
                const std::int64_t cell = static_cast<std::int64_t>((addr % (std::uint64_t{1} << 40)) / 4);
                const std::int64_t c[3] = {cell % n[0], cell / n[0] % n[1], cell / (n[0] * n[1])};
                EXPECT_GE(c[M], s.first) << app << " gpu " << g;
                EXPECT_LT(c[M], s.first + s.count) << app << " gpu " << g;
              }
              stored += std::int64_t{r.count} * r.bytes;
            }
          std::int64_t cells = 4 * s.count;
          for (int d = 0; d < 3; ++d)
            if (d != M) cells *= n[d] - 2 * R;
          EXPECT_EQ(stored, cells) << app << " gpu " << g;
        }
    }
  }
}

TEST(SimTrace, DeterministicAndSampled) {
  for (const TraceRequest& r0 : {jacobi_req(64, 40, 2, 3), jacobi_req(8, 2600, 2, 1),
                                 s3d_req("heat3d", 40, 36, 30, apps::Axis::z, 2, 2),
                                 s3d_req("wave3d", 32, 20, 24, apps::Axis::y, 2, 1, "grid")}) {
    const Trace a = make_trace(r0), b = make_trace(r0);
    expect_same(a, b);
    TraceRequest r = r0;
    r.sample = 0.3;
    const Trace s = make_trace(r);
    ASSERT_EQ(s.iterations.size(), a.iterations.size());
    for (size_t i = 0; i < s.iterations.size(); ++i)
      for (size_t k = 0; k < s.iterations[i].kernels.size(); ++k) {
        const KernelTrace& ks = s.iterations[i].kernels[k];
        EXPECT_EQ(ks.grid_blocks, a.iterations[i].kernels[k].grid_blocks);
        EXPECT_LE(ks.blocks.size(), ks.grid_blocks);
        // Whole chunks of 64 consecutive blocks (the last one may be short), about 0.3 of them.
        const std::size_t chunk = 64, chunks = (ks.grid_blocks + chunk - 1) / chunk;
        std::vector<int> in_chunk(chunks, 0);
        for (const auto& bl : ks.blocks) ++in_chunk[bl.block / chunk];
        for (std::size_t c = 0; c < chunks; ++c)
          if (in_chunk[c] > 0)
            EXPECT_EQ(std::size_t(in_chunk[c]), std::min(chunk, ks.grid_blocks - c * chunk)) << "chunk " << c;
        if (chunks >= 10) {
          EXPECT_LT(ks.blocks.size(), ks.grid_blocks);
          EXPECT_NEAR(static_cast<double>(ks.blocks.size()), 0.3 * ks.grid_blocks, 2.0 * chunk);
        }
        double w = 0;
        for (const auto& bl : ks.blocks) {
          w += bl.weight;
          // A sampled block records exactly what it records unsampled.
          const BlockTrace& full = a.iterations[i].kernels[k].blocks[bl.block];
          ASSERT_EQ(full.block, bl.block);
          ASSERT_EQ(full.runs.size(), bl.runs.size());
          for (size_t j = 0; j < bl.runs.size(); ++j) EXPECT_TRUE(same_run(full.runs[j], bl.runs[j]));
        }
        EXPECT_NEAR(w, ks.grid_blocks, 1e-9 * ks.grid_blocks);
      }
  }
  TraceRequest tiny = jacobi_req(8, 10, 2, 1);
  tiny.sample = 0.01;  // fewer than one chunk: chunk 0 (here: the whole kernel) is recorded
  const Trace t = make_trace(tiny);
  for (const auto& k : t.iterations[0].kernels) {
    ASSERT_EQ(k.blocks.size(), k.grid_blocks);
    EXPECT_EQ(k.blocks[0].weight, 1.0);
  }
}

// jacobi2d's row kernels keep their first and last chunk of rows when sampled, at weight 1: the
// edge rows carry the halo pushes (slabs) and the pages um migrates (grid). Before, a sampled
// 16384^2 trace on 2 GPUs lost one edge row and counted the other 16 times. The grid layout's
// scalar sweep is a rolled loop: ceil((nx - 2) / 256) rounds a block, 6 blocks an SM.
TEST(SimTrace, JacobiKeepsItsEdgeRowsWhenSampledAndTheGridSweepIsARolledLoop) {
  for (const char* layout : {"slabs", "grid"}) {
    TraceRequest r = jacobi_req(600, 2602, 2, 1, layout);
    r.sample = 0.1;
    const Trace t = make_trace(r);
    for (const KernelTrace& k : t.iterations.at(0).kernels) {
      ASSERT_EQ(k.grid_blocks, 1300u) << layout;
      ASSERT_LT(k.blocks.size(), 400u) << layout;
      EXPECT_EQ(k.blocks.front().block, 0u) << layout;
      EXPECT_EQ(k.blocks.back().block, 1299u) << layout;
      double w = 0;
      for (const BlockTrace& b : k.blocks) {
        w += b.weight;
        const bool edge = b.block < 64 || b.block >= 1280;  // chunk 0 and the last (short) chunk
        EXPECT_EQ(b.weight == 1.0, edge) << layout << " block " << b.block;
        EXPECT_EQ(b.chain_steps, std::string(layout) == "grid" ? 3u : 0u) << layout;
      }
      EXPECT_NEAR(w, 1300, 1e-9);
      EXPECT_EQ(k.chain_adds, std::string(layout) == "grid" ? 1 : 0) << layout;
      EXPECT_EQ(k.blocks_per_sm, std::string(layout) == "grid" ? 6u : 0u) << layout;
    }
  }
}

// A sampled 3D grid march (um, um_hints, gps) split along its march axis keeps the items of its
// first and last march chunk on a side with a neighbour, at weight 1: they read the neighbour's
// planes (the pages um faults over). The sampling rule picks among the other items, so some
// stand for them. Before, the rule over the whole grid skipped every halo item of wave3d 512^3
// on 2 GPUs (no page faulted), and kept items stood for the whole grid (weight 2).
TEST(SimTrace, Stencil3DGridMarchKeepsItsHaloChunksWhenSampled) {
  std::int64_t n[3] = {256, 68, 196};  // 2 x 8 = 16 tiles a chunk, 64 planes a GPU
  TraceRequest r = s3d_req("wave3d", n[0], n[1], n[2], apps::Axis::z, 3, 1, "grid");
  r.sample = 0.1;
  const Trace t = make_trace(r);
  for (int g = 0; g < 3; ++g) {
    const KernelTrace& k = t.iterations.at(0).kernels.at(g);
    const apps::Slab3D sl = apps::slab3d(n, apps::Axis::z, 2, 3, g);
    const std::uint64_t tiles01 = 16;
    const std::uint64_t lo = sl.has_lower() ? tiles01 : 0, hi = sl.has_upper() ? tiles01 : 0;
    ASSERT_GT(k.grid_blocks, lo + hi + 64) << g;  // more than one sampling chunk between the ends
    std::uint64_t kept = 0, rule = 0;
    double w = 0;
    for (const BlockTrace& b : k.blocks) {
      const bool halo = b.block < lo || b.block >= k.grid_blocks - hi;
      kept += halo;
      rule += !halo;
      if (halo) EXPECT_EQ(b.weight, 1.0) << "gpu " << g << " block " << b.block;
      else EXPECT_GT(b.weight, 1.0) << "gpu " << g << " block " << b.block;  // it stands for others
      w += b.weight;
    }
    EXPECT_EQ(kept, lo + hi) << g;
    EXPECT_GT(rule, 0u) << g;
    EXPECT_LT(rule, k.grid_blocks - lo - hi) << g;
    EXPECT_NEAR(w, k.grid_blocks, 1e-9 * k.grid_blocks) << g;
  }
}

// The replicas layout (gps_hw, finepack): one GPS array per buffer, a whole-grid replica per GPU
// (same size, one group per buffer), and every kernel loads and stores only its own GPU's replica.
void expect_own_replicas_only(const Trace& t, int buffers) {
  const std::string what = t.app + " " + t.problem + " on " + std::to_string(t.gpus);
  std::map<int, std::vector<const Allocation*>> groups;
  for (const auto& a : t.allocations)
    if (a.kind == MemKind::replica) groups[a.group].push_back(&a);
  ASSERT_EQ(groups.size(), static_cast<size_t>(buffers)) << what;
  for (const auto& [grp, v] : groups) {
    ASSERT_EQ(v.size(), static_cast<size_t>(t.gpus)) << what;
    for (int g = 0; g < t.gpus; ++g) {
      EXPECT_EQ(v[g]->gpu, g) << what;
      EXPECT_EQ(v[g]->bytes, v[0]->bytes) << what;
    }
  }
  std::int64_t stores = 0;
  for (const auto& it : t.iterations)
    for (const auto& k : it.kernels)
      for (const auto& b : k.blocks)
        for (const auto& r : b.runs) {
          const std::uint64_t last = r.addr + static_cast<std::uint64_t>(static_cast<std::int64_t>(r.count - 1) * r.stride);
          const int a = allocation_of(t, r.addr);
          ASSERT_GE(a, 0) << what;
          EXPECT_EQ(a, allocation_of(t, last)) << what << ": a run crosses allocations";
          const Allocation& al = t.allocations[static_cast<size_t>(a)];
          EXPECT_EQ(al.gpu, k.gpu) << what << ": GPU " << k.gpu << " touches " << al.name;
          if (r.op == Op::atomic) {
            EXPECT_EQ(al.kind, MemKind::device) << what;  // jacobi2d's norm word
          } else {
            EXPECT_EQ(al.kind, MemKind::replica) << what << ": " << al.name;
          }
          if (r.op == Op::store) stores += r.count;
        }
  EXPECT_GT(stores, 0) << what;
}

TEST(SimTrace, ReplicaTracesLoadAndStoreOnlyTheOwnReplica) {
  expect_own_replicas_only(make_trace(jacobi_req(64, 34, 2, 3, "replicas")), 2);
  expect_own_replicas_only(make_trace(jacobi_req(30, 21, 3, 2, "replicas")), 2);
  expect_own_replicas_only(make_trace(s3d_req("heat3d", 16, 12, 20, apps::Axis::z, 4, 2, "replicas")), 2);
  expect_own_replicas_only(make_trace(s3d_req("wave3d", 16, 20, 12, apps::Axis::y, 2, 2, "replicas")), 2);
  TraceRequest sc;
  sc.app = "scatter";
  sc.problem.n[0] = 5000;
  sc.problem.iters = 2;
  sc.gpus = 4;
  sc.layout = "replicas";
  expect_own_replicas_only(make_trace(sc), 2);
  // The grid layout of the same problem has no replicas at all.
  for (const auto& a : make_trace(jacobi_req(64, 34, 2, 1, "grid")).allocations) EXPECT_NE(a.kind, MemKind::replica);
}

TraceRequest scatter_req(std::int64_t n, int gpus, int iters, const std::string& layout) {
  TraceRequest r;
  r.app = "scatter";
  r.problem.n[0] = n;
  r.problem.iters = iters;
  r.problem.seed = 3;
  r.gpus = gpus;
  r.layout = layout;
  return r;
}

// scatter: every thread loads its own element and stores one 4-B value; exactly every 4th
// thread's (25 %) target lies in another GPU's partition, spread over all the other GPUs; the
// three layouts compute the same values; deterministic for a seed, different across seeds.
TEST(SimTrace, ScatterStoresAQuarterToOtherGpusPartitions) {
  const std::int64_t n = 10007;  // not a multiple of 4 GPUs
  const int G = 4;
  const Trace t = make_trace(scatter_req(n, G, 2, "slabs"));
  EXPECT_EQ(t.app, "scatter");
  EXPECT_EQ(t.problem, "10007");
  ASSERT_EQ(t.iterations.size(), 2u);
  for (const auto& it : t.iterations) {
    ASSERT_EQ(it.kernels.size(), static_cast<size_t>(G));
    for (const auto& k : it.kernels) {
      const std::int64_t count = n * (k.gpu + 1) / G - n * k.gpu / G;
      const Bytes b = count_bytes(t, k);
      EXPECT_EQ(b.load, 4 * count);
      EXPECT_EQ(b.store, 4 * count);
      EXPECT_EQ(k.grid_blocks, static_cast<std::uint32_t>((count + 255) / 256));
      std::int64_t remote = 0;
      for (const auto& [dst, bytes] : b.store_to_gpu) {
        if (dst != k.gpu) {
          remote += bytes;
          EXPECT_GT(bytes, 4 * count / 4 / (G - 1) / 2) << "GPU " << k.gpu << " -> " << dst;  // every other GPU gets some
        }
      }
      EXPECT_EQ(b.store_to_gpu.size(), static_cast<size_t>(G));
      EXPECT_EQ(remote, 4 * ((count + 3) / 4)) << "GPU " << k.gpu;  // threads 0, 4, 8, ...
      for (const auto& bl : k.blocks)
        for (const auto& r : bl.runs) EXPECT_EQ(r.bytes, 4);
    }
  }
  std::vector<float> v_slabs, v_grid, v_repl;
  make_trace(scatter_req(n, G, 3, "slabs"), &v_slabs);
  make_trace(scatter_req(n, G, 3, "grid"), &v_grid);
  make_trace(scatter_req(n, G, 3, "replicas"), &v_repl);
  ASSERT_EQ(v_slabs.size(), static_cast<size_t>(n));
  EXPECT_EQ(v_slabs, v_grid);
  EXPECT_EQ(v_slabs, v_repl);
  expect_same(t, make_trace(scatter_req(n, G, 2, "slabs")));
  // rdl's "remote" layout replays the slabs trace: the same allocations and runs, so its remote
  // stores land in the other GPUs' partitions (they once fell in no allocation: rdl on scatter
  // moved nothing over the link).
  Trace remote = make_trace(scatter_req(n, G, 2, "remote"));
  EXPECT_EQ(remote.layout, "remote");
  remote.layout = "slabs";
  expect_same(t, remote);
  TraceRequest other = scatter_req(n, G, 2, "slabs");
  other.problem.seed = 4;
  EXPECT_NE(make_trace(other).iterations[0].kernels[0].blocks[0].runs[1].addr,
            t.iterations[0].kernels[0].blocks[0].runs[1].addr);
  // One GPU: nothing is remote.
  const Trace one = make_trace(scatter_req(1000, 1, 1, "slabs"));
  const Bytes b1 = count_bytes(one, one.iterations[0].kernels[0]);
  EXPECT_EQ(b1.store_to_gpu.size(), 1u);
  EXPECT_EQ(b1.store, 4000);
  EXPECT_THROW(make_trace(scatter_req(3, 4, 1, "slabs")), std::invalid_argument);  // fewer elements than GPUs
}

TEST(SimTrace, RejectsBadRequests) {
  TraceRequest r = jacobi_req(8, 10, 2, 1);
  r.app = "lbm";
  EXPECT_THROW(make_trace(r), std::invalid_argument);
  r = jacobi_req(8, 10, 2, 1);
  r.layout = "tiles";
  EXPECT_THROW(make_trace(r), std::invalid_argument);
  r = jacobi_req(8, 10, 9, 1);  // 9 GPUs, 8 interior rows
  EXPECT_THROW(make_trace(r), std::invalid_argument);
  r = jacobi_req(8, 10, 2, 1);
  r.sample = 0;
  EXPECT_THROW(make_trace(r), std::invalid_argument);
}

// gps_hw / finepack model GPS hardware under the application's own kernel (GPS paper §6: the
// paradigms differ only in allocations and transfers, the partitioning is the same): the 3D
// replicas trace runs the same marching step, with the same plan, as the grid trace (um,
// um_hints), only on the GPU's own replica. Until 2026-11-22 it ran the bench's software-GPS
// thread-per-cell sweep, 30 % slower on one V100 (243.83 against 186.89 us, heat3d 256^3).
TEST(SimTrace, ReplicaTracesRunTheGridLayoutsMarchingStep) {
  for (const char* app : {"heat3d", "wave3d"}) {
    const Trace g = make_trace(s3d_req(app, 16, 12, 24, apps::Axis::z, 2, 2, "grid"));
    const Trace r = make_trace(s3d_req(app, 16, 12, 24, apps::Axis::z, 2, 2, "replicas"));
    ASSERT_EQ(g.iterations.size(), r.iterations.size());
    for (std::size_t i = 0; i < g.iterations.size(); ++i) {
      ASSERT_EQ(g.iterations[i].kernels.size(), r.iterations[i].kernels.size());
      for (std::size_t k = 0; k < g.iterations[i].kernels.size(); ++k) {
        const KernelTrace &a = g.iterations[i].kernels[k], &b = r.iterations[i].kernels[k];
        EXPECT_EQ(a.name, b.name) << app;
        EXPECT_EQ(a.grid_blocks, b.grid_blocks) << app;
        EXPECT_EQ(a.blocks_per_sm, b.blocks_per_sm) << app;
        ASSERT_EQ(a.blocks.size(), b.blocks.size()) << app;
        for (std::size_t j = 0; j < a.blocks.size(); ++j) {
          EXPECT_EQ(a.blocks[j].serial_steps, b.blocks[j].serial_steps) << app;
          EXPECT_GT(b.blocks[j].serial_steps, 0u) << app;
          ASSERT_EQ(a.blocks[j].runs.size(), b.blocks[j].runs.size()) << app;
        }
      }
    }
  }
}
