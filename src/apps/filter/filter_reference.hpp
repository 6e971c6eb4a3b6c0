#pragma once
// The CPU reference of the repeated filter (filter_math.hpp's operation order, ping-pong between
// two images) and the bench's input image. Plain C++, checked by the CPU tests.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps {
class RefFields;  // apps/harness/reference_cache.hpp
}  // namespace gpsm::apps

namespace gpsm::apps::filter {

// A row-major width x height image of floats.
struct Image {
  std::int64_t width = 0, height = 0;
  std::vector<float> px;
};
// The image as an entry of gpsm bench --isolate's shared references (reference_cache.hpp).
void ref_fields(RefFields& f, Image& im);

// One pass of the K x K filter `w` (row-major, k*k weights) with clamp-to-edge borders.
Image filter_once(const Image& in, const std::vector<float>& w, int k);
// `iters` passes, each on the previous one's output (iters 0: the input).
Image filter_repeated(const Image& in, const std::vector<float>& w, int k, int iters);

// The bench's input: values in [0, 1) from a hash of (seed, index), the same on every machine.
Image test_image(std::int64_t width, std::int64_t height, std::uint32_t seed);

// "" when got equals want bit for bit, else the count of differing pixels and the first one
// (x, y, both values): a wrong halo row shows as the rows at a split.
std::string compare_bits(const Image& got, const Image& want);

}  // namespace gpsm::apps::filter
