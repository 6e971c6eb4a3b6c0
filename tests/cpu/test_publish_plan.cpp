// Host logic of `gpsm publish`: argument parsing and checks, the three store patterns (disjoint,
// in range, counts, deterministic), the expected-value model, and the table / JSON assembly.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "publish/publish_plan.hpp"
#include "runtime/bulk_plan.hpp"
#include "gpsm/topology.hpp"
#include "common/pattern.hpp"
#include "scope/results.hpp"
#include "scope/results_file.hpp"

using namespace gpsm::bench;

namespace {

// Every word each GPU stores, in order.
std::vector<std::vector<std::uint64_t>> all_indices(const PatternPlan& p) {
  std::vector<std::vector<std::uint64_t>> out(p.gpus);
  for (int r = 0; r < p.gpus; ++r)
    for (std::uint64_t k = 0; k < p.count[r]; ++k) out[r].push_back(p.index(r, k));
  return out;
}

void expect_disjoint_in_range(const PatternPlan& p) {
  std::set<std::uint64_t> seen;
  std::uint64_t total = 0;
  for (const auto& l : all_indices(p)) {
    for (std::uint64_t w : l) {
      EXPECT_LT(w, p.words);
      EXPECT_TRUE(seen.insert(w).second) << "word " << w << " stored twice";
    }
    total += l.size();
  }
  EXPECT_EQ(total, p.total_stores());
}

std::uint64_t popcount(const std::vector<std::uint32_t>& bits) {
  std::uint64_t n = 0;
  for (auto b : bits) n += static_cast<std::uint64_t>(__builtin_popcount(b));
  return n;
}

PublishConfig good_config() {
  PublishConfig c;
  c.devices = {0, 1, 2, 3};
  c.bytes = 1 << 20;
  c.patterns = parse_patterns("all");
  c.modes = parse_modes("all");
  return c;
}

ModeResult fake(Pattern p, BenchMode m, double t, std::uint64_t link_bytes) {
  ModeResult r;
  r.pattern = p;
  r.mode = m;
  r.devices = {0, 1, 2, 3};
  r.array_bytes = 1 << 20;
  r.stores_per_gpu = {1000, 1000, 1000, 1000};
  r.useful_bytes = 4000ull * 4 * 3;
  r.time_s = {t, t * 1.1, t * 0.9, t, t * 1.2};
  r.verified = true;
  r.reps_checked = 8;
  if (publishes(m)) {
    r.link.counted = true;
    r.link.link_bytes = link_bytes;
    r.link.useful_bytes = r.useful_bytes;
    r.link.messages = link_bytes / 32;
    r.link.fence_rounds = 1;
  }
  return r;
}

}  // namespace

TEST(PublishArgs, ParsePatternsAndModes) {
  EXPECT_EQ(parse_patterns("all").size(), 3u);
  EXPECT_EQ(parse_patterns("random,coalesced"), (std::vector<Pattern>{Pattern::coalesced, Pattern::random}));
  EXPECT_EQ(parse_patterns("strided-4B"), std::vector<Pattern>{Pattern::strided});
  EXPECT_EQ(parse_patterns("random-4B,random"), std::vector<Pattern>{Pattern::random});
  EXPECT_THROW(parse_patterns("nope"), std::invalid_argument);
  EXPECT_THROW(parse_patterns(""), std::invalid_argument);
  EXPECT_THROW(parse_patterns("coalesced,"), std::invalid_argument);
  try {
    parse_patterns("nope");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos);
  }
  const auto all = parse_modes("all");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all.front(), BenchMode::inline_store);  // the reference of "vs inline" comes first
  EXPECT_EQ(all.back(), BenchMode::local);
  EXPECT_EQ(parse_modes("bulk,inline"), (std::vector<BenchMode>{BenchMode::inline_store, BenchMode::bulk}));
  EXPECT_EQ(parse_modes("local,decoupled"), (std::vector<BenchMode>{BenchMode::decoupled, BenchMode::local}));
  EXPECT_THROW(parse_modes("proact"), std::invalid_argument);
  try {
    parse_modes("proact");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("inline, combine, bulk, decoupled, local or all"), std::string::npos) << e.what();
  }
  EXPECT_EQ(to_publish_mode(BenchMode::combine), gpsm::gps::PublishMode::combine);
  EXPECT_EQ(to_publish_mode(BenchMode::decoupled), gpsm::gps::PublishMode::decoupled);
  EXPECT_STREQ(mode_name(BenchMode::decoupled), "decoupled");
  EXPECT_THROW(to_publish_mode(BenchMode::local), std::invalid_argument);
  EXPECT_STREQ(mode_name(BenchMode::inline_store), "inline");
  EXPECT_STREQ(test_name(Pattern::strided), "publish_strided");
}

TEST(PublishArgs, Validate) {
  EXPECT_NO_THROW(validate_config(good_config()));
  auto c = good_config();
  c.bytes = 1000;
  EXPECT_THROW(validate_options(c), std::invalid_argument);
  c.bytes = 16ull << 30;
  EXPECT_THROW(validate_options(c), std::invalid_argument);
  c = good_config();
  c.reps = 4;
  EXPECT_THROW(validate_options(c), std::invalid_argument);
  c = good_config();
  c.devices = {0};
  EXPECT_NO_THROW(validate_options(c));  // devices are checked with the GPU count
  EXPECT_THROW(validate_config(c), std::invalid_argument);
  c.devices = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_THROW(validate_config(c), std::invalid_argument);
  c = good_config();
  c.random_stores = (c.bytes / 4) / 4;  // more than half of the ~words/4 each GPU owns
  EXPECT_THROW(validate_config(c), std::invalid_argument);
  c.patterns = {Pattern::coalesced};  // --stores only matters for random
  EXPECT_NO_THROW(validate_config(c));
}

TEST(PublishPlan, Coalesced) {
  const auto p = make_plan(Pattern::coalesced, 4, 4096 + 3, 0, 1);
  ASSERT_EQ(p.count.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(p.count[r], 1024u);
    EXPECT_EQ(p.index(r, 0), static_cast<std::uint64_t>(r) * 1024);  // contiguous block per GPU
    EXPECT_EQ(p.index(r, 31), p.index(r, 0) + 31);                    // a warp: one line
  }
  expect_disjoint_in_range(p);
  EXPECT_EQ(p.useful_bytes(), 4096u * 4 * 3);
}

TEST(PublishPlan, StridedOneWordPerLinePerGpu) {
  const int n = 3;
  const std::uint64_t words = 32 * 100;
  const auto p = make_plan(Pattern::strided, n, words, 0, 1);
  expect_disjoint_in_range(p);
  const auto idx = all_indices(p);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(p.count[r], 100u);
    std::set<std::uint64_t> lines;
    for (std::uint64_t w : idx[r]) {
      EXPECT_EQ(w % 32, static_cast<std::uint64_t>(r));  // GPU r's word of every line
      EXPECT_TRUE(lines.insert(w / 32).second);           // one word per line
    }
    EXPECT_EQ(lines.size(), 100u);  // every line
  }
}

TEST(PublishPlan, RandomDisjointOwnedDeterministic) {
  const int n = 4;
  const std::uint64_t words = 1 << 14;
  const std::uint64_t stores = default_random_stores(words, n);
  EXPECT_EQ(stores, words / 4 / 4);
  const auto p = make_plan(Pattern::random, n, words, 0, 7);
  expect_disjoint_in_range(p);
  for (int r = 0; r < n; ++r) {
    ASSERT_EQ(p.count[r], stores);
    ASSERT_EQ(p.list[r].size(), stores);
    for (std::uint64_t w : p.list[r]) EXPECT_EQ(random_owner(w, n, 7), r);
    EXPECT_FALSE(std::is_sorted(p.list[r].begin(), p.list[r].end()));  // random order
  }
  // ownership splits the array about evenly
  std::vector<int> owned(n, 0);
  for (std::uint64_t w = 0; w < words; ++w) owned[random_owner(w, n, 7)]++;
  for (int c : owned) EXPECT_NEAR(c, static_cast<double>(words) / n, words / n / 8.0);

  const auto same = make_plan(Pattern::random, n, words, 0, 7);
  EXPECT_EQ(same.list, p.list);
  const auto other = make_plan(Pattern::random, n, words, 0, 8);
  EXPECT_NE(other.list, p.list);
  const auto fewer = make_plan(Pattern::random, n, words, 10, 7);
  for (int r = 0; r < n; ++r) EXPECT_EQ(fewer.list[r].size(), 10u);
  EXPECT_THROW(make_plan(Pattern::random, n, words, words, 7), std::invalid_argument);
}

TEST(PublishPlan, Bitmaps) {
  for (Pattern pat : {Pattern::coalesced, Pattern::strided, Pattern::random}) {
    const auto p = make_plan(pat, 4, 32 * 64, 0, 3);
    const auto all = stored_bitmap(p, -1);
    EXPECT_EQ(popcount(all), p.total_stores());
    std::vector<std::uint32_t> uni(all.size(), 0u);
    for (int r = 0; r < 4; ++r) {
      const auto mine = stored_bitmap(p, r);
      EXPECT_EQ(popcount(mine), p.count[r]);
      for (std::size_t i = 0; i < mine.size(); ++i) {
        EXPECT_EQ(uni[i] & mine[i], 0u);  // disjoint
        uni[i] |= mine[i];
      }
    }
    EXPECT_EQ(uni, all);
    for (std::uint64_t k = 0; k < p.count[2]; ++k) EXPECT_TRUE(bit_set(all.data(), p.index(2, k)));
  }
}

TEST(PublishModel, SeedsDiffer) {
  for (std::uint32_t run : {0u, 1u, 12345u})
    for (Pattern p : {Pattern::coalesced, Pattern::random}) {
      const auto init = initial_seed(run, p);
      const auto s = rep_seeds(run, p, BenchMode::combine, 200);
      ASSERT_EQ(s.size(), 200u);
      for (std::size_t k = 0; k < s.size(); ++k) {
        EXPECT_NE(s[k], init);
        if (k) EXPECT_NE(s[k], s[k - 1]);
      }
      EXPECT_EQ(s, rep_seeds(run, p, BenchMode::combine, 200));
      EXPECT_NE(s, rep_seeds(run, p, BenchMode::bulk, 200));
    }
}

TEST(PublishModel, CheckWords) {
  const auto p = make_plan(Pattern::strided, 4, 32 * 8, 0, 1);
  const auto bits = stored_bitmap(p, -1);
  const std::uint32_t init = initial_seed(1, Pattern::strided);
  const auto seeds = rep_seeds(1, Pattern::strided, BenchMode::inline_store, 2);
  auto a = initial_array(p.words, init);
  EXPECT_EQ(check_words(a.data(), p.words, bits.data(), seeds[0], init).count, p.total_stores());  // nothing stored yet
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t k = 0; k < p.count[r]; ++k) {
      const auto w = p.index(r, k);
      a[w] = gpsm::pattern_word(w, seeds[0]);
    }
  EXPECT_EQ(check_words(a.data(), p.words, bits.data(), seeds[0], init).count, 0u);
  // the next rep's model rejects every word left from this one (stale data never passes)
  EXPECT_EQ(check_words(a.data(), p.words, bits.data(), seeds[1], init).count, p.total_stores());
  // an untouched word that changed is caught, with its position and values
  a[4 + 4 * 32] ^= 0x100u;  // word 4 of line 4 is nobody's (4 GPUs store words 0..3)
  const auto m = check_words(a.data(), p.words, bits.data(), seeds[0], init);
  EXPECT_EQ(m.count, 1u);
  EXPECT_EQ(m.first, 4u + 4 * 32);
  EXPECT_EQ(m.want, gpsm::pattern_word(m.first, init));
}

// decoupled's series says, per GPU in rank order, how many chunks its stores complete; the other
// modes' series have no such param.
TEST(PublishReport, DecoupledSaysTheChunksEachGpuCompletes) {
  std::vector<ModeResult> all = {fake(Pattern::coalesced, BenchMode::inline_store, 2e-3, 48000),
                                 fake(Pattern::coalesced, BenchMode::decoupled, 1e-3, 48000)};
  all[1].learned_chunks = {12, 0};
  const auto tests = to_test_results(all);
  ASSERT_EQ(tests.size(), 1u);
  ASSERT_EQ(tests[0].series.size(), 2u);
  EXPECT_EQ(tests[0].series[1].label, "decoupled");
  EXPECT_EQ(tests[0].series[1].params.at("learned_chunks_per_gpu"), "12,0");
  EXPECT_EQ(tests[0].series[1].params.at("goodput_vs_inline"), "2.0000");
  EXPECT_EQ(tests[0].series[0].params.count("learned_chunks_per_gpu"), 0u);
}

TEST(PublishReport, TestsTableAndRatios) {
  std::vector<ModeResult> all = {fake(Pattern::coalesced, BenchMode::inline_store, 2e-3, 48000),
                                 fake(Pattern::coalesced, BenchMode::combine, 1e-3, 60000),
                                 fake(Pattern::coalesced, BenchMode::local, 0.5e-3, 0)};
  EXPECT_NEAR(goodput_gbps(all[0]), 48000.0 / 2e-3 / 1e9, 1e-12);
  EXPECT_NEAR(vs_inline(all, all[1]), 2.0, 1e-9);
  EXPECT_NEAR(vs_inline(all, all[0]), 1.0, 1e-9);

  auto tests = to_test_results(all);
  ASSERT_EQ(tests.size(), 1u);
  const auto& t = tests[0];
  EXPECT_EQ(t.name, "publish_coalesced");
  EXPECT_EQ(t.unit, "GB/s");
  EXPECT_EQ(t.x_name, "none");
  EXPECT_EQ(t.status, gpsm::scope::Status::ok);
  ASSERT_EQ(t.series.size(), 3u);
  EXPECT_EQ(t.series[1].label, "combine");
  EXPECT_EQ(t.series[1].params.at("mode"), "combine");
  EXPECT_EQ(t.series[1].params.at("pattern"), "coalesced");
  EXPECT_EQ(t.series[1].params.at("useful_bytes"), "48000");
  EXPECT_EQ(t.series[1].params.at("link_bytes"), "60000");
  EXPECT_EQ(t.series[1].params.at("messages"), "1875");
  EXPECT_EQ(t.series[1].params.at("link_efficiency"), "0.8000");
  EXPECT_EQ(t.series[1].params.at("goodput_vs_inline"), "2.0000");
  EXPECT_EQ(t.series[2].params.count("link_bytes"), 0u);  // local publishes nothing
  ASSERT_EQ(t.series[1].points.size(), 1u);
  EXPECT_EQ(t.series[1].points[0].bytes, 48000.0);
  EXPECT_EQ(t.series[1].points[0].time_s.size(), 5u);
  EXPECT_NEAR(t.series[1].points[0].value.median, 48000.0 / 1e-3 / 1e9, 1e-9);

  const std::string table = render_table(all);
  EXPECT_NE(table.find("publish_coalesced"), std::string::npos);
  EXPECT_NE(table.find("vs inline"), std::string::npos);
  EXPECT_NE(table.find("Context::fence()"), std::string::npos);
  EXPECT_NE(table.find("2.00"), std::string::npos);

  // a failed mode fails its pattern's test and drops every figure of it; other patterns stay
  all.push_back(fake(Pattern::random, BenchMode::inline_store, 1e-3, 1));
  all.push_back(fake(Pattern::random, BenchMode::bulk, 1e-3, 1));
  all.back().failure = "rep 3/7: 12 of 256 words wrong in gpu2's replica (device check; first wrong word 5)";
  all.back().time_s.clear();
  all.back().verified = false;
  EXPECT_TRUE(std::isnan(goodput_gbps(all.back())));
  tests = to_test_results(all);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0].status, gpsm::scope::Status::ok);
  EXPECT_EQ(tests[1].name, "publish_random");
  EXPECT_EQ(tests[1].status, gpsm::scope::Status::failed);
  EXPECT_TRUE(tests[1].series.empty());
  EXPECT_NE(tests[1].reason.find("bulk: rep 3/7"), std::string::npos);
  EXPECT_NE(render_table(all).find("FAILED: rep 3/7"), std::string::npos);
}

TEST(PublishReport, Document) {
  const std::vector<ModeResult> all = {fake(Pattern::strided, BenchMode::inline_store, 2e-3, 96000),
                                       fake(Pattern::strided, BenchMode::bulk, 3e-3, 200000)};
  PublishMeta meta;
  meta.command = "gpsm publish --json x.json";
  meta.created = "2026-01-01T00:00:00Z";
  meta.device_kind = "fixture-synthetic";
  meta.hostname = "h";
  auto cfg = good_config();
  cfg.patterns = {Pattern::strided};
  cfg.modes = {BenchMode::inline_store, BenchMode::bulk};
  gpsm::topo::Topology topo;
  auto with_skip = all;
  with_skip.push_back(fake(Pattern::strided, BenchMode::combine, 1e-3, 1));
  with_skip.back().skipped = "too many copies";
  with_skip.back().time_s.clear();
  const auto j = publish_document(meta, cfg, topo, with_skip);
  EXPECT_EQ(j.at("schema"), "gpsm.results");
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("tool"), "publish");
  EXPECT_EQ(j.at("device_kind"), "fixture-synthetic");
  EXPECT_FALSE(j.contains("model"));
  EXPECT_EQ(j.at("options").at("reps"), 7);
  EXPECT_EQ(j.at("options").at("size"), 1 << 20);
  EXPECT_EQ(j.at("options").at("random_stores"), (1 << 20) / 4 / 4 / 4);
  EXPECT_EQ(j.at("options").at("modes"), nlohmann::json({"inline", "bulk"}));
  EXPECT_EQ(j.at("tests").at(0).at("skipped"),
            nlohmann::json::parse(R"([{"mode": "combine", "reason": "too many copies"}])"));
  // the existing reader takes it back
  const auto back = gpsm::scope::tests_from_document(nlohmann::json::parse(j.dump()));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].name, "publish_strided");
  ASSERT_EQ(back[0].series.size(), 2u);
  EXPECT_EQ(back[0].series[1].params.at("goodput_vs_inline"), "0.6667");
  EXPECT_EQ(back[0].series[1].points[0].time_s.size(), 5u);
}

TEST(PublishPlan, BulkCopiesMatchPlanBulk) {
  EXPECT_EQ(count_runs({0x0000000Fu, 0x80000001u, 0xFFFFFFFFu, 0x1u}), 3u);  // 0..3, 32, 63..96
  EXPECT_EQ(count_runs({0x55555555u}), 16u);
  const int n = 4;
  gpsm::gps::Geometry g;
  g.bytes = 32 * 64 * 4;
  g.page_shift = 10;  // 8 pages of 1 KiB, all subscribed by every GPU
  const std::vector<std::uint32_t> masks(g.pages(), (1u << n) - 1u);
  for (Pattern pat : {Pattern::coalesced, Pattern::strided, Pattern::random}) {
    const auto p = make_plan(pat, n, g.words(), 0, 5);
    std::uint64_t runs = 0;
    for (int r = 0; r < n; ++r) runs += gpsm::gps::plan_bulk(g, stored_bitmap(p, r).data(), masks.data(), r).size();
    EXPECT_EQ(bulk_copies_per_fence(p), runs) << pattern_name(pat);
  }
  EXPECT_EQ(bulk_copies_per_fence(make_plan(Pattern::coalesced, n, g.words(), 0, 5)), 4u * 3);
  EXPECT_EQ(bulk_copies_per_fence(make_plan(Pattern::strided, n, g.words(), 0, 5)), 4u * 64 * 3);
}

TEST(PublishReport, SkippedModes) {
  std::vector<ModeResult> all = {fake(Pattern::strided, BenchMode::inline_store, 2e-3, 1),
                                 fake(Pattern::strided, BenchMode::bulk, 1e-3, 1)};
  all[1].skipped = "one fence would issue 24000000 copy-engine copies";
  all[1].time_s.clear();
  EXPECT_FALSE(all[1].ok());
  EXPECT_FALSE(all[1].failed());
  auto tests = to_test_results(all);
  ASSERT_EQ(tests.size(), 1u);
  EXPECT_EQ(tests[0].status, gpsm::scope::Status::ok);  // a skipped mode does not fail the test
  ASSERT_EQ(tests[0].series.size(), 1u);
  EXPECT_EQ(tests[0].series[0].label, "inline");
  EXPECT_NE(render_table(all).find("SKIPPED: one fence"), std::string::npos);
  all.erase(all.begin());  // only skipped modes: waived, with the reason
  tests = to_test_results(all);
  EXPECT_EQ(tests[0].status, gpsm::scope::Status::waived);
  EXPECT_NE(tests[0].reason.find("bulk skipped: one fence"), std::string::npos);
}
