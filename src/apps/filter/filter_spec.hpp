#pragma once
// What `gpsm bench --app filter` and `gpsm filter` filter: the image size, the filter and where its
// weights live (GPU-SM paper §3.3.2, image filtering; its replication-versus-caching question for
// the small filter array). Plain C++, checked by the CPU tests.
#include <cstdint>
#include <string>
#include <vector>

namespace gpsm::apps::filter {

// Where the kernels read the K x K weights from:
//   constant    CUDA constant memory on every GPU (the default; broadcast to a warp from the
//               constant cache);
//   replicated  a replicated distributed array (a copy in every GPU's memory), read through the
//               read-only cache;
//   remote      a distributed array of one block on the first GPU, read by every GPU through the
//               read-only cache (the other GPUs' loads cross the link until the cache holds the
//               4*K*K bytes).
enum class WeightsAt : std::uint8_t { constant, replicated, remote };
const char* weights_at_name(WeightsAt w);

// The largest filter side: the weights must fit the kernels' constant array (63 * 63 floats).
constexpr int kMaxFilterSide = 63;

struct FilterSize {
  std::int64_t width = 0, height = 0;
  int k = 0;  // odd, 3 .. kMaxFilterSide
  WeightsAt at = WeightsAt::constant;
  std::string label() const;  // canonical spec: "4096x4096:k5", ":replicated" / ":remote" appended
};

// "WxH:kK[:constant|replicated|remote]" or "N:kK..." (N x N); ":kK" may be left out (K = 5).
// Throws std::invalid_argument "bad --size '<s>' for filter: <why> (use WxH:kK, e.g. 4096x4096:k5)".
FilterSize parse_filter_size(const std::string& s);

// Why rows of `height` cannot be split over `parts` GPUs for a K x K filter (every GPU needs at
// least (K-1)/2 rows, so that its halo comes from its direct neighbours), or "" when they can.
std::string split_problem(std::int64_t height, int k, int parts);

// The K x K Gaussian of binomial weights: C(K-1, i) * C(K-1, j) / 4^(K-1), exact in float for
// K <= 13 (dyadic fractions of at most 24 significant bits), row-major.
std::vector<float> gauss_weights(int k);

// A named filter for `gpsm filter --kernel`: gaussK (K odd, 3..63), boxK (1/K^2 each),
// sharpen3, laplace3, sobelx3, sobely3. Sets k. Throws std::invalid_argument naming the good ones.
std::vector<float> named_filter(const std::string& name, int& k);
extern const char* const kFilterNames;  // "gaussK, boxK (K odd, 3..63), sharpen3, laplace3, sobelx3, sobely3"

}  // namespace gpsm::apps::filter
