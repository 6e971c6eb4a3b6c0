// The 3D apps' gps step splits its work items on the host (classify_gps_items): items it calls plain
// run the hand-written march with no checks, so a wrong split either publishes nothing from a
// plane a neighbour reads (a wrong answer) or reads a page this GPU lacks. These tests hold the
// split to the per-thread checks the GPS kernel makes (item_input_ranges, the stored span), on
// subscriptions shaped as tracking learns them: pages of one plane (z split) or one row (y split),
// each held by the ranks whose sub-box reads it.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_gps_items.hpp"
#include "apps/stencil3d/stencil3d_plan.hpp"

using namespace gpsm::apps;
using namespace gpsm::apps::stencil3d;
using gpsm::gps::Reach;
using i64 = std::int64_t;

namespace {

// Ranks holding each page of the grid: the unit along the split axis (plane or row), held by every
// rank whose sub-box spans it ([first - R, first + count + R) along the axis).
struct Holders {
  i64 n[3];
  int axis;
  std::vector<Slab3D> slabs;
  i64 unit() const { return axis == 2 ? n[0] * n[1] : n[0]; }
  i64 split_coord(i64 page) const { return axis == 2 ? page : page % n[1]; }
  std::uint32_t mask(i64 page) const {
    const i64 c = split_coord(page);
    std::uint32_t m = 0;
    for (const Slab3D& s : slabs)
      if (c >= s.first - s.radius && c < s.first + s.count + s.radius) m |= 1u << s.rank;
    return m;
  }
  Reach reach(i64 lo, i64 hi, int rank) const {
    Reach r = Reach::sole;
    for (i64 p = lo / unit(); p <= (hi - 1) / unit(); ++p) {
      const std::uint32_t m = mask(p);
      if (!(m >> rank & 1u)) return Reach::checked;
      if (m != 1u << rank) r = Reach::shared;
    }
    return r;
  }
};

}  // namespace

TEST(Stencil3DGpsItems, SplitAgreesWithThePerThreadChecks) {
  const i64 n[3] = {40, 19, 23};
  for (int radius : {1, 2})
    for (Axis axis : {Axis::y, Axis::z})
      for (int v : {1, 4})
        for (int nranks = 1; nranks <= 3; ++nranks)
          for (int r = 0; r < nranks; ++r) {
            SCOPED_TRACE(std::string("axis ") + axis_name(axis) + ", rank " + std::to_string(r) + " of " +
                         std::to_string(nranks) + ", radius " + std::to_string(radius) + ", v " + std::to_string(v));
            Holders h{{n[0], n[1], n[2]}, static_cast<int>(axis), {}};
            for (int q = 0; q < nranks; ++q) h.slabs.push_back(slab3d(n, axis, radius, nranks, q));
            const Slab3D& s = h.slabs[r];
            const SubBox sb = sub_box(s);
            const Plan p = make_plan(radius, v, sb.box, nranks > 1, 7);
            const auto reach = [&](i64 lo, i64 hi) { return h.reach(lo, hi, r); };
            const GpsItems got = classify_gps_items(p, sb, radius, v, sb.offset, reach, reach);

            const int m = march_axis(sb.box), o = 3 - m;
            const i64 sm = m == 1 ? sb.sy : sb.sz, so = m == 1 ? sb.sz : sb.sy;
            std::set<i64> want_plain, want_gps;
            for (i64 w = 0; w < p.items; ++w) {
              i64 xt, ot, ch, m0, m1;
              item_tiles(p, w, xt, ot, ch);
              chunk_range(p, sb.box.count, radius, ch, m0, m1);
              bool any = false, plain = true;
              for (int ty = 0; ty < kStepTy; ++ty)
                for (int tx = 0; tx < kStepTx; ++tx) {  // each thread as the GPS kernel checks it
                  const i64 col = xt * kStepTx + tx, co = radius + ot * kStepTy + ty;
                  if (col >= p.cols || co >= sb.box.n[o] - radius || m0 >= m1) continue;
                  any = true;
                  const i64 x = p.x0 + col * v;
                  CellRange rg[kMaxItemRanges];
                  const int k = item_input_ranges(radius, v, m, sb.offset, sb.sy, sb.sz, x, co, m0, m1, rg);
                  for (int j = 0; j < k; ++j) plain = plain && h.reach(rg[j].lo, rg[j].hi, r) != Reach::checked;
                  const i64 lo = sb.offset + x + co * so + m0 * sm;
                  plain = plain && h.reach(lo, lo + (m1 - 1 - m0) * sm + v, r) == Reach::sole;
                }
              if (any) (plain ? want_plain : want_gps).insert(w);
            }
            EXPECT_EQ(std::set<i64>(got.plain.begin(), got.plain.end()), want_plain);
            EXPECT_EQ(std::set<i64>(got.gps.begin(), got.gps.end()), want_gps);
            EXPECT_EQ(got.plain.size() + got.gps.size(), want_plain.size() + want_gps.size());  // no item twice
            if (nranks == 1) EXPECT_TRUE(got.gps.empty());  // nothing is published on one GPU
            // A rank with a neighbour publishes its edge planes, so it has gps items, and its
            // interior (whatever is more than R planes from a neighbour) runs plain.
            if (nranks > 1 && s.count > 2 * radius) {
              EXPECT_FALSE(got.gps.empty());
              EXPECT_FALSE(got.plain.empty());
            }
          }
}

// One page this GPU lacks in an item's input (subscriptions changed by hand) sends that item, and
// only the items reading it, to the GPS step.
TEST(Stencil3DGpsItems, AMissingInputPageSendsItsReadersToTheGpsStep) {
  const i64 n[3] = {32, 16, 40};
  const Slab3D s = slab3d(n, Axis::z, 1, 1, 0);
  const SubBox sb = sub_box(s);
  const Plan p = make_plan(1, 4, sb.box, false, 64);  // several chunks along z
  const i64 plane = n[0] * n[1], lost = 20;
  const auto in = [&](i64 lo, i64 hi) {
    return lo / plane <= lost && (hi - 1) / plane >= lost ? Reach::checked : Reach::sole;
  };
  const auto out = [&](i64, i64) { return Reach::sole; };
  const GpsItems got = classify_gps_items(p, sb, 1, 4, sb.offset, in, out);
  ASSERT_FALSE(got.gps.empty());
  ASSERT_FALSE(got.plain.empty());
  for (std::int32_t w : got.gps) {
    i64 xt, ot, ch, m0, m1;
    item_tiles(p, w, xt, ot, ch);
    chunk_range(p, sb.box.count, 1, ch, m0, m1);
    EXPECT_TRUE(m0 - 1 <= lost && lost < m1 + 1) << "item " << w << " planes [" << m0 << ", " << m1 << ")";
  }
  for (std::int32_t w : got.plain) {
    i64 xt, ot, ch, m0, m1;
    item_tiles(p, w, xt, ot, ch);
    chunk_range(p, sb.box.count, 1, ch, m0, m1);
    EXPECT_FALSE(m0 - 1 <= lost && lost < m1 + 1) << "item " << w << " planes [" << m0 << ", " << m1 << ")";
  }
}
