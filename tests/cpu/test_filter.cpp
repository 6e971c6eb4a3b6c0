// Image filtering (src/apps/filter): the --size spec, the named filters, the row split and its
// halo rows, and the CPU reference on small images with known answers.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app_named.hpp"
#include "apps/filter/filter_math.hpp"
#include "apps/filter/filter_reference.hpp"
#include "apps/filter/filter_slab.hpp"
#include "apps/filter/filter_spec.hpp"
#include "apps/harness/app.hpp"
#include "gpsm/ownership_map.hpp"

using namespace gpsm::apps::filter;

namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

std::string why(const std::string& s) {
  try {
    parse_filter_size(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FilterSpec, ParsesSizesFiltersAndWhereTheWeightsLive) {
  FilterSize f = parse_filter_size("4096x2048:k7");
  EXPECT_EQ(f.width, 4096);
  EXPECT_EQ(f.height, 2048);
  EXPECT_EQ(f.k, 7);
  EXPECT_EQ(f.at, WeightsAt::constant);
  EXPECT_EQ(f.label(), "4096x2048:k7");
  f = parse_filter_size("300:remote:k3");
  EXPECT_EQ(f.width, 300);
  EXPECT_EQ(f.height, 300);
  EXPECT_EQ(f.k, 3);
  EXPECT_EQ(f.at, WeightsAt::remote);
  EXPECT_EQ(f.label(), "300x300:k3:remote");
  f = parse_filter_size("123x45");
  EXPECT_EQ(f.k, 5);
  EXPECT_EQ(parse_filter_size("9x9:k63:replicated").at, WeightsAt::replicated);
}

TEST(FilterSpec, BadSpecsSayWhyAndWhatToUse) {
  EXPECT_NE(why("0x5").find("positive counts"), std::string::npos);
  EXPECT_NE(why("axb").find("positive counts"), std::string::npos);
  EXPECT_NE(why("10x10:k4").find("'4' is not an odd number from 3 to 63"), std::string::npos);
  EXPECT_NE(why("10x10:k65").find("'65'"), std::string::npos);
  EXPECT_NE(why("10x10:k1").find("'1'"), std::string::npos);
  EXPECT_NE(why("10x10:k5:k5").find("repeated part 'k5'"), std::string::npos);
  EXPECT_NE(why("10x10:k5:cached").find("'cached'"), std::string::npos);
  EXPECT_NE(why("9000000x4").find("past 8388608"), std::string::npos);
  EXPECT_NE(why("10x10:k5:cached").find("(use WxH:kK, e.g. 4096x4096:k5)"), std::string::npos);
}

TEST(FilterSpec, GaussianIsTheBinomialOuterProductAndSumsToOne) {
  const std::vector<float> g3 = gauss_weights(3);
  const float want3[9] = {1, 2, 1, 2, 4, 2, 1, 2, 1};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(g3[i], want3[i] / 16.0f) << i;
  const std::vector<float> g5 = gauss_weights(5);
  EXPECT_EQ(g5[12], 36.0f / 256.0f);  // C(4,2)^2 / 4^4
  EXPECT_EQ(g5[0], 1.0f / 256.0f);
  EXPECT_EQ(g5[1], 4.0f / 256.0f);
  for (int k = 3; k <= 13; k += 2) {  // dyadic weights: the float sum is exact
    double s = 0;
    for (float w : gauss_weights(k)) s += w;
    EXPECT_EQ(s, 1.0) << k;
  }
  int k = 0;
  EXPECT_EQ(named_filter("gauss7", k).size(), 49u);
  EXPECT_EQ(k, 7);
  EXPECT_EQ(named_filter("box5", k)[3], 1.0f / 25.0f);
  EXPECT_EQ(named_filter("laplace3", k)[4], -4.0f);
  EXPECT_EQ(k, 3);
  EXPECT_THROW(named_filter("gauss4", k), std::invalid_argument);
  EXPECT_THROW(named_filter("median3", k), std::invalid_argument);
}

TEST(FilterSlab, RowsCoverTheImageOnceAndHalosAreTheNeighboursRows) {
  for (std::int64_t h : {7, 64, 100, 1001})
    for (int k : {3, 5, 7, 15})
      for (int parts = 1; parts <= 6; ++parts) {
        if (!split_problem(h, k, parts).empty()) continue;
        // The distributed array's slabs along y (blocks::along) cut at the same rows.
        const gpsm::BlockSpec spec = gpsm::blocks::along({5, static_cast<std::uint64_t>(h), 1}, gpsm::Axis::y, parts);
        std::int64_t next = 0;
        for (int r = 0; r < parts; ++r) {
          const FilterSlab s = filter_slab(h, k, parts, r);
          EXPECT_EQ(s.first, next);
          EXPECT_EQ(static_cast<std::uint64_t>(s.first), spec.cuts[1][r]);
          next = s.first + s.rows;
          EXPECT_EQ(s.halo, (k - 1) / 2);
          EXPECT_EQ(s.above, r == 0 ? 0 : s.halo);
          EXPECT_EQ(s.below, r == parts - 1 ? 0 : s.halo);
          EXPECT_EQ(s.top, r - 1);
          EXPECT_EQ(s.bottom, r == parts - 1 ? -1 : r + 1);
          EXPECT_GE(s.rows, s.halo);  // a neighbour holds every halo row it sends
          EXPECT_EQ(s.local_row(s.first), s.halo);
          EXPECT_EQ(s.local_row(s.first - s.above), s.halo - s.above);
          EXPECT_EQ(s.local_row(s.first + s.rows + s.below - 1), s.halo + s.rows + s.below - 1);
          EXPECT_LE(s.halo + s.rows + s.below, s.local_rows());
        }
        EXPECT_EQ(next, h);
      }
}

TEST(FilterSlab, SplitProblemNamesTooFewRows) {
  EXPECT_EQ(split_problem(8, 5, 4), "");  // 2 rows each, halo 2
  const std::string w = split_problem(7, 5, 4);
  EXPECT_NE(w.find("7 rows over 4 GPUs leave 1 on some GPU, fewer than the 2 halo rows a 5x5 filter needs"),
            std::string::npos) << w;
  EXPECT_NE(split_problem(3, 3, 4), "");
}

TEST(FilterReference, ConstantImageStaysAndAnImpulseGivesTheWeights) {
  Image flat{13, 11, std::vector<float>(13 * 11, 0.375f)};
  for (int k : {3, 5, 7})
    for (float v : filter_repeated(flat, gauss_weights(k), k, 3).px) EXPECT_EQ(v, 0.375f);
  Image dot{9, 9, std::vector<float>(81, 0.0f)};
  dot.px[4 * 9 + 4] = 1.0f;
  const std::vector<float> w = gauss_weights(5);
  const Image out = filter_once(dot, w, 5);
  // Output (x, y) takes w[j*5 + i] from the input at (x + i - 2, y + j - 2): the impulse at (4, 4)
  // lands at (4 - i + 2, 4 - j + 2), the weights mirrored (the Gaussian is symmetric).
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 5; ++i) EXPECT_EQ(out.px[(6 - j) * 9 + (6 - i)], w[j * 5 + i]);
  EXPECT_EQ(out.px[0], 0.0f);
  // Clamp-to-edge: an impulse in the corner is read by every tap that clamps onto it.
  Image corner{6, 5, std::vector<float>(30, 0.0f)};
  corner.px[0] = 1.0f;
  const Image c = filter_once(corner, gauss_weights(3), 3);
  EXPECT_EQ(c.px[0], 9.0f / 16.0f);   // taps (i, j) in {0, 1}^2: 1 + 2 + 2 + 4
  EXPECT_EQ(c.px[1], 3.0f / 16.0f);   // x = 1: taps i = 0 (clamped col 0) with j in {0, 1}: 1 + 2
  EXPECT_EQ(c.px[6], 3.0f / 16.0f);   // y = 1, by symmetry
  EXPECT_EQ(c.px[2], 0.0f);
}

TEST(FilterReference, SameOrderAsANaiveLoopBitForBit) {
  const Image in = test_image(37, 29, 7);
  const int k = 5;
  std::vector<float> w = gauss_weights(k);
  w[3] = 0.3f;  // not symmetric, not dyadic: the order and the mirroring matter
  const Image got = filter_once(in, w, k);
  for (std::int64_t y = 0; y < in.height; ++y)
    for (std::int64_t x = 0; x < in.width; ++x) {
      float acc = 0.0f;
      for (int j = 0; j < k; ++j)
        for (int i = 0; i < k; ++i) {
          const std::int64_t yy = std::min<std::int64_t>(std::max<std::int64_t>(y + j - 2, 0), in.height - 1);
          const std::int64_t xx = std::min<std::int64_t>(std::max<std::int64_t>(x + i - 2, 0), in.width - 1);
          const float prod = w[j * k + i] * in.px[yy * in.width + xx];
          acc = acc + prod;
        }
      ASSERT_TRUE(same_bits(got.px[y * in.width + x], acc)) << x << "," << y;
    }
}

// The kernels' index math on the CPU: each rank filters its rows from a local buffer of its rows
// and halo rows (filter_slab's layout, filled as memcpy fills it), the passes ping-pong, and the
// gathered image equals the whole-image reference bit for bit; a halo row off by one does not.
TEST(FilterReference, SlabsWithHaloRowsGiveTheWholeImageBitForBit) {
  const Image in = test_image(23, 31, 3);
  for (int k : {3, 5, 7})
    for (int parts : {1, 2, 3, 4}) {
      if (!split_problem(in.height, k, parts).empty()) continue;
      const std::vector<float> w = gauss_weights(k);
      const int iters = 4;
      std::vector<FilterSlab> s;
      std::vector<std::vector<float>> buf[2];
      for (int r = 0; r < parts; ++r) {
        s.push_back(filter_slab(in.height, k, parts, r));
        for (auto& b : buf) b.emplace_back(static_cast<std::size_t>(s[r].local_rows() * in.width), -1.0f);
        for (std::int64_t gy = s[r].first - s[r].above; gy < s[r].first + s[r].rows + s[r].below; ++gy)
          std::memcpy(&buf[0][r][s[r].local_row(gy) * in.width], &in.px[gy * in.width], in.width * sizeof(float));
      }
      for (int it = 0; it < iters; ++it) {
        const int src = it & 1, dst = 1 - src;
        for (int r = 0; r < parts; ++r) {
          const float* b = buf[src][r].data();
          const FilterSlab& sl = s[r];
          auto rows = [&](std::int64_t gy) { return b + sl.local_row(gy) * in.width; };
          auto wt = [&](int t) { return w[t]; };
          for (std::int64_t y = sl.first; y < sl.first + sl.rows; ++y)
            for (std::int64_t x = 0; x < in.width; ++x)
              buf[dst][r][sl.local_row(y) * in.width + x] = filter_point<0>(rows, wt, k, x, y, in.width, in.height);
        }
        for (int r = 0; r < parts; ++r)  // the halo exchange: neighbours' edge rows into the halos
          for (std::int64_t gy = s[r].first - s[r].above; gy < s[r].first + s[r].rows + s[r].below; ++gy) {
            if (gy >= s[r].first && gy < s[r].first + s[r].rows) continue;
            const int owner = gy < s[r].first ? s[r].top : s[r].bottom;
            std::memcpy(&buf[dst][r][s[r].local_row(gy) * in.width], &buf[dst][owner][s[owner].local_row(gy) * in.width],
                        in.width * sizeof(float));
          }
      }
      Image got{in.width, in.height, std::vector<float>(in.px.size())};
      for (int r = 0; r < parts; ++r)
        std::memcpy(&got.px[s[r].first * in.width], &buf[iters & 1][r][s[r].halo * in.width],
                    s[r].rows * in.width * sizeof(float));
      EXPECT_EQ(compare_bits(got, filter_repeated(in, w, k, iters)), "") << "k " << k << " parts " << parts;
      if (parts > 1) {  // one pixel changed in the first row after a split is caught
        got.px[s[1].first * in.width + 5] += 1.0f;
        EXPECT_NE(compare_bits(got, filter_repeated(in, w, k, iters)), "");
      }
    }
}

TEST(FilterReference, CompareNamesTheFirstDifferingPixel) {
  Image a = test_image(8, 6, 1), b = a;
  EXPECT_EQ(compare_bits(a, b), "");
  b.px[2 * 8 + 5] = 2.5f;
  b.px[4 * 8 + 1] = 3.5f;
  const std::string d = compare_bits(b, a);
  EXPECT_NE(d.find("2 of 48 pixels differ"), std::string::npos) << d;
  EXPECT_NE(d.find("(x 5, y 2): 2.5 instead of"), std::string::npos) << d;
  Image c{8, 5, std::vector<float>(40)};
  EXPECT_NE(compare_bits(c, a).find("image 8x5 against the reference's 8x6"), std::string::npos);
  for (float v : test_image(64, 64, 9).px) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
  EXPECT_NE(test_image(4, 4, 1).px, test_image(4, 4, 2).px);
}

TEST(FilterApp, SizesDefaultPassesAndParadigms) {
  const std::unique_ptr<gpsm::apps::App> app = gpsm::test::app_named("filter");
  ASSERT_NE(app, nullptr);
  using gpsm::apps::Paradigm;
  gpsm::apps::Problem p = app->problem("4096x4096:k5", 0);
  EXPECT_EQ(p.label(), "4096x4096:k5");
  EXPECT_EQ(p.iters, 256);  // 2^32 / 4096^2
  EXPECT_EQ(p.n[2], 5);
  EXPECT_EQ(app->problem("24576x24576:k5", 0).iters, 10);  // 2^32 / 24576^2 < 10: the floor
  EXPECT_EQ(app->problem("128:k3", 0).iters, 1000);         // the cap
  EXPECT_EQ(app->problem("300x200:k7:remote", 9).label(), "300x200:k7:remote");
  EXPECT_EQ(app->problem("300x200:k7:remote", 9).iters, 9);
  EXPECT_THROW(app->problem("300x200:k6", 0), std::invalid_argument);
  for (Paradigm par : {Paradigm::single, Paradigm::memcpy, Paradigm::um, Paradigm::p2p_inline, Paradigm::rdl,
                       Paradigm::gps, Paradigm::infinite})
    EXPECT_TRUE(app->has(par)) << gpsm::apps::paradigm_name(par);
  for (Paradigm par : {Paradigm::nccl, Paradigm::um_hints, Paradigm::cpu_free, Paradigm::proact})
    EXPECT_FALSE(app->has(par)) << gpsm::apps::paradigm_name(par);
  // Two slabs of 4096 rows, each with 2 halo rows: two buffers of 2052 rows of 4096 floats.
  EXPECT_EQ(app->gpu_bytes_per_gpu(app->problem("4096x4096:k5", 0), 2, Paradigm::memcpy), 2.0 * 2052 * 4096 * 4);
}

// The kernels' tile block (filter_tile_block: each tile row read once into registers, given to the
// 8 x 2 outputs it serves) in filter_point's float order: a tile of clamped rows and columns of an
// image, every block of 8 x 2 outputs equal to filter_point bit for bit, for the unrolled sides and
// the loop, at the image's borders and inside.
TEST(FilterReference, TileBlocksHaveTheReferenceOrderBitForBit) {
  const Image in = test_image(101, 150, 3);
  for (int k : {3, 5, 7}) {
    std::vector<float> w = gauss_weights(k);
    w[1] = 0.3f;  // not symmetric, not dyadic: a reordered sum changes the bits
    w[static_cast<std::size_t>(k * k - 2)] = -0.7f;
    const auto wt = [&](int t) { return w[static_cast<std::size_t>(t)]; };
    const int r = (k - 1) / 2;
    constexpr int kTy = 8, kTx = 2, kTileW = 64, kTileH = 64;
    const int pitch = kTileW + k - 1;
    for (std::int64_t ty0 : {std::int64_t{0}, std::int64_t{64}, std::int64_t{128}})
      for (std::int64_t tx0 : {std::int64_t{0}, std::int64_t{64}}) {
        std::vector<float> tile(static_cast<std::size_t>(pitch * (kTileH + k - 1)));
        for (int s = 0; s < kTileH + k - 1; ++s)
          for (int c = 0; c < pitch; ++c)
            tile[static_cast<std::size_t>(s * pitch + c)] =
                in.px[clamp_index(ty0 - r + s, in.height) * in.width + clamp_index(tx0 - r + c, in.width)];
        const auto rows = [&](std::int64_t gy) { return in.px.data() + gy * in.width; };
        for (int row0 = 0; row0 < kTileH; row0 += kTy)
          for (int c = 0; c < kTileW; c += kTx) {
            float acc[kTy][kTx];
            if (k == 3) filter_tile_block<3, kTy, kTx>(tile.data(), pitch, c, row0, wt, k, acc);
            else if (k == 5) filter_tile_block<5, kTy, kTx>(tile.data(), pitch, c, row0, wt, k, acc);
            else filter_tile_block<0, kTy, kTx>(tile.data(), pitch, c, row0, wt, k, acc);
            for (int t = 0; t < kTy; ++t)
              for (int u = 0; u < kTx; ++u) {
                const std::int64_t x = tx0 + c + u, y = ty0 + row0 + t;
                if (x >= in.width || y >= in.height) continue;
                const float want = filter_point<0>(rows, wt, k, x, y, in.width, in.height);
                ASSERT_TRUE(same_bits(acc[t][u], want)) << "k " << k << " pixel " << x << "," << y;
              }
          }
      }
  }
}

// `gpsm filter --gpus all` with no --devices once failed ("--devices is empty"): the pool is every
// GPU when --devices is not given, --gpus takes all of it or its first N.
TEST(FilterSpec, DevicesFromGpusAndDevices) {
  using V = std::vector<int>;
  EXPECT_EQ(filter_devices("all", "", 2, 8), (V{0, 1}));
  EXPECT_EQ(filter_devices("2", "", 4, 8), (V{0, 1}));
  EXPECT_EQ(filter_devices("1", "", 2, 8), (V{0}));
  EXPECT_EQ(filter_devices("all", "", 12, 8), (V{0, 1, 2, 3, 4, 5, 6, 7}));  // a context holds at most 8
  EXPECT_EQ(filter_devices("all", "0,1", 2, 8), (V{0, 1}));
  EXPECT_EQ(filter_devices("all", "3,1", 4, 8), (V{3, 1}));
  EXPECT_EQ(filter_devices("1", "3,1", 4, 8), (V{3}));
  EXPECT_THROW(filter_devices("3", "", 2, 8), std::out_of_range);
  EXPECT_THROW(filter_devices("all", "0,2", 2, 8), std::out_of_range);
  for (const char* g : {"0", "-1", "two", "", "1x"}) EXPECT_THROW(filter_devices(g, "", 2, 8), std::invalid_argument) << g;
  for (const char* d : {",", "0,", "0,,1", "a", "1,1", "-1"}) EXPECT_THROW(filter_devices("all", d, 2, 8), std::invalid_argument) << d;
}
