// Host logic of the GPS runtime: page math, the subscription table, access-tracking reduction, the
// bulk copy plan and the settings read from the environment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "runtime/bulk_plan.hpp"
#include "gpsm/gps/page_math.hpp"
#include "gpsm/gps/settings.hpp"
#include "gpsm/gps/subscription.hpp"
#include "runtime/tracking.hpp"

using namespace gpsm::gps;

namespace {

// Runs `f`, expects a gpsm::Error whose message starts with "gpsm: " and contains every needle.
template <class F>
void expect_error(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
  } catch (const gpsm::Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("gpsm: ", 0), 0u) << msg;
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "'" << n << "' not in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected gpsm::Error, got another exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "expected gpsm::Error, nothing was thrown";
}

}  // namespace

// Found by argument-dependent lookup from inside GoogleTest's macros.
namespace gpsm::gps {
bool operator==(const PageRange& a, const PageRange& b) { return a.first == b.first && a.last == b.last; }
std::ostream& operator<<(std::ostream& os, const PageRange& r) { return os << "[" << r.first << "," << r.last << ")"; }
std::ostream& operator<<(std::ostream& os, const CopyRun& r) {
  return os << "{dst " << r.dst << ", off " << r.byte_offset << ", " << r.bytes << " B}";
}
}  // namespace gpsm::gps

// ---------------------------------------------------------------------------------------------
// Page math

TEST(GpsPageMath, GeometryEmptyAndTiny) {
  Geometry z{0, 16};
  EXPECT_EQ(z.pages(), 0u);
  EXPECT_EQ(z.padded_bytes(), 0u);
  EXPECT_EQ(z.words(), 0u);
  EXPECT_EQ(z.lines(), 0u);
  EXPECT_EQ(z.page_bitmap_words(), 0u);

  Geometry one{1, 16};
  EXPECT_EQ(one.page_bytes(), 65536u);
  EXPECT_EQ(one.pages(), 1u);
  EXPECT_EQ(one.padded_bytes(), 128u);
  EXPECT_EQ(one.words(), 32u);
  EXPECT_EQ(one.lines(), 1u);
  EXPECT_EQ(one.page_bitmap_words(), 1u);
}

TEST(GpsPageMath, GeometryPageBoundaries) {
  Geometry g{65536, 16};
  EXPECT_EQ(g.pages(), 1u);
  EXPECT_EQ(g.lines(), 512u);
  g.bytes = 65537;
  EXPECT_EQ(g.pages(), 2u);
  EXPECT_EQ(g.padded_bytes(), 65536u + 128u);
  EXPECT_EQ(g.lines(), 513u);
  EXPECT_EQ(g.page_of_byte(65535), 0u);
  EXPECT_EQ(g.page_of_byte(65536), 1u);
  EXPECT_EQ(g.page_of_word(16383), 0u);
  EXPECT_EQ(g.page_of_word(16384), 1u);
  EXPECT_EQ(g.page_of_line(511), 0u);
  EXPECT_EQ(g.page_of_line(512), 1u);

  Geometry small{32 * 128, 7};  // 128-byte pages: one line per page
  EXPECT_EQ(small.pages(), 32u);
  EXPECT_EQ(small.page_bitmap_words(), 1u);
  small.bytes = 33 * 128;
  EXPECT_EQ(small.page_bitmap_words(), 2u);
  EXPECT_EQ(small.page_of_line(32), 32u);
  EXPECT_EQ(small.page_of_word(32 * 32 + 5), 32u);
}

// Pages for row-run data: every row covers whole pages (a span check of a row reads one mask per
// page, and no page holds parts of two rows), and a valid page size, or 0 where none divides.
TEST(GpsPageMath, PageBytesForRuns) {
  EXPECT_EQ(page_bytes_for_runs(4096 * 4), 16384u);     // jacobi2d 4096: a page per row
  EXPECT_EQ(page_bytes_for_runs(16384 * 4), 65536u);    // 16384: a page per row
  EXPECT_EQ(page_bytes_for_runs(4224 * 4), 512u);       // 33 pages per row
  EXPECT_EQ(page_bytes_for_runs(1000 * 4), 0u);         // 4000 B: only 32 B divides it
  EXPECT_EQ(page_bytes_for_runs(0), 0u);
  EXPECT_EQ(page_bytes_for_runs(std::uint64_t{64} << 20), std::uint64_t{2} << 20);  // capped at 2 MiB
  EXPECT_EQ(page_bytes_for_runs(std::uint64_t{64} << 20, 4096), 4096u);
  for (std::uint64_t run : {128ull, 384ull, 16384ull, 24576ull, 3ull << 21, 5ull << 22}) {
    const std::uint64_t p = page_bytes_for_runs(run);
    ASSERT_NE(p, 0u) << run;
    EXPECT_EQ(run % p, 0u) << run;
    EXPECT_GE(page_shift_of(p), 7) << run;
    EXPECT_LE(p, std::uint64_t{2} << 20) << run;
    if (p < (std::uint64_t{2} << 20)) EXPECT_NE(run % (2 * p), 0u) << run;  // the largest such
  }
}

TEST(GpsPageMath, PagesOfBytes) {
  Geometry g{1 << 20, 16};
  auto r = pages_of_bytes(g, 10, 10);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 0u);
  r = pages_of_bytes(g, 20, 10);  // reversed: empty
  EXPECT_EQ(r.first, r.last);
  r = pages_of_bytes(g, 0, 1);
  EXPECT_EQ(r, (PageRange{0, 1}));
  r = pages_of_bytes(g, 0, 65536);
  EXPECT_EQ(r, (PageRange{0, 1}));
  r = pages_of_bytes(g, 65535, 65537);
  EXPECT_EQ(r, (PageRange{0, 2}));
  r = pages_of_bytes(g, 65536, 131072);
  EXPECT_EQ(r, (PageRange{1, 2}));
  r = pages_of_bytes(g, 131071, 131072);
  EXPECT_EQ(r, (PageRange{1, 2}));
}

TEST(GpsPageMath, PageShiftOf) {
  EXPECT_EQ(page_shift_of(128), 7);
  EXPECT_EQ(page_shift_of(4096), 12);
  EXPECT_EQ(page_shift_of(65536), 16);
  EXPECT_EQ(page_shift_of(2u << 20), 21);
  EXPECT_EQ(page_shift_of(std::uint64_t{1} << 40), 40);
  EXPECT_EQ(page_shift_of(0), -1);
  EXPECT_EQ(page_shift_of(64), -1);   // smaller than a line
  EXPECT_EQ(page_shift_of(127), -1);
  EXPECT_EQ(page_shift_of(3 << 10), -1);  // not a power of two
  EXPECT_EQ(page_shift_of(65537), -1);
}

// ---------------------------------------------------------------------------------------------
// Subscription table

TEST(GpsSubscription, DefaultEveryoneSubscribed) {
  SubscriptionTable t(5, 3);
  EXPECT_EQ(t.pages(), 5u);
  EXPECT_EQ(t.devices(), 3);
  for (std::uint64_t p = 0; p < 5; ++p) {
    EXPECT_EQ(t.mask(p), 0b111u);
    EXPECT_EQ(t.home(p), 0);
    EXPECT_FALSE(t.demoted(p));
    for (int d = 0; d < 3; ++d) EXPECT_TRUE(t.subscribed(p, d));
  }
  EXPECT_EQ(t.masks(), std::vector<std::uint32_t>(5, 0b111u));

  SubscriptionTable eight(2, kMaxDevices);
  EXPECT_EQ(eight.mask(1), 0xFFu);

  SubscriptionTable single(3, 1);  // one device: everything is demoted from the start
  EXPECT_TRUE(single.demoted(0));
  EXPECT_EQ(single.summary().demoted_pages, 3u);
}

TEST(GpsSubscription, BadDeviceCount) {
  expect_error([] { SubscriptionTable t(4, 0); }, {"0"});
  expect_error([] { SubscriptionTable t(4, kMaxDevices + 1); }, {"9", "8"});
  expect_error([] { SubscriptionTable t(4, -1); }, {"-1"});
}

TEST(GpsSubscription, HomeIsLowestSubscriber) {
  SubscriptionTable t(4, 4);
  t.assign({0b1111, 0b1010, 0b1000, 0b0110});
  EXPECT_EQ(t.home(0), 0);
  EXPECT_EQ(t.home(1), 1);
  EXPECT_EQ(t.home(2), 3);
  EXPECT_EQ(t.home(3), 1);
  EXPECT_TRUE(t.demoted(2));
  EXPECT_FALSE(t.demoted(3));
  EXPECT_TRUE(t.subscribed(1, 3));
  EXPECT_FALSE(t.subscribed(1, 2));
  expect_error([&] { t.home(4); }, {"page 4", "4 pages"});
  expect_error([&] { t.demoted(99); }, {"page 99"});
}

TEST(GpsSubscription, SubscribeReturnsNewlyGainedRuns) {
  SubscriptionTable t(10, 3);
  // Device 2 holds only pages 3 and 6..7.
  t.assign({0b011, 0b011, 0b011, 0b111, 0b011, 0b011, 0b111, 0b111, 0b011, 0b011});
  auto gained = t.subscribe({1, 9}, 2);
  ASSERT_EQ(gained.size(), 3u);
  EXPECT_EQ(gained[0], (PageRange{1, 3}));
  EXPECT_EQ(gained[1], (PageRange{4, 6}));
  EXPECT_EQ(gained[2], (PageRange{8, 9}));
  for (std::uint64_t p = 1; p < 9; ++p) EXPECT_TRUE(t.subscribed(p, 2)) << p;
  EXPECT_FALSE(t.subscribed(0, 2));
  EXPECT_FALSE(t.subscribed(9, 2));
  // Subscribing again gains nothing and changes nothing.
  const auto before = t.masks();
  EXPECT_TRUE(t.subscribe({0, 10}, 0).empty());
  EXPECT_EQ(t.masks(), before);
  // An empty range is a no-op.
  EXPECT_TRUE(t.subscribe({5, 5}, 2).empty());
  // The whole rest in one run.
  gained = t.subscribe({0, 10}, 2);
  ASSERT_EQ(gained.size(), 2u);
  EXPECT_EQ(gained[0], (PageRange{0, 1}));
  EXPECT_EQ(gained[1], (PageRange{9, 10}));
  EXPECT_EQ(t.masks(), std::vector<std::uint32_t>(10, 0b111u));
}

TEST(GpsSubscription, UnsubscribeAndDemotion) {
  SubscriptionTable t(6, 3);
  t.unsubscribe({0, 3}, 0);
  for (std::uint64_t p = 0; p < 3; ++p) {
    EXPECT_EQ(t.mask(p), 0b110u);
    EXPECT_EQ(t.home(p), 1);  // home moves to the next subscriber
  }
  EXPECT_EQ(t.mask(3), 0b111u);
  t.unsubscribe({1, 2}, 2);  // page 1 down to one subscriber: demoted
  EXPECT_EQ(t.mask(1), 0b010u);
  EXPECT_TRUE(t.demoted(1));
  EXPECT_FALSE(t.demoted(0));
  // Unsubscribing a device that is not subscribed is a no-op for that page.
  t.unsubscribe({0, 2}, 0);
  EXPECT_EQ(t.mask(0), 0b110u);
  EXPECT_EQ(t.mask(1), 0b010u);
}

TEST(GpsSubscription, UnsubscribeLastSubscriberThrowsAndLeavesTableIntact) {
  SubscriptionTable t(20, 3);
  t.assign(std::vector<std::uint32_t>(20, 0b110u));
  t.demote({17, 18});  // page 17: only device 1
  ASSERT_EQ(t.mask(17), 0b010u);
  const auto before = t.masks();
  // Pages 10..16 could drop device 1, page 17 cannot: nothing must change.
  expect_error([&] { t.unsubscribe({10, 20}, 1); }, {"unsubscribe", "device 1", "page 17", "last subscriber"});
  EXPECT_EQ(t.masks(), before);
  // The page before the offending one is also untouched (validation precedes mutation).
  EXPECT_TRUE(t.subscribed(16, 1));
  // Two last-subscriber pages: the first one is named.
  t.demote({3, 4});
  t.demote({5, 6});
  expect_error([&] { t.unsubscribe({0, 10}, 1); }, {"page 3"});
  EXPECT_TRUE(t.subscribed(0, 1));
}

TEST(GpsSubscription, BadDeviceOrRange) {
  SubscriptionTable t(8, 4);
  const auto before = t.masks();
  expect_error([&] { t.subscribe({0, 1}, 4); }, {"subscribe", "device 4"});
  expect_error([&] { t.subscribe({0, 1}, -1); }, {"device -1"});
  expect_error([&] { t.unsubscribe({0, 1}, 7); }, {"unsubscribe", "device 7"});
  expect_error([&] { t.subscribe({0, 9}, 1); }, {"[0, 9)", "8 pages"});
  expect_error([&] { t.unsubscribe({3, 9}, 1); }, {"[3, 9)"});
  expect_error([&] { t.subscribe({5, 2}, 1); }, {"reversed"});
  expect_error([&] { t.demote({0, 100}); }, {"demote", "[0, 100)"});
  EXPECT_EQ(t.masks(), before);
  EXPECT_THROW(t.mask(8), std::out_of_range);  // mask() is bounds-checked by the header (vector::at)
}

TEST(GpsSubscription, DemoteKeepsCurrentHome) {
  SubscriptionTable t(5, 4);
  t.assign({0b1111, 0b1100, 0b1010, 0b0001, 0b0110});
  t.demote({1, 5});
  EXPECT_EQ(t.mask(0), 0b1111u);  // outside the range
  EXPECT_EQ(t.mask(1), 0b0100u);
  EXPECT_EQ(t.mask(2), 0b0010u);
  EXPECT_EQ(t.mask(3), 0b0001u);
  EXPECT_EQ(t.mask(4), 0b0010u);
  for (std::uint64_t p = 1; p < 5; ++p) EXPECT_TRUE(t.demoted(p));
  t.demote({0, 0});  // empty range
  EXPECT_EQ(t.mask(0), 0b1111u);
}

TEST(GpsSubscription, AssignValidation) {
  SubscriptionTable t(3, 3);
  const auto before = t.masks();
  expect_error([&] { t.assign({1, 2}); }, {"2 subscriber masks", "3 pages"});
  expect_error([&] { t.assign({1, 0, 2}); }, {"page 1", "at least one subscriber"});
  expect_error([&] { t.assign({1, 2, 0b1001}); }, {"page 2", "0x9", "3"});
  expect_error([&] { t.assign({0x80000000u, 1, 1}); }, {"page 0"});
  EXPECT_EQ(t.masks(), before);  // a failed assign changes nothing
  t.assign({1, 2, 4});
  EXPECT_EQ(t.masks(), (std::vector<std::uint32_t>{1, 2, 4}));
}

TEST(GpsSubscription, Summary) {
  SubscriptionTable t(6, 3);
  t.assign({0b111, 0b011, 0b100, 0b001, 0b110, 0b100});
  const auto s = t.summary();
  EXPECT_EQ(s.replicated_pages, 3u);
  EXPECT_EQ(s.demoted_pages, 3u);
  ASSERT_EQ(s.pages_per_device.size(), 3u);
  EXPECT_EQ(s.pages_per_device[0], 3u);  // pages 0, 1, 3
  EXPECT_EQ(s.pages_per_device[1], 3u);  // pages 0, 1, 4
  EXPECT_EQ(s.pages_per_device[2], 4u);  // pages 0, 2, 4, 5

  SubscriptionTable empty;
  const auto e = empty.summary();
  EXPECT_EQ(e.replicated_pages + e.demoted_pages, 0u);
  EXPECT_TRUE(e.pages_per_device.empty());
}

// The whole-array word behind View::whole_local: only devices on every page, and it follows
// unsubscribe and demotion.
TEST(GpsSubscription, OnEveryPage) {
  SubscriptionTable t(4, 3);
  EXPECT_EQ(t.on_every_page(), 0b111u);
  t.unsubscribe(PageRange{2, 3}, 1);
  EXPECT_EQ(t.on_every_page(), 0b101u);
  t.demote(PageRange{3, 4});  // home 0 keeps page 3
  EXPECT_EQ(t.on_every_page(), 0b001u);
  t.assign({0b110, 0b011, 0b111, 0b010});
  EXPECT_EQ(t.on_every_page(), 0b010u);
  t.assign({0b110, 0b011, 0b101, 0b010});
  EXPECT_EQ(t.on_every_page(), 0u);
  EXPECT_EQ(SubscriptionTable().on_every_page(), 0u);
}

// The any-page word behind View::sole: the OR of the masks.
TEST(GpsSubscription, OnAnyPage) {
  SubscriptionTable t(3, 3);
  EXPECT_EQ(t.on_any_page(), 0b111u);
  t.assign({0b001, 0b001, 0b001});
  EXPECT_EQ(t.on_any_page(), 0b001u);
  t.assign({0b001, 0b100, 0b001});
  EXPECT_EQ(t.on_any_page(), 0b101u);
  EXPECT_EQ(SubscriptionTable().on_any_page(), 0u);
}

TEST(GpsSubscription, PagesOfADevice) {
  SubscriptionTable t(7, 3);
  t.assign({0b011, 0b011, 0b001, 0b110, 0b010, 0b011, 0b111});
  auto r = t.pages_of(1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (PageRange{0, 2}));
  EXPECT_EQ(r[1], (PageRange{3, 7}));
  r = t.pages_of(2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (PageRange{3, 4}));
  EXPECT_EQ(r[1], (PageRange{6, 7}));
  r = t.pages_of(0);  // pages 0..2 (page 2 its alone) and 5..6
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (PageRange{0, 3}));
  EXPECT_EQ(r[1], (PageRange{5, 7}));
  ASSERT_EQ(SubscriptionTable(5, 2).pages_of(1).size(), 1u);  // everyone subscribed: one run
  EXPECT_EQ(SubscriptionTable(5, 2).pages_of(1)[0], (PageRange{0, 5}));
  expect_error([&] { t.pages_of(3); }, {"device 3", "0..2"});
  expect_error([&] { t.pages_of(-1); }, {"device -1"});
}

// Reach is what a launch classifies its work items by (the 3D apps' gps step): it must say
// checked as soon as one page of the range is missing, sole only where the device is every page's
// only subscriber, and agree with a page-by-page walk on every range of a mixed table.
TEST(GpsSubscription, ReachOfARange) {
  SubscriptionTable t(6, 3);
  t.assign({0b001, 0b001, 0b011, 0b010, 0b110, 0b001});
  EXPECT_EQ(t.reach({0, 2}, 0), Reach::sole);
  EXPECT_EQ(t.reach({0, 3}, 0), Reach::shared);   // page 2 is also device 1's
  EXPECT_EQ(t.reach({0, 4}, 0), Reach::checked);  // page 3 is not device 0's
  EXPECT_EQ(t.reach({3, 3}, 0), Reach::sole);     // empty
  EXPECT_EQ(t.reach({3, 4}, 1), Reach::sole);
  EXPECT_EQ(t.reach({2, 5}, 1), Reach::shared);
  EXPECT_EQ(t.reach({5, 6}, 2), Reach::checked);
  EXPECT_THROW(t.reach({0, 7}, 0), gpsm::Error);
  EXPECT_THROW(t.reach({0, 1}, 3), gpsm::Error);
  for (int d = 0; d < 3; ++d)
    for (std::uint64_t a = 0; a < 6; ++a)
      for (std::uint64_t b = a; b <= 6; ++b) {
        bool has = true, alone = true;
        for (std::uint64_t p = a; p < b; ++p) {
          has = has && t.subscribed(p, d);
          alone = alone && t.mask(p) == (1u << d);
        }
        const Reach want = !has ? Reach::checked : alone ? Reach::sole : Reach::shared;
        EXPECT_EQ(t.reach({a, b}, d), want) << "device " << d << " pages [" << a << ", " << b << ")";
      }
}

// The subscribers of a range are what a kernel publishes a whole run to with View::span_with (the
// 3D apps' published planes): uniform only where every page has the same mask, that mask then, and
// the devices on every page otherwise; the same as a page-by-page walk on every range.
TEST(GpsSubscription, SubscribersOfARange) {
  SubscriptionTable t(6, 3);
  t.assign({0b001, 0b001, 0b011, 0b011, 0b110, 0b001});
  EXPECT_EQ(t.subscribers({0, 2}).mask, 0b001u);
  EXPECT_TRUE(t.subscribers({0, 2}).uniform);
  EXPECT_TRUE(t.subscribers({2, 4}).uniform);
  EXPECT_EQ(t.subscribers({2, 4}).mask, 0b011u);
  EXPECT_FALSE(t.subscribers({1, 3}).uniform);
  EXPECT_EQ(t.subscribers({1, 3}).mask, 0b001u);  // device 0 holds both pages
  EXPECT_FALSE(t.subscribers({3, 3}).uniform);    // empty: nothing to publish through
  EXPECT_THROW(t.subscribers({0, 7}), gpsm::Error);
  for (std::uint64_t a = 0; a < 6; ++a)
    for (std::uint64_t b = a + 1; b <= 6; ++b) {
      std::uint32_t all = 0b111;
      bool same = true;
      for (std::uint64_t p = a; p < b; ++p) {
        all &= t.mask(p);
        same = same && t.mask(p) == t.mask(a);
      }
      const RangeSubscribers got = t.subscribers({a, b});
      EXPECT_EQ(got.uniform, same) << "pages [" << a << ", " << b << ")";
      EXPECT_EQ(got.mask, all) << "pages [" << a << ", " << b << ")";
    }
}

TEST(GpsSubscription, AddedRanges) {
  const std::vector<std::uint32_t> before{0b01, 0b01, 0b11, 0b01, 0b10, 0b10, 0b01};
  const std::vector<std::uint32_t> after{0b11, 0b11, 0b11, 0b11, 0b10, 0b01, 0b11};
  auto r = added_ranges(before, after, 1);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], (PageRange{0, 2}));
  EXPECT_EQ(r[1], (PageRange{3, 4}));
  EXPECT_EQ(r[2], (PageRange{6, 7}));
  r = added_ranges(before, after, 0);  // device 0 gains page 5 only
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], (PageRange{5, 6}));
  EXPECT_TRUE(added_ranges(before, before, 0).empty());
  EXPECT_TRUE(added_ranges({}, {}, 0).empty());
  EXPECT_TRUE(added_ranges(before, after, 5).empty());
  expect_error([&] { added_ranges(before, {1, 2}, 0); }, {"7", "2"});
  expect_error([&] { added_ranges(before, after, -1); }, {"-1"});
  expect_error([&] { added_ranges(before, after, 32); }, {"32"});
}

TEST(GpsSubscription, SubscribeAgreesWithAddedRanges) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 50; ++iter) {
    const std::uint64_t pages = 1 + rng() % 70;
    SubscriptionTable t(pages, 4);
    std::vector<std::uint32_t> m(pages);
    for (auto& x : m) x = static_cast<std::uint32_t>(1 + rng() % 15);
    t.assign(m);
    const int dev = static_cast<int>(rng() % 4);
    std::uint64_t a = rng() % (pages + 1), b = rng() % (pages + 1);
    if (a > b) std::swap(a, b);
    const auto before = t.masks();
    const auto gained = t.subscribe({a, b}, dev);
    const auto expected = added_ranges(before, t.masks(), dev);
    ASSERT_EQ(gained.size(), expected.size());
    for (std::size_t i = 0; i < gained.size(); ++i) EXPECT_EQ(gained[i], expected[i]);
    for (std::size_t i = 1; i < gained.size(); ++i) EXPECT_LT(gained[i - 1].last, gained[i].first);  // merged
    for (std::uint64_t p = 0; p < pages; ++p)
      EXPECT_EQ(t.mask(p), (p >= a && p < b) ? (before[p] | bit(dev)) : before[p]);
  }
}

TEST(GpsSubscription, SameMaskRuns) {
  EXPECT_TRUE(same_mask_runs({}).empty());
  EXPECT_EQ(same_mask_runs({1, 1, 3, 3, 3, 1, 2}), (std::vector<std::uint32_t>{2, 1, 3, 2, 1, 1, 1}));
  EXPECT_EQ(same_mask_runs({5}), (std::vector<std::uint32_t>{1}));
}

// The walk the kernels use (View::span / local_span outside tracking) against one read per page.
TEST(GpsSubscription, MaskWalkOverRunsAgreesWithPageByPage) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 400; ++iter) {
    const std::uint64_t pages = 1 + rng() % 40;
    std::vector<std::uint32_t> m(pages);
    // few distinct masks, so runs of several pages occur
    for (auto& x : m) x = (rng() % 3 == 0) ? static_cast<std::uint32_t>(1 + rng() % 15) : 1u;
    const auto runs = same_mask_runs(m);
    std::uint64_t a = rng() % pages, b = rng() % pages;
    if (a > b) std::swap(a, b);
    const MaskSpan s = masks_over_runs(m.data(), runs.data(), a, b);
    std::uint32_t all = m[a];
    bool uniform = true;
    for (std::uint64_t p = a; p <= b; ++p) {
      all &= m[p];
      uniform = uniform && m[p] == m[a];
    }
    ASSERT_EQ(s.first, m[a]) << "pages " << a << ".." << b;
    ASSERT_EQ(s.all, all) << "pages " << a << ".." << b;
    ASSERT_EQ(s.uniform, uniform) << "pages " << a << ".." << b;
  }
}

// ---------------------------------------------------------------------------------------------
// Access tracking

namespace {
std::vector<std::vector<std::uint32_t>> bitmaps(std::uint64_t pages, int devices,
                                                const std::map<int, std::vector<std::uint64_t>>& touched) {
  std::vector<std::vector<std::uint32_t>> b(devices, std::vector<std::uint32_t>((pages + 31) / 32, 0));
  for (const auto& [d, ps] : touched)
    for (auto p : ps) b[d][p / 32] |= 1u << (p % 32);
  return b;
}
}  // namespace

TEST(GpsTracking, HaloPatternGivesNeighbours) {
  // 4 devices, 2 pages each, each also reads one halo page on either side.
  const std::uint64_t pages = 8;
  std::map<int, std::vector<std::uint64_t>> t;
  for (int d = 0; d < 4; ++d)
    for (int p = 2 * d - 1; p <= 2 * d + 2; ++p)
      if (p >= 0 && p < 8) t[d].push_back(static_cast<std::uint64_t>(p));
  const auto out = reduce_tracking(bitmaps(pages, 4, t), std::vector<std::uint32_t>(pages, 0xF));
  const std::vector<std::uint32_t> expected{0b0001, 0b0011, 0b0011, 0b0110, 0b0110, 0b1100, 0b1100, 0b1000};
  EXPECT_EQ(out, expected);
}

TEST(GpsTracking, AllToAllGivesEveryone) {
  const std::uint64_t pages = 70;  // three bitmap words
  std::map<int, std::vector<std::uint64_t>> t;
  for (int d = 0; d < 5; ++d)
    for (std::uint64_t p = 0; p < pages; ++p) t[d].push_back(p);
  const auto out = reduce_tracking(bitmaps(pages, 5, t), std::vector<std::uint32_t>(pages, 0b1));
  EXPECT_EQ(out, std::vector<std::uint32_t>(pages, 0b11111u));
}

TEST(GpsTracking, UntouchedPageKeepsOldHomeOnly) {
  const std::uint64_t pages = 40;
  std::map<int, std::vector<std::uint64_t>> t{{0, {0}}, {2, {0, 33}}};
  std::vector<std::uint32_t> before(pages, 0b1110);
  before[5] = 0b1100;
  before[39] = 0b1000;
  const auto out = reduce_tracking(bitmaps(pages, 4, t), before);
  ASSERT_EQ(out.size(), pages);
  EXPECT_EQ(out[0], 0b0101u);
  EXPECT_EQ(out[33], 0b0100u);      // second bitmap word
  EXPECT_EQ(out[1], 0b0010u);       // untouched: old home (device 1)
  EXPECT_EQ(out[5], 0b0100u);       // untouched: old home (device 2)
  EXPECT_EQ(out[39], 0b1000u);      // untouched: old home (device 3)
  for (auto m : out) EXPECT_NE(m, 0u);  // every page keeps a copy
}

TEST(GpsTracking, TrailingBitsIgnored) {
  const std::uint64_t pages = 5;
  auto b = bitmaps(pages, 3, {{0, {1}}, {1, {4}}});
  b[0][0] |= 0xFFFFFFE0u;  // bits 5..31: beyond the last page
  b[2][0] = 0xFFFFFFE0u;   // device 2 touched only nonexistent pages
  b[1].push_back(0xFFFFFFFFu);  // an extra word beyond what 5 pages need
  const auto out = reduce_tracking(b, std::vector<std::uint32_t>(pages, 0b100));
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0b100, 0b001, 0b100, 0b100, 0b010}));
}

TEST(GpsTracking, Errors) {
  const std::vector<std::uint32_t> before(40, 1);
  auto b = bitmaps(40, 2, {});
  b[1].pop_back();  // 40 pages need 2 words
  expect_error([&] { reduce_tracking(b, before); }, {"device 1", "2"});
  expect_error([&] { reduce_tracking(bitmaps(40, 9, {}), before); }, {"9"});
  std::vector<std::uint32_t> zero(40, 1);
  zero[7] = 0;
  expect_error([&] { reduce_tracking(bitmaps(40, 2, {}), zero); }, {"page 7"});
  // A touched page does not need a valid old mask.
  EXPECT_EQ(reduce_tracking(bitmaps(40, 2, {{1, {7}}}), std::vector<std::uint32_t>(40, 1))[7], 0b10u);
  EXPECT_TRUE(reduce_tracking(bitmaps(0, 2, {}), {}).empty());
}

// ---------------------------------------------------------------------------------------------
// Bulk plan

namespace {
struct BulkCase {
  Geometry g;
  std::vector<std::uint32_t> dirty, masks;
  BulkCase(std::uint64_t bytes, std::uint32_t shift, std::uint32_t mask_all)
      : g{bytes, shift}, dirty(g.lines(), 0), masks(g.pages(), mask_all) {}
  void mark(std::uint64_t first_word, std::uint64_t n) {
    for (auto w = first_word; w < first_word + n; ++w) dirty[w / 32] |= 1u << (w % 32);
  }
  std::vector<CopyRun> plan(int self) const { return plan_bulk(g, dirty.data(), masks.data(), self); }
};
}  // namespace

TEST(GpsBulkPlan, SingleRun) {
  BulkCase c(1024, 10, 0b11);
  c.mark(3, 7);
  EXPECT_EQ(c.plan(0), (std::vector<CopyRun>{{1, 12, 28}}));
  EXPECT_EQ(c.plan(1), (std::vector<CopyRun>{{0, 12, 28}}));
  BulkCase clean(1024, 10, 0b11);
  EXPECT_TRUE(clean.plan(0).empty());
}

TEST(GpsBulkPlan, SplitAtCleanWordsJoinAcrossLines) {
  BulkCase c(1024, 10, 0b111);
  c.mark(0, 2);    // words 0-1
  c.mark(4, 2);    // words 4-5
  c.mark(31, 2);   // words 31-32: crosses the line boundary, one run
  c.mark(64, 64);  // lines 2-3 whole: one run
  const std::vector<CopyRun> expected{{1, 0, 8},   {1, 16, 8},  {1, 124, 8}, {1, 256, 256},
                                      {2, 0, 8},   {2, 16, 8},  {2, 124, 8}, {2, 256, 256}};
  EXPECT_EQ(c.plan(0), expected);
}

TEST(GpsBulkPlan, PageBoundaries) {
  // 128-byte pages (one line each); device 2 subscribes to pages 0 and 2 only, device 1 to all.
  BulkCase c(4 * 128, 7, 0b111);
  c.masks = {0b111, 0b011, 0b111, 0b011};
  c.mark(0, 3 * 32);  // pages 0..2 dirty
  const std::vector<CopyRun> expected{
      {1, 0, 384},                 // continues across pages 0-1-2: device 1 subscribes to all
      {2, 0, 128}, {2, 256, 128},  // split: device 2 is not a subscriber of page 1
  };
  EXPECT_EQ(c.plan(0), expected);
  // From device 1, the destinations are 0 and 2.
  const std::vector<CopyRun> from1{{0, 0, 384}, {2, 0, 128}, {2, 256, 128}};
  EXPECT_EQ(c.plan(1), from1);
}

TEST(GpsBulkPlan, SelfOnlyPagesProduceNothing) {
  BulkCase c(3 * 256, 8, 0b11);  // 256-byte pages (two lines each)
  c.masks = {0b11, 0b01, 0b11};  // page 1 belongs to device 0 alone
  c.mark(0, 3 * 64);              // everything dirty
  EXPECT_EQ(c.plan(0), (std::vector<CopyRun>{{1, 0, 256}, {1, 512, 256}}));
  // From device 1's view page 1 is not its own, but the run to device 0 still only covers pages
  // device 0 subscribes to (all of them).
  EXPECT_EQ(c.plan(1), (std::vector<CopyRun>{{0, 0, 768}}));
  c.masks = {0b01, 0b01, 0b01};
  EXPECT_TRUE(c.plan(0).empty());
}

TEST(GpsBulkPlan, TrailingPartialWord) {
  BulkCase c(10, 16, 0b11);  // 10 bytes: words 0..2 exist (the last one partly), padded to one line
  ASSERT_EQ(c.dirty.size(), 1u);
  c.dirty[0] = 0xFFFFFFFFu;  // bits past the allocation's words must be ignored
  EXPECT_EQ(c.plan(0), (std::vector<CopyRun>{{1, 0, 12}}));
  c.dirty[0] = 0xFFFFFFF8u;  // only nonexistent words dirty
  EXPECT_TRUE(c.plan(0).empty());

  BulkCase d(128 + 4, 7, 0b11);  // exactly one word into the second line/page
  d.dirty[0] = 0x80000000u;
  d.dirty[1] = 0xFFFFFFFFu;
  EXPECT_EQ(d.plan(0), (std::vector<CopyRun>{{1, 124, 8}}));

  BulkCase e(0, 16, 0b11);
  EXPECT_TRUE(plan_bulk(e.g, nullptr, nullptr, 0).empty());
}

TEST(GpsBulkPlan, BadSelf) {
  BulkCase c(128, 7, 0b11);
  expect_error([&] { c.plan(-1); }, {"-1"});
  expect_error([&] { c.plan(kMaxDevices); }, {"8"});
}

// Random bitmaps and masks against a word-by-word reference: the runs to each destination cover
// exactly the eligible words (dirty, within the allocation, in a page the destination subscribes
// to), are maximal, sorted and disjoint; copying them reproduces the source on those words only.
TEST(GpsBulkPlan, RandomAgainstReference) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    const auto shift = static_cast<std::uint32_t>(7 + rng() % 3);  // 128..512-byte pages
    const std::uint64_t bytes = 1 + rng() % 4000;
    const int devices = 2 + static_cast<int>(rng() % 4);
    BulkCase c(bytes, shift, 0);
    for (auto& m : c.masks) m = static_cast<std::uint32_t>(1 + rng() % ((1u << devices) - 1));
    for (auto& d : c.dirty) {
      switch (rng() % 4) {
        case 0: d = 0; break;
        case 1: d = 0xFFFFFFFFu; break;
        case 2: d = static_cast<std::uint32_t>(rng()); break;
        default: d = static_cast<std::uint32_t>(rng()) & static_cast<std::uint32_t>(rng()) & static_cast<std::uint32_t>(rng());
      }
    }
    const int self = static_cast<int>(rng() % devices);
    const auto runs = c.plan(self);
    const std::uint64_t valid_words = (bytes + 3) / 4;
    auto eligible = [&](int dst, std::uint64_t w) {
      return w < valid_words && ((c.dirty[w / 32] >> (w % 32)) & 1u) && ((c.masks[c.g.page_of_word(w)] >> dst) & 1u);
    };
    for (std::size_t i = 1; i < runs.size(); ++i) {
      const auto &a = runs[i - 1], &b = runs[i];
      ASSERT_TRUE(a.dst < b.dst || (a.dst == b.dst && a.byte_offset + a.bytes < b.byte_offset))
          << "seed " << seed << ": " << a << " then " << b;
    }
    std::vector<std::uint32_t> src(c.g.words()), dst(c.g.words());
    for (int d = 0; d < devices; ++d) {
      if (d == self) continue;
      std::vector<char> covered(c.g.words(), 0);
      for (const auto& r : runs) {
        ASSERT_NE(r.dst, self);
        ASSERT_GT(r.bytes, 0u);
        ASSERT_EQ(r.byte_offset % 4, 0u);
        ASSERT_EQ(r.bytes % 4, 0u);
        ASSERT_LE(r.byte_offset + r.bytes, (bytes + 3) / 4 * 4) << "seed " << seed;
        if (r.dst != d) continue;
        const auto w0 = r.byte_offset / 4, w1 = (r.byte_offset + r.bytes) / 4;
        for (auto w = w0; w < w1; ++w) covered[w] = 1;
        if (w0 > 0) {
          EXPECT_FALSE(eligible(d, w0 - 1)) << "seed " << seed << " run not maximal at start " << r;
        }
        EXPECT_FALSE(eligible(d, w1)) << "seed " << seed << " run not maximal at end " << r;
      }
      for (std::uint64_t w = 0; w < c.g.words(); ++w)
        ASSERT_EQ(static_cast<bool>(covered[w]), eligible(d, w)) << "seed " << seed << " dst " << d << " word " << w;
      // Copying the runs as the runtime would.
      for (std::uint64_t w = 0; w < src.size(); ++w) {
        src[w] = static_cast<std::uint32_t>(w * 2654435761u + 1);
        dst[w] = 0xDEADBEEFu;
      }
      for (const auto& r : runs)
        if (r.dst == d)
          std::copy(src.begin() + static_cast<std::ptrdiff_t>(r.byte_offset / 4),
                    src.begin() + static_cast<std::ptrdiff_t>((r.byte_offset + r.bytes) / 4),
                    dst.begin() + static_cast<std::ptrdiff_t>(r.byte_offset / 4));
      for (std::uint64_t w = 0; w < src.size(); ++w)
        EXPECT_EQ(dst[w], eligible(d, w) ? src[w] : 0xDEADBEEFu) << "seed " << seed << " word " << w;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Settings

namespace {
const char* const kVars[] = {"GPSM_PAGE_SIZE",       "GPSM_PUBLISH_MODE", "GPSM_WAIT_TIMEOUT_MS",
                             "GPSM_INBOUND_ENTRIES", "GPSM_VERIFY_P2P",   "GPSM_COUNT_LINK_BYTES",
                             "GPSM_PROFILE_FENCE",   "GPSM_DECOUPLED_AGENT", "GPSM_DECOUPLED_CHUNK",
                             "GPSM_ASYNC_FENCE"};

// Clears the GPSM_* settings for the test and restores what the process had afterwards.
class GpsSettings : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      const char* old = std::getenv(v);
      saved_[v] = old ? std::make_pair(true, std::string(old)) : std::make_pair(false, std::string());
      unsetenv(v);
    }
  }
  void TearDown() override {
    for (const auto& [name, val] : saved_) {
      if (val.first) setenv(name.c_str(), val.second.c_str(), 1);
      else unsetenv(name.c_str());
    }
  }
  static Settings with(const char* name, const char* value) {
    setenv(name, value, 1);
    Settings s = Settings::from_env();
    unsetenv(name);
    return s;
  }
  static void bad(const char* name, const char* value, const std::vector<std::string>& extra = {}) {
    setenv(name, value, 1);
    std::vector<std::string> needles{name, std::string("'") + value + "'"};
    needles.insert(needles.end(), extra.begin(), extra.end());
    SCOPED_TRACE(std::string(name) + "=" + value);
    expect_error([] { Settings::from_env(); }, needles);
    unsetenv(name);
  }
  std::map<std::string, std::pair<bool, std::string>> saved_;
};
}  // namespace

TEST_F(GpsSettings, Defaults) {
  const Settings s = Settings::from_env();
  EXPECT_EQ(s.page_bytes, 65536u);
  EXPECT_EQ(s.mode, PublishMode::combine);
  EXPECT_EQ(s.wait_timeout_ms, 10000u);
  EXPECT_EQ(s.inbound_entries, 4u << 20);
  EXPECT_TRUE(s.verify_p2p);
  EXPECT_FALSE(s.count_link_bytes);
  // Empty values mean "use the default".
  const Settings e = with("GPSM_PAGE_SIZE", "");
  EXPECT_EQ(e.page_bytes, 65536u);
}

TEST_F(GpsSettings, PageSize) {
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "64K").page_bytes, 65536u);
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "64KiB").page_bytes, 65536u);
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "65536").page_bytes, 65536u);
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "4k").page_bytes, 4096u);
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "2M").page_bytes, 2u << 20);
  EXPECT_EQ(with("GPSM_PAGE_SIZE", "128").page_bytes, 128u);
  bad("GPSM_PAGE_SIZE", "64", {"power of two"});
  bad("GPSM_PAGE_SIZE", "96K", {"power of two"});
  bad("GPSM_PAGE_SIZE", "12Q");
  bad("GPSM_PAGE_SIZE", "abc");
  bad("GPSM_PAGE_SIZE", "0");
  bad("GPSM_PAGE_SIZE", "99999999999999999999999");
}

TEST_F(GpsSettings, PublishMode) {
  EXPECT_EQ(with("GPSM_PUBLISH_MODE", "inline").mode, PublishMode::inline_store);
  EXPECT_EQ(with("GPSM_PUBLISH_MODE", "combine").mode, PublishMode::combine);
  EXPECT_EQ(with("GPSM_PUBLISH_MODE", "bulk").mode, PublishMode::bulk);
  EXPECT_EQ(with("GPSM_PUBLISH_MODE", "decoupled").mode, PublishMode::decoupled);
  bad("GPSM_PUBLISH_MODE", "fast", {"inline", "combine", "bulk", "decoupled"});
}

TEST_F(GpsSettings, AsyncFence) {
  EXPECT_EQ(Settings::from_env().async_fence, AsyncFence::automatic);
  EXPECT_EQ(with("GPSM_ASYNC_FENCE", "events").async_fence, AsyncFence::events);
  EXPECT_EQ(with("GPSM_ASYNC_FENCE", " Kernel ").async_fence, AsyncFence::kernel);
  EXPECT_EQ(with("GPSM_ASYNC_FENCE", "auto").async_fence, AsyncFence::automatic);
  bad("GPSM_ASYNC_FENCE", "host", {"kernel", "events", "auto"});
  EXPECT_STREQ(async_fence_name(parse_async_fence("events")), "events");
  EXPECT_STREQ(async_fence_name(parse_async_fence("auto")), "auto");
}

TEST_F(GpsSettings, AutomaticAsyncFenceIsEventsOnTwoGpusAndTheKernelBeyond) {
  EXPECT_EQ(resolve_async_fence(AsyncFence::automatic, 2), AsyncFence::events);
  for (int n : {1, 3, 4, 8}) EXPECT_EQ(resolve_async_fence(AsyncFence::automatic, n), AsyncFence::kernel) << n;
  for (int n : {1, 2, 4}) {
    EXPECT_EQ(resolve_async_fence(AsyncFence::kernel, n), AsyncFence::kernel) << n;
    EXPECT_EQ(resolve_async_fence(AsyncFence::events, n), AsyncFence::events) << n;
  }
}

TEST_F(GpsSettings, DecoupledAgentAndChunk) {
  const Settings d = Settings::from_env();
  EXPECT_EQ(d.decoupled_agent, DecoupledAgent::inline_warp);
  EXPECT_EQ(d.decoupled_chunk, kDefaultDecoupledChunk);
  EXPECT_EQ(with("GPSM_DECOUPLED_AGENT", "inline").decoupled_agent, DecoupledAgent::inline_warp);
  EXPECT_EQ(with("GPSM_DECOUPLED_AGENT", "persistent").decoupled_agent, DecoupledAgent::persistent);
  EXPECT_EQ(with("GPSM_DECOUPLED_AGENT", " Persistent ").decoupled_agent, DecoupledAgent::persistent);
  bad("GPSM_DECOUPLED_AGENT", "copy_engine", {"inline", "persistent"});
  bad("GPSM_DECOUPLED_AGENT", "warp");
  EXPECT_EQ(with("GPSM_DECOUPLED_CHUNK", "4K").decoupled_chunk, 4096u);
  EXPECT_EQ(with("GPSM_DECOUPLED_CHUNK", "128").decoupled_chunk, 128u);
  EXPECT_EQ(with("GPSM_DECOUPLED_CHUNK", "1MiB").decoupled_chunk, 1u << 20);
  bad("GPSM_DECOUPLED_CHUNK", "64", {"power of two"});
  bad("GPSM_DECOUPLED_CHUNK", "12K", {"power of two"});
  bad("GPSM_DECOUPLED_CHUNK", "lots");
  for (auto a : {DecoupledAgent::inline_warp, DecoupledAgent::persistent})
    EXPECT_EQ(parse_decoupled_agent(agent_name(a)), a);
  EXPECT_NO_THROW(check_decoupled_chunk(128));
  expect_error([] { check_decoupled_chunk(96); }, {"96", "power of two"});
}

TEST_F(GpsSettings, WaitTimeout) {
  EXPECT_EQ(with("GPSM_WAIT_TIMEOUT_MS", "1").wait_timeout_ms, 1u);
  EXPECT_EQ(with("GPSM_WAIT_TIMEOUT_MS", "250000").wait_timeout_ms, 250000u);
  bad("GPSM_WAIT_TIMEOUT_MS", "0");
  bad("GPSM_WAIT_TIMEOUT_MS", "-5");
  bad("GPSM_WAIT_TIMEOUT_MS", "10s");
  bad("GPSM_WAIT_TIMEOUT_MS", "1.5");
  bad("GPSM_WAIT_TIMEOUT_MS", "99999999999999999999999");
  // a day is the most; past it ms * 10^6 would once wrap to a bound of microseconds
  EXPECT_EQ(with("GPSM_WAIT_TIMEOUT_MS", "86400000").wait_timeout_ms, kMaxWaitTimeoutMs);
  bad("GPSM_WAIT_TIMEOUT_MS", "86400001", {"more than a day", "86400000"});
  bad("GPSM_WAIT_TIMEOUT_MS", "18446744073710", {"more than a day"});  // * 10^6 ns wraps to 448 us
  bad("GPSM_WAIT_TIMEOUT_MS", "18446744073709551615", {"more than a day"});
  EXPECT_EQ(wait_timeout_ns(10000), 10000000000ull);
  EXPECT_EQ(wait_timeout_ns(kMaxWaitTimeoutMs), kMaxWaitTimeoutMs * 1000000ull);
  // saturates instead of wrapping: 18446744073710 ms * 10^6 mod 2^64 is 448384 ns
  EXPECT_EQ(wait_timeout_ns(18446744073710ull), kMaxWaitTimeoutMs * 1000000ull);
  EXPECT_EQ(wait_timeout_ns(~0ull), kMaxWaitTimeoutMs * 1000000ull);
}

TEST_F(GpsSettings, InboundEntries) {
  EXPECT_EQ(with("GPSM_INBOUND_ENTRIES", "1000").inbound_entries, 1000u);
  EXPECT_EQ(with("GPSM_INBOUND_ENTRIES", "1M").inbound_entries, 1u << 20);
  EXPECT_EQ(with("GPSM_INBOUND_ENTRIES", "16KiB").inbound_entries, 16u << 10);
  bad("GPSM_INBOUND_ENTRIES", "0");
  bad("GPSM_INBOUND_ENTRIES", "lots");
  bad("GPSM_INBOUND_ENTRIES", "4T");
  bad("GPSM_INBOUND_ENTRIES", "8000000000G", {"too large"});
}

TEST_F(GpsSettings, Booleans) {
  for (const char* name : {"GPSM_VERIFY_P2P", "GPSM_COUNT_LINK_BYTES", "GPSM_PROFILE_FENCE"}) {
    auto get = [&](const char* v) {
      const Settings s = with(name, v);
      const std::string n(name);
      return n == "GPSM_VERIFY_P2P" ? s.verify_p2p : n == "GPSM_COUNT_LINK_BYTES" ? s.count_link_bytes : s.profile_fence;
    };
    for (const char* t : {"1", "true", "on", "TRUE", "On"}) EXPECT_TRUE(get(t)) << name << "=" << t;
    for (const char* f : {"0", "false", "off", "OFF", "False"}) EXPECT_FALSE(get(f)) << name << "=" << f;
    bad(name, "yes please");
    bad(name, "2");
  }
}

TEST_F(GpsSettings, SeveralAtOnce) {
  setenv("GPSM_PAGE_SIZE", "4K", 1);
  setenv("GPSM_PUBLISH_MODE", "bulk", 1);
  setenv("GPSM_COUNT_LINK_BYTES", "1", 1);
  setenv("GPSM_VERIFY_P2P", "off", 1);
  const Settings s = Settings::from_env();
  EXPECT_EQ(s.page_bytes, 4096u);
  EXPECT_EQ(s.mode, PublishMode::bulk);
  EXPECT_TRUE(s.count_link_bytes);
  EXPECT_FALSE(s.verify_p2p);
  EXPECT_EQ(s.wait_timeout_ms, 10000u);
}

TEST_F(GpsSettings, Describe) {
  Settings s;
  s.page_bytes = 4096;
  s.mode = PublishMode::bulk;
  s.wait_timeout_ms = 5;
  s.inbound_entries = 1000;
  s.verify_p2p = false;
  s.count_link_bytes = true;
  const auto docs = describe(s);
  ASSERT_EQ(docs.size(), 10u);
  std::map<std::string, SettingDoc> by;
  for (const auto& d : docs) {
    EXPECT_FALSE(d.doc.empty()) << d.name;
    EXPECT_EQ(d.doc.find('\n'), std::string::npos) << d.name;
    by[d.name] = d;
  }
  for (const char* v : kVars) ASSERT_TRUE(by.count(v)) << v;
  EXPECT_EQ(by["GPSM_PAGE_SIZE"].value, "4KiB");
  EXPECT_EQ(by["GPSM_PAGE_SIZE"].default_value, "64KiB");
  EXPECT_EQ(by["GPSM_PUBLISH_MODE"].value, "bulk");
  EXPECT_EQ(by["GPSM_PUBLISH_MODE"].default_value, "combine");
  EXPECT_EQ(by["GPSM_WAIT_TIMEOUT_MS"].value, "5");
  EXPECT_EQ(by["GPSM_WAIT_TIMEOUT_MS"].default_value, "10000");
  EXPECT_EQ(by["GPSM_INBOUND_ENTRIES"].value, "1000");
  EXPECT_EQ(by["GPSM_INBOUND_ENTRIES"].default_value, std::to_string(4u << 20));
  EXPECT_EQ(by["GPSM_VERIFY_P2P"].value, "false");
  EXPECT_EQ(by["GPSM_VERIFY_P2P"].default_value, "true");
  EXPECT_EQ(by["GPSM_COUNT_LINK_BYTES"].value, "true");
  EXPECT_EQ(by["GPSM_COUNT_LINK_BYTES"].default_value, "false");

  // Every printed value parses back to the same setting.
  for (const auto& d : docs) setenv(d.name.c_str(), d.value.c_str(), 1);
  const Settings back = Settings::from_env();
  EXPECT_EQ(back.page_bytes, s.page_bytes);
  EXPECT_EQ(back.mode, s.mode);
  EXPECT_EQ(back.wait_timeout_ms, s.wait_timeout_ms);
  EXPECT_EQ(back.inbound_entries, s.inbound_entries);
  EXPECT_EQ(back.verify_p2p, s.verify_p2p);
  EXPECT_EQ(back.count_link_bytes, s.count_link_bytes);
}

TEST(GpsModes, NamesRoundTrip) {
  for (auto m : {PublishMode::inline_store, PublishMode::combine, PublishMode::bulk, PublishMode::decoupled})
    EXPECT_EQ(parse_mode(mode_name(m)), m);
  EXPECT_STREQ(mode_name(PublishMode::inline_store), "inline");
  EXPECT_STREQ(mode_name(PublishMode::combine), "combine");
  EXPECT_STREQ(mode_name(PublishMode::bulk), "bulk");
  EXPECT_STREQ(mode_name(PublishMode::decoupled), "decoupled");
  expect_error([] { parse_mode("inline_store"); }, {"inline_store"});
  expect_error([] { parse_mode(""); }, {"publish mode"});
  expect_error([] { parse_mode("Bulk"); }, {"Bulk"});
}

// Every mode runs; check_publish_mode refuses only a value that names no mode.
TEST(GpsModes, EveryModeRunsAndBadValuesAreRefused) {
  for (auto m : {PublishMode::inline_store, PublishMode::combine, PublishMode::bulk, PublishMode::decoupled})
    EXPECT_NO_THROW(check_publish_mode(m));
  expect_error([] { check_publish_mode(static_cast<PublishMode>(9)); }, {"9", "names no mode"});
}

// Box publish plan (ArrayBase::publish_box_bytes_async): against a byte-by-byte reference, the
// bytes each destination receives are exactly the box's bytes on pages it subscribes to.
TEST(GpsBoxPublishPlan, EachDestinationGetsTheBoxsBytesOnItsPages) {
  const std::uint64_t n[3] = {10, 6, 4}, elem = 4;
  const Geometry g{n[0] * n[1] * n[2] * elem, 7};  // 128-byte pages: 32 floats, rows cross pages
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint32_t> masks(g.pages());
    for (auto& m : masks) m = (rng() & 0xeu) | 1u;  // device 0 everywhere, 1-3 at random
    if (trial % 3 == 0)
      for (auto& m : masks) m |= 2u;  // device 1 on every page: one whole copy
    std::uint64_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      lo[d] = rng() % n[d];
      hi[d] = lo[d] + 1 + rng() % (n[d] - lo[d]);
    }
    const auto plan = plan_box_publish(g, masks.data(), n, elem, lo, hi, 0);
    for (int dst = 1; dst < 4; ++dst) {
      std::vector<bool> want(g.bytes, false), got(g.bytes, false);
      bool any = false;
      for (std::uint64_t z = lo[2]; z < hi[2]; ++z)
        for (std::uint64_t y = lo[1]; y < hi[1]; ++y)
          for (std::uint64_t x = lo[0]; x < hi[0]; ++x)
            for (std::uint64_t b = 0; b < elem; ++b) {
              const std::uint64_t at = ((z * n[1] + y) * n[0] + x) * elem + b;
              if ((masks[g.page_of_byte(at)] >> dst) & 1u) want[at] = any = true;
            }
      const auto it = std::find_if(plan.begin(), plan.end(), [&](const BoxCopy& c) { return c.dst == dst; });
      ASSERT_EQ(it != plan.end(), any) << "trial " << trial << " dst " << dst;
      if (!any) continue;
      if (it->whole) {
        EXPECT_TRUE(it->runs.empty());
        for (std::uint64_t z = lo[2]; z < hi[2]; ++z)
          for (std::uint64_t y = lo[1]; y < hi[1]; ++y)
            for (std::uint64_t at = ((z * n[1] + y) * n[0] + lo[0]) * elem; at < ((z * n[1] + y) * n[0] + hi[0]) * elem;
                 ++at)
              got[at] = true;
      } else {
        for (const CopyRun& r : it->runs) {
          EXPECT_EQ(r.dst, dst);
          for (std::uint64_t at = r.byte_offset; at < r.byte_offset + r.bytes; ++at) got[at] = true;
        }
      }
      EXPECT_EQ(got, want) << "trial " << trial << " dst " << dst << (it->whole ? " (whole)" : "");
    }
    EXPECT_TRUE(std::none_of(plan.begin(), plan.end(), [](const BoxCopy& c) { return c.dst == 0; }));
  }
  const std::uint64_t lo[3] = {0, 0, 0}, bad[3] = {11, 1, 1};
  EXPECT_THROW(plan_box_publish(g, std::vector<std::uint32_t>(g.pages(), 3u).data(), n, elem, lo, bad, 0), gpsm::Error);
}
