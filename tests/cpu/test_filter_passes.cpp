// The image filter's passes on the host (src/apps/filter/filter_pass.hpp and filter_plan.hpp, the
// code the kernels run per pixel): local buffers with memcpy's halo copies or p2p_inline's pushes,
// and a distributed array's padded layout read through its lookup, each equal to the CPU reference
// bit for bit; without the halo exchange the result differs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "apps/filter/filter_pass.hpp"
#include "apps/filter/filter_plan.hpp"
#include "apps/filter/filter_reference.hpp"
#include "apps/filter/filter_slab.hpp"
#include "apps/filter/filter_spec.hpp"
#include "gpsm/ownership_map.hpp"

using namespace gpsm::apps::filter;

namespace {

enum class Exchange { copies, pushes, none };

// Every pixel of rank r's rows through local_pixel, with the side unrolled as the kernels do (3, 5)
// or looped (the rest).
void run_local(const LocalPass& a, const std::vector<float>& w, int k) {
  auto wt = [&](int t) { return w[t]; };
  for (std::int64_t y = a.y0; y < a.y1; ++y)
    for (std::int64_t x = 0; x < a.width; ++x) {
      if (k == 3) local_pixel<3>(a, wt, k, x, y);
      else if (k == 5) local_pixel<5>(a, wt, k, x, y);
      else local_pixel<0>(a, wt, k, x, y);
    }
}

Image run_slabs(const Image& in, int k, int parts, int iters, Exchange ex) {
  const std::vector<float> w = gauss_weights(k);
  const std::int64_t W = in.width;
  std::vector<FilterSlab> s;
  std::vector<std::vector<float>> buf[2];
  for (int r = 0; r < parts; ++r) {
    s.push_back(filter_slab(in.height, k, parts, r));
    for (auto& b : buf) b.emplace_back(static_cast<std::size_t>(s[r].local_rows() * W), std::nanf(""));
    for (std::int64_t gy = s[r].first - s[r].above; gy < s[r].first + s[r].rows + s[r].below; ++gy)
      std::memcpy(&buf[0][r][s[r].local_row(gy) * W], &in.px[gy * W], W * sizeof(float));
  }
  for (int it = 0; it < iters; ++it) {
    const int src = it & 1, dst = 1 - src;
    std::vector<float*> out_of;
    for (int q = 0; q < parts; ++q) out_of.push_back(buf[dst][q].data());
    for (int r = 0; r < parts; ++r)  // the kernels of one iteration
      run_local(local_pass_of(s, r, W, in.height, buf[src][r].data(), buf[dst][r].data(), out_of, ex == Exchange::pushes),
                w, k);
    if (ex == Exchange::copies)  // then memcpy's copies
      for (int r = 0; r < parts; ++r)
        for (const HaloSend& h : halo_sends(s, r))
          std::memcpy(&buf[dst][h.to][s[h.to].local_row(h.first_row) * W], &buf[dst][r][s[r].local_row(h.first_row) * W],
                      static_cast<std::size_t>(h.rows * W) * sizeof(float));
  }
  Image got{W, in.height, std::vector<float>(in.px.size())};
  for (int r = 0; r < parts; ++r)
    std::memcpy(&got.px[s[r].first * W], &buf[iters & 1][r][s[r].halo * W], static_cast<std::size_t>(s[r].rows * W) * sizeof(float));
  return got;
}

}  // namespace

TEST(FilterPasses, LocalBuffersWithCopiesOrPushesEqualTheReferenceBitForBit) {
  const Image in = test_image(29, 23, 5);
  for (int k : {3, 5, 7, 9})
    for (int parts = 1; parts <= 5; ++parts) {
      if (!split_problem(in.height, k, parts).empty()) continue;
      const Image want = filter_repeated(in, gauss_weights(k), k, 4);
      for (Exchange ex : {Exchange::copies, Exchange::pushes})
        EXPECT_EQ(compare_bits(run_slabs(in, k, parts, 4, ex), want), "")
            << "k " << k << " parts " << parts << (ex == Exchange::copies ? " copies" : " pushes");
    }
}

TEST(FilterPasses, HaloSendsAreTheNeighboursHaloRows) {
  std::vector<FilterSlab> s;
  for (int r = 0; r < 3; ++r) s.push_back(filter_slab(20, 5, 3, r));  // rows 0-6, 7-13, 14-19
  const std::vector<HaloSend> mid = halo_sends(s, 1);
  ASSERT_EQ(mid.size(), 2u);
  EXPECT_EQ(mid[0].to, 0);
  EXPECT_EQ(mid[0].first_row, 7);
  EXPECT_EQ(mid[0].rows, 2);
  EXPECT_EQ(mid[1].to, 2);
  EXPECT_EQ(mid[1].first_row, 12);
  EXPECT_EQ(mid[1].rows, 2);
  EXPECT_EQ(halo_sends(s, 0).size(), 1u);
  EXPECT_EQ(halo_sends(s, 2)[0].first_row, 14);
  EXPECT_TRUE(halo_sends({filter_slab(20, 5, 1, 0)}, 0).empty());
}

TEST(FilterPasses, WithoutTheHaloExchangeTheResultDiffers) {
  const Image in = test_image(29, 23, 5);
  const std::string d = compare_bits(run_slabs(in, 5, 2, 3, Exchange::none), filter_repeated(in, gauss_weights(5), 5, 3));
  EXPECT_NE(d, "");
  EXPECT_NE(d.find("nan instead of"), std::string::npos) << d;  // the halo rows were never written
}

// rdl's pass over a distributed array's physical layout: row slabs whose regions start on a
// granule (here 256 B, rows of 116 B), so the blocks are padded and only the lookup finds a halo row.
TEST(FilterPasses, DistributedLayoutWithPaddingEqualsTheReferenceBitForBit) {
  const Image in = test_image(29, 23, 11);
  for (int k : {3, 5, 7})
    for (int parts = 1; parts <= 4; ++parts) {
      if (!split_problem(in.height, k, parts).empty()) continue;
      const gpsm::OwnershipMap map(
          gpsm::blocks::along({29, 23, 1}, gpsm::Axis::y, parts), sizeof(float), 256, parts);
      if (parts > 1) {
        EXPECT_FALSE(map.identity());
      }
      std::vector<float> mem[2];
      for (auto& m : mem) m.assign(map.range_bytes() / sizeof(float), std::nanf(""));
      map.to_layout(in.px.data(), mem[0].data());
      const std::vector<float> w = gauss_weights(k);
      auto wt = [&](int t) { return w[t]; };
      const int iters = 3;
      for (int it = 0; it < iters; ++it)
        for (int r = 0; r < parts; ++r) {
          const FilterSlab s = filter_slab(in.height, k, parts, r);
          const DistributedPass a = distributed_pass_of(
              gpsm::DistributedView<float>{reinterpret_cast<char*>(mem[it & 1].data()), map.lookup()},
              gpsm::DistributedView<float>{reinterpret_cast<char*>(mem[1 - (it & 1)].data()), map.lookup()}, in.width,
              in.height, s.first, s.first + s.rows, map.lookup());
          for (std::int64_t y = a.y0; y < a.y1; ++y)
            for (std::int64_t x = 0; x < a.width; ++x) distributed_pixel<0>(a, wt, k, x, y);
        }
      Image got{in.width, in.height, std::vector<float>(in.px.size())};
      map.from_layout(mem[iters & 1].data(), got.px.data());
      EXPECT_EQ(compare_bits(got, filter_repeated(in, w, k, iters)), "") << "k " << k << " parts " << parts;
    }
}
