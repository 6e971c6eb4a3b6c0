#pragma once
// What one thread of fd3d's step kernel does, phase by phase (fd3d_kernels.cu runs them with a
// block barrier between the phases), as plain C++ with GPSM_HD: the CPU tests run every thread of a
// block through the same functions, phase by phase over a host tile (emulate_step), so the
// kernel's tiles, queue, aprons and remote picks are checked without a GPU. The design is in
// fd3d_plan.hpp's header comment; fd3d_step.hpp has the loads and stores.
//
// Per work item:   Column c = column_of(...); prime(c, u)
// per plane z:     advance(c, u, z)  | barrier |  fill_tile(c, u, z, tile)  | barrier |  compute(c, u, z, tile)
#include <cstdint>

#include "apps/fd3d/fd3d_plan.hpp"
#include "apps/fd3d/fd3d_step.hpp"

namespace gpsm::apps::fd3d {

// The block's shared tile of one plane: its kTx x kTy cells and an apron of R along x and y.
template <int R>
using TileRow = float[kTx + 2 * R];

// One thread's column of a work item. Coordinates are 32-bit (extents are at most 99999,
// fd3d_spec.cpp), indices 64-bit: at R = 16 the queue alone takes 33 registers.
struct Column {
  int x0 = 0, y0 = 0, z0 = 0, z1 = 0;  // the tile's first cell, the chunk's planes [z0, z1)
  int x = 0, y = 0;                    // this thread's column
  bool has = false;                    // a cell of the box: loaded and shared
  bool upd = false;                    // an updated cell: also computed and stored
  // rdl: split along z, the column's loads of halo planes pick their block as they are loaded (the
  // tile's plane is always an owned one); split along x or y, the column's piece is fixed by
  // (x, y) and the apron's loads pick theirs, cell by cell. Both false where the tile's cells,
  // widened by R, stay inside the owned coordinates (a test uniform over the block).
  bool zpick = false, xypick = false;
  const float* col = nullptr;          // the column's cell at plane 0 (of its piece)
  std::int64_t csz = 0;                // and the piece's plane stride
  // Split along z: the same column in the lower and upper neighbours' blocks (col where this item
  // reads none of them), so a halo plane's load picks a pointer, not a piece: split along z every
  // block is whole slabs of the same extents, so mid's plane stride csz is theirs (distributed_sources
  // refuses any other map: fd3d_layout.cpp's block_at). Picking the piece per load (piece_at and its index
  // math in every column load: 3976 SASS instructions against the plain kernel's 1656 at R = 16)
  // made the picking kernel 7-10 % slower than the plain one on one H200 with no link involved;
  // with the pointer pick, 3-6 % (experiments/fd3d-gps/rdl_pick_probe.cu).
  const float* lo_col = nullptr;
  const float* hi_col = nullptr;
};

// Whether a tile's loads may reach the remote pieces: its cells along the split axis [lo, hi),
// widened by R on both sides, meet a halo coordinate.
GPSM_HD bool near_halo(const Sources& in, int r, std::int64_t lo, std::int64_t hi) {
  return lo - r < in.lo_end || hi + r > in.hi_begin;
}

// Whether work item w's loads may reach a remote piece (near_halo over the item's extent along the
// split axis, as column_of asks it per block).
inline bool item_near_halo(const Sources& in, const Box& b, const Plan& p, int r, std::int64_t w) {
  std::int64_t bx, by, ch, lo, hi;
  item_of(p, w, bx, by, ch);
  if (b.axis == 0) return near_halo(in, r, r + bx * kTx, r + (bx + 1) * kTx);
  if (b.axis == 1) return near_halo(in, r, r + by * kTy, r + (by + 1) * kTy);
  chunk_planes(p, b, r, ch, lo, hi);
  return near_halo(in, r, lo, hi);
}

// rdl's split launch (GPSM_FD3D_RDL_LAUNCH=split): the first item the plain kernel may take. The
// items whose loads may cross the link come first in the plan's order (edges first), so they are a
// prefix: it ends after the last of them in that order (the split axis's two ends, or more
// positions where those are shorter than R), rounded up to whole waves of `slots` resident blocks
// so that the picking kernel's last wave is full; at most p.items; 0 when no item is near a halo.
inline std::int64_t remote_prefix(const Sources& in, const Box& b, const Plan& p, int r, std::int64_t slots) {
  const std::int64_t along = b.axis == 0 ? p.tiles[0] : b.axis == 1 ? p.tiles[1] : p.chunks;
  const std::int64_t per = along > 0 ? p.items / along : 0;  // items per position along the split axis
  std::int64_t end = 0;
  for (std::int64_t k = 0; k < along; ++k)
    if (item_near_halo(in, b, p, r, k * per)) end = (k + 1) * per;
  if (end == 0) return 0;
  const std::int64_t s = slots > 0 ? slots : 1;
  const std::int64_t full = (end + s - 1) / s * s;
  return full < p.items ? full : p.items;
}

// Which of a step's loads may pick a neighbour's block (rdl), a kernel template argument so that
// each kernel holds only its own picks: none (one box), z (split along z: the halo planes, through
// the column's loads), x or y (split along x or y: the column's piece and the apron's cells).
enum class Pick : int { none, z, x, y };
GPSM_HD constexpr Pick pick_for(bool remote, int axis) {
  return !remote ? Pick::none : axis == 2 ? Pick::z : axis == 1 ? Pick::y : Pick::x;
}

template <int R, Pick kPick>
GPSM_HD Column column_of(const FdStep& s, const Plan& p, std::int64_t w, int tx, int ty) {
  Column c;
  std::int64_t bx, by, ch, lo, hi;
  item_of(p, w, bx, by, ch);
  chunk_planes(p, s.box, R, ch, lo, hi);
  c.x0 = R + static_cast<int>(bx) * kTx;
  c.y0 = R + static_cast<int>(by) * kTy;
  c.z0 = static_cast<int>(lo);
  c.z1 = static_cast<int>(hi);
  c.x = c.x0 + tx;
  c.y = c.y0 + ty;
  const int n0 = static_cast<int>(s.box.n[0]), n1 = static_cast<int>(s.box.n[1]), a = s.box.axis;
  c.has = c.x < n0 && c.y < n1;
  c.upd = c.x < n0 - R && c.y < n1 - R;
  if constexpr (kPick != Pick::none) {
    const int t0 = a == 0 ? c.x0 : a == 1 ? c.y0 : c.z0;
    const int t1 = a == 0 ? c.x0 + kTx : a == 1 ? c.y0 + kTy : c.z1;
    const bool remote = near_halo(s.in, R, t0, t1);
    // Along z both stay run-time choices: with xypick known false there, ptxas gave the z kernel
    // 99 registers instead of 112 and it ran 2 % slower at R = 16 (one H200, rdl_pick_probe).
    c.zpick = remote && (kPick == Pick::z && a == 2);
    c.xypick = remote && (kPick != Pick::z || a != 2);
  }
  const Piece& q = c.xypick ? piece_at(s.in, a, c.x, c.y, 0) : s.in.mid;
  c.col = q.p + (q.off + c.x + c.y * q.sy);
  c.csz = q.sz;
  c.lo_col = c.hi_col = c.col;
  if constexpr (kPick == Pick::z) {
    if (c.zpick && s.in.lo.p != nullptr) c.lo_col = s.in.lo.p + (s.in.lo.off + c.x + c.y * s.in.lo.sy);
    if (c.zpick && s.in.hi.p != nullptr) c.hi_col = s.in.hi.p + (s.in.hi.off + c.x + c.y * s.in.hi.sy);
  }
  return c;
}

// The column's cell at plane z (along z, a halo plane from the neighbour's block: lo_col / hi_col).
template <Pick kPick>
GPSM_HD float front(const FdStep& s, const Column& c, int z) {
  if constexpr (kPick == Pick::z) {
    const float* col = z < s.in.lo_end ? c.lo_col : z >= s.in.hi_begin ? c.hi_col : c.col;
    return col[z * c.csz];
  } else {
    return c.col[z * c.csz];
  }
}

// A thread's share of a plane's apron, as slots in a fixed order: first the rows of the apron
// along y in its column (j = ty + i kTy < 2R), then its cell of the columns along x (k = tx + kTx ty +
// i kThreads < 2 R kTy), the cells fill_apron loads. The counts are compile-time so that a slot
// is a register.
template <int R>
struct ApronSlots {
  static constexpr int kY = (2 * R + kTy - 1) / kTy;
  static constexpr int kX = (2 * R * kTy + kThreads - 1) / kThreads;
  static constexpr int kAll = kY + kX;
};

// Whether rdl's x/y picking kernel loads the apron a plane ahead (fill_tile). Not at R = 8: there
// the two registers it holds pushed the kernel's spills (64 registers, its launch bound) from 12-16
// to 68 bytes, and on one H200 one/plain went 0.89 -> 1.01 along x and 1.05 -> 1.17 along y
// (512^3, results/nvidia-h200/2026-11-29_4a26c0f_fd3d-apron-ahead); loaded in its plane through
// pick_load it spills nothing (ptxas). At R = 2 and 4 the plane-ahead kernel spills nothing (8
// bytes before, at 4); at 16 it holds one block an SM either way.
template <int R>
inline constexpr bool kApronAhead = R != 8;

// f(slot, x, y, tile row, tile column) for each of the thread's apron cells inside the box, in
// fill_apron's cells and ApronSlots' order.
template <int R, class F>
GPSM_HD void for_apron(const Column& c, int n0, int n1, int tx, int ty, const F& f) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < ApronSlots<R>::kY; ++i) {
    const int j = ty + i * kTy;
    const int yy = j < R ? c.y0 - R + j : c.y0 + kTy + (j - R);
    if (j < 2 * R && c.x < n0 && yy < n1) f(i, c.x, yy, yy - c.y0 + R, tx + R);
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < ApronSlots<R>::kX; ++i) {
    const int k = tx + kTx * ty + i * kThreads;
    const int row = k / (2 * R), col = k % (2 * R);
    const int xx = col < R ? c.x0 - R + col : c.x0 + kTx + (col - R), yy = c.y0 + row;
    if (k < kTy * 2 * R && xx < n0 && yy < n1) f(ApronSlots<R>::kY + i, xx, yy, row + R, xx - c.x0 + R);
  }
}

// Cell (x, y, z) from the block its coordinate along the split axis x or y lies in (rdl).
template <Pick kPick>
GPSM_HD float pick_load(const Sources& in, int x, int y, int z) {
  const std::int64_t k = kPick == Pick::x ? x : y;
  const Piece& q = k < in.lo_end ? in.lo : k >= in.hi_begin ? in.hi : in.mid;
  return q.p[index_in(q.off, q.sy, q.sz, x, y, z)];
}

// A thread's column in registers: q[k] = plane z - R + k during plane z's step, and the next
// kPrefetch planes loaded ahead (pf[k] = plane z + R + 1 + k after the step's advance). A thread
// has these loads in flight while the block works on the current plane: at R = 2 the kernel is
// memory-bound, and one load per thread in flight (32 warps of 4-byte loads per SM, ~4 KB) would
// hold an H200 to a fifth of its bandwidth; four keep ~16 KB in flight per SM. At R >= 8 the
// arithmetic dominates and two suffice (registers are scarcer there).
template <int R>
struct Queue {
  static constexpr int kPrefetch = R <= 4 ? 4 : 2;
  float q[2 * R + 1];
  float pf[kPrefetch];
  // rdl split along x or y, in a tile near a halo: the thread's apron cells of the next plane
  // (for_apron's slots), loaded a plane ahead. Unused (and dropped by the compiler) elsewhere.
  float ap[ApronSlots<R>::kAll];
};

// The queue before the first plane: q[1 .. 2R] = planes z0 - R .. z0 + R - 1, pf[k] = plane
// z0 + R + k where the chunk needs it (k < z1 - z0).
template <int R, Pick kPick>
GPSM_HD void prime(const FdStep& s, const Column& c, Queue<R>& u) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = 0; d < 2 * R; ++d) u.q[d + 1] = c.has ? front<kPick>(s, c, c.z0 - R + d) : 0.0f;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k < Queue<R>::kPrefetch; ++k) u.pf[k] = c.has && k < c.z1 - c.z0 ? front<kPick>(s, c, c.z0 + R + k) : 0.0f;
  if constexpr ((kPick == Pick::x || kPick == Pick::y) && kApronAhead<R>) {
    if (c.xypick)  // the first plane's apron (fill_tile loads each next one)
      for_apron<R>(c, static_cast<int>(s.box.n[0]), static_cast<int>(s.box.n[1]), c.x - c.x0, c.y - c.y0,
                   [&](int i, int xx, int yy, int, int) { u.ap[i] = pick_load<kPick>(s.in, xx, yy, c.z0); });
  }
}

// Plane z: the queue moves one plane on (q[k] = plane z - R + k), and the plane kPrefetch steps
// ahead is loaded (if the chunk needs it).
template <int R, Pick kPick>
GPSM_HD void advance(const FdStep& s, const Column& c, Queue<R>& u, int z) {
  constexpr int P = Queue<R>::kPrefetch;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int d = 0; d < 2 * R; ++d) u.q[d] = u.q[d + 1];
  u.q[2 * R] = u.pf[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k + 1 < P; ++k) u.pf[k] = u.pf[k + 1];
  u.pf[P - 1] = c.has && z + P < c.z1 ? front<kPick>(s, c, z + R + P) : 0.0f;
}

// This thread's part of a plane's apron (R rows above and below the tile along y, R columns left
// and right along x), each cell from at(x, y): for_apron's cells, written out. Through for_apron
// every kernel's SASS changes (plain R = 16: 1280 instructions instead of 1656, the z picking
// kernel 1664 instead of 3368), not yet timed, so the loops stay as they were measured.
template <int R, class At>
GPSM_HD void fill_apron(const Column& c, int n0, int n1, int tx, int ty, TileRow<R>* tile, const At& at) {
  for (int j = ty; j < 2 * R; j += kTy) {
    const int yy = j < R ? c.y0 - R + j : c.y0 + kTy + (j - R);
    if (c.x < n0 && yy < n1) tile[yy - c.y0 + R][tx + R] = at(c.x, yy);
  }
  for (int k = tx + kTx * ty; k < kTy * 2 * R; k += kThreads) {
    const int row = k / (2 * R), col = k % (2 * R);
    const int xx = col < R ? c.x0 - R + col : c.x0 + kTx + (col - R), yy = c.y0 + row;
    if (xx < n0 && yy < n1) tile[row + R][xx - c.x0 + R] = at(xx, yy);
  }
}

// This thread's share of plane z's tile: its own cell (the queue's centre) and its part of the
// apron (R rows above and below the tile along y, R columns left and right along x).
template <int R, Pick kPick>
GPSM_HD void fill_tile(const FdStep& s, const Column& c, Queue<R>& u, int z, int tx, int ty, TileRow<R>* tile) {
  const int n0 = static_cast<int>(s.box.n[0]), n1 = static_cast<int>(s.box.n[1]), a = s.box.axis;
  const Piece& mid = s.in.mid;
  const float* plane = mid.p + (mid.off + z * mid.sz);  // mid's plane z
  if (c.has) tile[ty + R][tx + R] = u.q[R];
  const auto local = [&](int xx, int yy) { return plane[xx + yy * mid.sy]; };
  if constexpr (kPick == Pick::x || kPick == Pick::y) {
    // Split along x or y: each apron cell's block by its coordinate along the split axis, which the
    // kernel knows (one kernel for both axes, piece_at taking the axis at run time, was 3976 SASS
    // instructions at R = 16 against 2208, and 6-7 % slower at halo 16 on one H200). The three
    // blocks' plane z found once a plane instead spilled 70-100 bytes at R <= 8 (not run).
    // The apron comes from registers loaded a plane ahead, and the next plane's is loaded here: a
    // neighbour's cells cross the link, and loaded in the plane they are used the block waits for
    // them at the barrier that follows, every plane (the column's own loads are ahead already:
    // the queue's prefetch).
    if (c.xypick && kApronAhead<R>) {
      for_apron<R>(c, n0, n1, tx, ty, [&](int i, int xx, int yy, int row, int col) {
        tile[row][col] = u.ap[i];
        u.ap[i] = pick_load<kPick>(s.in, xx, yy, z + 1);  // z + 1 <= z1 <= n - R: in the box
      });
    } else if (c.xypick) {
      fill_apron<R>(c, n0, n1, tx, ty, tile, [&](int xx, int yy) { return pick_load<kPick>(s.in, xx, yy, z); });
    } else {
      fill_apron<R>(c, n0, n1, tx, ty, tile, local);
    }
  } else if constexpr (kPick == Pick::z) {
    if (c.xypick)  // false along z; the branch stays for the registers (column_of says why)
      fill_apron<R>(c, n0, n1, tx, ty, tile, [&](int xx, int yy) { return load<true>(s.in, a, xx, yy, z); });
    else
      fill_apron<R>(c, n0, n1, tx, ty, tile, local);
  } else {
    fill_apron<R>(c, n0, n1, tx, ty, tile, local);
  }
}

// This thread's updated cell at the current plane from the tile (x, y) and the queue (z), in
// fd_cell's order (the GPS step stores it through its view: fd3d_gps_kernels.cu).
template <int R>
GPSM_HD float cell_value(const FdStep& s, const Queue<R>& u, int tx, int ty, const TileRow<R>* tile) {
  const auto at = [&](int d, int k) -> float {
    return d == 0 ? tile[ty + R][tx + R + k] : d == 1 ? tile[ty + R + k][tx + R] : u.q[R + k];
  };
  return fd_cell(s.w, R, at);
}

// The cell at plane z (cell_value); stored, and pushed where p2p_inline asks (kPush).
template <int R, bool kPush>
GPSM_HD void compute(const FdStep& s, const Column& c, const Queue<R>& u, int z, int tx, int ty,
                     const TileRow<R>* tile) {
  if (!c.upd) return;
  const float v = cell_value<R>(s, u, tx, ty, tile);
  if constexpr (kPush)
    fd_store(s, c.x, c.y, z, v);
  else
    s.out.p[index_in(s.out.off, s.out.sy, s.out.sz, c.x, c.y, z)] = v;
}

}  // namespace gpsm::apps::fd3d
