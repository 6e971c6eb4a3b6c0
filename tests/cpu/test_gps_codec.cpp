// The `combine` fence in software (finepack.hpp, drain_model.hpp): per-line direct/packed
// decisions, and random store streams round-tripped through plan_drain + apply_drain.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "runtime/drain_model.hpp"
#include "runtime/finepack.hpp"
#include "gpsm/gps/page_math.hpp"

using namespace gpsm::gps;

TEST(GpsCodec, SectorsAndLinkBytes) {
  EXPECT_EQ(sectors_touched(0), 0u);
  EXPECT_EQ(sectors_touched(1), 1u);
  EXPECT_EQ(sectors_touched(0xFFu), 1u);
  EXPECT_EQ(sectors_touched(0x100u), 1u);
  EXPECT_EQ(sectors_touched(0x80000001u), 2u);
  EXPECT_EQ(sectors_touched(0x01010101u), 4u);
  EXPECT_EQ(sectors_touched(0xFFFFFFFFu), 4u);
  EXPECT_EQ(direct_link_bytes(0xFFFFFFFFu), 128u);
  EXPECT_EQ(direct_link_bytes(0x00000F00u), 32u);
  EXPECT_EQ(packed_link_bytes(0xFFFFFFFFu), 192u);  // 6 B per word: 2 B block offset + value
  EXPECT_EQ(packed_link_bytes(0x00000F00u), 24u);
  EXPECT_EQ(popcount32(0xF0F0F0F0u), 16);
}

TEST(GpsCodec, PackLineDecisions) {
  EXPECT_TRUE(pack_line(0x1u));            // 1 word: 6 B packed vs 32 B sector
  EXPECT_TRUE(pack_line(0x80000000u));
  EXPECT_FALSE(pack_line(0xFFFFFFFFu));    // full line: 128 B direct vs 192 B packed
  EXPECT_FALSE(pack_line(0xFFu));          // 8 words in one sector: 32 B direct vs 48 B packed
  EXPECT_FALSE(pack_line(0x3F00u));        // 6 words in one sector: 32 B direct vs 36 B packed
  EXPECT_TRUE(pack_line(0x1F00u));         // 5 words in one sector: 30 B < 32 B
  EXPECT_TRUE(pack_line(0x01010101u));     // one word per sector: 24 B vs 128 B
  EXPECT_TRUE(pack_line(0x0F0F0F0Fu));     // 16 words over 4 sectors: 96 B vs 128 B
  EXPECT_FALSE(pack_line(0x00FF00FFu | 0x0F000F00u));  // 24 words over 4 sectors: 144 B vs 128 B
  EXPECT_TRUE(pack_line(0x000000FFu | 0x00000100u));   // 9 words, 2 sectors: 54 B vs 64 B
  EXPECT_FALSE(pack_line(0x00000FFFu));                // 12 words, 2 sectors: 72 B vs 64 B
  // Block geometry: 16 KiB blocks, whole pages below that.
  EXPECT_EQ(block_lines_for(16), kMaxBlockLines);
  EXPECT_EQ(block_lines_for(14), 128u);
  EXPECT_EQ(block_lines_for(12), 32u);
  EXPECT_EQ(block_lines_for(7), 1u);
  EXPECT_LE(kMaxBlockWords, 1u << 16);  // offsets fit the 2-byte sub-header
}

TEST(GpsCodec, MarkDirtyHost) {
  std::vector<std::uint32_t> d(3, 0);
  mark_dirty_host(d.data(), 30, 4);  // crosses into the second line
  EXPECT_EQ(d[0], 0xC0000000u);
  EXPECT_EQ(d[1], 0x3u);
  mark_dirty_host(d.data(), 64, 32);
  EXPECT_EQ(d[2], 0xFFFFFFFFu);
  mark_dirty_host(d.data(), 5, 0);
  EXPECT_EQ(d[0], 0xC0000000u);
}

TEST(GpsDrain, SmallPlanExact) {
  const Geometry g{3 * 128, 7};  // three one-line pages
  std::vector<std::uint32_t> src(g.words());
  for (std::uint32_t w = 0; w < src.size(); ++w) src[w] = 1000 + w;
  std::vector<std::uint32_t> dirty{1u << 5, 0xFFFFFFFFu, 0x000000FFu};
  std::vector<std::uint32_t> masks{0b111, 0b011, 0b101};

  const auto plans = plan_drain(g, dirty.data(), src.data(), masks.data(), 0);
  ASSERT_EQ(plans.size(), 2u);
  // Device 1: page 0 (one word, packed) and page 1 (whole line, direct); not page 2.
  EXPECT_EQ(plans[0].dst, 1);
  ASSERT_EQ(plans[0].packed.size(), 1u);
  EXPECT_EQ(plans[0].packed[0].word, 5u);
  EXPECT_EQ(plans[0].packed[0].value, 1005u);
  ASSERT_EQ(plans[0].direct.size(), 1u);
  EXPECT_EQ(plans[0].direct[0].line, 1u);
  EXPECT_EQ(plans[0].direct[0].mask, 0xFFFFFFFFu);
  EXPECT_EQ(plans[0].useful_bytes, 4u + 128u);
  EXPECT_EQ(plans[0].records, 1u);
  // the entry padded to 8 (48 B), its block's directory entry, the direct line
  EXPECT_EQ(plans[0].link_bytes, 48u + 8u + 128u);
  // Device 2: page 0 (packed) and page 2 (8 words in one sector: direct, 32 B on the link).
  EXPECT_EQ(plans[1].dst, 2);
  ASSERT_EQ(plans[1].packed.size(), 1u);
  EXPECT_EQ(plans[1].packed[0].word, 5u);
  ASSERT_EQ(plans[1].direct.size(), 1u);
  EXPECT_EQ(plans[1].direct[0].line, 2u);
  EXPECT_EQ(plans[1].direct[0].mask, 0xFFu);
  EXPECT_EQ(plans[1].useful_bytes, 4u + 32u);
  EXPECT_EQ(plans[1].link_bytes, 48u + 8u + 32u);

  std::vector<std::uint32_t> dst(g.words(), 7);
  apply_drain(plans[1], src.data(), dst.data());
  for (std::uint32_t w = 0; w < dst.size(); ++w) {
    const bool sent = w == 5 || (w >= 64 && w < 72);
    EXPECT_EQ(dst[w], sent ? src[w] : 7u) << w;
  }

  // A packed entry carries the value at planning time, not the source's later value.
  src[5] = 42;
  dst.assign(g.words(), 7);
  apply_drain(plans[0], src.data(), dst.data());
  EXPECT_EQ(dst[5], 1005u);
}

TEST(GpsDrain, NothingToSend) {
  const Geometry g{2 * 128, 7};
  std::vector<std::uint32_t> src(g.words(), 1), dirty{0x10u, 0x3u};
  std::vector<std::uint32_t> masks{0b01, 0b01};  // device 0 alone
  EXPECT_TRUE(plan_drain(g, dirty.data(), src.data(), masks.data(), 0).empty());
  masks = {0b11, 0b11};
  dirty = {0, 0};
  EXPECT_TRUE(plan_drain(g, dirty.data(), src.data(), masks.data(), 0).empty());
  const Geometry empty{0, 16};
  EXPECT_TRUE(plan_drain(empty, nullptr, nullptr, nullptr, 0).empty());
}

TEST(GpsDrain, Errors) {
  const Geometry g{128, 7};
  std::uint32_t word = 1, mask = 3;
  EXPECT_THROW(plan_drain(g, &word, &word, &mask, -1), gpsm::Error);
  EXPECT_THROW(plan_drain(g, &word, &word, &mask, kMaxDevices), gpsm::Error);
  EXPECT_THROW(plan_drain(g, nullptr, &word, &mask, 0), gpsm::Error);
  const Geometry huge{(std::uint64_t{1} << 34) + 4, 16};  // beyond 32-bit word offsets
  try {
    plan_drain(huge, &word, &word, &mask, 0);
    ADD_FAILURE() << "no error for a 16 GiB + 4 B allocation";
  } catch (const gpsm::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("gpsm: ", 0), 0u);
  }
}

// ---------------------------------------------------------------------------------------------
// Randomized round trip: random 4- and 8-byte stores (repeats and overlaps included) applied to a
// source replica, drained to every other device, applied there.

namespace {

struct Store {
  std::uint64_t byte;  // aligned to its size
  std::uint32_t size;  // 4 or 8
  std::uint32_t lo, hi;
};

std::vector<Store> random_stream(std::mt19937_64& rng, std::uint64_t bytes) {
  std::vector<Store> s;
  const std::uint64_t words4 = bytes / 4, words8 = bytes / 8;
  // A small hot set: repeated stores to the same words, 8-byte stores overlapping 4-byte ones.
  std::vector<std::uint64_t> hot;
  for (int i = 0; i < 12; ++i) hot.push_back(rng() % words8 * 8);
  const int n = 40 + static_cast<int>(rng() % 600);
  for (int i = 0; i < n; ++i) {
    const auto r = rng() % 100;
    auto v = [&] { return static_cast<std::uint32_t>(rng()); };
    if (r < 45) {  // scattered 4-byte
      s.push_back({rng() % words4 * 4, 4, v(), 0});
    } else if (r < 60) {  // scattered 8-byte
      s.push_back({rng() % words8 * 8, 8, v(), v()});
    } else if (r < 80) {  // hot: either half of a hot 8-byte slot, or the whole slot
      const auto h = hot[rng() % hot.size()];
      if (rng() % 2) s.push_back({h + 4 * (rng() % 2), 4, v(), 0});
      else s.push_back({h, 8, v(), v()});
    } else if (r < 90) {  // a sector filled with 4-byte stores (direct line)
      const auto base = rng() % (bytes / 32) * 32;
      for (int k = 0; k < 8; ++k) s.push_back({base + 4u * k, 4, v(), 0});
    } else if (r < 95) {  // a whole line filled with 8-byte stores, in random order
      if (bytes >= 128) {
        const auto base = rng() % (bytes / 128) * 128;
        std::vector<int> order{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        std::shuffle(order.begin(), order.end(), rng);
        for (int k : order) s.push_back({base + 8u * k, 8, v(), v()});
      }
    } else {  // a repeated store to one word, several times in a row
      const auto w = rng() % words4 * 4;
      for (int k = 0; k < 3; ++k) s.push_back({w, 4, v(), 0});
    }
  }
  return s;
}

struct Sectors {  // independent count of one line's cost
  std::uint32_t words = 0, sectors = 0;
};
Sectors count_line(std::uint32_t mask) {
  Sectors c;
  for (int s = 0; s < 4; ++s) {
    bool any = false;
    for (int w = 0; w < 8; ++w)
      if (mask & (1u << (8 * s + w))) {
        ++c.words;
        any = true;
      }
    c.sectors += any;
  }
  return c;
}

void round_trip(std::uint64_t seed, bool partial_masks) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (partial_masks ? " partial masks" : " full masks"));
  std::mt19937_64 rng(seed);
  const int devices = 2 + static_cast<int>(rng() % 3);
  const int self = static_cast<int>(rng() % devices);
  // Sizes that are not whole lines or pages, 8-byte aligned so 8-byte stores fit.
  const std::uint64_t bytes = (8 * 1024 + rng() % (24 * 1024)) / 8 * 8;
  const Geometry g{bytes, static_cast<std::uint32_t>(8 + rng() % 3)};  // 256 B..1 KiB pages

  std::vector<std::uint32_t> masks(g.pages(), (1u << devices) - 1);
  if (partial_masks)
    for (auto& m : masks) m = bit(self) | static_cast<std::uint32_t>(rng() % (1u << devices));

  std::vector<std::uint32_t> src(g.words());
  for (auto& x : src) x = static_cast<std::uint32_t>(rng());
  std::vector<std::uint32_t> dirty(g.lines(), 0);
  std::map<std::uint64_t, std::uint32_t> last;  // independent model: word -> last value stored

  for (const Store& st : random_stream(rng, bytes)) {
    const std::uint64_t w = st.byte / 4;
    ASSERT_EQ(st.byte % st.size, 0u);
    src[w] = st.lo;
    last[w] = st.lo;
    if (st.size == 8) {
      src[w + 1] = st.hi;
      last[w + 1] = st.hi;
    }
    mark_dirty_host(dirty.data(), w, st.size / 4);
  }
  auto is_dirty = [&](std::uint64_t w) { return (dirty[w / 32] >> (w % 32)) & 1u; };
  // The bitmap marks exactly the stored words, and the source holds the last value of each.
  std::uint64_t ndirty = 0;
  for (std::uint64_t w = 0; w < g.words(); ++w) {
    ndirty += is_dirty(w);
    ASSERT_EQ(static_cast<bool>(is_dirty(w)), last.count(w) == 1) << "word " << w;
  }
  ASSERT_EQ(ndirty, last.size());
  for (const auto& [w, v] : last) ASSERT_EQ(src[w], v);

  const auto plans = plan_drain(g, dirty.data(), src.data(), masks.data(), self);

  // Which devices must receive something.
  std::set<int> expected_dsts;
  for (std::uint64_t l = 0; l < g.lines(); ++l)
    if (dirty[l])
      for (int d = 0; d < devices; ++d)
        if (d != self && ((masks[g.page_of_line(l)] >> d) & 1u)) expected_dsts.insert(d);
  std::set<int> got_dsts;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    got_dsts.insert(plans[i].dst);
    if (i) {
      EXPECT_LT(plans[i - 1].dst, plans[i].dst);
    }
    EXPECT_FALSE(plans[i].direct.empty() && plans[i].packed.empty());
  }
  EXPECT_EQ(got_dsts, expected_dsts);
  EXPECT_EQ(got_dsts.count(self), 0u);

  std::uint64_t lines_direct = 0, lines_packed = 0;
  for (const DrainPlan& p : plans) {
    SCOPED_TRACE("dst " + std::to_string(p.dst));
    auto subscribed = [&](std::uint64_t w) { return (masks[g.page_of_word(w)] >> p.dst) & 1u; };

    // Structure: increasing, unique, only dirty words of subscribed pages, values from the source.
    std::set<std::uint64_t> direct_lines, packed_lines;
    for (std::size_t i = 0; i < p.direct.size(); ++i) {
      const auto& lw = p.direct[i];
      if (i) {
        EXPECT_LT(p.direct[i - 1].line, lw.line);
      }
      EXPECT_EQ(lw.mask, dirty[lw.line]);
      EXPECT_FALSE(pack_line(lw.mask));
      EXPECT_TRUE(subscribed(lw.line * 32));
      direct_lines.insert(lw.line);
    }
    for (std::size_t i = 0; i < p.packed.size(); ++i) {
      const auto& e = p.packed[i];
      if (i) {
        ASSERT_LT(p.packed[i - 1].word, e.word) << "packed queue not increasing / holds a word twice";
      }
      EXPECT_TRUE(is_dirty(e.word)) << e.word;
      EXPECT_TRUE(subscribed(e.word)) << e.word;
      EXPECT_EQ(e.value, last.at(e.word));
      EXPECT_TRUE(pack_line(dirty[e.word / 32]));
      packed_lines.insert(e.word / 32);
    }
    for (auto l : packed_lines) EXPECT_EQ(direct_lines.count(l), 0u) << "line " << l << " sent both ways";
    lines_direct += direct_lines.size();
    lines_packed += packed_lines.size();

    // Accounting against an independent count.
    std::uint64_t useful = 0, link = 0, link_direct = 0, packed_entries = 0;
    for (std::uint64_t l = 0; l < g.lines(); ++l) {
      if (!dirty[l] || !subscribed(l * 32)) continue;
      const Sectors c = count_line(dirty[l]);
      useful += 4ull * c.words;
      const std::uint64_t direct = 32ull * c.sectors, packed = 6ull * c.words;
      if (packed < direct) {
        link += packed;
        packed_entries += c.words;
      } else {
        link += direct;
        link_direct += direct;
      }
    }
    EXPECT_EQ(p.useful_bytes, useful);
    EXPECT_EQ(p.packed.size(), packed_entries);
    // One record (directory entry) per block holding packed lines, padded to 8 entries.
    std::map<std::uint64_t, std::uint64_t> per_block;
    for (const auto& e : p.packed) per_block[e.word / 32 / block_lines_for(g.page_shift)] += 1;
    std::uint64_t padding = 0;
    for (const auto& [b, k] : per_block) padding += 6 * ((k + 7) / 8 * 8 - k);
    EXPECT_EQ(p.records, per_block.size());
    EXPECT_EQ(p.link_bytes, link + padding + 8ull * per_block.size());
    EXPECT_EQ(p.link_bytes, link_direct + 6ull * p.packed.size() + padding + 8ull * per_block.size());

    // Apply to a destination that starts with different content.
    // (every word differs from the source's, so a word that is not delivered cannot pass).
    std::vector<std::uint32_t> init(g.words());
    for (std::uint64_t w = 0; w < g.words(); ++w) init[w] = ~src[w] ^ static_cast<std::uint32_t>(w & 0xF0u);
    std::vector<std::uint32_t> dst = init;
    apply_drain(p, src.data(), dst.data());
    for (std::uint64_t w = 0; w < g.words(); ++w) {
      if (is_dirty(w) && subscribed(w))
        ASSERT_EQ(dst[w], last.at(w)) << "dirty word " << w << " not delivered";
      else
        ASSERT_EQ(dst[w], init[w]) << "word " << w << " changed but was not to be sent";
    }
  }
  // The streams mix dense and scattered lines: with every device subscribed, both ways are used.
  if (!partial_masks) {
    EXPECT_GT(lines_direct, 0u);
    EXPECT_GT(lines_packed, 0u);
  }
}

}  // namespace

TEST(GpsDrain, RandomRoundTripAllSubscribed) {
  for (std::uint64_t seed = 1; seed <= 25; ++seed) round_trip(seed, false);
}

TEST(GpsDrain, RandomRoundTripPartialSubscribers) {
  for (std::uint64_t seed = 101; seed <= 125; ++seed) round_trip(seed, true);
}
