#include "apps/filter/filter_reference.hpp"

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "apps/filter/filter_math.hpp"

namespace gpsm::apps::filter {

Image filter_once(const Image& in, const std::vector<float>& w, int k) {
  if (w.size() != static_cast<std::size_t>(k) * k || k < 1 || k % 2 == 0)
    throw std::invalid_argument(fmt::format("filter_once: {} weights for a {}x{} filter", w.size(), k, k));
  Image out{in.width, in.height, std::vector<float>(in.px.size())};
  const std::int64_t W = in.width, H = in.height;
  const float* src = in.px.data();
  auto rows = [&](std::int64_t gy) { return src + gy * W; };
  auto wt = [&](int t) { return w[t]; };
  // Rows are independent, each pixel's order fixed: the result does not depend on the threads.
#pragma omp parallel for schedule(static)
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x) out.px[y * W + x] = filter_point<0>(rows, wt, k, x, y, W, H);
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

}  // namespace gpsm::apps::filter
