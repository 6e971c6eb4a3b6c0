#pragma once
// How an fd3d step splits a rank's box into work items (kernel blocks). Plain C++ (GPSM_HD where
// the kernel needs it), checked by the CPU tests.
//
// The kernel (fd3d_kernels.cu; the design of 3D finite differences on GPUs, Micikevicius, which
// GPU-SM's kernel follows): a block of kTx x kTy threads owns a tile of kTx x kTy columns of the updated region
// in the x-y plane and marches along z over a chunk of planes; each thread keeps its column's
// 2R + 1 planes in a register queue and the block the current plane's tile, with R cells of apron
// along x and y, in shared memory. So an item = (x tile, y tile, chunk of z planes).
//
// Chunks: a chunk of L planes costs L steps plus the queue's priming: 2R loads a thread issues back
// to back (no tile, no barrier, no arithmetic), so about one memory latency, estimated at
// kPrimeSteps plane steps whatever R (a step is one load latency at R = 2, where the kernel is
// memory-bound; at R = 16 a step is ~240 instructions per warp). Items go to the GPU's `slots`
// (blocks resident at once) in waves. The chunk count minimises waves x (L + kPrimeSteps), ties to
// fewer items: 1 chunk when the tiles alone fill whole waves, more when a wave's tail or too few
// tiles would idle SMs (128^3: 4 x 8 tiles, GPU-SM's Table 1 grid of 32 blocks, far fewer than an
// H200 holds).
//
// Order: items whose cells a neighbour reads (rdl: whose loads cross the link; p2p_inline: whose
// stores do) come first, so their link latency overlaps the interior: along the split axis the
// tiles (split along x or y) or chunks (along z) go 0, last, 1, last - 1, ... and vary slowest.
//
// Edge tiles that cost more: split along x or y, rdl's tiles at a remote face load their apron
// across the link at every plane. Loaded in the plane that uses it, before the plane's barrier,
// each of their plane steps waited one link latency more; with one chunk per tile those tiles
// marched the whole z extent alone: 2xH200, 512^3:h4 split along x, rdl 1194.9 us an iteration
// against 772.0 with the exchange elided (along y 1122.9 / 733.7), ~1.55x per plane step. The
// apron is now loaded a plane ahead, as the column's own cells are (fd3d_block.hpp's Queue::ap),
// but kRemoteApronStep is still the figure measured before that (not measured since). The chunk
// count is then chosen by the makespan of the items in order (edge items first, each costing
// edge_cost times an interior one) on the resident blocks: more, shorter chunks, whose edge items
// finish within the interior's waves.
#include <cstdint>

#include "apps/stencil3d/stencil3d_plan.hpp"  // Box
#include "gpsm/gps/config.hpp"

namespace gpsm::apps::fd3d {

constexpr int kTx = 32, kTy = 16;  // threads per block along x and y (a warp along x)
constexpr int kThreads = kTx * kTy;
constexpr double kPrimeSteps = 2.0;
// rdl's edge tile plane step over an interior one, split along x or y (header; 2xH200, h4).
constexpr double kRemoteApronStep = 1.55;

struct Plan {
  std::int64_t tiles[2] = {0, 0};  // along x, y over the updated region [R, n - R)
  std::int64_t chunks = 0;         // along z over the updated planes [R, n[2] - R)
  std::int64_t chunk = 0;          // planes per chunk (the last one may be shorter)
  std::int64_t items = 0;          // tiles[0] * tiles[1] * chunks
  int edge = 2;                    // the box's split axis: its tiles (0, 1) or chunks (2) go edges first
};

// Chunk length for `planes` updated planes over `tiles` tiles on `slots` resident blocks (header),
// `edge_tiles` of which (scheduled first) cost `edge_cost` times an interior tile a plane; and the
// modelled time of a split into chunks of `len` planes, in plane steps: the makespan of the items
// in order on the slots, each taken by the first free one.
std::int64_t chunk_length(std::int64_t planes, std::int64_t tiles, int radius, std::int64_t slots,
                          std::int64_t edge_tiles = 0, double edge_cost = 1.0);
double chunk_cost(std::int64_t planes, std::int64_t tiles, std::int64_t slots, std::int64_t len,
                  std::int64_t edge_tiles = 0, double edge_cost = 1.0);
// remote_faces: the box's faces along its split axis x or y whose apron is loaded across the link
// (rdl: 0, 1 or 2); their tiles cost kRemoteApronStep. Along z (the edge items are chunks, whose
// remote planes the column loads fetch ahead) it is ignored.
Plan make_plan(const stencil3d::Box& b, int radius, std::int64_t slots, int remote_faces = 0);

// How rdl's step is launched (GPSM_FD3D_RDL_LAUNCH): `split`: the items near a halo in the kernel
// that picks each load's block, the others in the plain kernel the local-box paradigms run
// (fd3d_block.hpp's remote_prefix), two launches on the same plan; `one`: the picking kernel for
// every item; `auto` (the default): one split along x or y, split along z (resolve_rdl_launch).
// Why, on one H200 with the neighbours' blocks in the same memory (no link;
// experiments/fd3d-gps/rdl_pick_probe.cu): split was at or below one in 23 of 24 configurations
// with the picking kernels of 8996bf3, the picking kernel being slower on every item. Since the x/y
// picking kernels load the apron a plane ahead (4a26c0f) they cost ~nothing on items far from a
// halo, and one ran below split in 5 of 7 x/y configurations at 512^3-768^3 (3-18 % at halo 4:
// split's two kernels leave the first one's last wave short), at most 1.4 % above at halo 16
// (results/nvidia-h200/2026-11-29_4a26c0f_fd3d-apron-ahead). Along z the two are alike on one
// GPU and on 2xH200 (within 0.2 %, 0d7b47e) and split stays.
enum class RdlLaunch : std::uint8_t { automatic, one, split };
RdlLaunch parse_rdl_launch(const char* text);  // null, "" or "auto" is automatic; throws gpsm::Error naming the choices
RdlLaunch rdl_launch_from_env();
// The launch a step split along `axis` (0 x, 1 y, 2 z) gets: one or split (automatic resolved).
RdlLaunch resolve_rdl_launch(RdlLaunch l, int axis);

// Position k of the order 0, n - 1, 1, n - 2, ...: the two ends first.
GPSM_HD std::int64_t edges_first(std::int64_t k, std::int64_t n) { return (k & 1) ? n - 1 - (k >> 1) : (k >> 1); }

// Work item w -> its x tile, y tile and chunk. The edge coordinate varies slowest; the other two
// keep x before y before z. (Branches, not arrays indexed by p.edge: those would live in a
// kernel's local memory.)
GPSM_HD void item_of(const Plan& p, std::int64_t w, std::int64_t& tx, std::int64_t& ty, std::int64_t& ch) {
  if (p.edge == 0) {
    const std::int64_t per = p.tiles[1] * p.chunks, k = w / per, rest = w - k * per;
    tx = edges_first(k, p.tiles[0]);
    ty = rest % p.tiles[1];
    ch = rest / p.tiles[1];
  } else if (p.edge == 1) {
    const std::int64_t per = p.tiles[0] * p.chunks, k = w / per, rest = w - k * per;
    ty = edges_first(k, p.tiles[1]);
    tx = rest % p.tiles[0];
    ch = rest / p.tiles[0];
  } else {
    const std::int64_t per = p.tiles[0] * p.tiles[1], k = w / per, rest = w - k * per;
    ch = edges_first(k, p.chunks);
    tx = rest % p.tiles[0];
    ty = rest / p.tiles[0];
  }
}

// Updated planes [z0, z1) of chunk ch.
GPSM_HD void chunk_planes(const Plan& p, const stencil3d::Box& b, int radius, std::int64_t ch, std::int64_t& z0,
                          std::int64_t& z1) {
  z0 = radius + ch * p.chunk;
  const std::int64_t end = b.n[2] - radius;
  z1 = z0 + p.chunk < end ? z0 + p.chunk : end;
}

}  // namespace gpsm::apps::fd3d
