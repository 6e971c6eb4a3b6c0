// The CG app's deterministic matrix generators (matrix.hpp): each row is written on its own, in
// two passes (count, then fill), so generation runs in parallel and the same parameters give the
// same matrix on any machine.
#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "apps/cg/matrix.hpp"
#include "common/omp.hpp"
#include "common/splitmix.hpp"

namespace gpsm::apps::cg {
namespace {

// Rows [0, n): count(i) entries each, written by fill(i, col, val) in ascending column order.
template <class Count, class Fill>
Matrix build(std::int64_t n, const Count& count, const Fill& fill) {
  if (n < 1) throw std::invalid_argument("a matrix needs at least one row");
  if (n > (std::int64_t{1} << 31) - 1) throw std::invalid_argument("more than 2^31 - 1 rows (column ids are int32)");
  Matrix m;
  m.n = n;
  m.row_ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  GPSM_OMP(parallel for schedule(static))
  for (std::int64_t i = 0; i < n; ++i) m.row_ptr[static_cast<std::size_t>(i) + 1] = count(i);
  for (std::int64_t i = 0; i < n; ++i) m.row_ptr[i + 1] += m.row_ptr[i];
  m.col.resize(static_cast<std::size_t>(m.row_ptr.back()));
  m.val.resize(m.col.size());
  GPSM_OMP(parallel for schedule(static))
  for (std::int64_t i = 0; i < n; ++i) fill(i, m.col.data() + m.row_ptr[i], m.val.data() + m.row_ptr[i]);
  return m;
}

void check_dims(std::int64_t nx, std::int64_t ny, std::int64_t nz, const char* what) {
  if (nx < 1 || ny < 1 || nz < 1) throw std::invalid_argument(std::string(what) + ": every extent must be at least 1");
}

// A structured grid: whether the node at an offset from `node` lies inside, and its index.
struct Grid {
  std::int64_t nx, ny, nz;
  bool operator()(std::int64_t node, int dx, int dy, int dz) const {
    const std::int64_t x = node % nx + dx, y = node / nx % ny + dy, z = node / (nx * ny) + dz;
    return x >= 0 && x < nx && y >= 0 && y < ny && z >= 0 && z < nz;
  }
  std::int64_t at(std::int64_t node, int dx, int dy, int dz) const { return node + (dz * ny + dy) * nx + dx; }
};

// Offsets of the neighbourhood in ascending linear order (z, then y, then x), centre included.
std::vector<std::array<int, 3>> offsets(bool faces_only, bool three_d) {
  std::vector<std::array<int, 3>> o;
  for (int dz = three_d ? -1 : 0; dz <= (three_d ? 1 : 0); ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const int far = (dx != 0) + (dy != 0) + (dz != 0);
        if (!faces_only || far <= 1) o.push_back({dx, dy, dz});
      }
  return o;
}

Matrix scalar_stencil(std::int64_t nx, std::int64_t ny, std::int64_t nz, bool faces_only, bool three_d, double diag) {
  const Grid g{nx, ny, nz};
  const auto offs = offsets(faces_only, three_d);
  return build(
      nx * ny * nz,
      [&](std::int64_t i) {
        std::int64_t c = 0;
        for (const auto& o : offs) c += g(i, o[0], o[1], o[2]) ? 1 : 0;
        return c;
      },
      [&](std::int64_t i, std::int32_t* col, double* val) {
        for (const auto& o : offs)
          if (g(i, o[0], o[1], o[2])) {
            const bool centre = o[0] == 0 && o[1] == 0 && o[2] == 0;
            *col++ = static_cast<std::int32_t>(g.at(i, o[0], o[1], o[2]));
            *val++ = centre ? diag : -1.0;
          }
      });
}

// The banded generator's random graph: edge (i, i + o) for 1 <= o <= w exists when o == 1 or its
// hash says so (probability 1/2), weight in [0.5, 1.5). Defined for any i (negative too), so the
// edges that leave [0, n) are known and land on the diagonal.
struct Band {
  std::int64_t n;
  int w;
  std::uint64_t seed;
  std::uint64_t h(std::int64_t i, int o) const {
    return splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i) * 64 + static_cast<std::uint64_t>(o)));
  }
  bool edge(std::int64_t i, int o) const { return o == 1 || (h(i, o) & 1u) != 0; }
  double weight(std::int64_t i, int o) const {
    return 0.5 + static_cast<double>(h(i, o) >> 11) * (1.0 / 9007199254740992.0);  // 53 random bits
  }
  // Sum of the weights of every edge at row i, in or out of range: the diagonal.
  double diag(std::int64_t i) const {
    double d = 0;
    for (int o = w; o >= 1; --o)
      if (edge(i - o, o)) d += weight(i - o, o);
    for (int o = 1; o <= w; ++o)
      if (edge(i, o)) d += weight(i, o);
    return d;
  }
};

void check_band(std::int64_t n, int nnz_per_row, const char* what) {
  if (n < 2) throw std::invalid_argument(std::string(what) + ": at least 2 rows");
  if (nnz_per_row < 3) throw std::invalid_argument(std::string(what) + ": at least 3 nonzeros per row");
  if (nnz_per_row > 1000) throw std::invalid_argument(std::string(what) + ": at most 1000 nonzeros per row");
}

}  // namespace

Matrix poisson2d(std::int64_t nx, std::int64_t ny) {
  check_dims(nx, ny, 1, "poisson2d");
  return scalar_stencil(nx, ny, 1, true, false, 4.0);
}

Matrix poisson3d7(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  check_dims(nx, ny, nz, "poisson3d");
  return scalar_stencil(nx, ny, nz, true, true, 6.0);
}

Matrix poisson3d27(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  check_dims(nx, ny, nz, "poisson27");
  return scalar_stencil(nx, ny, nz, false, true, 26.0);
}

Matrix elastic3d(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  check_dims(nx, ny, nz, "elastic");
  const Grid g{nx, ny, nz};
  const auto offs = offsets(false, true);
  constexpr double kM[3][3] = {{1.0, 0.25, 0.25}, {0.25, 1.0, 0.25}, {0.25, 0.25, 1.0}};
  return build(
      3 * nx * ny * nz,
      [&](std::int64_t i) {
        std::int64_t c = 0;
        for (const auto& o : offs) c += g(i / 3, o[0], o[1], o[2]) ? 3 : 0;
        return c;
      },
      [&](std::int64_t i, std::int32_t* col, double* val) {
        const std::int64_t node = i / 3;
        const int a = static_cast<int>(i % 3);
        for (const auto& o : offs)
          if (g(node, o[0], o[1], o[2])) {
            const bool centre = o[0] == 0 && o[1] == 0 && o[2] == 0;
            const std::int64_t other = g.at(node, o[0], o[1], o[2]);
            for (int b = 0; b < 3; ++b) {  // block (node, other) of L27 (x) M: L27's entry times M
              *col++ = static_cast<std::int32_t>(3 * other + b);
              *val++ = (centre ? 26.0 : -1.0) * kM[a][b];
            }
          }
      });
}

Matrix banded(std::int64_t n, int nnz_per_row, std::uint64_t seed) {
  check_band(n, nnz_per_row, "banded");
  const Band b{n, nnz_per_row - 2, seed};
  return build(
      n,
      [&](std::int64_t i) {
        std::int64_t c = 1;
        for (int o = 1; o <= b.w; ++o) c += (i - o >= 0 && b.edge(i - o, o)) + (i + o < n && b.edge(i, o));
        return c;
      },
      [&](std::int64_t i, std::int32_t* col, double* val) {
        for (int o = b.w; o >= 1; --o)
          if (i - o >= 0 && b.edge(i - o, o)) *col++ = static_cast<std::int32_t>(i - o), *val++ = -b.weight(i - o, o);
        *col++ = static_cast<std::int32_t>(i), *val++ = b.diag(i);
        for (int o = 1; o <= b.w; ++o)
          if (i + o < n && b.edge(i, o)) *col++ = static_cast<std::int32_t>(i + o), *val++ = -b.weight(i, o);
      });
}

Matrix arrow(std::int64_t n, int nnz_per_row, std::uint64_t seed) {
  check_band(n, nnz_per_row, "arrow");
  const Band b{n, nnz_per_row - 2, seed};
  const double c = 1.0 / static_cast<double>(n);  // the dense row's and column's coupling
  return build(
      n,
      [&](std::int64_t i) {
        if (i == 0) return n;
        std::int64_t k = 2;  // column 0 (the dense column, merged with a band entry there) and the diagonal
        for (int o = 1; o <= b.w; ++o) k += (i - o >= 1 && b.edge(i - o, o)) + (i + o < n && b.edge(i, o));
        return k;
      },
      [&](std::int64_t i, std::int32_t* col, double* val) {
        // Column j of row 0 and row j of column 0: -c, plus the band's edge (0, j) where it has one.
        auto dense = [&](std::int64_t j) { return -c - (j <= b.w && b.edge(0, static_cast<int>(j)) ? b.weight(0, static_cast<int>(j)) : 0.0); };
        if (i == 0) {
          *col++ = 0, *val++ = b.diag(0) + c * static_cast<double>(n - 1);
          for (std::int64_t j = 1; j < n; ++j) *col++ = static_cast<std::int32_t>(j), *val++ = dense(j);
          return;
        }
        *col++ = 0, *val++ = dense(i);
        for (int o = b.w; o >= 1; --o)
          if (i - o >= 1 && b.edge(i - o, o)) *col++ = static_cast<std::int32_t>(i - o), *val++ = -b.weight(i - o, o);
        *col++ = static_cast<std::int32_t>(i), *val++ = b.diag(i) + c;
        for (int o = 1; o <= b.w; ++o)
          if (i + o < n && b.edge(i, o)) *col++ = static_cast<std::int32_t>(i + o), *val++ = -b.weight(i, o);
      });
}

}  // namespace gpsm::apps::cg
