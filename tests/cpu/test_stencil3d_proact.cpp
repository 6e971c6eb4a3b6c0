// heat3d / wave3d proact paradigm, its plain C++ half (apps/stencil3d/stencil3d_proact_plan.hpp):
// the readiness counts the copy streams wait for must equal the work items that write each edge
// (fewer: a copy ships planes still being written; more: the wait never ends), those items come
// first in the launch, and the copies fill every halo cell from its owner, moving the memcpy
// paradigm's bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"
#include "apps/stencil3d/stencil3d_proact_plan.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::stencil3d;
using i64 = std::int64_t;

namespace {

// Planes [a, e) of the march axis that chunk ch writes, derived here from the plan's fields (not
// through chunk_range): edge chunks first when p.edges, then interior chunks of p.chunk planes.
void chunk_planes(const Plan& p, i64 count, int r, i64 ch, i64& a, i64& e) {
  if (p.edges && ch < 2) {
    a = ch == 0 ? r : count;
    e = a + r;
    return;
  }
  const i64 k = ch - (p.edges ? 2 : 0);
  a = p.mi0 + k * p.chunk;
  e = std::min(a + p.chunk, p.mi1);
}

Box box_along(int axis, int r, i64 count, i64 other) {
  Box b;
  b.n[0] = 36;
  b.n[1] = b.n[2] = other;
  b.n[axis] = count + 2 * r;
  b.axis = axis;
  b.count = count;
  return b;
}

}  // namespace

TEST(Stencil3DProact, ReadyTargetIsTheItemsWritingEachEdgeAndTheyComeFirst) {
  int with_edges = 0, without = 0;
  for (int axis : {1, 2})
    for (int r : {1, 2})
      for (i64 count : {2LL, 3LL, 4LL, 9LL, 64LL, 127LL})
        for (i64 target : {1LL, 5LL, 132LL, 528LL})
          for (int v : {1, 4}) {
            if (count < r) continue;
            const Box b = box_along(axis, r, count, 45);
            const Plan p = make_plan(r, v, b, true, target);
            SCOPED_TRACE("axis " + std::to_string(axis) + " r " + std::to_string(r) + " count " +
                         std::to_string(count) + " target " + std::to_string(target) + " v " + std::to_string(v));
            const i64 tiles01 = p.tiles[0] * p.tiles[1];
            for (int side = 0; side < 2; ++side) {
              const i64 lo = side == 0 ? r : count, hi = lo + r;  // the planes the neighbour reads
              i64 items = 0, last = -1;
              std::vector<std::vector<int>> covered(static_cast<std::size_t>(tiles01), std::vector<int>(r, 0));
              for (i64 w = 0; w < p.items; ++w) {
                i64 xt = 0, ot = 0, ch = 0, a = 0, e = 0;
                item_tiles(p, w, xt, ot, ch);
                chunk_planes(p, count, r, ch, a, e);
                if (e <= lo || a >= hi) continue;
                ++items;
                last = w;
                for (i64 m = std::max(a, lo); m < std::min(e, hi); ++m)
                  covered[static_cast<std::size_t>(xt + ot * p.tiles[0])][static_cast<std::size_t>(m - lo)] = 1;
              }
              EXPECT_EQ(ready_target(p, count, r, side), items) << "side " << side;
              // The counted items write every edge plane of every tile: when the counter reaches
              // the target, the whole edge is there.
              for (const auto& t : covered)
                for (int c : t) EXPECT_EQ(c, 1) << "side " << side;
              if (p.edges) {
                // One thin chunk per side, and its items are the launch's first: side 0's are
                // items [0, tiles01), side 1's [tiles01, 2 tiles01).
                EXPECT_EQ(items, tiles01);
                EXPECT_EQ(last, (side + 1) * tiles01 - 1);
              }
            }
            (p.edges ? with_edges : without) += 1;
          }
  // Both kinds of plan were checked: edge chunks, and count < 2R where interior chunks hold the edges.
  EXPECT_GT(with_edges, 0);
  EXPECT_GT(without, 0);
}

TEST(Stencil3DProact, ReadyTargetRefusesASplitAlongX) {
  const Plan p = make_plan(1, 1, box_along(0, 1, 9, 21), true, 64);
  ASSERT_TRUE(p.x_first);
  EXPECT_THROW(ready_target(p, 9, 1, 0), std::invalid_argument);
}

// Every rank's local box holds the global index of each cell it owns (and of the boundary layer);
// halo cells hold -1. After every rank's copies, every halo cell a neighbour fills holds its
// global index, and nothing else changed.
TEST(Stencil3DProact, CopiesFillEveryHaloFromItsOwnerWithTheMemcpyBytes) {
  const i64 n[3] = {15, 13, 17};  // odd interiors: 2 ranks own unequal plane counts along every axis
  for (Axis axis : {Axis::x, Axis::y, Axis::z})
    for (int r : {1, 2})
      for (int ranks : {1, 2, 3}) {
        SCOPED_TRACE(std::string("axis ") + axis_name(axis) + " r " + std::to_string(r) + " ranks " +
                     std::to_string(ranks));
        const int a = static_cast<int>(axis);
        std::vector<Slab3D> slabs;
        for (int k = 0; k < ranks; ++k) slabs.push_back(slab3d(n, axis, r, ranks, k));
        auto id = [&](i64 gx, i64 gy, i64 gz) { return static_cast<double>((gz * n[1] + gy) * n[0] + gx); };
        auto is_halo = [&](const Slab3D& s, i64 l) {
          return (s.has_lower() && l < r) || (s.has_upper() && l >= r + s.count);
        };
        std::vector<std::vector<double>> box(ranks);
        for (int k = 0; k < ranks; ++k) {
          const Slab3D& s = slabs[k];
          box[k].assign(static_cast<std::size_t>(s.local_cells()), -1.0);
          for (i64 z = 0; z < s.local[2]; ++z)
            for (i64 y = 0; y < s.local[1]; ++y)
              for (i64 x = 0; x < s.local[0]; ++x) {
                const i64 l[3] = {x, y, z};
                if (is_halo(s, l[a])) continue;
                box[k][static_cast<std::size_t>(s.index(x, y, z))] = id(s.global(0, x), s.global(1, y), s.global(2, z));
              }
        }
        const auto before = box;
        double bytes = 0;
        for (int k = 0; k < ranks; ++k) {
          const auto copies = proact_copies(slabs, k);
          EXPECT_EQ(copies.size(), static_cast<std::size_t>((k > 0) + (k + 1 < ranks)));
          for (const HaloCopy& c : copies) {
            EXPECT_EQ(c.to, c.side == 0 ? k - 1 : k + 1);
            EXPECT_LE(c.width, c.src_pitch);
            EXPECT_LE(c.width, c.dst_pitch);
            for (i64 row = 0; row < c.height; ++row)
              for (i64 i = 0; i < c.width; ++i)
                box[c.to][static_cast<std::size_t>(c.dst + row * c.dst_pitch + i)] =
                    before[k][static_cast<std::size_t>(c.src + row * c.src_pitch + i)];
            bytes += 4.0 * static_cast<double>(c.cells());
          }
        }
        EXPECT_EQ(bytes, slab3d_halo_bytes(n, axis, r, ranks, true));
        for (int k = 0; k < ranks; ++k) {
          const Slab3D& s = slabs[k];
          i64 wrong = 0;
          for (i64 z = 0; z < s.local[2]; ++z)
            for (i64 y = 0; y < s.local[1]; ++y)
              for (i64 x = 0; x < s.local[0]; ++x) {
                const i64 l[3] = {x, y, z};
                const auto i = static_cast<std::size_t>(s.index(x, y, z));
                const double want =
                    is_halo(s, l[a]) ? id(s.global(0, x), s.global(1, y), s.global(2, z)) : before[k][i];
                wrong += box[k][i] != want;
              }
          EXPECT_EQ(wrong, 0) << "rank " << k;
        }
      }
}

TEST(Stencil3DProact, CopiesRefuseSlabsOfAnotherDecomposition) {
  const i64 n[3] = {11, 9, 13};
  std::vector<Slab3D> slabs{slab3d(n, Axis::z, 1, 2, 0), slab3d(n, Axis::y, 1, 2, 1)};
  EXPECT_THROW(proact_copies(slabs, 0), std::invalid_argument);
  slabs[1] = slab3d(n, Axis::z, 1, 2, 1);
  EXPECT_NO_THROW(proact_copies(slabs, 1));
  EXPECT_THROW(proact_copies(slabs, 2), std::invalid_argument);
}
