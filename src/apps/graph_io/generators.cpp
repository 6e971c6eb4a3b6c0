// Deterministic generators. Randomness is counter-based (splitmix64 of seed and a per-draw
// counter), so every draw depends only on (seed, what it is for) and generation order is free.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "apps/graph_io/graph.hpp"
#include "gpsm/error.hpp"
#include "common/omp.hpp"
#include "common/splitmix.hpp"

namespace gpsm::graph_io {
namespace {

// Hash of (seed, stream, counter): independent streams for different purposes.
std::uint64_t h3(std::uint64_t seed, std::uint64_t stream, std::uint64_t n) {
  return splitmix64(splitmix64(splitmix64(seed) ^ stream) ^ n);
}
double unit(std::uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }  // [0, 1)
double normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t n) {     // Box-Muller
  const double u1 = 1.0 - unit(h3(seed, stream, 2 * n)), u2 = unit(h3(seed, stream, 2 * n + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

void check_ids(std::int64_t rows, std::int64_t cols, const char* who) {
  if (rows < 0 || cols < 0 || rows > 2147483647 || cols > 2147483647)
    throw Error(std::string(who) + ": size " + std::to_string(rows) + " x " +
                std::to_string(cols) + " outside int32 ids");
}

// Exactly k = min(k, n) distinct values in [0, n) (Floyd's algorithm), sorted.
std::vector<std::int32_t> distinct(std::int64_t n, std::int64_t k, std::uint64_t seed,
                                   std::uint64_t stream, std::uint64_t row) {
  k = std::min(k, n);
  std::vector<std::int32_t> s;
  s.reserve(k);
  std::uint64_t ctr = 0;
  for (std::int64_t j = n - k; j < n; ++j) {
    const auto t = static_cast<std::int32_t>(h3(seed, stream, row * 0x100000001b3ull + ctr++) %
                                             static_cast<std::uint64_t>(j + 1));
    if (std::find(s.begin(), s.end(), t) == s.end()) s.push_back(t);
    else s.push_back(static_cast<std::int32_t>(j));
  }
  std::sort(s.begin(), s.end());
  return s;
}

}  // namespace

Csr rmat(const RmatParams& p) {
  if (p.scale < 1 || p.scale > 30 || p.edge_factor < 1)
    throw Error("rmat: need 1 <= scale <= 30 and edge_factor >= 1");
  const double d = 1.0 - p.a - p.b - p.c;
  if (p.a < 0 || p.b < 0 || p.c < 0 || d < -1e-12) throw Error("rmat: need a, b, c >= 0, a+b+c <= 1");
  const std::int64_t n = std::int64_t{1} << p.scale;
  const std::int64_t m = n * p.edge_factor;
  std::vector<std::int32_t> perm(n);
  for (std::int64_t i = 0; i < n; ++i) perm[i] = static_cast<std::int32_t>(i);
  if (p.permute) {
    std::mt19937_64 g(splitmix64(p.seed ^ 0x5065726dull));
    for (std::int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates, own draw (not std::shuffle: portable)
      const auto j = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(i + 1));
      std::swap(perm[i], perm[j]);
    }
  }
  // Draw k depends only on (seed, k): chunks of draws run in parallel and are joined in k order,
  // so the entries (and the CSR) are the same with any number of threads.
  const double ab = p.a + p.b, abc = p.a + p.b + p.c;
  constexpr std::int64_t kChunk = std::int64_t{1} << 20;
  const std::int64_t chunks = (m + kChunk - 1) / kChunk;
  std::vector<std::vector<Entry>> part(static_cast<std::size_t>(chunks));
  GPSM_OMP(parallel for schedule(dynamic, 1))
  for (std::int64_t ch = 0; ch < chunks; ++ch) {
    std::vector<Entry>& out = part[ch];
    const std::int64_t k0 = ch * kChunk, k1 = std::min(m, k0 + kChunk);
    out.reserve(static_cast<std::size_t>(k1 - k0));
    for (std::int64_t k = k0; k < k1; ++k) {
      std::int64_t r = 0, c = 0;
      for (int l = 0; l < p.scale; ++l) {
        const double u = unit(h3(p.seed, 1, static_cast<std::uint64_t>(k) * 64 + l));
        r <<= 1;
        c <<= 1;
        if (u < p.a) {
        } else if (u < ab) {
          c |= 1;
        } else if (u < abc) {
          r |= 1;
        } else {
          r |= 1;
          c |= 1;
        }
      }
      if (p.dedup && r == c) continue;
      const float w = p.weighted ? 1.0f + static_cast<float>(99.0 * unit(h3(p.seed, 2, k))) : 1.0f;
      out.push_back({perm[r], perm[c], w});
    }
  }
  std::vector<Entry> e;
  std::size_t total = 0;
  for (const auto& v : part) total += v.size();
  e.reserve(total);
  for (auto& v : part) {
    e.insert(e.end(), v.begin(), v.end());
    std::vector<Entry>().swap(v);
  }
  return csr_from_entries(n, n, std::move(e), p.weighted, p.dedup);
}

Csr grid2d(const GridParams& p) {
  if (p.nx < 1 || p.ny < 1) throw Error("grid2d: need nx, ny >= 1");
  check_ids(p.nx * p.ny, p.nx * p.ny, "grid2d");
  if (!(p.w_min > 0) || p.w_max < p.w_min) throw Error("grid2d: need 0 < w_min <= w_max");
  const std::int64_t n = p.nx * p.ny;
  auto weight = [&](std::int64_t u, std::uint64_t dir) {  // one draw per undirected edge
    return p.w_min + static_cast<float>((p.w_max - p.w_min) * unit(h3(p.seed, 3 + dir, u)));
  };
  std::vector<Entry> e;
  e.reserve(static_cast<std::size_t>(n) * 4 + 16);
  auto both = [&](std::int64_t u, std::int64_t v, float w) {
    e.push_back({static_cast<std::int32_t>(u), static_cast<std::int32_t>(v), w});
    e.push_back({static_cast<std::int32_t>(v), static_cast<std::int32_t>(u), w});
  };
  for (std::int64_t y = 0; y < p.ny; ++y)
    for (std::int64_t x = 0; x < p.nx; ++x) {
      const std::int64_t u = y * p.nx + x;
      if (x + 1 < p.nx) both(u, u + 1, weight(u, 0));
      if (y + 1 < p.ny) both(u, u + p.nx, weight(u, 1));
      if (p.shortcut_prob > 0 && x + 1 < p.nx && y + 1 < p.ny &&
          unit(h3(p.seed, 6, u)) < p.shortcut_prob)
        both(u, u + p.nx + 1, weight(u, 2));
    }
  return csr_from_entries(n, n, std::move(e), true);
}

Csr banded(std::int64_t n, std::int64_t half_width, double density, std::uint64_t seed) {
  check_ids(n, n, "banded");
  if (half_width < 0) throw Error("banded: need half_width >= 0");
  Csr m;
  m.rows = m.cols = n;
  m.row_ptr.assign(n + 1, 0);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t lo = std::max<std::int64_t>(0, i - half_width),
                       hi = std::min<std::int64_t>(n - 1, i + half_width);
    for (std::int64_t j = lo; j <= hi; ++j) {
      const std::uint64_t id = static_cast<std::uint64_t>(i) * (2 * half_width + 1) + (j - i + half_width);
      if (j == i) {
        m.col.push_back(static_cast<std::int32_t>(j));
        m.val.push_back(static_cast<float>(2 * half_width + 1));
      } else if (unit(h3(seed, 7, id)) < density) {
        m.col.push_back(static_cast<std::int32_t>(j));
        m.val.push_back(static_cast<float>(2.0 * unit(h3(seed, 8, id)) - 1.0));
      }
    }
    m.row_ptr[i + 1] = m.nnz();
  }
  return m;
}

Csr uniform_random(std::int64_t rows, std::int64_t cols, std::int64_t per_row, std::uint64_t seed) {
  check_ids(rows, cols, "uniform_random");
  if (per_row < 0) throw Error("uniform_random: need per_row >= 0");
  Csr m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(rows + 1, 0);
  const std::int64_t k = std::min(per_row, cols);
  m.col.reserve(rows * k);
  m.val.reserve(rows * k);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int32_t c : distinct(cols, k, seed, 9, i)) {
      m.col.push_back(c);
      m.val.push_back(static_cast<float>(unit(h3(seed, 10, static_cast<std::uint64_t>(i) << 32 | c))));
    }
    m.row_ptr[i + 1] = m.nnz();
  }
  return m;
}

Csr ratings(const RatingParams& p) {
  check_ids(p.users, p.items, "ratings");
  if (p.rank < 1 || p.per_user < 0) throw Error("ratings: need rank >= 1 and per_user >= 0");
  const std::int64_t k = std::min(p.per_user, p.items);
  // Factors ~ N(0, 1); dot / sqrt(rank) ~ N(0, 1), scaled by 1.2 around a mean of 3.
  std::vector<float> V(static_cast<std::size_t>(p.items) * p.rank);
  for (std::size_t i = 0; i < V.size(); ++i) V[i] = static_cast<float>(normal(p.seed, 11, i));
  const double scale = 1.2 / std::sqrt(static_cast<double>(p.rank));
  Csr m;
  m.rows = p.users;
  m.cols = p.items;
  m.row_ptr.assign(p.users + 1, 0);
  m.col.reserve(p.users * k);
  m.val.reserve(p.users * k);
  std::vector<double> u(p.rank);
  for (std::int64_t i = 0; i < p.users; ++i) {
    for (int r = 0; r < p.rank; ++r)
      u[r] = normal(p.seed, 12, static_cast<std::uint64_t>(i) * p.rank + r);
    for (std::int32_t c : distinct(p.items, k, p.seed, 13, i)) {
      double dot = 0;
      for (int r = 0; r < p.rank; ++r) dot += u[r] * V[static_cast<std::size_t>(c) * p.rank + r];
      const double x = 3.0 + scale * dot +
                       p.noise * normal(p.seed, 14, static_cast<std::uint64_t>(i) << 32 | c);
      m.col.push_back(c);
      m.val.push_back(static_cast<float>(std::clamp(std::round(x), 1.0, 5.0)));
    }
    m.row_ptr[i + 1] = m.nnz();
  }
  return m;
}

}  // namespace gpsm::graph_io
