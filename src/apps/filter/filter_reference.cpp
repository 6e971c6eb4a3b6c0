#include "apps/filter/filter_reference.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "apps/filter/filter_math.hpp"
#include "apps/harness/reference_cache.hpp"

namespace gpsm::apps::filter {

namespace {

// Rows [y0, y1) of one pass. Interior pixels (all K columns in the image) index their K row
// pointers directly, the border ones go through filter_point's clamps; both accumulate
// acc = acc + w[j*K+i] * in(...) for j, then i, rising, as filter_point does, so the bits are its.
template <int KT>
void filter_rows(const Image& in, Image& out, const std::vector<float>& w, int k, std::int64_t y0, std::int64_t y1) {
  const int side = KT > 0 ? KT : k;
  const int r = (side - 1) / 2;
  const std::int64_t W = in.width, H = in.height;
  const float* src = in.px.data();
  const float* wp = w.data();
  auto rows = [&](std::int64_t gy) { return src + gy * W; };
  auto wt = [&](int t) { return wp[t]; };
  std::vector<const float*> row(static_cast<std::size_t>(side));
  for (std::int64_t y = y0; y < y1; ++y) {
    float* o = out.px.data() + y * W;
    for (int j = 0; j < side; ++j) row[static_cast<std::size_t>(j)] = rows(clamp_index(y + j - r, H));
    const std::int64_t xa = std::min<std::int64_t>(r, W), xb = std::max<std::int64_t>(W - r, xa);
    for (std::int64_t x = 0; x < xa; ++x) o[x] = filter_point<KT>(rows, wt, k, x, y, W, H);
    for (std::int64_t x = xa; x < xb; ++x) {
      float acc = 0.0f;
      for (int j = 0; j < side; ++j) {
        const float* p = row[static_cast<std::size_t>(j)] + (x - r);
        const float* wj = wp + j * side;
        for (int i = 0; i < side; ++i) acc = add_rn(acc, mul_rn(wj[i], p[i]));
      }
      o[x] = acc;
    }
    for (std::int64_t x = xb; x < W; ++x) o[x] = filter_point<KT>(rows, wt, k, x, y, W, H);
  }
}

}  // namespace

Image filter_once(const Image& in, const std::vector<float>& w, int k) {
  if (w.size() != static_cast<std::size_t>(k) * k || k < 1 || k % 2 == 0)
    throw std::invalid_argument(fmt::format("filter_once: {} weights for a {}x{} filter", w.size(), k, k));
  Image out{in.width, in.height, std::vector<float>(in.px.size())};
  const std::int64_t H = in.height;
  // Row blocks over every host core (std::thread, not OpenMP: a build without it still uses them).
  // Rows are independent, each pixel's order fixed: the result does not depend on the threads.
  const std::int64_t nt = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, std::max<std::int64_t>(H / 16, 1));
  auto block = [&](std::int64_t t) {
    const std::int64_t y0 = H * t / nt, y1 = H * (t + 1) / nt;
    if (k == 3) filter_rows<3>(in, out, w, k, y0, y1);
    else if (k == 5) filter_rows<5>(in, out, w, k, y0, y1);
    else filter_rows<0>(in, out, w, k, y0, y1);
  };
  std::vector<std::thread> th;
  for (std::int64_t t = 1; t < nt; ++t) th.emplace_back(block, t);
  block(0);
  for (auto& x : th) x.join();
  return out;
}

Image filter_repeated(const Image& in, const std::vector<float>& w, int k, int iters) {
  Image cur = in;
  for (int it = 0; it < iters; ++it) cur = filter_once(cur, w, k);
  return cur;
}

Image test_image(std::int64_t width, std::int64_t height, std::uint32_t seed) {
  Image im{width, height, std::vector<float>(static_cast<std::size_t>(width * height))};
  for (std::size_t i = 0; i < im.px.size(); ++i) {
    std::uint64_t z = (static_cast<std::uint64_t>(seed) << 40) ^ i;  // splitmix64 finalizer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    im.px[i] = static_cast<float>(z >> 40) * (1.0f / 16777216.0f);  // 24 bits: exact in float
  }
  return im;
}

std::string compare_bits(const Image& got, const Image& want) {
  if (got.width != want.width || got.height != want.height || got.px.size() != want.px.size())
    return fmt::format("image {}x{} against the reference's {}x{}", got.width, got.height, want.width, want.height);
  std::uint64_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.px.size(); ++i)
    if (std::memcmp(&got.px[i], &want.px[i], sizeof(float)) != 0) {
      if (bad == 0) first = i;
      ++bad;
    }
  if (bad == 0) return "";
  const std::int64_t x = static_cast<std::int64_t>(first) % got.width, y = static_cast<std::int64_t>(first) / got.width;
  return fmt::format("{} of {} pixels differ from the CPU reference; the first at (x {}, y {}): {:.9g} instead of {:.9g}",
                     bad, got.px.size(), x, y, got.px[first], want.px[first]);
}

void ref_fields(RefFields& f, Image& im) {
  f.value(im.width);
  f.value(im.height);
  f.array(im.px);
}

}  // namespace gpsm::apps::filter
