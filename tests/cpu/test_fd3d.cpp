// fd3d (GPU-SM's finite differences) on the CPU: the --size grammar, the point update's order, the
// reference and its sampled check, the kernel's work plan, and every paradigm's step index math
// (local boxes with copied or pushed halos, the distributed array's layout with padding, GPS
// replicas of the whole volume holding only what tracking subscribes them to) run cell by
// cell through the very functions the kernel calls (fd3d_step.hpp), against the reference bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "app_named.hpp"
#include "apps/fd3d/fd3d_block.hpp"
#include "apps/fd3d/fd3d_gps_layout.hpp"
#include "apps/fd3d/fd3d_layout.hpp"
#include "apps/fd3d/fd3d_math.hpp"
#include "apps/fd3d/fd3d_plan.hpp"
#include "apps/fd3d/fd3d_reference.hpp"
#include "apps/fd3d/fd3d_spec.hpp"
#include "apps/fd3d/fd3d_step.hpp"
#include "apps/harness/app.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_gps_pages.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/page_math.hpp"
#include "runtime/bulk_plan.hpp"
#include "gpsm/ownership_map.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::fd3d;
using i64 = std::int64_t;

namespace {

// An nx x ny x nz volume (boundary layer included) at halo r, `iters` steps, the default seed.
FdProblem box_problem(i64 nx, i64 ny, i64 nz, int r, int iters) {
  FdProblem p;
  p.n[0] = nx;
  p.n[1] = ny;
  p.n[2] = nz;
  p.radius = r;
  p.iters = iters;
  return p;
}

std::string what_of(const std::string& s) {
  try {
    parse_fd_size(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FdSpec, ParsesVolumesHalosAndAxes) {
  const FdSize a = parse_fd_size("512:h4");
  EXPECT_EQ(a.n[0], 512);
  EXPECT_EQ(a.n[2], 512);
  EXPECT_EQ(a.radius, 4);
  EXPECT_FALSE(a.axis.has_value());
  EXPECT_EQ(a.label(), "512:h4");
  const FdSize b = parse_fd_size("640x512x384:h16:y");
  EXPECT_EQ(b.n[0], 640);
  EXPECT_EQ(b.n[1], 512);
  EXPECT_EQ(b.n[2], 384);
  ASSERT_TRUE(b.axis.has_value());
  EXPECT_EQ(*b.axis, Axis::y);
  EXPECT_EQ(b.label(), "640x512x384:h16:y");
  EXPECT_EQ(axis_of(a, Axis::x), Axis::x);  // no axis in the size: --axis
  EXPECT_EQ(axis_of(b, Axis::x), Axis::y);  // the size's wins
  EXPECT_EQ(expand_fd_size("512:h4:xz"), (std::vector<std::string>{"512:h4:x", "512:h4:z"}));
  EXPECT_EQ(expand_fd_size("512x512x512:h2"), (std::vector<std::string>{"512:h2"}));
  const std::vector<std::string> t = expand_fd_size("table1");
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t.front(), "128:h2");
  EXPECT_EQ(t[5], "512:h4");
  EXPECT_EQ(t.back(), "768:h16");
  const std::vector<std::string> tz = expand_fd_size("table1:yz");
  ASSERT_EQ(tz.size(), 24u);
  EXPECT_EQ(tz[0], "128:h2:y");
  EXPECT_EQ(tz[1], "128:h2:z");
  for (int r : kHalos) EXPECT_TRUE(halo_compiled(r));
  EXPECT_FALSE(halo_compiled(3));
}

TEST(FdSpec, BadSpecsSayWhyAndWhatToUse) {
  const char* bad[] = {"512", "512:h3", "512:h4:w", "512:k4", "4:h2", "512x512:h4", "512:h4:xz", "512:h", "-5:h2",
                       "512:h4:z:y", "table1:q", "100000:h2", "512:h32"};
  for (const char* s : bad) {
    const std::string w = what_of(s);
    EXPECT_NE(w.find(std::string("bad --size '") + s + "' for fd3d: "), std::string::npos) << s << ": " << w;
    EXPECT_NE(w.find("e.g. 512:h4:z"), std::string::npos) << w;
  }
  EXPECT_NE(what_of("512:h3").find("halo 3 is not one the kernels are compiled for"), std::string::npos);
  EXPECT_NE(what_of("8:h4").find("extent 8 leaves no interior"), std::string::npos);
  try {
    expand_fd_size("table1:q");
    ADD_FAILURE() << "table1:q expanded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'q' after table1 is not a set of axes"), std::string::npos) << e.what();
  }
}

// The weights are GPU-SM's 1 (centre), 3 (x), 2 (y), 1 (z) over 1 + 12 R, and fd_cell adds the s
// terms in the documented order: a naive loop written from the formula gives the same bits.
TEST(FdMath, TheCellIsThePapersStencilOverOnePlusTwelveRInOneOrder) {
  for (int r : {1, 2, 4, 8, 16}) {
    const FdWeights w = fd_weights(r);
    const double d = 1.0 + 12.0 * r;
    EXPECT_EQ(w.w0, static_cast<float>(1.0 / d));
    EXPECT_EQ(w.wx, static_cast<float>(3.0 / d));
    EXPECT_EQ(w.wy, static_cast<float>(2.0 / d));
    EXPECT_EQ(w.wz, static_cast<float>(1.0 / d));
    EXPECT_NEAR(w.w0 + 2.0 * r * (w.wx + w.wy + w.wz), 1.0, 1e-5);  // a weighted average
    // Neighbour values that make every rounding visible.
    auto val = [](int d_, int k) { return initial_value(static_cast<std::uint64_t>(100 * d_ + k + 50), 7); };
    float naive = w.w0 * val(0, 0);
    for (int s = 1; s <= r; ++s) {
      const float xs = val(0, -s) + val(0, s), ys = val(1, -s) + val(1, s), zs = val(2, -s) + val(2, s);
      const float t = (w.wx * xs + w.wy * ys) + w.wz * zs;
      naive = naive + t;
    }
    EXPECT_EQ(fd_cell(w, r, val), naive) << "R " << r;
    // Swapping two axes' terms changes the result: the order is not free.
    auto swapped = [&](int d_, int k) { return val(d_ == 0 ? 1 : d_ == 1 ? 0 : 2, k); };
    EXPECT_NE(fd_cell(w, r, swapped), fd_cell(w, r, val)) << "R " << r;
  }
  EXPECT_EQ(fd_flops_per_cell(2), 19.0);   // Table 1's 18 and the centre's multiply
  EXPECT_EQ(fd_flops_per_cell(16), 145.0);
}

TEST(FdReference, StepsUpdateTheInteriorOnlyAndStayInTheInitialRange) {
  FdProblem p = box_problem(17, 14, 19, 4, 0);
  const std::vector<float> u0 = fd3d_initial(p);
  EXPECT_EQ(u0[5], initial_value(5, p.seed));
  p.iters = 1;
  const std::vector<float> u1 = fd3d_reference(p);
  const FdWeights w = fd_weights(p.radius);
  for (i64 z = 0; z < p.n[2]; ++z)
    for (i64 y = 0; y < p.n[1]; ++y)
      for (i64 x = 0; x < p.n[0]; ++x) {
        const i64 i = x + p.n[0] * (y + p.n[1] * z);
        const bool inner = x >= 4 && x < p.n[0] - 4 && y >= 4 && y < p.n[1] - 4 && z >= 4 && z < p.n[2] - 4;
        if (!inner) {
          EXPECT_EQ(u1[i], u0[i]);
          continue;
        }
        const i64 st[3] = {1, p.n[0], p.n[0] * p.n[1]};
        EXPECT_EQ(u1[i], fd_cell(w, p.radius, [&](int d, int k) { return u0[i + k * st[d]]; }));
      }
  p.iters = 30;
  for (float v : fd3d_reference(p)) {
    EXPECT_GE(v, 0.2499f);
    EXPECT_LT(v, 1.2501f);
  }
  FdProblem bad = p;
  bad.radius = 9;
  bad.n[0] = 18;
  EXPECT_THROW(fd3d_reference(bad), std::invalid_argument);
}

TEST(FdReference, SampledCheckCatchesAWrongCellOnASampledPlane) {
  FdProblem p = box_problem(12, 11, 40, 2, 3);
  const std::vector<float> prev = fd3d_reference(p);
  std::vector<float> next = prev;
  fd3d_step(p, prev.data(), next.data(), 0, p.n[2]);
  const std::vector<i64> planes = sampled_planes(p, 4);
  EXPECT_EQ(planes, (std::vector<i64>{0, 1, 2, 3, 8, 16, 24, 32, 36, 37, 38, 39}));
  EXPECT_EQ(check_step(p, prev, next, planes), "");
  std::vector<float> wrong = next;
  wrong[static_cast<std::size_t>(5 + 12 * (6 + 11 * 16))] += 1e-6f;  // plane 16 is sampled
  EXPECT_NE(check_step(p, prev, wrong, planes).find("plane 16: cell (5, 6)"), std::string::npos)
      << check_step(p, prev, wrong, planes);
  wrong = next;
  wrong[static_cast<std::size_t>(0 + 12 * (0 + 11 * 1))] = std::nanf("");  // a boundary cell of plane 1
  EXPECT_NE(check_step(p, prev, wrong, planes), "");
  wrong = next;
  wrong[static_cast<std::size_t>(5 + 12 * (6 + 11 * 10))] += 1.0f;  // plane 10 is not: not seen
  EXPECT_EQ(check_step(p, prev, wrong, planes), "");
  // The step of another halo is another result.
  FdProblem other = p;
  other.radius = 1;
  EXPECT_NE(check_step(other, prev, next, planes), "");
}

// Every (x tile, y tile, chunk) is one item; chunks tile the updated planes; the split axis's
// edges come first.
TEST(FdPlan, ItemsCoverEveryTileAndPlaneOnceWithTheSplitEdgesFirst) {
  for (int axis = 0; axis < 3; ++axis)
    for (int r : {2, 16})
      for (i64 slots : {1, 7, 264}) {
        stencil3d::Box b;
        b.n[0] = 2 * r + 70;
        b.n[1] = 2 * r + 37;
        b.n[2] = 2 * r + 45;
        b.axis = axis;
        b.count = b.n[axis] - 2 * r;
        const Plan p = make_plan(b, r, slots);
        EXPECT_EQ(p.tiles[0], 3);  // 70 columns in tiles of 32
        EXPECT_EQ(p.tiles[1], 3);  // 37 rows in tiles of 16
        EXPECT_EQ(p.items, p.tiles[0] * p.tiles[1] * p.chunks);
        std::set<std::vector<i64>> seen;
        std::vector<int> plane_hits(static_cast<std::size_t>(b.n[2]), 0);
        for (i64 w = 0; w < p.items; ++w) {
          i64 tx, ty, ch, z0, z1;
          item_of(p, w, tx, ty, ch);
          ASSERT_TRUE(tx >= 0 && tx < p.tiles[0] && ty >= 0 && ty < p.tiles[1] && ch >= 0 && ch < p.chunks);
          EXPECT_TRUE(seen.insert({tx, ty, ch}).second);
          chunk_planes(p, b, r, ch, z0, z1);
          EXPECT_LT(z0, z1);
          if (tx == 0 && ty == 0)
            for (i64 z = z0; z < z1; ++z) ++plane_hits[static_cast<std::size_t>(z)];
          // The first items are the edges of the split axis: the first and the last tile (chunk).
          const i64 c[3] = {tx, ty, ch}, last[3] = {p.tiles[0] - 1, p.tiles[1] - 1, p.chunks - 1};
          const i64 per = p.items / (axis == 0 ? p.tiles[0] : axis == 1 ? p.tiles[1] : p.chunks);
          if (w < per) {
            EXPECT_EQ(c[axis], 0);
          } else if (w < 2 * per) {
            EXPECT_EQ(c[axis], last[axis]);
          }
        }
        for (i64 z = 0; z < b.n[2]; ++z) EXPECT_EQ(plane_hits[static_cast<std::size_t>(z)], z >= r && z < b.n[2] - r ? 1 : 0);
      }
}

TEST(FdPlan, ChunksOnlyWhereTheTilesLeaveTheGpuIdle) {
  // 768^3 on one GPU: 24 x 48 tiles, far more than 264 resident blocks: chunks long next to their
  // priming, and within 3 % of a perfect spread of the work (tiles x planes / slots steps).
  {
    const i64 len = chunk_length(736, 24 * 48, 16, 264);
    EXPECT_GE(len, 64);
    EXPECT_LT(chunk_cost(736, 24 * 48, 264, len), 1.03 * 24 * 48 * 736 / 264.0);
    EXPECT_LT(chunk_cost(736, 24 * 48, 264, len), chunk_cost(736, 24 * 48, 264, 736));  // one chunk: 5 waves, the last a third full
  }
  // Exactly two full waves of tiles: one chunk.
  EXPECT_EQ(chunk_length(500, 528, 4, 264), 500);
  // 128^3, halo 2: GPU-SM's 4 x 8 = 32 tiles (here 4 x 8 of ours) on 264 slots: several chunks,
  // each still much longer than its priming.
  const i64 c = chunk_length(124, 32, 2, 264);
  EXPECT_LT(c, 124);
  EXPECT_GE(c, 8);
  EXPECT_THROW(chunk_length(0, 4, 2, 10), std::invalid_argument);
}

// The makespan model: without costlier edges it is whole waves of equal items; rdl's edge tiles
// (split along x or y) get more, shorter chunks where one chunk would leave them marching alone.
TEST(FdPlan, RemoteEdgeTilesGetShorterChunks) {
  for (i64 len : {1, 7, 63, 504})
    for (i64 slots : {1, 100, 264}) {
      const i64 items = 256 * ((504 + len - 1) / len), waves = (items + slots - 1) / slots;
      EXPECT_DOUBLE_EQ(chunk_cost(504, 256, slots, len), static_cast<double>(waves) * (static_cast<double>(len) + kPrimeSteps));
    }
  // Hand-worked (plane steps): 32 of 256 tiles cost 1.55 a plane on 264 blocks. One chunk: the
  // edges march 504 planes alone, 1.55 * 504 + 2. Two chunks of 252: 64 edge items (392.6) and 200
  // interior ones (254) start at 0; 200 more interior start at 254, the last 48 at 392.6.
  EXPECT_DOUBLE_EQ(chunk_cost(504, 256, 264, 504, 32, 1.55), 1.55 * 504 + kPrimeSteps);
  EXPECT_DOUBLE_EQ(chunk_cost(504, 256, 264, 252, 32, 1.55), 1.55 * 252 + kPrimeSteps + 254);
  // 512^3:h4 split along x over 2 GPUs: a GPU's 8 x 32 tiles (one face remote) on 264 blocks.
  stencil3d::Box b;
  b.n[0] = 256 + 2 * 4;
  b.n[1] = 512;
  b.n[2] = 512;
  b.axis = 0;
  b.count = 256;
  const Plan plain = make_plan(b, 4, 264), rdl = make_plan(b, 4, 264, 1);
  EXPECT_EQ(plain.tiles[0] * plain.tiles[1], 256);
  EXPECT_EQ(plain.chunks, 1);  // one wave of tiles: one chunk, as before
  EXPECT_GT(rdl.chunks, 2);
  const double one = chunk_cost(504, 256, 264, 504, 32, kRemoteApronStep),
               chosen = chunk_cost(504, 256, 264, rdl.chunk, 32, kRemoteApronStep);
  EXPECT_LT(chosen, 0.75 * one);
  // within 5 % of the work spread evenly: (32 * 1.55 + 224) * 504 / 264 steps
  EXPECT_LT(chosen, 1.05 * (32 * kRemoteApronStep + 224) * 504 / 264.0 + kPrimeSteps * rdl.chunks);
  b.axis = 2;  // along z the remote planes come through the column's loads, ahead: no change
  EXPECT_EQ(make_plan(b, 4, 264, 1).chunk, make_plan(b, 4, 264).chunk);
}

// ---- every paradigm's step, cell by cell ------------------------------------------------------

namespace {

enum class Way { single, memcpy, p2p_inline, none, rdl };

// Ranks' local boxes, both buffers initial_value(global cell), the halo planes of buffer 1 NaN
// (a neighbour must fill them before they are read).
struct Boxes {
  std::vector<Slab3D> s;
  std::vector<std::vector<float>> buf[2];
};

float init_cell(const Slab3D& s, i64 x, i64 y, i64 z, std::uint32_t seed) {
  const i64 g = (s.global(2, z) * s.n[1] + s.global(1, y)) * s.n[0] + s.global(0, x);
  return initial_value(static_cast<std::uint64_t>(g), seed);
}

bool in_halo(const Slab3D& s, i64 x, i64 y, i64 z) {
  const i64 c = coord(static_cast<int>(s.axis), x, y, z);
  return (s.has_lower() && c < s.radius) || (s.has_upper() && c >= s.radius + s.count);
}

// memcpy's copies: every halo cell of every rank's buffer b from its owner's buffer b.
void exchange(Boxes& bx, int b) {
  const int n = static_cast<int>(bx.s.size());
  for (int r = 0; r < n; ++r) {
    const Slab3D& s = bx.s[r];
    const int a = static_cast<int>(s.axis);
    for (i64 z = 0; z < s.local[2]; ++z)
      for (i64 y = 0; y < s.local[1]; ++y)
        for (i64 x = 0; x < s.local[0]; ++x) {
          if (!in_halo(s, x, y, z)) continue;
          const int nb = coord(a, x, y, z) < s.radius ? r - 1 : r + 1;
          const Slab3D& o = bx.s[nb];
          i64 l[3] = {x, y, z};
          l[a] = s.global(a, l[a]) - (o.first - o.radius);
          bx.buf[b][r][s.index(x, y, z)] = bx.buf[b][nb][o.index(l[0], l[1], l[2])];
        }
  }
}

// How a step is run on the host: cell by cell (fd_update), or as the kernel runs it, every thread
// of a block through fd3d_block.hpp's phases (Kernel: the work plan made for `slots` resident
// blocks, so a few slots give many chunks).
struct Stepper {
  bool kernel = false;
  i64 slots = 1000;
  bool split = false;  // rdl as GPSM_FD3D_RDL_LAUNCH=split launches it: remote_prefix's items picking, the rest plain
};

void update_all(const FdStep& st) {
  const i64 r = st.radius;
  for (i64 z = r; z < st.box.n[2] - r; ++z)
    for (i64 y = r; y < st.box.n[1] - r; ++y)
      for (i64 x = r; x < st.box.n[0] - r; ++x) fd_update(st, x, y, z);
}

// The kernel's block, thread by thread and phase by phase; the tile is NaN before each plane's
// fill, so a cell read but not written in that plane shows.
template <int R, Pick kPick, bool kPush>
void emulate_blocks(const FdStep& s, const Plan& p, i64 first, i64 last) {
  std::vector<Column> col(kThreads);
  std::vector<Queue<R>> q(kThreads);
  std::vector<float> tile_mem((kTy + 2 * R) * (kTx + 2 * R));
  auto* tile = reinterpret_cast<TileRow<R>*>(tile_mem.data());
  for (i64 w = first; w < last; ++w) {
    for (int t = 0; t < kThreads; ++t) {
      col[t] = column_of<R, kPick>(s, p, w, t % kTx, t / kTx);
      prime<R, kPick>(s, col[t], q[t]);
    }
    for (int z = col[0].z0; z < col[0].z1; ++z) {
      for (int t = 0; t < kThreads; ++t) advance<R, kPick>(s, col[t], q[t], z);
      std::fill(tile_mem.begin(), tile_mem.end(), std::nanf(""));
      for (int t = 0; t < kThreads; ++t) fill_tile<R, kPick>(s, col[t], q[t], z, t % kTx, t / kTx, tile);
      for (int t = 0; t < kThreads; ++t) compute<R, kPush>(s, col[t], q[t], z, t % kTx, t / kTx, tile);
    }
  }
}

// rdl's picking kernel for the step's split axis, as launch_fd_step picks it.
template <int R>
void picking_blocks(const FdStep& s, const Plan& p, i64 first, i64 last) {
  const Pick k = pick_for(true, s.box.axis);
  if (k == Pick::z)
    emulate_blocks<R, Pick::z, false>(s, p, first, last);
  else if (k == Pick::y)
    emulate_blocks<R, Pick::y, false>(s, p, first, last);
  else
    emulate_blocks<R, Pick::x, false>(s, p, first, last);
}

// Thread t's column of item w in rdl's picking kernel for the step's split axis.
template <int R>
Column picking_column(const FdStep& s, const Plan& p, i64 w, int t) {
  const Pick k = pick_for(true, s.box.axis);
  return k == Pick::z   ? column_of<R, Pick::z>(s, p, w, t % kTx, t / kTx)
         : k == Pick::y ? column_of<R, Pick::y>(s, p, w, t % kTx, t / kTx)
                        : column_of<R, Pick::x>(s, p, w, t % kTx, t / kTx);
}

template <int R>
void emulate_r(const FdStep& s, const Plan& p, const Stepper& how) {
  const bool push = s.lower.p != nullptr || s.upper.p != nullptr;
  if (s.in.remote() && how.split) {  // as launch_fd_step splits it
    const i64 e = remote_prefix(s.in, s.box, p, R, how.slots);
    for (i64 w = e; w < p.items; ++w) EXPECT_FALSE(item_near_halo(s.in, s.box, p, R, w)) << "item " << w;
    picking_blocks<R>(s, p, 0, e);
    emulate_blocks<R, Pick::none, false>(s, p, e, p.items);
  } else if (s.in.remote()) {
    picking_blocks<R>(s, p, 0, p.items);
  } else if (push) {
    emulate_blocks<R, Pick::none, true>(s, p, 0, p.items);
  } else {
    emulate_blocks<R, Pick::none, false>(s, p, 0, p.items);
  }
}

void run_step(const FdStep& st, const Stepper& how) {
  if (!how.kernel) return update_all(st);
  // The kernel's plan: rdl's remote faces shorten the chunks along x and y (fd3d_plan.hpp).
  const Plan p = make_plan(st.box, st.radius, how.slots, st.in.remote_faces());
  switch (st.radius) {
    case 2: return emulate_r<2>(st, p, how);
    case 4: return emulate_r<4>(st, p, how);
    case 8: return emulate_r<8>(st, p, how);
    case 16: return emulate_r<16>(st, p, how);
    default: FAIL() << "no emulated kernel for R " << st.radius;
  }
}

// The volume after `iters` steps on `ranks` slabs along `axis`, exchanged the given way.
std::vector<float> run_boxes(const FdProblem& p, Axis axis, int ranks, Way way, const Stepper& how = {}) {
  Boxes bx;
  for (int r = 0; r < ranks; ++r) {
    const Slab3D s = slab3d(p.n, axis, p.radius, ranks, r);
    bx.s.push_back(s);
    for (int b = 0; b < 2; ++b) {
      std::vector<float> v(static_cast<std::size_t>(s.local_cells()));
      for (i64 z = 0; z < s.local[2]; ++z)
        for (i64 y = 0; y < s.local[1]; ++y)
          for (i64 x = 0; x < s.local[0]; ++x)
            v[s.index(x, y, z)] = b == 1 && in_halo(s, x, y, z) ? std::nanf("") : init_cell(s, x, y, z, p.seed);
      bx.buf[b].push_back(std::move(v));
    }
  }
  for (int it = 0; it < p.iters; ++it) {
    const int c = it & 1;
    for (int r = 0; r < ranks; ++r) {
      const Slab3D& s = bx.s[r];
      FdStep st;
      st.in.mid = box_piece(s, bx.buf[c][r].data());
      st.out = box_sink(s, bx.buf[1 - c][r].data());
      st.box = box_of(s);
      st.radius = p.radius;
      st.w = fd_weights(p.radius);
      if (way == Way::p2p_inline) {
        if (s.has_lower()) st.lower = push_sink(s, bx.s[r - 1], bx.buf[1 - c][r - 1].data());
        if (s.has_upper()) st.upper = push_sink(s, bx.s[r + 1], bx.buf[1 - c][r + 1].data());
      }
      run_step(st, how);
    }
    if (way == Way::memcpy) exchange(bx, 1 - c);
  }
  std::vector<float> g(static_cast<std::size_t>(p.n[0] * p.n[1] * p.n[2]));
  for (int r = 0; r < ranks; ++r) copy_slab3d_to_global(bx.s[r], bx.buf[p.iters % 2][r].data(), g.data());
  return g;
}

// rdl: both volumes in a distributed array's layout (slab_blocks) with a 256-B granule, so the
// regions are padded; each rank's step reads its block and its neighbours' through one range.
std::vector<float> run_distributed(const FdProblem& p, Axis axis, int ranks, bool* padded = nullptr,
                                   const Stepper& how = {}) {
  const Slab3D s0 = slab3d(p.n, axis, p.radius, ranks, 0);
  const gpsm::OwnershipMap map(slab_blocks(s0), sizeof(float), 256, ranks);
  if (padded != nullptr) *padded = !map.identity();
  std::vector<float> mem[2];
  const std::vector<float> u0 = fd3d_initial(p);
  for (auto& m : mem) {
    m.assign(map.range_bytes() / sizeof(float), std::nanf(""));
    map.to_layout(u0.data(), m.data());
  }
  const gpsm::OwnershipLookup host = map.lookup();
  for (int it = 0; it < p.iters; ++it) {
    const int c = it & 1;
    for (int r = 0; r < ranks; ++r) {
      const Slab3D s = slab3d(p.n, axis, p.radius, ranks, r);
      FdStep st;
      st.in = distributed_sources(s, host, mem[c].data());
      st.out = distributed_sink(s, host, mem[1 - c].data());
      st.box = box_of(s);
      st.radius = p.radius;
      st.w = fd_weights(p.radius);
      EXPECT_EQ(st.in.remote(), ranks > 1);
      run_step(st, how);
    }
  }
  std::vector<float> g(u0.size());
  map.from_layout(mem[p.iters % 2].data(), g.data());
  return g;
}

bool in_box(const CellBox& b, i64 x, i64 y, i64 z) {
  return x >= b.lo[0] && x < b.hi[0] && y >= b.lo[1] && y < b.hi[1] && z >= b.lo[2] && z < b.hi[2];
}

// The initial volume with its interior NaN: the second buffer of a gps replica, whose interior
// cells must be stored or published before they are read.
std::vector<float> poisoned_initial(const FdProblem& p) {
  std::vector<float> v = fd3d_initial(p);
  const i64 r = p.radius;
  for (i64 z = r; z < p.n[2] - r; ++z)
    for (i64 y = r; y < p.n[1] - r; ++y)
      for (i64 x = r; x < p.n[0] - r; ++x) v[(z * p.n[1] + y) * p.n[0] + x] = std::nanf("");
  return v;
}

// Page masks as tracking leaves them, for pages of `per` cells over a volume of extents n: a
// page's subscribers are the ranks that store (their updated cells) or read (read_boxes) a cell of
// it. And the runtime's answer for a run of cells over those masks (Array::subscribers).
std::vector<std::uint32_t> tracked_page_masks(const i64 n[3], const std::vector<Slab3D>& s, i64 per) {
  std::vector<std::uint32_t> mask(static_cast<std::size_t>((n[0] * n[1] * n[2] + per - 1) / per), 0u);
  for (std::size_t k = 0; k < s.size(); ++k) {
    const int a = static_cast<int>(s[k].axis), r = s[k].radius;
    CellBox own;
    for (int d = 0; d < 3; ++d) {
      own.lo[d] = d == a ? s[k].first : r;
      own.hi[d] = d == a ? s[k].first + s[k].count : n[d] - r;
    }
    std::vector<CellBox> touched{own};
    for (const CellBox& b : read_boxes(s[k])) touched.push_back(b);
    for (const CellBox& b : touched)
      box_runs(n, b, [&](i64 f, i64 c) {
        for (i64 q = f / per; q <= (f + c - 1) / per; ++q) mask[static_cast<std::size_t>(q)] |= 1u << k;
      });
  }
  return mask;
}
gpsm::gps::RangeSubscribers page_subscribers(const std::vector<std::uint32_t>& mask, i64 per, i64 f, i64 c) {
  gpsm::gps::RangeSubscribers rs{mask[static_cast<std::size_t>(f / per)], true};
  for (i64 q = f / per; q <= (f + c - 1) / per; ++q) rs.uniform = rs.uniform && mask[static_cast<std::size_t>(q)] == rs.mask;
  return rs;
}

// gps: every rank has its own replica of both whole volumes, addressed through global_piece and
// global_sink. After each step the cells a rank stored reach another rank's replica only inside
// that rank's read_boxes (what tracking its loads subscribes it to); everything else of the
// second buffer's interior stays NaN there, so a load the boxes miss shows.
// skip_box: a box of read_boxes left out of the publish (-1: none).
std::vector<float> run_replicas(const FdProblem& p, Axis axis, int ranks, const Stepper& how = {}, int skip_box = -1) {
  const std::vector<float> u0 = fd3d_initial(p), poisoned = poisoned_initial(p);
  const i64 r = p.radius;
  std::vector<Slab3D> s;
  std::vector<std::vector<float>> rep[2];
  for (int k = 0; k < ranks; ++k) {
    s.push_back(slab3d(p.n, axis, p.radius, ranks, k));
    rep[0].push_back(u0);
    rep[1].push_back(poisoned);
  }
  const int a = static_cast<int>(axis);
  for (int it = 0; it < p.iters; ++it) {
    const int c = it & 1;
    for (int k = 0; k < ranks; ++k) run_step(replica_step(s[k], rep[c][k].data(), rep[1 - c][k].data()), how);
    // Publish: rank k's updated cells into each other rank's replica where that rank reads them.
    for (int k = 0; k < ranks; ++k)
      for (int q = 0; q < ranks; ++q) {
        if (q == k) continue;
        const auto boxes = read_boxes(s[q]);
        for (i64 z = r; z < p.n[2] - r; ++z)
          for (i64 y = r; y < p.n[1] - r; ++y)
            for (i64 x = r; x < p.n[0] - r; ++x) {
              const i64 g = coord(a, x, y, z);
              if (g < s[k].first || g >= s[k].first + s[k].count) continue;
              bool read = false;
              for (int b = 0; b < 3; ++b) read = read || (b != skip_box && in_box(boxes[b], x, y, z));
              if (!read) continue;
              const i64 i = (z * p.n[1] + y) * p.n[0] + x;
              rep[1 - c][q][i] = rep[1 - c][k][i];
            }
      }
  }
  // Each rank's updated cells from its replica; the boundary layer is never written.
  std::vector<float> g = u0;
  for (int k = 0; k < ranks; ++k)
    for (i64 z = r; z < p.n[2] - r; ++z)
      for (i64 y = r; y < p.n[1] - r; ++y)
        for (i64 x = r; x < p.n[0] - r; ++x) {
          const i64 c = coord(a, x, y, z);
          if (c >= s[k].first && c < s[k].first + s[k].count)
            g[(z * p.n[1] + y) * p.n[0] + x] = rep[p.iters % 2][k][(z * p.n[1] + y) * p.n[0] + x];
        }
  return g;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

}  // namespace

TEST(FdPasses, LocalBoxesWithCopiesOrPushesEqualTheReferenceBitForBit) {
  for (int r : {2, 4}) {
    // 3 ranks do not divide any interior evenly
    FdProblem p = box_problem(2 * r + 15, 2 * r + 13, 2 * r + 14, r, 3);
    const std::vector<float> ref = fd3d_reference(p);
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      for (int ranks = 1; ranks <= 3; ++ranks)
        for (Way way : {Way::memcpy, Way::p2p_inline})
          EXPECT_TRUE(same_bits(run_boxes(p, axis, ranks, way), ref))
              << "R " << r << " along " << axis_name(axis) << ", " << ranks << " ranks, "
              << (way == Way::memcpy ? "memcpy" : "p2p_inline");
  }
}

TEST(FdPasses, WithoutTheHaloExchangeTheResultDiffers) {
  FdProblem p = box_problem(15, 13, 14, 2, 2);
  const std::vector<float> got = run_boxes(p, Axis::y, 2, Way::none);
  EXPECT_FALSE(same_bits(got, fd3d_reference(p)));
  bool nan = false;
  for (float v : got) nan = nan || std::isnan(v);
  EXPECT_TRUE(nan);  // the second step read the halo planes nobody filled
}

TEST(FdPasses, DistributedLayoutWithPaddingEqualsTheReferenceBitForBit) {
  for (int r : {2, 4}) {
    FdProblem p = box_problem(2 * r + 15, 2 * r + 13, 2 * r + 14, r, 3);
    const std::vector<float> ref = fd3d_reference(p);
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      for (int ranks = 1; ranks <= 3; ++ranks) {
        bool padded = false;
        EXPECT_TRUE(same_bits(run_distributed(p, axis, ranks, &padded), ref))
            << "R " << r << " along " << axis_name(axis) << ", " << ranks << " ranks";
        if (ranks > 1) {
          EXPECT_TRUE(padded);  // the lookup, not plain indexing, finds the blocks
        }
      }
  }
}

// gps: each rank's step through global_piece / global_sink over its own replicas, which hold the
// other ranks' cells only inside read_boxes: cell by cell and as the kernel's blocks run it.
TEST(FdGps, ReplicasHoldingOnlyTheReadBoxesEqualTheReferenceBitForBit) {
  for (int r : {2, 4}) {
    // two x tiles, the second mostly outside
    FdProblem p = box_problem(2 * r + 37, 2 * r + 19, 2 * r + 14, r, 3);
    for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
      FdProblem q = p;
      q.n[static_cast<int>(axis)] = 2 * r + 3 * r + 4;  // 3 ranks: unequal slabs
      const std::vector<float> ref = fd3d_reference(q);
      for (int ranks = 1; ranks <= 3; ++ranks)
        for (const Stepper how : {Stepper{}, Stepper{true, 1}, Stepper{true, 1000}})
          EXPECT_TRUE(same_bits(run_replicas(q, axis, ranks, how), ref))
              << "R " << r << " along " << axis_name(axis) << ", " << ranks << " ranks, "
              << (how.kernel ? "kernel blocks, " + std::to_string(how.slots) + " slots" : "cell by cell");
    }
  }
}

// The read boxes are what a rank needs: the box widened along the split axis holds its neighbours'
// planes; published without it, the second step reads NaN. (The two others hold only the rank's own
// planes, which no other rank stores.)
TEST(FdGps, AReplicaMissingTheSplitAxisBoxReadsNaN) {
  FdProblem p = box_problem(17, 15, 16, 2, 2);
  const std::vector<float> ref = fd3d_reference(p);
  for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
    const int a = static_cast<int>(axis);
    const Slab3D s = slab3d(p.n, axis, 2, 2, 1);
    const auto boxes = read_boxes(s);
    EXPECT_EQ(boxes[a].lo[a], s.first - 2);
    EXPECT_EQ(boxes[a].hi[a], s.first + s.count + 2);
    for (int b = 0; b < 3; ++b) {
      const std::vector<float> got = run_replicas(p, axis, 2, {}, b);
      if (b != a) {
        EXPECT_TRUE(same_bits(got, ref)) << axis_name(axis) << " without box " << b;
        continue;
      }
      bool nan = false;
      for (float v : got) nan = nan || std::isnan(v);
      EXPECT_TRUE(nan) << axis_name(axis);
    }
  }
}

TEST(FdGps, BoxRunsAreTheBoxsCellsInOrderAndMaximal) {
  const i64 n[3] = {7, 5, 4};
  const CellBox boxes[] = {
      {{0, 0, 1}, {7, 5, 3}},  // whole planes: one run
      {{0, 1, 0}, {7, 4, 4}},  // whole rows: one run per plane
      {{2, 1, 1}, {6, 3, 4}},  // part rows: one run per row
      {{0, 0, 0}, {7, 5, 4}},  // everything
      {{3, 3, 3}, {3, 4, 4}},  // empty
  };
  for (const CellBox& b : boxes) {
    std::vector<i64> want;
    for (i64 z = b.lo[2]; z < b.hi[2]; ++z)
      for (i64 y = b.lo[1]; y < b.hi[1]; ++y)
        for (i64 x = b.lo[0]; x < b.hi[0]; ++x) want.push_back((z * n[1] + y) * n[0] + x);
    std::vector<i64> got;
    i64 end = -1;
    box_runs(n, b, [&](i64 first, i64 count) {
      EXPECT_GT(count, 0);
      EXPECT_NE(first, end) << "two runs that meet are one";
      for (i64 k = 0; k < count; ++k) got.push_back(first + k);
      end = first + count;
    });
    EXPECT_EQ(got, want);
  }
}

// published_planes on subscriptions shaped as tracking leaves them: a rank's first and last R
// planes read by its neighbours (plane pages), everything else its own.
TEST(FdGps, PublishedPlanesAreTheFacesANeighbourReads) {
  const i64 n[3] = {20, 18, 30};
  for (Axis axis : {Axis::z, Axis::y, Axis::x}) {
    const int a = static_cast<int>(axis);
    const int ranks = 3, r = 2;
    std::vector<Slab3D> s;
    for (int k = 0; k < ranks; ++k) s.push_back(slab3d(n, axis, r, ranks, k));
    // The subscribers of a cell: its owner and whoever's read box along the split axis holds it.
    const auto subscribers_of = [&](i64 cell) {
      const i64 x = cell % n[0], y = (cell / n[0]) % n[1], z = cell / (n[0] * n[1]);
      std::uint32_t m = 0;
      for (int k = 0; k < ranks; ++k) {
        const i64 c = coord(a, x, y, z);
        if ((c >= s[k].first && c < s[k].first + s[k].count) || in_box(read_boxes(s[k])[a], x, y, z)) m |= 1u << k;
      }
      return m;
    };
    for (int k = 0; k < ranks; ++k) {
      const auto pub = published_planes(s[k], 1u << k, [&](i64 f, i64 cnt) {
        gpsm::gps::RangeSubscribers rs{subscribers_of(f), true};
        for (i64 j = f; j < f + cnt; ++j) rs.uniform = rs.uniform && subscribers_of(j) == rs.mask;
        return rs;
      });
      ASSERT_TRUE(pub.has_value()) << axis_name(axis) << " rank " << k;
      // The lower face's R planes read by the rank below, then the upper face's by the one above.
      std::vector<PublishedPlanes::Run> want;
      if (k > 0) want.push_back({r, 2 * r, (1u << k) | (1u << (k - 1))});
      if (k + 1 < ranks) want.push_back({s[k].count, r + s[k].count, (1u << k) | (1u << (k + 1))});
      ASSERT_EQ(pub->runs.size(), want.size()) << axis_name(axis) << " rank " << k;
      for (std::size_t j = 0; j < want.size(); ++j) {
        EXPECT_EQ(pub->runs[j].begin, want[j].begin);
        EXPECT_EQ(pub->runs[j].end, want[j].end);
        EXPECT_EQ(pub->runs[j].mask, want[j].mask);
      }
      // As global boxes: those planes' updated cells.
      const auto boxes = published_boxes(s[k], *pub);
      ASSERT_EQ(boxes.size(), want.size());
      for (std::size_t j = 0; j < want.size(); ++j) {
        EXPECT_EQ(boxes[j].lo[a], s[k].first + want[j].begin - r);
        EXPECT_EQ(boxes[j].hi[a], s[k].first + want[j].end - r);
        EXPECT_EQ(boxes[j].lo[(a + 1) % 3], r);
        EXPECT_EQ(boxes[j].hi[(a + 1) % 3], n[(a + 1) % 3] - r);
      }
    }
  }
  // A plane whose cells disagree: no answer (the kernel asks per item). Runs of planes with
  // different subscribers stay apart.
  const Slab3D s = slab3d(n, Axis::z, 2, 2, 0);
  EXPECT_FALSE(published_planes(s, 1u, [](i64 f, i64) {
                 return gpsm::gps::RangeSubscribers{1u, f % 7 != 0};
               }).has_value());
  const auto runs = published_planes(s, 1u, [&](i64 f, i64) {
    const i64 z = f / (n[0] * n[1]);
    return gpsm::gps::RangeSubscribers{z < 6 ? 3u : z < 8 ? 5u : 1u, true};
  });
  ASSERT_TRUE(runs.has_value());
  ASSERT_EQ(runs->runs.size(), 2u);  // planes 2..5 (mask 3), 6..7 (mask 5): box coordinates 2..5, 6..7
  EXPECT_EQ(runs->runs[0].begin, 2);
  EXPECT_EQ(runs->runs[0].end, 6);
  EXPECT_EQ(runs->runs[1].end, 8);
  EXPECT_EQ(runs->runs[1].mask, 5u);
}

// Pages as tracking leaves them (a page's subscribers: every rank that stores or reads a cell of
// it), for pages of `page` bytes over a float volume: published_planes answers where the pages
// tile the planes (fd_gps_page_bytes) and not where a page straddles two planes (heat3d's rule on a
// plane that is not a power of two, as 768^3 along z is).
TEST(FdGps, PagesThatTileThePlanesLetEveryPlaneAgree) {
  const i64 n[3] = {24, 24, 40};  // a plane of 2304 bytes = 256 x 9, as 768^2 floats = 256 KiB x 9
  const int r = 2, ranks = 2;
  const auto answers = [&](std::uint64_t page) {
    const i64 per = static_cast<i64>(page / sizeof(float));
    std::vector<Slab3D> s;
    for (int k = 0; k < ranks; ++k) s.push_back(slab3d(n, Axis::z, r, ranks, k));
    const std::vector<std::uint32_t> mask = tracked_page_masks(n, s, per);
    bool all = true;
    for (int k = 0; k < ranks; ++k)
      all = all && published_planes(s[k], 1u << k, [&](i64 f, i64 c) {
                     return page_subscribers(mask, per, f, c);
                   }).has_value();
    return all;
  };
  EXPECT_EQ(fd_gps_page_bytes(n, 2, r), 256u);
  EXPECT_TRUE(answers(fd_gps_page_bytes(n, 2, r)));
  EXPECT_EQ(gpsm::apps::stencil3d::gps_page_bytes(n, 2, r), 4096u);
  EXPECT_FALSE(answers(4096));
  const i64 big[3] = {768, 768, 768};
  EXPECT_EQ(fd_gps_page_bytes(big, 2, 16), 256u * 1024);
  EXPECT_EQ(fd_gps_page_bytes(big, 1, 16), 1024u);   // a row of 3072 bytes
  EXPECT_EQ(fd_gps_page_bytes(big, 0, 16), gpsm::apps::stencil3d::gps_page_bytes(big, 0, 16));
}

// The copies step end to end on the host: pages of fd_gps_page_bytes with tracking-shaped masks
// (a page's subscribers: the ranks that store or read a cell of it), each rank's hand-written step
// into its own replica, then published_planes -> published_boxes -> plan_box_publish's copies
// (the runtime's plan) into the subscribers' replicas, and the result read as download_coherent
// does (each page from its home, the lowest subscriber): the reference's bits. Without the
// copies the second step reads NaN.
TEST(FdGps, CopiesStepWithTheRuntimesPlanEqualsTheReferenceBitForBit) {
  for (Axis axis : {Axis::z, Axis::y})
    for (bool copies : {true, false}) {
      const int r = 2, ranks = 3, a = static_cast<int>(axis);
      FdProblem p = box_problem(32, 24, 20, r, 3);  // a row of 128 bytes (a line): pages tile the rows along y
      p.n[a] = 2 * r + 3 * r + 4;                    // unequal slabs
      const i64 cells = p.n[0] * p.n[1] * p.n[2];
      const std::uint64_t page = fd_gps_page_bytes(p.n, a, r);
      const gpsm::gps::Geometry g{static_cast<std::uint64_t>(cells) * sizeof(float),
                                  static_cast<std::uint32_t>(gpsm::gps::page_shift_of(page))};
      const i64 per = static_cast<i64>(page / sizeof(float));
      std::vector<Slab3D> s;
      for (int k = 0; k < ranks; ++k) s.push_back(slab3d(p.n, axis, r, ranks, k));
      const std::vector<std::uint32_t> mask = tracked_page_masks(p.n, s, per);
      ASSERT_EQ(mask.size(), g.pages());
      const auto subscribers = [&](i64 f, i64 c) { return page_subscribers(mask, per, f, c); };
      const std::vector<float> u0 = fd3d_initial(p), poisoned = poisoned_initial(p);
      std::vector<std::vector<float>> rep[2];
      for (int k = 0; k < ranks; ++k) rep[0].push_back(u0), rep[1].push_back(poisoned);
      const std::uint64_t n[3] = {static_cast<std::uint64_t>(p.n[0]), static_cast<std::uint64_t>(p.n[1]),
                                  static_cast<std::uint64_t>(p.n[2])};
      for (int it = 0; it < p.iters; ++it) {
        const int c = it & 1;
        for (int k = 0; k < ranks; ++k) {
          run_step(replica_step(s[k], rep[c][k].data(), rep[1 - c][k].data()), Stepper{true, 1000});
          if (!copies) continue;
          const auto pub = published_planes(s[k], 1u << k, subscribers);
          ASSERT_TRUE(pub.has_value()) << axis_name(axis) << " rank " << k;
          for (const CellBox& b : published_boxes(s[k], *pub)) {
            std::uint64_t lo[3], hi[3];
            for (int d = 0; d < 3; ++d) lo[d] = static_cast<std::uint64_t>(b.lo[d]), hi[d] = static_cast<std::uint64_t>(b.hi[d]);
            for (const gpsm::gps::BoxCopy& bc : gpsm::gps::plan_box_publish(g, mask.data(), n, sizeof(float), lo, hi, k)) {
              auto& dst = rep[1 - c][static_cast<std::size_t>(bc.dst)];
              const auto& src = rep[1 - c][static_cast<std::size_t>(k)];
              if (bc.whole) {
                box_runs(p.n, b, [&](i64 f, i64 cnt) { std::copy(src.begin() + f, src.begin() + f + cnt, dst.begin() + f); });
              } else {
                for (const gpsm::gps::CopyRun& run : bc.runs) {
                  const auto f = static_cast<i64>(run.byte_offset / sizeof(float)), cnt = static_cast<i64>(run.bytes / sizeof(float));
                  std::copy(src.begin() + f, src.begin() + f + cnt, dst.begin() + f);
                }
              }
            }
          }
        }
      }
      std::vector<float> got(static_cast<std::size_t>(cells));
      for (i64 i = 0; i < cells; ++i) {
        const std::uint32_t m = mask[static_cast<std::size_t>(i / per)];
        const int home = m == 0u ? 0 : __builtin_ctz(m);
        got[static_cast<std::size_t>(i)] = rep[p.iters % 2][static_cast<std::size_t>(home)][static_cast<std::size_t>(i)];
      }
      if (copies) {
        EXPECT_TRUE(same_bits(got, fd3d_reference(p))) << axis_name(axis);
      } else {
        EXPECT_FALSE(same_bits(got, fd3d_reference(p))) << axis_name(axis) << ": the copies must matter";
      }
    }
}

TEST(FdGps, StepChoiceParsesAndRefusesWithTheChoices) {
  EXPECT_EQ(parse_gps_step_choice(nullptr), GpsStepChoice::automatic);
  EXPECT_EQ(parse_gps_step_choice(""), GpsStepChoice::automatic);
  EXPECT_EQ(parse_gps_step_choice("auto"), GpsStepChoice::automatic);
  EXPECT_EQ(parse_gps_step_choice("copies"), GpsStepChoice::copies);
  EXPECT_EQ(parse_gps_step_choice("items"), GpsStepChoice::items);
  EXPECT_EQ(parse_gps_step_choice("checked"), GpsStepChoice::checked);
  try {
    parse_gps_step_choice("tile");
    FAIL() << "accepted 'tile'";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPSM_FD3D_GPS_STEP='tile'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("use auto (the default), copies"), std::string::npos) << e.what();
  }
}

// global_piece / global_sink address box coordinates as the global cell, on every rank and axis.
TEST(FdGps, GlobalPieceAddressesTheGlobalCell) {
  const i64 n[3] = {19, 17, 23};
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int k = 0; k < 3; ++k) {
      const Slab3D s = slab3d(n, axis, 2, 3, k);
      const Piece q = global_piece(s, nullptr);
      const Sink o = global_sink(s, nullptr);
      for (i64 z = 0; z < s.local[2]; ++z)
        for (i64 y = 0; y < s.local[1]; ++y)
          for (i64 x = 0; x < s.local[0]; ++x) {
            const i64 g = (s.global(2, z) * n[1] + s.global(1, y)) * n[0] + s.global(0, x);
            ASSERT_EQ(index_in(q.off, q.sy, q.sz, x, y, z), g);
            ASSERT_EQ(index_in(o.off, o.sy, o.sz, x, y, z), g);
          }
    }
}

// The kernel's own code (fd3d_block.hpp: the tile, the queue, the apron, the remote picks, the
// pushes), every thread of every block, on every paradigm's memory, along each axis, on unequal
// slabs, at halos 2, 4 and 16, with one chunk per tile (one resident block) or many (a thousand).
TEST(FdBlock, TheKernelsPhasesOnEveryParadigmEqualTheReferenceBitForBit) {
  // R = 8 as well: there rdl's x/y picking kernel loads the apron in its plane (kApronAhead),
  // elsewhere a plane ahead.
  for (int r : {2, 4, 8, 16}) {
    const i64 split = 3 * r + 4;  // 3 ranks: r + 1, r + 1, r + 2 planes
    // two x tiles (the second mostly outside), two y tiles
    FdProblem p = box_problem(2 * r + 37, 2 * r + 19, 2 * r + 13, r, 2);
    for (Axis axis : {Axis::x, Axis::y, Axis::z}) {
      FdProblem q = p;
      q.n[static_cast<int>(axis)] = 2 * r + split;
      const std::vector<float> ref = fd3d_reference(q);
      for (i64 slots : {i64{1}, i64{1000}})
        for (int ranks : {1, 3}) {
          const Stepper how{true, slots};
          const std::string what = "R " + std::to_string(r) + " along " + axis_name(axis) + ", " +
                                   std::to_string(ranks) + " ranks, " + std::to_string(slots) + " slots, ";
          EXPECT_TRUE(same_bits(run_boxes(q, axis, ranks, Way::memcpy, how), ref)) << what << "memcpy";
          EXPECT_TRUE(same_bits(run_boxes(q, axis, ranks, Way::p2p_inline, how), ref)) << what << "p2p_inline";
          EXPECT_TRUE(same_bits(run_distributed(q, axis, ranks, nullptr, how), ref)) << what << "rdl";
          const Stepper split{true, slots, true};
          EXPECT_TRUE(same_bits(run_distributed(q, axis, ranks, nullptr, split), ref)) << what << "rdl split";
        }
    }
  }
}

// rdl's split launch: the picking kernel's items are a prefix of whole waves holding every item
// near a halo, and the plain kernel's none; on a tall slab with many chunks most items are plain.
TEST(FdBlock, TheSplitLaunchsPrefixHoldsEveryItemNearAHaloInWholeWaves) {
  bool some_plain = false;
  for (int r : {4, 16})
    for (Axis axis : {Axis::x, Axis::y, Axis::z})
      for (int ranks : {2, 3}) {
        i64 n[3] = {2 * r + 70, 2 * r + 60, 2 * r + 50};
        n[static_cast<int>(axis)] = 2 * r + 300;
        const Slab3D s0 = slab3d(n, axis, r, ranks, 0);
        const gpsm::OwnershipMap map(slab_blocks(s0), sizeof(float), 256, ranks);
        std::vector<float> mem(map.range_bytes() / sizeof(float));
        const gpsm::OwnershipLookup host = map.lookup();
        for (int rank = 0; rank < ranks; ++rank)
          for (i64 slots : {i64{1}, i64{7}, i64{132}}) {
            const Slab3D s = slab3d(n, axis, r, ranks, rank);
            const Sources in = distributed_sources(s, host, mem.data());
            const Box b = box_of(s);
            const Plan p = make_plan(b, r, slots, in.remote_faces());
            const i64 e = remote_prefix(in, b, p, r, slots);
            SCOPED_TRACE("R " + std::to_string(r) + " along " + axis_name(axis) + ", rank " + std::to_string(rank) +
                         " of " + std::to_string(ranks) + ", " + std::to_string(slots) + " slots, " +
                         std::to_string(p.items) + " items, prefix " + std::to_string(e));
            i64 last_near = -1;
            for (i64 w = 0; w < p.items; ++w)
              if (item_near_halo(in, b, p, r, w)) last_near = w;
            ASSERT_GE(last_near, 0);  // every rank has a neighbour
            EXPECT_GT(e, last_near);
            EXPECT_LT(e, last_near + 1 + slots);  // no whole wave more than needed
            EXPECT_TRUE(e % slots == 0 || e == p.items);
            // The picking kernel's own test, thread by thread: no column past the prefix picks.
            FdStep st;
            st.in = in;
            st.box = b;
            st.radius = r;
            for (i64 w = e; w < p.items; ++w)
              for (int t = 0; t < kThreads; t += 37) {
                const Column c = r == 4 ? picking_column<4>(st, p, w, t) : picking_column<16>(st, p, w, t);
                ASSERT_FALSE(c.zpick || c.xypick) << "item " << w;
              }
            some_plain = some_plain || e < p.items;
          }
      }
  EXPECT_TRUE(some_plain);
}

TEST(FdPlan, RdlLaunchParsesAndRefusesWithTheChoices) {
  EXPECT_EQ(parse_rdl_launch(nullptr), RdlLaunch::automatic);
  EXPECT_EQ(parse_rdl_launch(""), RdlLaunch::automatic);
  EXPECT_EQ(parse_rdl_launch("auto"), RdlLaunch::automatic);
  EXPECT_EQ(parse_rdl_launch("one"), RdlLaunch::one);
  EXPECT_EQ(parse_rdl_launch("split"), RdlLaunch::split);
  try {
    parse_rdl_launch("two");
    ADD_FAILURE() << "GPSM_FD3D_RDL_LAUNCH=two was accepted";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("use auto (the default"), std::string::npos) << e.what();
  }
}

TEST(FdPlan, RdlLaunchAutoIsOneAlongXAndYAndSplitAlongZ) {
  EXPECT_EQ(resolve_rdl_launch(RdlLaunch::automatic, 0), RdlLaunch::one);
  EXPECT_EQ(resolve_rdl_launch(RdlLaunch::automatic, 1), RdlLaunch::one);
  EXPECT_EQ(resolve_rdl_launch(RdlLaunch::automatic, 2), RdlLaunch::split);
  for (int axis = 0; axis < 3; ++axis) {  // a choice made is kept
    EXPECT_EQ(resolve_rdl_launch(RdlLaunch::one, axis), RdlLaunch::one);
    EXPECT_EQ(resolve_rdl_launch(RdlLaunch::split, axis), RdlLaunch::split);
  }
}

TEST(FdLayout, SlabBlocksAreTheRanksSpansAndOtherMapsAreRefused) {
  const i64 n[3] = {20, 21, 23};
  const Slab3D s0 = slab3d(n, Axis::y, 4, 3, 0);
  const gpsm::BlockSpec spec = slab_blocks(s0);
  EXPECT_EQ(spec.cuts[0], (std::vector<std::uint64_t>{0, 20}));
  EXPECT_EQ(spec.cuts[2], (std::vector<std::uint64_t>{0, 23}));
  ASSERT_EQ(spec.cuts[1].size(), 4u);
  for (int r = 0; r < 3; ++r) {
    const Range sp = stencil3d::span_of(slab3d(n, Axis::y, 4, 3, r));
    EXPECT_EQ(spec.cuts[1][r], static_cast<std::uint64_t>(sp.begin));
    EXPECT_EQ(spec.cuts[1][r + 1], static_cast<std::uint64_t>(sp.end));
  }
  // A 2 x 1 x 1 owner grid cuts along x: not slabs along y.
  const gpsm::OwnershipMap grid(gpsm::blocks::owner_grid({20, 21, 23}, 2, 1, 1), sizeof(float), 256, 2);
  std::vector<float> mem(grid.range_bytes() / sizeof(float));
  const Slab3D s1 = slab3d(n, Axis::y, 4, 2, 1);
  try {
    distributed_sources(s1, grid.lookup(), mem.data());
    ADD_FAILURE() << "a map of x halves was taken for y slabs";
  } catch (const gpsm::Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not a whole slab"), std::string::npos) << e.what();
  }
  // Slabs along y cut elsewhere (an even split of all 21 rows, not of the interior): the halo
  // planes of rank 1 straddle two blocks.
  const gpsm::OwnershipMap even(gpsm::blocks::along({20, 21, 23}, gpsm::Axis::y, 3), sizeof(float), 256, 3);
  std::vector<float> mem3(even.range_bytes() / sizeof(float));
  bool refused = false;
  for (int r = 0; r < 3; ++r) {
    try {
      distributed_sources(slab3d(n, Axis::y, 4, 3, r), even.lookup(), mem3.data());
    } catch (const gpsm::Error& e) {
      refused = refused || std::string(e.what()).find("build the map with slab_blocks") != std::string::npos;
    }
  }
  EXPECT_TRUE(refused);
}

// The app as gpsm bench sees it: sizes, default iterations, paradigms, memory per GPU, and the
// requests it refuses before touching a GPU.
TEST(FdApp, SizesIterationsParadigmsAndRefusals) {
  const std::unique_ptr<App> app = gpsm::test::app_named("fd3d");
  ASSERT_NE(app, nullptr);
  EXPECT_EQ(app->default_sizes(), "512:h4,768:h16");
  EXPECT_EQ(app->expand_size("table1:z").size(), 12u);
  const Problem p = app->problem("512:h4:x", 0);
  EXPECT_EQ(p.label(), "512:h4:x");
  EXPECT_EQ(p.iters, 32);                                 // 2^32 / 512^3
  EXPECT_EQ(app->problem("768:h16", 0).iters, 10);        // the floor
  EXPECT_EQ(app->problem("128:h2", 0).iters, 100);        // the cap
  EXPECT_EQ(app->problem("128:h2", 7).iters, 7);
  EXPECT_THROW(app->problem("128:h5", 0), std::invalid_argument);
  for (Paradigm par :
       {Paradigm::single, Paradigm::memcpy, Paradigm::p2p_inline, Paradigm::rdl, Paradigm::gps, Paradigm::infinite})
    EXPECT_TRUE(app->has(par)) << paradigm_name(par);
  for (Paradigm par : {Paradigm::um, Paradigm::nccl, Paradigm::cpu_free, Paradigm::proact})
    EXPECT_FALSE(app->has(par)) << paradigm_name(par);
  // Split along x (the size's axis, whatever --axis says): 504 interior columns, 252 a GPU, each
  // box 252 + 2 x 4 columns wide, two buffers.
  Problem q = p;
  q.axis = Axis::z;
  EXPECT_EQ(app->gpu_bytes_per_gpu(q, 2, Paradigm::memcpy), 2.0 * 4 * 260 * 512 * 512);
  EXPECT_EQ(app->gpu_bytes_per_gpu(q, 2, Paradigm::gps), 2.0 * 4 * 512 * 512 * 512);  // both whole volumes

  RunRequest r;
  r.devices = {0, 1};
  r.problem = app->problem("64x64x40:h16:z", 2);
  r.paradigm = Paradigm::single;
  RunOutcome o = app->run(r);
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_EQ(o.reason, "single runs on one GPU");
  r.paradigm = Paradigm::rdl;
  o = app->run(r);
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_EQ(o.reason, "8 interior planes along z leave a GPU fewer than 16 (the halo)");
  r.paradigm = Paradigm::um;
  o = app->run(r);
  EXPECT_EQ(o.status, RunStatus::unsupported);
  EXPECT_NE(o.reason.find("not implemented for fd3d"), std::string::npos) << o.reason;
}
