// The 3D apps' gps step splits its work items on the host (classify_gps_items): items it calls plain
// or published run the hand-written march with no checks (published ones putting every vector
// through the span of one host-asked mask), so a wrong split either publishes nothing from a plane
// a neighbour reads, or to the wrong GPUs (a wrong answer), or reads a page this GPU lacks. These
// tests hold the split to the per-thread checks the GPS kernel makes (item_input_ranges, the
// stored span), on subscriptions shaped as tracking learns them: pages of one plane (z split) or
// one row (y split), each held by the ranks whose sub-box reads it.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
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
  gpsm::gps::RangeSubscribers subscribers(i64 lo, i64 hi) const {
    gpsm::gps::RangeSubscribers s{mask(lo / unit()), true};
    for (i64 p = lo / unit() + 1; p <= (hi - 1) / unit(); ++p) {
      s.uniform = s.uniform && mask(p) == s.mask;
      s.mask &= mask(p);
    }
    return s;
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
            const auto subs = [&](i64 lo, i64 hi) { return h.subscribers(lo, hi); };
            const GpsItems got = classify_gps_items(p, sb, radius, v, sb.offset, r, reach, subs);

            const int m = march_axis(sb.box), o = 3 - m;
            const i64 sm = m == 1 ? sb.sy : sb.sz, so = m == 1 ? sb.sz : sb.sy;
            std::set<i64> want_plain, want_published, want_gps;
            std::map<i64, std::uint32_t> want_mask;
            for (i64 w = 0; w < p.items; ++w) {
              i64 xt, ot, ch, m0, m1;
              item_tiles(p, w, xt, ot, ch);
              chunk_range(p, sb.box.count, radius, ch, m0, m1);
              bool any = false, held = true, uniform = true;
              std::set<std::uint32_t> masks;  // of every thread's stored span
              for (int ty = 0; ty < kStepTy; ++ty)
                for (int tx = 0; tx < kStepTx; ++tx) {  // each thread as the GPS kernel checks it
                  const i64 col = xt * kStepTx + tx, co = radius + ot * kStepTy + ty;
                  if (col >= p.cols || co >= sb.box.n[o] - radius || m0 >= m1) continue;
                  any = true;
                  const i64 x = p.x0 + col * v;
                  CellRange rg[kMaxItemRanges];
                  const int k = item_input_ranges(radius, v, m, sb.offset, sb.sy, sb.sz, x, co, m0, m1, rg);
                  for (int j = 0; j < k; ++j) held = held && h.reach(rg[j].lo, rg[j].hi, r) != Reach::checked;
                  const i64 lo = sb.offset + x + co * so + m0 * sm;
                  const gpsm::gps::RangeSubscribers sp = h.subscribers(lo, lo + (m1 - 1 - m0) * sm + v);
                  uniform = uniform && sp.uniform;
                  masks.insert(sp.mask);
                }
              if (!any) continue;
              const std::uint32_t me = 1u << r, mk = *masks.begin();
              const bool one = held && uniform && masks.size() == 1;
              if (one && mk == me) {
                want_plain.insert(w);
              } else if (one && (mk & me)) {
                want_published.insert(w);
                want_mask[w] = mk;
              } else {
                want_gps.insert(w);
              }
            }
            EXPECT_EQ(std::set<i64>(got.plain.begin(), got.plain.end()), want_plain);
            EXPECT_EQ(std::set<i64>(got.published.begin(), got.published.end()), want_published);
            EXPECT_EQ(std::set<i64>(got.gps.begin(), got.gps.end()), want_gps);
            ASSERT_EQ(got.published_mask.size(), got.published.size());
            for (std::size_t k = 0; k < got.published.size(); ++k)
              EXPECT_EQ(got.published_mask[k], want_mask[got.published[k]]) << "item " << got.published[k];
            EXPECT_EQ(got.plain.size() + got.published.size() + got.gps.size(),
                      want_plain.size() + want_published.size() + want_gps.size());  // no item twice
            if (nranks == 1) EXPECT_TRUE(got.published.empty() && got.gps.empty());  // nothing is published on one GPU
            // Learned subscriptions leave nothing checked: a rank with a neighbour publishes its
            // edge planes to it, and its interior (more than R planes from a neighbour) runs plain.
            EXPECT_TRUE(got.gps.empty());
            if (nranks > 1 && s.count > 2 * radius) {
              EXPECT_FALSE(got.published.empty());
              EXPECT_FALSE(got.plain.empty());
              for (std::uint32_t mk : got.published_mask) EXPECT_NE(mk & ~(1u << r), 0u);  // reaches a neighbour
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
  const auto out = [&](i64, i64) { return gpsm::gps::RangeSubscribers{1u, true}; };  // rank 0 alone
  const GpsItems got = classify_gps_items(p, sb, 1, 4, sb.offset, 0, in, out);
  EXPECT_TRUE(got.published.empty());
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

// A stored run whose pages have different subscribers (one plane of the output subscribed by hand
// by another GPU) cannot be put through one mask: its items go to the checked GPS step, the others
// stay plain; a uniform run held by this GPU and another is published with that mask.
TEST(Stencil3DGpsItems, StoredRunsOfMixedSubscribersGoToTheGpsStepUniformOnesArePublished) {
  const i64 n[3] = {32, 16, 40};
  const Slab3D s = slab3d(n, Axis::z, 1, 1, 0);
  const SubBox sb = sub_box(s);
  const Plan p = make_plan(1, 4, sb.box, false, 64);
  const i64 plane = n[0] * n[1], shared_plane = 20;
  const auto in = [&](i64, i64) { return Reach::sole; };
  for (bool whole_item : {false, true}) {
    SCOPED_TRACE(whole_item ? "every stored plane of the items shared" : "one stored plane shared");
    // whole_item: planes [m0, m1) of an item containing shared_plane are all subscribed by GPU 1 too.
    const auto shared = [&](i64 pl) { return pl == shared_plane; };
    const auto out = [&](i64 lo, i64 hi) {
      gpsm::gps::RangeSubscribers r{1u, true};
      bool any = false, all = true;
      for (i64 pl = lo / plane; pl <= (hi - 1) / plane; ++pl) {
        any = any || shared(pl);
        all = all && shared(pl);
      }
      if (whole_item ? any : all) return gpsm::gps::RangeSubscribers{3u, true};
      if (any) r.uniform = false;
      return r;
    };
    const GpsItems got = classify_gps_items(p, sb, 1, 4, sb.offset, 0, in, out);
    ASSERT_FALSE(got.plain.empty());
    const std::vector<std::int32_t>& odd = whole_item ? got.published : got.gps;
    ASSERT_FALSE(odd.empty());
    EXPECT_TRUE((whole_item ? got.gps : got.published).empty());
    for (std::int32_t w : odd) {
      i64 xt, ot, ch, m0, m1;
      item_tiles(p, w, xt, ot, ch);
      chunk_range(p, sb.box.count, 1, ch, m0, m1);
      EXPECT_TRUE(m0 <= shared_plane && shared_plane < m1) << "item " << w << " planes [" << m0 << ", " << m1 << ")";
    }
    for (std::uint32_t mk : got.published_mask) EXPECT_EQ(mk, 3u);
  }
}
