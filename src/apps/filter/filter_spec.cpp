#include "apps/filter/filter_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace gpsm::apps::filter {

const char* const kFilterNames = "gaussK, boxK (K odd, 3..63), sharpen3, laplace3, sobelx3, sobely3";

const char* weights_at_name(WeightsAt w) {
  switch (w) {
    case WeightsAt::constant: return "constant";
    case WeightsAt::replicated: return "replicated";
    case WeightsAt::remote: return "remote";
  }
  return "?";
}

std::string FilterSize::label() const {
  std::string s = fmt::format("{}x{}:k{}", width, height, k);
  if (at != WeightsAt::constant) s += std::string(":") + weights_at_name(at);
  return s;
}

namespace {

// A positive decimal count, the whole text; -1 when it is not one (or past 2^40).
std::int64_t count(const std::string& t) {
  if (t.empty() || t.size() > 13) return -1;
  for (char c : t)
    if (c < '0' || c > '9') return -1;
  return std::strtoll(t.c_str(), nullptr, 10);
}

[[noreturn]] void bad(const std::string& s, const std::string& why) {
  throw std::invalid_argument("bad --size '" + s + "' for filter: " + why + " (use WxH:kK, e.g. 4096x4096:k5)");
}

int odd_side(const std::string& s, const std::string& t) {
  const std::int64_t k = count(t);
  if (k < 3 || k > kMaxFilterSide || k % 2 == 0)
    bad(s, fmt::format("filter side '{}' is not an odd number from 3 to {}", t, kMaxFilterSide));
  return static_cast<int>(k);
}

}  // namespace

FilterSize parse_filter_size(const std::string& s) {
  FilterSize f;
  f.k = 5;
  std::vector<std::string> parts;
  for (std::size_t b = 0;;) {
    const std::size_t e = s.find(':', b);
    parts.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const std::string& dims = parts[0];
  const std::size_t x = dims.find('x');
  f.width = count(x == std::string::npos ? dims : dims.substr(0, x));
  f.height = x == std::string::npos ? f.width : count(dims.substr(x + 1));
  if (f.width < 1 || f.height < 1) bad(s, "the image size is not WxH or N with positive counts");
  // 2^23: room for a slab taller than a launch's 65535 rows of 64-row tiles (the kernels loop),
  // which their GPU test runs; memory is checked against the GPUs' separately.
  if (f.width > (std::int64_t{1} << 23) || f.height > (std::int64_t{1} << 23))
    bad(s, "a side past 8388608 pixels");
  bool k_seen = false, at_seen = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    if (!p.empty() && p[0] == 'k' && !k_seen) {
      f.k = odd_side(s, p.substr(1));
      k_seen = true;
    } else if ((p == "constant" || p == "replicated" || p == "remote") && !at_seen) {
      f.at = p == "constant" ? WeightsAt::constant : p == "replicated" ? WeightsAt::replicated : WeightsAt::remote;
      at_seen = true;
    } else {
      bad(s, "unknown or repeated part '" + p + "' (kK, constant, replicated or remote)");
    }
  }
  return f;
}

std::string split_problem(std::int64_t height, int k, int parts) {
  const std::int64_t halo = (k - 1) / 2;
  const std::int64_t least = height / parts;  // the even split's smallest part
  if (least < 1 || least < halo)
    return fmt::format("{} rows over {} GPUs leave {} on some GPU, fewer than the {} halo rows a {}x{} filter needs "
                       "from each neighbour",
                       height, parts, least, halo, k, k);
  return "";
}

std::vector<float> gauss_weights(int k) {
  std::vector<double> c(static_cast<std::size_t>(k), 1.0);
  for (int n = 1; n < k; ++n)  // row n of Pascal's triangle, in place, right to left
    for (int i = n - 1; i >= 1; --i) c[i] += c[i - 1];
  const double norm = std::ldexp(1.0, 2 * (k - 1));
  std::vector<float> w(static_cast<std::size_t>(k) * k);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) w[j * k + i] = static_cast<float>(c[j] * c[i] / norm);
  return w;
}

std::vector<float> named_filter(const std::string& name, int& k) {
  auto side_of = [&](const std::string& prefix) -> int {
    const std::int64_t v = count(name.substr(prefix.size()));
    if (v < 3 || v > kMaxFilterSide || v % 2 == 0)
      throw std::invalid_argument(fmt::format("filter '{}': the side must be odd, 3 to {}; filters: {}", name,
                                              kMaxFilterSide, kFilterNames));
    return static_cast<int>(v);
  };
  if (name.rfind("gauss", 0) == 0) {
    k = side_of("gauss");
    return gauss_weights(k);
  }
  if (name.rfind("box", 0) == 0) {
    k = side_of("box");
    return std::vector<float>(static_cast<std::size_t>(k) * k, 1.0f / static_cast<float>(k * k));
  }
  k = 3;
  if (name == "sharpen3") return {0, -1, 0, -1, 5, -1, 0, -1, 0};
  if (name == "laplace3") return {0, 1, 0, 1, -4, 1, 0, 1, 0};
  if (name == "sobelx3") return {-1, 0, 1, -2, 0, 2, -1, 0, 1};
  if (name == "sobely3") return {-1, -2, -1, 0, 0, 0, 1, 2, 1};
  throw std::invalid_argument("unknown filter '" + name + "'; filters: " + kFilterNames);
}

std::vector<int> filter_devices(const std::string& gpus, const std::string& devices, int ngpu, int max_devices) {
  std::vector<int> pool;
  if (devices.empty()) {
    for (int d = 0; d < ngpu && d < max_devices; ++d) pool.push_back(d);
  } else {
    std::size_t at = 0;
    while (at <= devices.size()) {
      const std::size_t end = std::min(devices.find(',', at), devices.size());
      const std::string tok = devices.substr(at, end - at);
      if (tok.empty() || tok.size() > 6 || tok.find_first_not_of("0123456789") != std::string::npos)
        throw std::invalid_argument("bad --devices '" + devices + "' (expected e.g. 0,1,3)");
      const int d = std::stoi(tok);
      if (std::find(pool.begin(), pool.end(), d) != pool.end())
        throw std::invalid_argument("device " + tok + " listed twice in --devices");
      if (d >= ngpu)
        throw std::out_of_range(fmt::format("device {} does not exist; this machine has {} GPU(s)", d, ngpu));
      pool.push_back(d);
      at = end + 1;
    }
    if (static_cast<int>(pool.size()) > max_devices)
      throw std::invalid_argument(fmt::format("--devices lists {} GPUs; a context holds at most {}", pool.size(), max_devices));
  }
  if (gpus == "all") return pool;
  int n = 0;
  if (!gpus.empty() && gpus.size() <= 6 && gpus.find_first_not_of("0123456789") == std::string::npos) n = std::stoi(gpus);
  if (n < 1) throw std::invalid_argument("--gpus '" + gpus + "' is not all or a positive count");
  if (n > static_cast<int>(pool.size()))
    throw std::out_of_range(fmt::format("--gpus {} but {} GPU(s) to draw from; use --gpus all or fewer", n, pool.size()));
  pool.resize(static_cast<std::size_t>(n));
  return pool;
}

}  // namespace gpsm::apps::filter
