// The ownership maps of distributed arrays (gpsm/ownership_map.hpp): every element has exactly one
// owner and one offset inside its owner's region, padding is never indexed, the copies to and from
// the physical layout round-trip, and every rule fails with its message. A small granularity
// (4 KiB) keeps the padding cases small; the rules are the same at the driver's 2 MiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/ownership_map.hpp"

using gpsm::Axis;
using gpsm::BlockSpec;
using gpsm::Extents;
using gpsm::OwnershipMap;
namespace blocks = gpsm::blocks;

namespace {

constexpr std::uint64_t kGran = 4096;

// The block of coordinate c on an axis by a plain scan: the last cut <= c.
std::uint64_t scan_block(const std::vector<std::uint64_t>& cuts, std::uint64_t c) {
  std::uint64_t b = 0;
  while (b + 2 < cuts.size() && cuts[b + 1] <= c) ++b;
  return b;
}

// Every element: the owner the spec says (found by scanning), an offset aligned to the element,
// inside the used part of that owner's region, and no two elements on one slot; every used slot
// taken (so the only unindexed bytes are the padding at the regions' ends).
void check_map(const OwnershipMap& m) {
  const BlockSpec& s = m.spec();
  const std::uint64_t E = m.elem_bytes();
  ASSERT_EQ(m.range_bytes() % kGran, 0u);
  std::uint64_t expect_offset = 0, used = 0;
  for (const auto& r : m.regions()) {
    EXPECT_EQ(r.offset, expect_offset) << "regions follow each other in rank order";
    EXPECT_EQ(r.offset % kGran, 0u);
    EXPECT_EQ(r.bytes % kGran, 0u);
    EXPECT_LE(r.used_bytes, r.bytes);
    EXPECT_LT(r.bytes - r.used_bytes, kGran) << "padding is less than one granule";
    expect_offset += r.bytes;
    used += r.used_bytes;
  }
  EXPECT_EQ(expect_offset, m.range_bytes());
  EXPECT_EQ(used, m.size() * E);
  std::vector<char> taken(m.range_bytes() / E, 0);
  const std::uint64_t X = s.extents.x, Y = s.extents.y;
  const auto kx = s.cuts[0].size() - 1, ky = s.cuts[1].size() - 1;
  for (std::uint64_t i = 0; i < m.size(); ++i) {
    const std::uint64_t x = i % X, y = i / X % Y, z = i / X / Y;
    const std::uint64_t b = scan_block(s.cuts[0], x) + kx * (scan_block(s.cuts[1], y) + ky * scan_block(s.cuts[2], z));
    const int o = m.owner(i);
    ASSERT_EQ(o, s.owner[b]) << "element " << i;
    const std::uint64_t off = m.offset(i);
    ASSERT_EQ(off, m.lookup().offset(x, y, z));
    ASSERT_EQ(off % E, 0u);
    const auto& r = m.regions()[static_cast<std::size_t>(o)];
    ASSERT_GE(off, r.offset) << "element " << i;
    ASSERT_LE(off + E, r.offset + r.used_bytes) << "element " << i << " falls into padding";
    const gpsm::BlockBox box = m.lookup().box(x, y, z);  // the block a tile kernel indexes locally
    ASSERT_TRUE(box.contains(x, y, z));
    ASSERT_EQ(box.owner, o);
    ASSERT_EQ(box.base + box.local(x, y, z) * E, off);
    ASSERT_EQ(box.base, m.block_base(b));
    ASSERT_FALSE(box.contains(box.x0 + box.wx, y, z));
    ASSERT_FALSE(box.contains(x, box.y0 - 1, z)) << "below the origin must wrap, not match";
    ASSERT_EQ(taken[off / E], 0) << "two elements on offset " << off;
    taken[off / E] = 1;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(std::count(taken.begin(), taken.end(), 1)), m.size());
}

// Row-major -> layout -> row-major gives the input back, and the layout holds element i at offset(i).
void check_round_trip(const OwnershipMap& m) {
  const std::uint64_t E = m.elem_bytes();
  std::vector<unsigned char> rows(m.size() * E), layout(m.range_bytes(), 0xEE), back(m.size() * E, 0);
  for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = static_cast<unsigned char>(k * 2654435761u >> 13);
  m.to_layout(rows.data(), layout.data());
  for (std::uint64_t i = 0; i < m.size(); i += 1 + m.size() / 997)
    ASSERT_EQ(std::memcmp(layout.data() + m.offset(i), rows.data() + i * E, E), 0) << "element " << i;
  m.from_layout(layout.data(), back.data());
  EXPECT_EQ(back, rows);
  for (const auto& r : m.regions())  // padding left as it was
    for (std::uint64_t k = r.offset + r.used_bytes; k < r.offset + r.bytes; ++k) ASSERT_EQ(layout[k], 0xEE);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpsm::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(OwnershipMap, Contiguous1DEvenAndWeightedNotMultiplesOfTheGranularity) {
  for (std::uint64_t E : {4u, 16u}) {
    for (std::uint64_t n : {std::uint64_t{1}, kGran / E * 3 + 17, std::uint64_t{12345}}) {
      for (int owners : {1, 2, 3, 4}) {
        if (n < static_cast<std::uint64_t>(owners)) continue;
        SCOPED_TRACE("E=" + std::to_string(E) + " n=" + std::to_string(n) + " owners=" + std::to_string(owners));
        const OwnershipMap m(blocks::contiguous(n, owners), E, kGran, owners);
        check_map(m);
        check_round_trip(m);
      }
      if (n >= 3) {
        const OwnershipMap w(blocks::weighted(n, {1.0, 2.5, 0.5}), E, kGran, 3);
        check_map(w);
        check_round_trip(w);
      }
    }
  }
}

TEST(OwnershipMap, WeightedCutsFollowTheWeightsAndKeepEveryOwner) {
  EXPECT_EQ(blocks::weighted(100, {1, 3}).cuts[0], (std::vector<std::uint64_t>{0, 25, 100}));
  // A tiny weight still gets one element, and the others stay in order.
  EXPECT_EQ(blocks::weighted(4, {1e-9, 1, 1e-9, 1}).cuts[0], (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(blocks::contiguous(10, 4).cuts[0], (std::vector<std::uint64_t>{0, 3, 6, 8, 10}));
}

TEST(OwnershipMap, TilesAndBricksAlongEachAxisAndGrids) {
  const Extents e2{37, 23, 1}, e3{13, 11, 9};
  for (std::uint64_t E : {4u, 16u}) {
    SCOPED_TRACE("E=" + std::to_string(E));
    for (Axis a : {Axis::x, Axis::y, Axis::z}) {
      const OwnershipMap m(blocks::along(e3, a, 3), E, kGran, 3);
      check_map(m);
      check_round_trip(m);
    }
    const OwnershipMap g2(blocks::owner_grid(e2, 2, 2), E, kGran, 4);
    check_map(g2);
    check_round_trip(g2);
    const OwnershipMap g3(blocks::owner_grid(e3, 2, 1, 2), E, kGran, 4);
    check_map(g3);
    check_round_trip(g3);
  }
}

TEST(OwnershipMap, UserMapOfOddTiles) {
  const Extents e{50, 31, 3}, tile{7, 5, 2};
  const Extents k = blocks::tile_counts(e, tile);
  ASSERT_EQ(k.x, 8u);
  ASSERT_EQ(k.y, 7u);
  ASSERT_EQ(k.z, 2u);
  std::vector<int> owner(k.x * k.y * k.z);
  for (std::size_t t = 0; t < owner.size(); ++t) owner[t] = static_cast<int>((t * 7 + t / 3) % 3);  // scattered
  for (std::uint64_t E : {4u, 16u}) {
    const OwnershipMap m(blocks::tiles(e, tile, owner), E, kGran, 3);
    check_map(m);
    check_round_trip(m);
    EXPECT_FALSE(m.identity());
  }
  // A rank that owns no tile gets an empty region and the others are still laid out.
  std::vector<int> skip(owner.size(), 2);
  skip[0] = 0;
  const OwnershipMap m(blocks::tiles(e, tile, skip), 4, kGran, 3);
  EXPECT_EQ(m.regions()[1].bytes, 0u);
  check_map(m);
}

TEST(OwnershipMap, DivisionAndSearchFindTheSameBlocks) {
  // Uniform tiles take the division; an uneven split takes the search: both must agree with the scan.
  const OwnershipMap uniform(blocks::tiles({64, 8, 1}, {16, 8, 1}, {0, 1, 0, 1}), 4, kGran, 2);
  EXPECT_EQ(uniform.lookup().step[0], 16u);
  check_map(uniform);
  const OwnershipMap uneven(blocks::contiguous(1001, 4), 4, kGran, 4);
  EXPECT_EQ(uneven.lookup().step[0], 0u);
  check_map(uneven);
  // Tiles whose last one is larger than the step (a hand-made spec): the division clamps to it.
  BlockSpec s;
  s.extents = {30, 1, 1};
  s.cuts = {std::vector<std::uint64_t>{0, 10, 20, 30}, {0, 1}, {0, 1}};
  s.owner = {1, 0, 1};
  check_map(OwnershipMap(s, 8, kGran, 2));
  s.cuts[0] = {0, 8, 16, 30};
  const OwnershipMap last_larger(s, 8, kGran, 2);
  EXPECT_EQ(last_larger.lookup().step[0], 8u);
  check_map(last_larger);
}

TEST(OwnershipMap, IdentityOnlyWhenEveryCutIsOnAGranule) {
  // 2 owners x one granule each of 4-byte elements: no padding before the last region.
  const OwnershipMap exact(blocks::contiguous(2 * kGran / 4, 2), 4, kGran, 2);
  EXPECT_TRUE(exact.identity());
  for (std::uint64_t i = 0; i < exact.size(); ++i) ASSERT_EQ(exact.offset(i), i * 4);
  // Slabs of whole granules along the slowest axis: identity too; along x it is not.
  EXPECT_TRUE(OwnershipMap(blocks::along({32, 32, 4}, Axis::z, 2), 4, kGran, 2).identity());
  EXPECT_FALSE(OwnershipMap(blocks::along({32, 32, 4}, Axis::x, 2), 4, kGran, 2).identity());
  // One element more: the first region is padded, so the second starts after the padding.
  const OwnershipMap odd(blocks::contiguous(2 * kGran / 4 + 2, 2), 4, kGran, 2);
  EXPECT_FALSE(odd.identity());
  EXPECT_EQ(odd.regions()[1].offset, 2 * kGran);
  EXPECT_EQ(odd.range_bytes(), 4 * kGran);  // 1025 elements of 4 B a rank: two granules each
  // The last region alone may be padded and the map is still the identity.
  EXPECT_TRUE(OwnershipMap(blocks::contiguous(5, 1), 4, kGran, 1).identity());
}

TEST(OwnershipMap, AlignedSlabsAreTheIdentity) {
  // 3D: planes of 30x7 x 4 B = 840 B; 4096 / gcd(4096, 840) = 512 planes per aligned cut.
  const OwnershipMap m3(blocks::aligned_slabs({30, 7, 1600}, 3, 4, kGran), 4, kGran, 3);
  EXPECT_EQ(m3.spec().cuts[2], (std::vector<std::uint64_t>{0, 512, 1024, 1600}));
  EXPECT_TRUE(m3.identity());
  check_map(m3);
  // 2D rows of 100 x 16 B; 1D; both identity with every cut on a granule.
  for (const BlockSpec& s : {blocks::aligned_slabs({100, 999, 1}, 4, 16, kGran), blocks::aligned_slabs({kGran * 3 + 5, 1, 1}, 2, 16, kGran)}) {
    const OwnershipMap m(s, 16, kGran, 4);
    EXPECT_TRUE(m.identity()) << s.shape;
    for (std::size_t k = 1; k + 1 < s.cuts[s.extents.y > 1 ? 1 : 0].size(); ++k)
      EXPECT_EQ(m.regions()[k].offset, m.block_first(k) * 16) << s.shape;
    check_map(m);
    check_round_trip(m);
  }
  EXPECT_EQ(error_of([] { blocks::aligned_slabs({30, 7, 1000}, 2, 4, kGran); }),
            "gpsm: distributed array: only 1 granule-aligned cut points along z (every 512 steps) for 2 owners; use "
            "blocks::along (cuts off the granules, a padded layout) or a larger array");
}

TEST(OwnershipMap, PageOwnersAreTheMajorityOwnerLowestRankOnTies) {
  for (std::uint64_t page : {std::uint64_t{128}, std::uint64_t{1024}, std::uint64_t{65536}}) {
    for (const BlockSpec& s : {blocks::contiguous(3001, 3), blocks::owner_grid({40, 30, 1}, 2, 2),
                               blocks::tiles({33, 17, 2}, {8, 4, 1}, std::vector<int>(5 * 5 * 2, 1))}) {
      const OwnershipMap m(s, 4, kGran, 4);
      const std::vector<int> got = m.page_owners(page);
      const std::uint64_t pages = (m.size() * 4 + page - 1) / page;
      ASSERT_EQ(got.size(), pages);
      for (std::uint64_t p = 0; p < pages; ++p) {  // brute force: count every element of the page
        std::vector<std::uint64_t> held(4, 0);
        for (std::uint64_t i = p * page / 4; i < std::min(m.size(), (p + 1) * page / 4); ++i) ++held[m.owner(i)];
        const int best = static_cast<int>(std::max_element(held.begin(), held.end()) - held.begin());
        ASSERT_EQ(got[p], best) << s.shape << " page " << p << " of " << page << " B";
      }
    }
  }
  // An exact tie inside one page: the lower rank.
  const OwnershipMap tie(blocks::contiguous(64, 2), 4, kGran, 2);
  EXPECT_EQ(tie.page_owners(256), (std::vector<int>{0}));
}

TEST(OwnershipMap, RulesFailWithTheirMessages) {
  auto msg = [](BlockSpec s, std::uint64_t E, std::uint64_t G, int owners) {
    return error_of([&] { OwnershipMap(std::move(s), E, G, owners); });
  };
  const std::string pre = "gpsm: distributed array: ";
  EXPECT_EQ(msg(blocks::contiguous(10, 2), 0, kGran, 2), pre + "element size is zero; use a type of at least one byte");
  EXPECT_NE(msg(blocks::contiguous(10, 2), 12, kGran, 2).find("element size 12 B does not divide the allocation granularity 4096 B"), std::string::npos);
  EXPECT_NE(msg(blocks::contiguous(10, 2), 4, 3000, 2).find("granularity 3000 is not a power of two"), std::string::npos);
  EXPECT_EQ(error_of([] { blocks::contiguous(0, 2); }),
            pre + "extent along x is zero; give every axis at least one element (1 for unused axes)");
  EXPECT_EQ(error_of([] { blocks::along({4, 2, 1}, Axis::y, 3); }),
            pre + "cannot split 2 elements along y among 3 owners; use fewer GPUs or a larger array");
  EXPECT_NE(error_of([] { blocks::weighted(10, {1, 0}); }).find("is not a positive number"), std::string::npos);
  EXPECT_EQ(error_of([] { blocks::tiles({10, 10, 1}, {4, 4, 1}, {0, 1}); }),
            pre + "the user map has 2 entries for 3x3x1 = 9 tiles; give one owner per tile (blocks::tile_counts says how many)");
  // A user map naming a rank the context does not have.
  std::vector<int> owners(9, 0);
  owners[4] = 2;
  EXPECT_EQ(msg(blocks::tiles({10, 10, 1}, {4, 4, 1}, owners), 4, kGran, 2),
            pre + "block 4 is owned by rank 2, outside the 2 ranks of the context; name owners 0..1");
  owners[4] = -1;
  EXPECT_NE(msg(blocks::tiles({10, 10, 1}, {4, 4, 1}, owners), 4, kGran, 2).find("owned by rank -1"), std::string::npos);
  // Cuts that leave a gap, repeat, or miss the extent.
  BlockSpec s = blocks::contiguous(10, 2);
  s.cuts[0] = {0, 5, 5, 10};
  s.owner = {0, 1, 1};
  EXPECT_NE(msg(s, 4, kGran, 2).find("not strictly increasing (5 then 5)"), std::string::npos);
  s.cuts[0] = {0, 5, 9};
  s.owner = {0, 1};
  EXPECT_NE(msg(s, 4, kGran, 2).find("do not run from 0 to the extent 10"), std::string::npos);
}

TEST(OwnershipMap, SizesPast2To63Fail) {
  const std::string pre = "gpsm: distributed array: ";
  // The element count itself.
  EXPECT_EQ(error_of([] { blocks::along({std::uint64_t{1} << 32, std::uint64_t{1} << 32, 4}, Axis::z, 2); }),
            pre + "the element count passes 2^63; use a smaller array");
  // Elements times element size.
  EXPECT_NE(error_of([] { OwnershipMap(blocks::contiguous((std::uint64_t{1} << 61) + 1, 2), 4, kGran, 2); })
                .find("the array's size (2305843009213693953 elements of 4 B) passes 2^63"),
            std::string::npos);
  // Fits unpadded (exactly 2^63 bytes), but the first region's padding pushes the range past.
  BlockSpec s;
  s.extents = {std::uint64_t{1} << 61, 1, 1};
  s.cuts = {std::vector<std::uint64_t>{0, (std::uint64_t{1} << 60) + 1, std::uint64_t{1} << 61}, {0, 1}, {0, 1}};
  s.owner = {0, 1};
  EXPECT_EQ(error_of([&] { OwnershipMap(s, 4, kGran, 2); }), pre + "the virtual range passes 2^63 bytes; use a smaller array");
}
