// Traces from an instrumented CPU execution of the stencil apps (sim/trace_gen.hpp).
//
// Every app runs its real point update (apps/stencil/stencil_math.hpp) over real data, the
// initial values of the CPU references (apps/stencil/reference.cpp) and of the GPU buffers
// (stencil3d_slabs.hpp), loading and storing through an accessor that records each access. The
// loop nests mirror the GPU kernels' thread mapping (one thread's work at a time, in thread
// order), and the recorder coalesces the accesses of one block per *instruction slot*: a slot is
// one load or store instruction of the kernel; the accesses of consecutive threads at one slot
// extend one AccessRun while they keep its op, size and stride, the way a warp's (and, across
// warps, a block's) instruction coalesces. A run breaks where the stride breaks (a new row).
//
// Arithmetic counted per updated cell (BlockTrace::flops):
//   jacobi_point  4 = 3 adds + 1 mul; the norm adds 3 (sub, mul, add) on iterations that take it.
//   heat_point    9 = 5 adds (neighbour sums) + 1 mul (6c) + 1 sub + 1 mul (alpha) + 1 add (c +).
//   wave3d       27 = 3 x wave_axis (7: 2 adds + 3 muls + 2 adds) + wave_point (6: mul, sub, 2 adds,
//                mul, add).
// Address space: slabs: GPU g's buffer b at (g << 40) + b * 2^37, its norm word at
// (g << 40) + 2 * 2^37; grid: the managed buffer b at 2^48 + b * 2^40 (split into per-GPU-span
// allocations where the split axis is the slowest one), norms as for slabs; replicas: GPU g's
// replica of buffer b (the whole grid) at 2^47 + (g << 40) + b * 2^37 (group b).
#include "sim/trace_gen.hpp"
#include "sim/trace_ct.hpp"
#include "sim/trace_graph.hpp"  // pagerank, sssp
#include "sim/trace_addr.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"  // sub_box
#include "apps/stencil3d/stencil3d_plan.hpp"
#include "common/splitmix.hpp"

namespace gpsm::sim {

namespace {

using i64 = std::int64_t;
using u64 = std::uint64_t;

using namespace trace_detail;  // bad, the address scheme, sampled (trace_addr.hpp)

u64 norm_addr(int g) { return (static_cast<u64>(g) << 40) + 2 * kBufSpan; }

// The whole-grid layouts: "grid" (one managed array per buffer) or "replicas" (a GPS array per
// buffer: every GPU holds a whole replica and loads and stores only its own, as src/runtime's
// GPS arrays; the values are one array since the replicas agree at every iteration's end).
bool replicas_layout(const TraceRequest& r) { return r.layout == "replicas"; }
void add_replicas(Trace& t, int G, int b, u64 bytes) {
  for (int g = 0; g < G; ++g)
    t.allocations.push_back({"gps.buf" + std::to_string(b) + ".gpu" + std::to_string(g), MemKind::replica, g, b,
                             replica_base(g, b), bytes});
}

constexpr int kJacobiFlops = 4, kNormFlops = 3, kHeatFlops = 9, kWaveFlops = 27;

// ---- recorder ------------------------------------------------------------------------------

constexpr int kSlots = 32;

class Recorder {
 public:
  // Start recording into b (nullptr: the block is not sampled, accesses are not recorded).
  void begin(BlockTrace* b) {
    b_ = b;
    for (auto& o : open_) o = -1;
  }
  void access(int slot, Op op, std::uint8_t bytes, u64 addr) {
    if (b_ == nullptr) return;
    const int k = open_[slot];
    if (k >= 0) {
      AccessRun& r = b_->runs[static_cast<std::size_t>(k)];
      if (r.op == op && r.bytes == bytes) {
        if (r.count == 1) {
          r.stride = static_cast<std::int64_t>(addr - r.addr);
          r.count = 2;
          return;
        }
        if (addr == r.addr + static_cast<u64>(static_cast<i64>(r.count) * r.stride) && r.count < UINT32_MAX) {
          ++r.count;
          return;
        }
      }
    }
    open_[slot] = static_cast<int>(b_->runs.size());
    AccessRun r;
    r.op = op;
    r.bytes = bytes;
    r.count = 1;
    r.addr = addr;
    r.stride = bytes;
    b_->runs.push_back(r);
  }
  // The recorded block's chain (BlockTrace::chain_steps); nothing for an unrecorded one.
  void chain(std::uint32_t steps) {
    if (b_ != nullptr) b_->chain_steps = steps;
  }

 private:
  BlockTrace* b_ = nullptr;
  int open_[kSlots];
};

// A buffer of floats at a virtual base address, read and written through the recorder.
struct Buf {
  u64 base = 0;
  std::vector<float> v;
  u64 addr(i64 i) const { return base + static_cast<u64>(i) * 4; }
};

struct Acc {
  Recorder& rec;
  float ld(int slot, const Buf& b, i64 i) const {
    rec.access(slot, Op::load, 4, b.addr(i));
    return b.v[static_cast<std::size_t>(i)];
  }
  template <int V>
  void ldv(int slot, const Buf& b, i64 i, float (&d)[V]) const {
    rec.access(slot, Op::load, static_cast<std::uint8_t>(4 * V), b.addr(i));
    for (int k = 0; k < V; ++k) d[k] = b.v[static_cast<std::size_t>(i + k)];
  }
  void st(int slot, Buf& b, i64 i, float x) const {
    rec.access(slot, Op::store, 4, b.addr(i));
    b.v[static_cast<std::size_t>(i)] = x;
  }
  template <int V>
  void stv(int slot, Buf& b, i64 i, const float (&x)[V]) const {
    rec.access(slot, Op::store, static_cast<std::uint8_t>(4 * V), b.addr(i));
    for (int k = 0; k < V; ++k) b.v[static_cast<std::size_t>(i + k)] = x[k];
  }
  void atomic(int slot, u64 addr) const { rec.access(slot, Op::atomic, 4, addr); }
};

// Runs body(block) -> flops for blocks 0 .. grid-1 (every block computes; sampled ones record),
// and sets the weights of the recorded blocks: grid / recorded, or with `keep` (jacobi2d's edge
// rows, the 3D march's halo chunks) the blocks at either end recorded always, at weight 1
// (pick_block, set_weights).
template <class F>
void run_kernel(KernelTrace& kt, u64 grid, double sample, Recorder& rec, F&& body, Keep keep = {}) {
  if (grid > UINT32_MAX) bad("kernel " + kt.name + " has more than 2^32 blocks");
  kt.grid_blocks = static_cast<std::uint32_t>(grid);
  std::vector<char> boundary;  // which recorded blocks are kept ends
  for (u64 b = 0; b < grid; ++b) {
    const Pick pick = pick_block(b, grid, sample, keep);
    const bool rec_it = pick != Pick::no;
    if (rec_it) {
      kt.blocks.emplace_back();
      kt.blocks.back().block = static_cast<std::uint32_t>(b);
      boundary.push_back(pick == Pick::boundary);
      rec.begin(&kt.blocks.back());
    } else {
      rec.begin(nullptr);
    }
    const double flops = body(b);
    if (rec_it) kt.blocks.back().flops = flops;
  }
  rec.begin(nullptr);
  set_weights(kt, boundary);
}

std::string name(const char* prefix, int g, const char* what) {
  return std::string(prefix) + std::to_string(g) + "." + what;
}

// ---- Jacobi 2D -----------------------------------------------------------------------------

std::vector<float> jacobi_initial_rows(i64 nx, i64 rows, const std::vector<i64>& global_row, i64 ny) {
  std::vector<float> a(static_cast<std::size_t>(nx * rows), 0.0f);
  for (i64 r = 0; r < rows; ++r) {
    const float v = apps::jacobi_boundary(global_row[static_cast<std::size_t>(r)], ny);
    a[static_cast<std::size_t>(r * nx)] = v;
    a[static_cast<std::size_t>(r * nx + nx - 1)] = v;
  }
  return a;
}

// Slot numbers of the Jacobi sweeps.
enum JSlot { jC, jN, jS, jW, jE, jO, jPa, jPb, jNorm, jCs };

// One row of a slab (jacobi_kernels.cu sweep_row): rows lr - 1, lr, lr + 1 of `in`, row lr of
// `out`, and the pushes (push rows `pa_row` of pa, `pb_row` of pb) when set. Returns the flops.
double jacobi_slab_row(const Acc& m, const Buf& in, Buf& out, i64 nx, i64 lr, Buf* pa, i64 pa_row, Buf* pb,
                       i64 pb_row, bool norm, u64 norm_at) {
  const i64 c_row = lr * nx, n_row = c_row - nx, s_row = c_row + nx;
  if (nx % 4 == 0) {
    const i64 nv = nx / 4;
    for (i64 j = 0; j < nv; ++j) {
      float c[4], n[4], s[4];
      m.ldv<4>(jC, in, c_row + 4 * j, c);
      m.ldv<4>(jN, in, n_row + 4 * j, n);
      m.ldv<4>(jS, in, s_row + 4 * j, s);
      const float w = m.ld(jW, in, c_row + 4 * j - 1);  // j == 0: the previous row's last cell (unused)
      const float e = m.ld(jE, in, c_row + 4 * j + 4);  // j == nv - 1: the next row's first (unused)
      float v[4];
      v[0] = j == 0 ? c[0] : apps::jacobi_point(c[1], w, s[0], n[0]);
      v[1] = apps::jacobi_point(c[2], c[0], s[1], n[1]);
      v[2] = apps::jacobi_point(c[3], c[1], s[2], n[2]);
      v[3] = j == nv - 1 ? c[3] : apps::jacobi_point(e, c[2], s[3], n[3]);
      m.stv<4>(jO, out, c_row + 4 * j, v);
      if (pa != nullptr) m.stv<4>(jPa, *pa, pa_row * nx + 4 * j, v);
      if (pb != nullptr) m.stv<4>(jPb, *pb, pb_row * nx + 4 * j, v);
    }
  } else {
    for (i64 ix = 1; ix < nx - 1; ++ix) {
      m.ld(jCs, in, c_row + ix);  // the centre, for the norm's residue
      const float e = m.ld(jE, in, c_row + ix + 1);
      const float w = m.ld(jW, in, c_row + ix - 1);
      const float s = m.ld(jS, in, s_row + ix);
      const float n = m.ld(jN, in, n_row + ix);
      const float v = apps::jacobi_point(e, w, s, n);
      m.st(jO, out, c_row + ix, v);
      if (pa != nullptr) m.st(jPa, *pa, pa_row * nx + ix, v);
      if (pb != nullptr) m.st(jPb, *pb, pb_row * nx + ix, v);
    }
  }
  if (norm) m.atomic(jNorm, norm_at);  // block_add: one atomic per block
  return static_cast<double>(nx - 2) * (kJacobiFlops + (norm ? kNormFlops : 0));
}

Trace jacobi_slabs(const TraceRequest& r, std::vector<float>* result) {
  const i64 nx = r.problem.n[0], ny = r.problem.n[1];
  const int G = r.gpus;
  Trace t;
  std::vector<apps::JacobiSlab> s;
  std::vector<std::array<Buf, 2>> buf(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) {
    s.push_back(apps::jacobi_slab(nx, ny, G, g));
    const i64 rows = s[g].local_rows();
    std::vector<i64> grow(static_cast<std::size_t>(rows));
    for (i64 lr = 0; lr < rows; ++lr) grow[static_cast<std::size_t>(lr)] = s[g].global_row(lr);
    const std::vector<float> init = jacobi_initial_rows(nx, rows, grow, ny);
    for (int b = 0; b < 2; ++b) {
      buf[g][b].base = slab_base(g, b);
      buf[g][b].v = init;
      t.allocations.push_back({name("gpu", g, b == 0 ? "buf0" : "buf1"), MemKind::device, g, -1, slab_base(g, b),
                               static_cast<u64>(rows * nx * 4)});
    }
    t.allocations.push_back({name("gpu", g, "norm"), MemKind::device, g, -1, norm_addr(g), 4});
  }
  Recorder rec;
  const Acc m{rec};
  for (int it = 0; it < r.problem.iters; ++it) {
    const int ib = it % 2, ob = 1 - ib;
    const bool norm = it % r.problem.nccheck == 0;
    IterationTrace iter;
    iter.host_sync = norm;  // the host-driven runs read the norm back and wait for it
    for (int g = 0; g < G; ++g) {
      KernelTrace kt;
      kt.name = "jacobi_sweep";
      kt.gpu = g;
      kt.threads_per_block = 256;
      const apps::JacobiSlab& sg = s[g];
      // Row 1 goes to the top neighbour's bottom halo (its local row chunk + 1), row chunk to the
      // bottom neighbour's top halo (its local row 0); periodic: rank 0's top is the last rank.
      run_kernel(kt, static_cast<u64>(sg.chunk), r.sample, rec, [&](u64 blk) {
        const i64 lr = 1 + static_cast<i64>(blk);
        Buf* pa = lr == 1 ? &buf[sg.top][ob] : nullptr;
        Buf* pb = lr == sg.chunk ? &buf[sg.bottom][ob] : nullptr;
        return jacobi_slab_row(m, buf[g][ib], buf[g][ob], nx, lr, pa, s[sg.top].chunk + 1, pb, 0, norm, norm_addr(g));
      }, end_chunks(static_cast<u64>(sg.chunk)));
      iter.kernels.push_back(std::move(kt));
    }
    t.iterations.push_back(std::move(iter));
  }
  if (result != nullptr) {
    const int fb = r.problem.iters % 2;
    result->assign(static_cast<std::size_t>(nx * ny), 0.0f);
    for (int g = 0; g < G; ++g)
      for (i64 lr = 1; lr <= s[g].chunk; ++lr)
        std::copy_n(buf[g][fb].v.begin() + lr * nx, nx, result->begin() + s[g].global_row(lr) * nx);
    std::copy_n(result->begin() + (ny - 2) * nx, nx, result->begin());  // the reference's periodic rows
    std::copy_n(result->begin() + nx, nx, result->begin() + (ny - 1) * nx);
  }
  return t;
}

// um: one managed ny x nx grid per buffer; rank g's kernel updates its rows, wrapping the
// periodic halo by index (jacobi_kernels.cu wrap_sweep_kernel: scalar loads, a block per row).
Trace jacobi_grid(const TraceRequest& r, std::vector<float>* result) {
  const i64 nx = r.problem.n[0], ny = r.problem.n[1];
  const int G = r.gpus;
  Trace t;
  std::vector<apps::JacobiSlab> s;
  for (int g = 0; g < G; ++g) s.push_back(apps::jacobi_slab(nx, ny, G, g));
  std::vector<i64> grow(static_cast<std::size_t>(ny));
  for (i64 y = 0; y < ny; ++y) grow[static_cast<std::size_t>(y)] = y;
  std::array<Buf, 2> a;
  const bool repl = replicas_layout(r);
  for (int b = 0; b < 2; ++b) {
    a[b].base = grid_base(b);
    a[b].v = jacobi_initial_rows(nx, ny, grow, ny);
    if (repl) {
      add_replicas(t, G, b, static_cast<u64>(nx * ny * 4));
      continue;
    }
    for (int g = 0; g < G; ++g) {
      const i64 r0 = g == 0 ? 0 : s[g].first_row, r1 = g == G - 1 ? ny : s[g].first_row + s[g].chunk;
      t.allocations.push_back({std::string("grid.buf") + std::to_string(b) + ".gpu" + std::to_string(g),
                               MemKind::managed, g, -1, a[b].addr(r0 * nx), static_cast<u64>((r1 - r0) * nx * 4)});
    }
  }
  for (int g = 0; g < G; ++g) t.allocations.push_back({name("gpu", g, "norm"), MemKind::device, g, -1, norm_addr(g), 4});
  Recorder rec;
  const Acc m{rec};
  for (int it = 0; it < r.problem.iters; ++it) {
    const Buf& in = a[it % 2];
    Buf& out = a[1 - it % 2];
    const bool norm = it % r.problem.nccheck == 0;
    IterationTrace iter;
    iter.host_sync = norm;  // the host-driven runs read the norm back and wait for it
    for (int g = 0; g < G; ++g) {
      if (repl)  // GPU g's kernel reads and writes its own replicas
        for (int b = 0; b < 2; ++b) a[b].base = replica_base(g, b);
      KernelTrace kt;
      kt.name = repl ? "jacobi_gps_sweep" : "jacobi_grid_sweep";
      kt.gpu = g;
      kt.threads_per_block = 256;
      // The loop over a row's cells is rolled (one cell a thread a round): each thread's rounds
      // are a chain whose latencies add to the kernel's bandwidth time (KernelTrace::chain_adds).
      // PlainRows' sweep: 34 registers, 6 blocks an SM (ncu on one H200, 7d21f09).
      kt.chain_adds = 1;
      if (!repl) kt.blocks_per_sm = 6;
      const auto rounds = static_cast<std::uint32_t>((nx - 2 + kt.threads_per_block - 1) / kt.threads_per_block);
      run_kernel(kt, static_cast<u64>(s[g].chunk), r.sample, rec, [&](u64 blk) {
        const i64 iy = s[g].first_row + static_cast<i64>(blk);
        const i64 north = iy == 1 ? ny - 2 : iy - 1, south = iy == ny - 2 ? 1 : iy + 1;
        for (i64 ix = 1; ix < nx - 1; ++ix) {
          const i64 i = iy * nx + ix;
          m.ld(jCs, in, i);
          const float e = m.ld(jE, in, i + 1), w = m.ld(jW, in, i - 1);
          const float so = m.ld(jS, in, south * nx + ix), no = m.ld(jN, in, north * nx + ix);
          m.st(jO, out, i, apps::jacobi_point(e, w, so, no));
        }
        if (norm) m.atomic(jNorm, norm_addr(g));
        rec.chain(rounds);
        return static_cast<double>(nx - 2) * (kJacobiFlops + (norm ? kNormFlops : 0));
      }, end_chunks(static_cast<u64>(s[g].chunk)));
      iter.kernels.push_back(std::move(kt));
    }
    t.iterations.push_back(std::move(iter));
  }
  if (result != nullptr) {
    *result = a[r.problem.iters % 2].v;
    // The reference's periodic copy (never done by the index-wrapping kernel).
    std::copy_n(result->begin() + (ny - 2) * nx, nx, result->begin());
    std::copy_n(result->begin() + nx, nx, result->begin() + (ny - 1) * nx);
  }
  return t;
}

// ---- heat3d / wave3d -----------------------------------------------------------------------

constexpr int kTx = apps::stencil3d::kStepTx, kTy = apps::stencil3d::kStepTy;  // the step block
// The 3D step kernels' residency on an H100/H200 (256 threads a block, 64K registers an SM,
// registers allocated per warp in units of 256). The marching step since e7d5ccc: ptxas sm_90 gives
// heat3d's float4 step 48 registers (8 warps x 1536 = 12288 a block: 5 blocks) and wave3d's 60
// (rounded to 64: 16384 a block: 4 blocks); before, ncu at 4a1d8ee405f6 showed 64 and 75 registers,
// 4 and 3 blocks. The plan's target is the request's SMs x these, as the launcher's is (V100 has
// the same 64K registers and 2048 threads per SM, so these counts are kept there too).
constexpr int kHeatBlocksPerSm = 5, kWaveBlocksPerSm = 4;
// rdl's remote variants of the float4 step (stencil3d_kernels.cu kPlanes / kColumns, ptxas sm_90
// at 46aaba6): kPlanes heat3d 56 (march along z) / 54 (along y) registers: 14336 a block, 4
// blocks; wave3d 72: 18432, 3 blocks. kColumns (split along x) heat3d 54: 4; wave3d 87 (88):
// 22528, 2 blocks. The launcher plans for the variant it launches (resident_blocks(fn)).
constexpr int kHeatPlanesBlocksPerSm = 4, kWavePlanesBlocksPerSm = 3;
constexpr int kHeatColumnsBlocksPerSm = 4, kWaveColumnsBlocksPerSm = 2;

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

// The GPU kernels' own plan (apps/stencil3d/stencil3d_plan.hpp): the same work items.
using apps::stencil3d::Box;
using apps::stencil3d::item_tiles;
using apps::stencil3d::make_plan;
using apps::stencil3d::march_axis;
using apps::stencil3d::Plan;

// Peer stores into a neighbour's buffer (stencil3d_slabs_cuda.cpp push_between).
struct Push {
  Buf* dst = nullptr;
  i64 sy = 0, sz = 0, shift = 0;
};

// Where a step loads the cells of the split axis outside the box's owned planes (rdl,
// stencil3d_plan.hpp Remote): a neighbour's buffer, its strides and the split-coordinate shift.
struct Src {
  const Buf* buf = nullptr;
  i64 sy = 0, sz = 0, shift = 0;
};

// One launch of the step on one GPU (stencil3d_kernels.hpp Step): `in` / `out` and the cell
// offset of the box's local (0, 0, 0) in them (um: a sub-box of the managed grid), the row and
// plane strides, the pushes (p2p_inline and the per-box paradigms) and the remote sources (rdl).
struct StepArgs {
  const Buf* in = nullptr;
  Buf* out = nullptr;
  i64 off = 0, sy = 0, sz = 0;
  Push lower, upper;
  Src from_lower, from_upper;
  bool sources() const { return from_lower.buf != nullptr || from_upper.buf != nullptr; }
};

// Slots of the 3D step: queue planes (prologue), the new plane, prev, rows along O, edges,
// stores, edge-lane stores, pushes, remote x cells (rdl split along x).
enum SSlot { sQ0 = 0, sQn = 5, sPrev0, sPn, sLo0, sHi0 = sLo0 + 2, sW = sHi0 + 2, sE = sW + 2, sO = sE + 2, sOe,
             sP0, sP0e, sP1, sP1e, sX0, sX1, sRx0, sRx1 };
static_assert(sRx1 < kSlots, "slots");

// One work item (a block) of the step: stencil3d_kernels.cu run_item, thread by thread (a thread
// is one column of V cells at one coordinate of O, marching along M), loads through the recorder.
// Per-thread state (the register queue) lives in arrays over the block's 256 threads. With remote
// sources (rdl) the planes of the march axis outside the owned ones come from the neighbours'
// boxes (kPlanes: split along M), or the x neighbours of a row's edge cells in the halo columns
// (kColumns: split along x), as the kernel's remote variants load them.
template <bool kWave, int V>
double run_item(const Acc& m, const StepArgs& a, const Box& box, const Plan& p, i64 w) {
  constexpr int R = kWave ? 2 : 1;
  const Buf& in = *a.in;
  Buf& out = *a.out;
  const Push& lower = a.lower;
  const Push& upper = a.upper;
  const int M = march_axis(box), O = 3 - M;
  i64 xt, ot, ch;
  item_tiles(p, w, xt, ot, ch);
  i64 m0, m1;  // march coordinates [m0, m1)
  apps::stencil3d::chunk_range(p, box.count, R, ch, m0, m1);
  const i64 nx = box.n[0];
  const i64 stride[3] = {1, a.sy, a.sz};
  const i64 sm = stride[M], so = stride[O];
  const bool has_lo = a.from_lower.buf != nullptr, has_up = a.from_upper.buf != nullptr;
  const bool sources = has_lo || has_up;
  const bool k_planes = sources && box.axis == M, k_columns = sources && box.axis == 0;
  const apps::stencil3d::RemotePlanes rp =
      k_planes ? apps::stencil3d::remote_planes(box, M, R, has_lo, has_up) : apps::stencil3d::RemotePlanes{};
  const apps::stencil3d::RemotePlanes rx =
      k_columns ? apps::stencil3d::remote_planes(box, 0, R, has_lo, has_up) : apps::stencil3d::RemotePlanes{};
  // The sources' strides and shifts as the kernel's Remote (its pointer unused: the buffers are Bufs).
  const apps::stencil3d::Remote lower_at{nullptr, a.from_lower.sy, a.from_lower.sz, a.from_lower.shift};
  const apps::stencil3d::Remote upper_at{nullptr, a.from_upper.sy, a.from_upper.sz, a.from_upper.shift};
  struct Thread {
    bool active;
    i64 x, co, c, m;  // c: index of the current centre in `in` / `out`; m: its march coordinate
    bool edge, x_push;
    float q[2 * R + 1][V], qn[V], pn[V];
  };
  std::array<Thread, kTx * kTy> th;
  // The column's V cells of plane mm = t.m + d along M: from `in`, or (kPlanes) a neighbour's box.
  const auto load_plane = [&](int slot, const Thread& t, int d, float (&dst)[V]) {
    const i64 mm = t.m + d;
    if (k_planes && mm < rp.lo)
      return m.ldv<V>(slot, *a.from_lower.buf, apps::stencil3d::remote_index(lower_at, M, t.x, t.co, mm), dst);
    if (k_planes && mm >= rp.hi)
      return m.ldv<V>(slot, *a.from_upper.buf, apps::stencil3d::remote_index(upper_at, M, t.x, t.co, mm), dst);
    m.ldv<V>(slot, in, t.c + d * sm, dst);
  };
  // kColumns: cell xx of the centre row from a neighbour's box where xx is a halo column.
  const auto xcell_at = [&](const Thread& t, i64 xx, float own) -> float {
    const i64 cy = M == 1 ? t.m : t.co, cz = M == 2 ? t.m : t.co;
    if (xx < rx.lo) return m.ld(sRx0, *a.from_lower.buf, apps::stencil3d::remote_x_index(lower_at, xx, cy, cz));
    if (xx >= rx.hi) return m.ld(sRx1, *a.from_upper.buf, apps::stencil3d::remote_x_index(upper_at, xx, cy, cz));
    return own;
  };
  auto lane_ok = [&](i64 x, int k) { return x + k >= R && x + k < nx - R; };
  // Prologue, in thread order per instruction.
  for (int ty = 0; ty < kTy; ++ty)
    for (int tx = 0; tx < kTx; ++tx) {
      Thread& t = th[static_cast<std::size_t>(ty * kTx + tx)];
      const i64 col = xt * kTx + tx;
      t.co = R + ot * kTy + ty;
      t.active = col < p.cols && t.co < box.n[O] - R;
      if (!t.active) continue;
      t.x = p.x0 + col * V;
      t.m = m0;
      t.c = a.off + t.x + t.co * so + m0 * sm;
      t.edge = V == 4 && (col == 0 || col == p.cols - 1);
      t.x_push = box.axis == 0 && (t.x < 2 * R || t.x + V > box.count);
      for (int d = 0; d < 2 * R; ++d) load_plane(sQ0 + d, t, d - R, t.q[d + 1]);
      load_plane(sQn, t, R, t.qn);
      if (kWave) m.ldv<V>(sPrev0, out, t.c, t.pn);
    }
  i64 cells = 0;
  for (i64 mm = m0; mm < m1; ++mm) {
    for (int ty = 0; ty < kTy; ++ty)
      for (int tx = 0; tx < kTx; ++tx) {
        Thread& t = th[static_cast<std::size_t>(ty * kTx + tx)];
        if (!t.active) continue;
        for (int d = 0; d < 2 * R; ++d)
          for (int k = 0; k < V; ++k) t.q[d][k] = t.q[d + 1][k];
        for (int k = 0; k < V; ++k) t.q[2 * R][k] = t.qn[k];
        const bool more = mm + 1 < m1;
        if (more) load_plane(sQn, t, R + 1, t.qn);
        float pv[V];
        if (kWave) {
          for (int k = 0; k < V; ++k) pv[k] = t.pn[k];
          if (more) m.ldv<V>(sPn, out, t.c + sm, t.pn);
        }
        float lo[R][V], hi[R][V];
        for (int d = 0; d < R; ++d) {
          m.ldv<V>(sLo0 + d, in, t.c - (d + 1) * so, lo[d]);
          m.ldv<V>(sHi0 + d, in, t.c + (d + 1) * so, hi[d]);
        }
        float we[R], ea[R];
        if (V == 4 && R == 2) {  // one float2 each side
          float a2[2], b2[2];
          m.ldv<2>(sW, in, t.c - 2, a2);
          m.ldv<2>(sE, in, t.c + 4, b2);
          we[0] = a2[1];
          we[R - 1] = a2[0];
          ea[0] = b2[0];
          ea[R - 1] = b2[1];
        } else {
          for (int d = 0; d < R; ++d) {
            we[d] = m.ld(sW + d, in, t.c - 1 - d);
            ea[d] = m.ld(sE + d, in, t.c + V + d);
          }
        }
        if (k_columns) {
          if (V == 4) {
            if (t.edge)
              for (int k = 0; k < V; ++k) t.q[R][k] = xcell_at(t, t.x + k, t.q[R][k]);
          } else {
            for (int d = 0; d < R; ++d) {
              we[d] = xcell_at(t, t.x - 1 - d, we[d]);
              ea[d] = xcell_at(t, t.x + 1 + d, ea[d]);
            }
          }
        }
        const auto xcell = [&](const float* c, int mk) { return mk < 0 ? we[-mk - 1] : mk >= V ? ea[mk - V] : c[mk]; };
        float v[V];
        for (int k = 0; k < V; ++k) {
          const float c = t.q[R][k];
          if constexpr (!kWave) {
            const float xm = xcell(t.q[R], k - 1), xp = xcell(t.q[R], k + 1);
            v[k] = M == 2 ? apps::heat_point(c, xm, xp, lo[0][k], hi[0][k], t.q[0][k], t.q[2][k])
                          : apps::heat_point(c, xm, xp, t.q[0][k], t.q[2][k], lo[0][k], hi[0][k]);
          } else {
            const float lx = apps::wave_axis(xcell(t.q[R], k - 2), xcell(t.q[R], k - 1), c, xcell(t.q[R], k + 1),
                                             xcell(t.q[R], k + 2));
            const float lm = apps::wave_axis(t.q[0][k], t.q[1][k], c, t.q[3 % (2 * R + 1)][k], t.q[4 % (2 * R + 1)][k]);
            const float lo_ = apps::wave_axis(lo[R - 1][k], lo[0][k], c, hi[0][k], hi[R - 1][k]);
            v[k] = M == 2 ? apps::wave_point(pv[k], c, lx, lo_, lm) : apps::wave_point(pv[k], c, lx, lm, lo_);
          }
        }
        if (!t.edge) {
          m.stv<V>(sO, out, t.c, v);
          cells += V;
        } else {
          for (int k = 0; k < V; ++k)
            if (lane_ok(t.x, k)) {
              m.st(sOe, out, t.c + k, v[k]);
              ++cells;
            }
        }
        if (box.axis == M) {
          for (int side = 0; side < 2; ++side) {
            const Push& ps = side == 0 ? lower : upper;
            if (ps.dst == nullptr || (side == 0 ? mm >= 2 * R : mm < box.count)) continue;
            const i64 psm = M == 1 ? ps.sy : ps.sz, pso = O == 1 ? ps.sy : ps.sz;
            const i64 d = t.x + t.co * pso + (mm + ps.shift) * psm;
            if (!t.edge) {
              m.stv<V>(side == 0 ? sP0 : sP1, *ps.dst, d, v);
            } else {
              for (int k = 0; k < V; ++k)
                if (lane_ok(t.x, k)) m.st(side == 0 ? sP0e : sP1e, *ps.dst, d + k, v[k]);
            }
          }
        } else if (t.x_push) {
          const i64 cy = M == 1 ? mm : t.co, cz = M == 2 ? mm : t.co;
          for (int k = 0; k < V; ++k) {
            const i64 xk = t.x + k;
            if (!lane_ok(t.x, k)) continue;
            if (lower.dst != nullptr && xk < 2 * R)
              m.st(sX0, *lower.dst, (xk + lower.shift) + cy * lower.sy + cz * lower.sz, v[k]);
            if (upper.dst != nullptr && xk >= box.count)
              m.st(sX1, *upper.dst, (xk + upper.shift) + cy * upper.sy + cz * upper.sz, v[k]);
          }
        }
        t.c += sm;
        t.m += 1;
      }
  }
  return static_cast<double>(cells) * (kWave ? kWaveFlops : kHeatFlops);
}

// Initial value of a cell of buffer b (stencil3d_slabs.hpp): heat: seed everywhere; wave:
// buffer 0 (cur) seed + 1 everywhere, buffer 1 (prev) seed in the interior, seed + 1 on the
// boundary layer.
float initial_3d(bool wave, std::uint32_t seed, int b, const i64 g[3], const i64 n[3], int R) {
  bool interior = true;
  for (int d = 0; d < 3; ++d) interior = interior && g[d] >= R && g[d] < n[d] - R;
  const std::uint32_t sd = wave ? (b == 0 || !interior ? seed + 1 : seed) : seed;
  return apps::initial_value(static_cast<u64>((g[2] * n[1] + g[1]) * n[0] + g[0]), sd);
}

// Each block's march (serial_steps): its chunk's planes plus the 2R priming planes.
void mark_march_steps(KernelTrace& kt, const Plan& p, int R) {
  for (BlockTrace& b : kt.blocks) {
    i64 xt = 0, ot = 0, ch = 0;
    apps::stencil3d::item_tiles(p, static_cast<i64>(b.block), xt, ot, ch);
    b.serial_steps = static_cast<std::uint32_t>(apps::stencil3d::item_chunk_planes(p, ch, R) + 2 * R);
  }
}

// Per-box paradigms: per GPU an `apps::slab3d` box in its own memory. rdl = false: the step
// pushes its boundary planes into the neighbours' halos (p2p_inline, memcpy, proact, infinite);
// rdl = true: no pushes, the halo cells are loaded from the neighbours' boxes (Step::from_lower /
// from_upper, stencil3d_um_rdl_cuda.cpp RdlRun), by the kernel's remote variant where a GPU has a
// neighbour.
template <bool kWave>
Trace stencil3d_slabs(const TraceRequest& r, std::vector<float>* result, bool rdl) {
  constexpr int R = kWave ? 2 : 1;
  const int G = r.gpus;
  const i64* n = r.problem.n;
  Trace t;
  std::vector<apps::Slab3D> s;
  std::vector<std::array<Buf, 2>> buf(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) {
    s.push_back(apps::slab3d(n, r.problem.axis, R, G, g));
    const apps::Slab3D& sg = s[g];
    for (int b = 0; b < 2; ++b) {
      Buf& B = buf[g][b];
      B.base = slab_base(g, b);
      B.v.resize(static_cast<std::size_t>(sg.local_cells()));
      for (i64 z = 0; z < sg.local[2]; ++z)
        for (i64 y = 0; y < sg.local[1]; ++y)
          for (i64 x = 0; x < sg.local[0]; ++x) {
            const i64 gc[3] = {sg.global(0, x), sg.global(1, y), sg.global(2, z)};
            B.v[static_cast<std::size_t>(sg.index(x, y, z))] = initial_3d(kWave, r.problem.seed, b, gc, n, R);
          }
      t.allocations.push_back({name("gpu", g, b == 0 ? "buf0" : "buf1"), MemKind::device, g, -1, B.base,
                               static_cast<u64>(sg.local_cells() * 4)});
    }
  }
  bool vec = true;
  for (const auto& sg : s) vec = vec && sg.local[0] % 4 == 0;
  Recorder rec;
  const Acc m{rec};
  for (int it = 0; it < r.problem.iters; ++it) {
    const int ib = it % 2, ob = 1 - ib;
    IterationTrace iter;
    for (int g = 0; g < G; ++g) {
      const apps::Slab3D& sg = s[g];
      Box box{{sg.local[0], sg.local[1], sg.local[2]}, static_cast<int>(sg.axis), sg.count};
      StepArgs st;
      st.in = &buf[g][ib];
      st.out = &buf[g][ob];
      st.sy = sg.local[0];
      st.sz = sg.local[0] * sg.local[1];
      // Neighbour nb's strides and split-coordinate shift, set on a Push (its box written) or, as
      // stencil3d_cells.hpp remote_of, a Src (its box read instead).
      const auto at = [&](int nb, auto p) {
        p.sy = s[nb].local[0];
        p.sz = s[nb].local[0] * s[nb].local[1];
        p.shift = nb < g ? s[nb].count : -sg.count;
        return p;
      };
      if (!rdl) {
        if (sg.has_lower()) st.lower = at(g - 1, Push{&buf[g - 1][ob]});
        if (sg.has_upper()) st.upper = at(g + 1, Push{&buf[g + 1][ob]});
      } else {
        if (sg.has_lower()) st.from_lower = at(g - 1, Src{&buf[g - 1][ib]});
        if (sg.has_upper()) st.from_upper = at(g + 1, Src{&buf[g + 1][ib]});
      }
      // The variant launched: the remote one only where the march reads remote cells (rdl with a
      // neighbour, split along the march axis or x), as launch_step picks it.
      int per_sm = kWave ? kWaveBlocksPerSm : kHeatBlocksPerSm;
      if (st.sources() && box.axis == march_axis(box))
        per_sm = kWave ? kWavePlanesBlocksPerSm : kHeatPlanesBlocksPerSm;
      else if (st.sources() && box.axis == 0)
        per_sm = kWave ? kWaveColumnsBlocksPerSm : kHeatColumnsBlocksPerSm;
      const bool pushes = st.lower.dst != nullptr || st.upper.dst != nullptr;
      const Plan p = make_plan(R, vec ? 4 : 1, box, pushes, i64{r.sms} * per_sm);
      KernelTrace kt;
      kt.name = kWave ? "wave3d_step" : "heat3d_step";
      kt.gpu = g;
      kt.threads_per_block = kTx * kTy;
      kt.blocks_per_sm = static_cast<std::uint32_t>(per_sm);
      run_kernel(kt, static_cast<u64>(p.items), r.sample, rec, [&](u64 w) {
        return vec ? run_item<kWave, 4>(m, st, box, p, static_cast<i64>(w))
                   : run_item<kWave, 1>(m, st, box, p, static_cast<i64>(w));
      });
      mark_march_steps(kt, p, R);
      iter.kernels.push_back(std::move(kt));
    }
    t.iterations.push_back(std::move(iter));
  }
  if (result != nullptr) {
    result->assign(static_cast<std::size_t>(n[0] * n[1] * n[2]), 0.0f);
    for (int g = 0; g < G; ++g) apps::copy_slab3d_to_global(s[g], buf[g][r.problem.iters % 2].v.data(), result->data());
  }
  return t;
}

// The whole-grid buffers of the 3D apps (um, um_hints, gps): both buffers with their initial
// values at grid_base(b), and their allocations: managed (one per rank's span where the split is
// along z, else one per buffer on GPU 0) or, in the replicas layout, a GPS replica per GPU.
template <bool kWave>
void init_grid_3d(const TraceRequest& r, Trace& t, std::array<Buf, 2>& B) {
  constexpr int R = kWave ? 2 : 1;
  const int G = r.gpus;
  const i64* n = r.problem.n;
  const int a = static_cast<int>(r.problem.axis);
  std::vector<apps::Slab3D> s;
  for (int g = 0; g < G; ++g) s.push_back(apps::slab3d(n, r.problem.axis, R, G, g));
  const i64 sy = n[0], sz = n[0] * n[1];
  for (int b = 0; b < 2; ++b) {
    B[b].base = grid_base(b);
    B[b].v.resize(static_cast<std::size_t>(n[0] * n[1] * n[2]));
    for (i64 z = 0; z < n[2]; ++z)
      for (i64 y = 0; y < n[1]; ++y)
        for (i64 x = 0; x < n[0]; ++x) {
          const i64 gc[3] = {x, y, z};
          B[b].v[static_cast<std::size_t>(z * sz + y * sy + x)] = initial_3d(kWave, r.problem.seed, b, gc, n, R);
        }
    const std::string bn = "grid.buf" + std::to_string(b);
    if (replicas_layout(r)) {
      add_replicas(t, G, b, static_cast<u64>(B[b].v.size() * 4));
    } else if (a == 2) {  // z split: each rank's span of planes is one contiguous range, placed on it
      for (int g = 0; g < G; ++g) {
        // stencil3d_cells.hpp span_of: owned planes, plus the boundary layer at either end.
        apps::Range sp;
        sp.begin = s[g].has_lower() ? s[g].first : 0;
        sp.end = s[g].has_upper() ? s[g].first + s[g].count : n[2];
        t.allocations.push_back({bn + ".gpu" + std::to_string(g), MemKind::managed, g, -1, B[b].addr(sp.begin * sz),
                                 static_cast<u64>((sp.end - sp.begin) * sz * 4)});
      }
    } else {  // x / y split: the spans interleave in memory; one allocation (pages start on GPU 0)
      t.allocations.push_back({bn, MemKind::managed, 0, -1, B[b].base, static_cast<u64>(B[b].v.size() * 4)});
    }
  }
}

// The work items a sampled grid march records always (Keep): where the split axis is the march
// axis, the first and last march chunk on a side with a neighbour (items go chunk by chunk, so
// they are the grid's first and last tiles01 items). They read the neighbour's planes (um: the
// pages that fault over; um_hints: the remote loads; gps: the subscriptions); the sampling rule,
// 64 items in 8 at 512^3, skipped them all (wave3d 512^3 um on 2 GPUs: no page faulted).
Keep halo_chunks(const Plan& p, const Box& box, const apps::Slab3D& sg) {
  if (march_axis(box) != box.axis || p.x_first) return {};
  const auto tiles01 = static_cast<u64>(p.tiles[0] * p.tiles[1]);
  return {sg.has_lower() ? tiles01 : 0, sg.has_upper() ? tiles01 : 0};
}

// um / um_hints: one managed grid per buffer (init_grid_3d); GPU g runs the marching step
// on its sub-box of the grid (stencil3d_cells.hpp sub_box: its owned planes and R planes on each
// side along the split axis, the whole grid along the others, the grid's strides), in place: the
// planes it reads next to the split are its neighbours' pages of the grid. No pushes, no remote
// sources, the plain variant's residency (UmRun::step).
template <bool kWave>
Trace stencil3d_grid_march(const TraceRequest& r, std::vector<float>* result) {
  constexpr int R = kWave ? 2 : 1;
  const int G = r.gpus;
  const i64* n = r.problem.n;
  Trace t;
  std::array<Buf, 2> B;
  init_grid_3d<kWave>(r, t, B);
  Recorder rec;
  const Acc m{rec};
  for (int it = 0; it < r.problem.iters; ++it) {
    const int ib = it % 2, ob = 1 - ib;
    IterationTrace iter;
    for (int g = 0; g < G; ++g) {
      const apps::Slab3D sg = apps::slab3d(n, r.problem.axis, R, G, g);
      const apps::stencil3d::SubBox sb = apps::stencil3d::sub_box(sg);
      if (replicas_layout(r))  // gps_hw / finepack: GPU g's kernel reads and writes its own replicas
        for (int b = 0; b < 2; ++b) B[b].base = replica_base(g, b);
      StepArgs st;
      st.in = &B[ib];
      st.out = &B[ob];
      st.off = sb.offset;
      st.sy = sb.sy;
      st.sz = sb.sz;
      // launch_step's step_vec: float4 rows when the rows are whole vectors and every row of the
      // sub-box starts 16-byte aligned (the grid starts on a page)
      const bool vec = sb.box.n[0] % 4 == 0 && sb.sy % 4 == 0 && sb.sz % 4 == 0 && sb.offset % 4 == 0;
      const int per_sm = kWave ? kWaveBlocksPerSm : kHeatBlocksPerSm;
      const Plan p = make_plan(R, vec ? 4 : 1, sb.box, false, i64{r.sms} * per_sm);
      KernelTrace kt;
      kt.name = kWave ? "wave3d_step" : "heat3d_step";
      kt.gpu = g;
      kt.threads_per_block = kTx * kTy;
      kt.blocks_per_sm = static_cast<std::uint32_t>(per_sm);
      run_kernel(kt, static_cast<u64>(p.items), r.sample, rec, [&](u64 w) {
        return vec ? run_item<kWave, 4>(m, st, sb.box, p, static_cast<i64>(w))
                   : run_item<kWave, 1>(m, st, sb.box, p, static_cast<i64>(w));
      }, halo_chunks(p, sb.box, sg));
      mark_march_steps(kt, p, R);
      iter.kernels.push_back(std::move(kt));
    }
    t.iterations.push_back(std::move(iter));
  }
  if (result != nullptr) *result = B[r.problem.iters % 2].v;
  return t;
}

// ---- scatter (synthetic small-store app) ---------------------------------------------------
//
// N 4-byte elements, GPU g owns [N g / G, N (g + 1) / G). Two buffers (in, out), swapped every
// iteration. GPU g's kernel `scatter_step`: a thread per owned element i (blocks of 256) loads
// in[i] (a contiguous run per block: a consumer reads its whole partition) and stores
// in[i] * 0.5 + 1 to out[t], t = scatter_target(...): every kScatterRemoteEvery-th thread (25 %)
// a uniformly random element of another GPU's partition (the other GPU uniformly random), the
// others a uniformly random element of its own partition. The targets come from splitmix64 over
// (seed, g, i): the same every iteration. Layouts: slabs (each GPU's partition its own device
// array; a remote target is a peer store), grid (one managed array per buffer, per-GPU spans),
// replicas (the whole array per GPU; every store goes to the storing GPU's own replica).
// Stores to different partitions use different instruction slots (a run never spans two
// allocations). Flops: 2 per element (mul, add).
constexpr int kScatterRemoteEvery = 4;
constexpr int kScatterFlops = 2;

Trace scatter(const TraceRequest& r, std::vector<float>* result) {
  const i64 N = r.problem.n[0];
  const int G = r.gpus;
  const auto first = [&](int g) { return N * g / G; };
  const auto count = [&](int g) { return first(g + 1) - first(g); };
  const auto owner = [&](i64 e) {
    int g = static_cast<int>(e * G / N);
    while (g + 1 < G && e >= first(g + 1)) ++g;
    while (g > 0 && e < first(g)) --g;
    return g;
  };
  // One decision for the allocations and the addresses: rdl's "remote" layout replays the slabs
  // trace (make_trace); as managed spans at grid_base its slab_base addresses fell in no
  // allocation and every remote store counted as local.
  const bool replicas = r.layout == "replicas", grid = r.layout == "grid", slabs = !replicas && !grid;
  Trace t;
  std::array<std::vector<float>, 2> v;
  for (int b = 0; b < 2; ++b) {
    v[b].resize(static_cast<std::size_t>(N));
    for (i64 e = 0; e < N; ++e) v[b][static_cast<std::size_t>(e)] = apps::initial_value(static_cast<u64>(e), r.problem.seed);
    if (replicas) {
      add_replicas(t, G, b, static_cast<u64>(N * 4));
    } else {
      for (int g = 0; g < G; ++g) {
        t.allocations.push_back({(slabs ? name("gpu", g, b == 0 ? "buf0" : "buf1")
                                        : "grid.buf" + std::to_string(b) + ".gpu" + std::to_string(g)),
                                 slabs ? MemKind::device : MemKind::managed, g, -1,
                                 slabs ? slab_base(g, b) : grid_base(b) + static_cast<u64>(first(g)) * 4,
                                 static_cast<u64>(count(g) * 4)});
      }
    }
  }
  // Address of element e of buffer b as GPU g sees it.
  const auto addr = [&](int g, int b, i64 e) -> u64 {
    if (replicas) return replica_base(g, b) + static_cast<u64>(e) * 4;
    if (grid) return grid_base(b) + static_cast<u64>(e) * 4;
    const int h = owner(e);
    return slab_base(h, b) + static_cast<u64>(e - first(h)) * 4;
  };
  Recorder rec;
  for (int it = 0; it < r.problem.iters; ++it) {
    const int ib = it % 2, ob = 1 - ib;
    IterationTrace iter;
    for (int g = 0; g < G; ++g) {
      KernelTrace kt;
      kt.name = "scatter_step";
      kt.gpu = g;
      kt.threads_per_block = 256;
      const i64 n = count(g);
      run_kernel(kt, static_cast<u64>(ceil_div(n, 256)), r.sample, rec, [&](u64 blk) {
        const i64 i0 = static_cast<i64>(blk) * 256, i1 = std::min(n, i0 + 256);
        for (i64 i = i0; i < i1; ++i) {
          const i64 e = first(g) + i;
          rec.access(0, Op::load, 4, addr(g, ib, e));
          const float x = v[ib][static_cast<std::size_t>(e)];
          const u64 h = splitmix64((static_cast<u64>(r.problem.seed) << 40) ^ (static_cast<u64>(g) << 34) ^
                                   static_cast<u64>(e));
          int dst = g;
          if (G > 1 && i % kScatterRemoteEvery == 0) {
            dst = static_cast<int>((h >> 40) % static_cast<u64>(G - 1));
            if (dst >= g) ++dst;
          }
          const i64 tgt = first(dst) + static_cast<i64>((h & 0xffffffffffull) % static_cast<u64>(count(dst)));
          rec.access(1 + dst, Op::store, 4, addr(g, ob, tgt));
          v[ob][static_cast<std::size_t>(tgt)] = x * 0.5f + 1.0f;
        }
        return static_cast<double>(i1 - i0) * kScatterFlops;
      });
      iter.kernels.push_back(std::move(kt));
    }
    t.iterations.push_back(std::move(iter));
  }
  if (result != nullptr) *result = v[r.problem.iters % 2];
  return t;
}

}  // namespace

Trace make_trace(const TraceRequest& r) { return make_trace(r, nullptr); }

Trace make_trace(const TraceRequest& r, std::vector<float>* result) {
  if (is_graph_app(r.app)) return graph_trace(r, result);  // sim/trace_graph.cpp (sample <= 0: auto by edges)
  if (is_ct_app(r.app)) return ct_trace(r);  // sim/trace_ct.cpp (no values: built from the partition; sample <= 0: auto)
  if (r.gpus < 1) bad("gpus must be >= 1 (got " + std::to_string(r.gpus) + ")");
  if (!(r.sample > 0 && r.sample <= 1)) bad("sample must be in (0, 1] (got " + std::to_string(r.sample) + ")");
  if (r.problem.iters < 0) bad("iters must be >= 0");
  if (r.problem.nccheck < 1) bad("nccheck must be >= 1");
  if (r.sms < 1) bad("sms must be >= 1 (got " + std::to_string(r.sms) + ")");
  // "remote" (rdl): the 3D apps' boxes without pushes, halo cells loaded from the neighbours;
  // jacobi2d and scatter have no trace of their own for it and replay the slabs trace (the
  // engine's rdl turns its remote stores into the neighbour's remote loads).
  const bool remote = r.layout == "remote";
  const bool slabs = r.layout == "slabs" || remote;
  check_layout(r.layout);
  Trace t;
  if (r.app == "scatter") {
    if (r.problem.n[0] < r.gpus) bad("scatter needs at least one element per GPU");
    if (r.gpus > 31) bad("scatter supports at most 31 GPUs");
    t = scatter(r, result);
    t.problem = std::to_string(r.problem.n[0]);
  } else if (r.app == "jacobi2d") {
    if (r.problem.n[0] < 3 || r.problem.n[1] < 3) bad("jacobi2d needs nx, ny >= 3");
    t = slabs ? jacobi_slabs(r, result) : jacobi_grid(r, result);
    t.problem = std::to_string(r.problem.n[0]) + "x" + std::to_string(r.problem.n[1]);
  } else if (r.app == "heat3d" || r.app == "wave3d") {
    const bool wave = r.app == "wave3d";
    if (slabs)
      t = wave ? stencil3d_slabs<true>(r, result, remote) : stencil3d_slabs<false>(r, result, remote);
    else  // grid (um, um_hints) and replicas (gps_hw, finepack): the same marching step
      t = wave ? stencil3d_grid_march<true>(r, result) : stencil3d_grid_march<false>(r, result);
    t.problem = std::to_string(r.problem.n[0]) + "x" + std::to_string(r.problem.n[1]) + "x" +
                std::to_string(r.problem.n[2]);
  } else {
    bad("unknown app '" + r.app + "' (expected jacobi2d, heat3d, wave3d or scatter)");
  }
  t.app = r.app;
  t.gpus = r.gpus;
  t.layout = r.layout;
  return t;
}

}  // namespace gpsm::sim
