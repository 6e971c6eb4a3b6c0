// The plain C++ of CT across GPUs: the update kernel's readiness counting (every chunk's counter
// reaches exactly its column count however the slab's blocks fall on chunks), the verification
// against the one-GPU run (tolerance formula, cost and image checks), and `--size` with
// @subsets= and its memory figures.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/ct/ct_bench_spec.hpp"
#include "apps/ct/ct_partition.hpp"
#include "apps/ct/ct_phantom.hpp"
#include "apps/ct/ct_ready.hpp"
#include "apps/ct/ct_verify.hpp"

using namespace gpsm::apps::ct;

// Blocks of `block` columns over a slab of `columns`, chunks of `per`: the block-side sums the
// kernel adds equal the targets the copies wait for, and a block adds exactly its own columns.
TEST(CtReady, BlockCountsFillEveryChunkToItsTarget) {
  for (std::int64_t columns : {1, 255, 256, 257, 4096, 32768 + 17})
    for (std::int64_t per : {1, 7, 256, 1000, 1024, 40000})
      for (std::int64_t block : {256, 100}) {
        const std::vector<Chunk> chunks = make_chunks(columns, 1024, per * 1024);
        std::vector<std::int64_t> got(chunks.size(), 0);
        for (std::int64_t first = 0; first < columns; first += block) {
          const std::int64_t end = std::min(columns, first + block);
          std::int64_t mine = 0;
          for (std::int64_t c = first_chunk(first, per); c <= last_chunk(end, per); ++c) {
            ASSERT_LT(c, static_cast<std::int64_t>(chunks.size()));
            const std::int64_t k = columns_in_chunk(first, end, per, c);
            EXPECT_GT(k, 0) << "a chunk the block does not touch";
            got[static_cast<std::size_t>(c)] += k;
            mine += k;
          }
          EXPECT_EQ(mine, end - first);
        }
        for (std::size_t c = 0; c < chunks.size(); ++c)
          EXPECT_EQ(got[c], chunks[c].target) << "columns " << columns << " per " << per << " chunk " << c;
      }
}

TEST(CtVerify, ToleranceIsUpdatesTimesSubsetsPlusOneFloatsOfTheLargestVoxel) {
  // 24 updates of 24 subsets, largest voxel 1.8 mu_water (skull): 24 * 25 * 2^-24 * 1.8 * 1000 HU
  const double x_max = 1.8 * kMuWater;
  EXPECT_NEAR(split_tolerance_hu(24, 24, x_max), 24 * 25 * 1800.0 / 16777216.0, 1e-12);
  EXPECT_EQ(split_tolerance_hu(0, 24, x_max), 0.0);
  EXPECT_THROW(split_tolerance_hu(-1, 24, x_max), std::invalid_argument);
  EXPECT_THROW(split_tolerance_hu(1, 0, x_max), std::invalid_argument);
  EXPECT_NEAR(max_difference_hu({0.0f, kMuWater}, {0.0f, 2 * kMuWater}), 1000.0, 1e-3);
}

namespace {
PwlsRun run_of(std::vector<double> cost, std::vector<float> x) {
  PwlsRun r;
  r.cost = std::move(cost);
  r.x = std::move(x);
  return r;
}
}  // namespace

TEST(CtVerify, CheckRunCatchesEachKindOfDisagreement) {
  const float mu = static_cast<float>(kMuWater);
  const PwlsRun ref = run_of({100, 50, 40}, {mu, 0.5f * mu, 0});
  // 2 iterations of 4 subsets: tolerance 2 * 8 * 5 * 2^-24 * 1000 HU (largest voxel mu_water, as a float)
  const double tol = 2 * 8 * 5 * 1000.0 / 16777216.0 * (static_cast<double>(mu) / kMuWater);
  RunCheck c = check_run(ref, ref, 4);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
  EXPECT_NEAR(c.tolerance_hu, tol, 1e-12);
  EXPECT_EQ(c.difference_hu, 0.0);
  // one voxel a float away: within
  c = check_run(ref, run_of({100, 50, 40}, {std::nextafter(mu, 1.0f), 0.5f * mu, 0}), 4);
  EXPECT_TRUE(c.failure.empty()) << c.failure;
  EXPECT_GT(c.difference_hu, 0.0);
  // one voxel 0.01 HU off: beyond (tolerance about 0.0048 HU)
  c = check_run(ref, run_of({100, 50, 40}, {mu * (1 + 1e-5f), 0.5f * mu, 0}), 4);
  EXPECT_NE(c.failure.find("image differs"), std::string::npos) << c.failure;
  // a cost off by 1e-4 relative
  c = check_run(ref, run_of({100, 50.005, 40}, ref.x), 4);
  EXPECT_NE(c.failure.find("cost after 1 iterations"), std::string::npos) << c.failure;
  // a rising cost (the reference rising too, so only the monotonicity check can see it)
  const PwlsRun up = run_of({100, 50, 60}, ref.x);
  c = check_run(up, up, 4);
  EXPECT_NE(c.failure.find("cost rose from 50 to 60 in iteration 2"), std::string::npos) << c.failure;
  // another number of iterations
  c = check_run(ref, run_of({100, 50}, ref.x), 4);
  EXPECT_NE(c.failure.find("2 cost records"), std::string::npos) << c.failure;
}

TEST(CtBenchSpec, SubsetsModifierAndErrors) {
  CtBenchSpec s = parse_bench_spec("medium");
  EXPECT_EQ(s.subsets, kDefaultSubsets);
  EXPECT_EQ(s.g.nx, 256);
  s = parse_bench_spec("small@subsets=12");
  EXPECT_EQ(s.subsets, 12);
  EXPECT_EQ(s.g.views, 288);
  s = parse_bench_spec("32x32x8:48x8x48:circular@subsets=48");
  EXPECT_EQ(s.subsets, 48);
  auto message = [](const std::string& text) {
    try {
      parse_bench_spec(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("small@subsets=289").rfind("bad --size 'small@subsets=289' for ct: @subsets= takes a whole "
                                               "number from 1 to the 288 views; use ",
                                               0),
            0u)
      << message("small@subsets=289");
  EXPECT_NE(message("small@subsets=0").find("@subsets= takes"), std::string::npos);
  EXPECT_NE(message("small@subsets=").find("@subsets= takes"), std::string::npos);
  EXPECT_NE(message("small@subsets=4x").find("@subsets= takes"), std::string::npos);
  EXPECT_NE(message("small@tol=3").find("unknown modifier '@tol=3'"), std::string::npos);
  EXPECT_EQ(message("huge").rfind("bad --size 'huge' for ct: ", 0), 0u) << message("huge");
  EXPECT_NE(message("huge").find("(then optionally @subsets=M)"), std::string::npos) << message("huge");
}

// The seed's size: scan 7256 x 64 x 888 floats (1.65 GB), image 512^3 floats (0.54 GB).
TEST(CtBenchSpec, MemoryFiguresFollowTheScanAndImage) {
  const CtBenchSpec s = parse_bench_spec("seed");
  const double sino = 7256.0 * 64 * 888 * 4, image = 512.0 * 512 * 512 * 4;
  EXPECT_DOUBLE_EQ(ct_host_bytes(s), 3 * sino + 6 * image);
  const double res = 3.0 * 303 * 64 * 888 * 4;  // three buffers of the largest subset (303 views of 24)
  const double scratch = 8.0 * 132 * 48 * 1024 + 2.0 * 303 * 64 * 888 * 4;  // the forward's column splits
  EXPECT_NEAR(ct_gpu_bytes_per_gpu(s), 3 * sino + 3 * image + res + scratch, 7256.0 * 36 + 1);
}
