#include "apps/stencil/decomp.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpsm::apps {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("gpsm: " + what); }

std::string str(std::int64_t v) { return std::to_string(v); }

void check_rank(const char* fn, int ranks, int rank) {
  if (ranks < 1) bad(std::string(fn) + ": ranks must be >= 1 (got " + str(ranks) + ")");
  if (rank < 0 || rank >= ranks)
    bad(std::string(fn) + ": rank " + str(rank) + " outside [0, " + str(ranks) + ")");
}

int dim_of(Axis a) { return static_cast<int>(a); }

}  // namespace

Range split_range(std::int64_t n, int parts, int rank) {
  check_rank("split_range", parts, rank);
  if (n < parts)
    bad("split_range: " + str(n) + " items cannot fill " + str(parts) + " parts (a part would be empty)");
  // NVIDIA's rule: the first num_low parts get `low` items, the others low + 1.
  const std::int64_t p = parts, r = rank;
  const std::int64_t low = n / p, high = low + 1;
  const std::int64_t num_low = p * low + p - n;
  Range out;
  out.begin = r < num_low ? r * low : num_low * low + (r - num_low) * high;
  out.end = out.begin + (r < num_low ? low : high);
  return out;
}

// ---- Jacobi 2D -----------------------------------------------------------------------------

std::int64_t JacobiSlab::global_row(std::int64_t lr) const {
  if (lr < 0 || lr > chunk + 1)
    bad("JacobiSlab::global_row: local row " + str(lr) + " outside [0, " + str(chunk + 1) + "]");
  const std::int64_t last_row = first_row + chunk - 1;
  // Halo rows wrap around the periodic top/bottom: the grid's interior is rows [1, ny-1).
  if (lr == 0) return first_row == 1 ? ny - 2 : first_row - 1;
  if (lr == chunk + 1) return last_row == ny - 2 ? 1 : last_row + 1;
  return first_row + lr - 1;
}

JacobiSlab jacobi_slab(std::int64_t nx, std::int64_t ny, int ranks, int rank) {
  if (nx < 3) bad("jacobi_slab: nx must be >= 3 (got " + str(nx) + ")");
  if (ny < 3) bad("jacobi_slab: ny must be >= 3 (got " + str(ny) + ")");
  check_rank("jacobi_slab", ranks, rank);
  if (ranks > ny - 2)
    bad("jacobi_slab: " + str(ranks) + " ranks exceed the " + str(ny - 2) + " interior rows");
  const Range part = split_range(ny - 2, ranks, rank);
  JacobiSlab s;
  s.rank = rank;
  s.ranks = ranks;
  s.nx = nx;
  s.ny = ny;
  s.first_row = 1 + part.begin;
  s.chunk = part.size();
  s.top = rank > 0 ? rank - 1 : ranks - 1;
  s.bottom = (rank + 1) % ranks;
  return s;
}

// ---- 3D apps -------------------------------------------------------------------------------

const char* axis_name(Axis a) {
  switch (a) {
    case Axis::x: return "x";
    case Axis::y: return "y";
    case Axis::z: return "z";
  }
  return "?";
}

Axis parse_axis(const std::string& s) {
  if (s == "x") return Axis::x;
  if (s == "y") return Axis::y;
  if (s == "z") return Axis::z;
  bad("unknown axis '" + s + "' (expected x, y or z)");
}

std::int64_t Slab3D::global(int dim, std::int64_t l) const {
  if (dim < 0 || dim > 2) bad("Slab3D::global: dim " + str(dim) + " outside [0, 3)");
  return dim == dim_of(axis) ? first - radius + l : l;
}

std::int64_t Slab3D::plane_cells() const {
  const int a = dim_of(axis);
  return local[(a + 1) % 3] * local[(a + 2) % 3];
}

Slab3D slab3d(const std::int64_t n[3], Axis axis, int radius, int ranks, int rank) {
  if (radius < 1 || radius > kMaxSlabRadius)
    bad("slab3d: radius must be in [1, " + str(kMaxSlabRadius) + "] (got " + str(radius) + ")");
  const int a = dim_of(axis);
  if (a < 0 || a > 2) bad("slab3d: axis " + str(a) + " is not x, y or z");
  for (int d = 0; d < 3; ++d)
    if (n[d] < 2 * radius + 1)
      bad(std::string("slab3d: extent ") + axis_name(static_cast<Axis>(d)) + " = " + str(n[d]) +
          " leaves no interior with radius " + str(radius) + " (need >= " + str(2 * radius + 1) + ")");
  check_rank("slab3d", ranks, rank);
  // Halos come only from the direct neighbours, so every rank must own at least `radius` planes
  // (the smallest part holds interior / ranks planes).
  const std::int64_t interior = n[a] - 2 * radius;
  if (interior / ranks < radius)
    bad("slab3d: " + str(ranks) + " ranks over " + str(interior) + " interior planes along " +
        axis_name(axis) + " leave a rank fewer than radius = " + str(radius) + " planes");
  const Range part = split_range(interior, ranks, rank);
  Slab3D s;
  s.rank = rank;
  s.ranks = ranks;
  s.axis = axis;
  s.radius = radius;
  for (int d = 0; d < 3; ++d) s.n[d] = s.local[d] = n[d];
  s.first = radius + part.begin;
  s.count = part.size();
  s.local[a] = s.count + 2 * radius;
  return s;
}

// Row by row: a row's kept cells are one run of x (all of them, or along x the kept columns), so
// each row is one copy with its global index computed once (cell by cell, with a global() call per
// coordinate, 768^3 took seconds).
void copy_slab3d_to_global(const Slab3D& s, const float* local, float* global) {
  const std::int64_t* n = s.n;
  const int a = dim_of(s.axis);
  const std::int64_t lo = s.has_lower() ? s.radius : 0;
  const std::int64_t hi = s.has_upper() ? s.radius + s.count : s.local[a];
  const std::int64_t x0 = a == 0 ? lo : 0, x1 = a == 0 ? hi : s.local[0];
  for (std::int64_t z = 0; z < s.local[2]; ++z) {
    if (a == 2 && (z < lo || z >= hi)) continue;
    for (std::int64_t y = 0; y < s.local[1]; ++y) {
      if (a == 1 && (y < lo || y >= hi)) continue;
      const std::int64_t gi = (s.global(2, z) * n[1] + s.global(1, y)) * n[0] + s.global(0, x0);
      const float* from = local + s.index(x0, y, z);
      std::copy(from, from + (x1 - x0), global + gi);
    }
  }
}

double slab3d_halo_bytes(const std::int64_t n[3], Axis axis, int radius, int ranks, bool whole_planes) {
  if (ranks <= 1) return 0;
  const int a = dim_of(axis), b = (a + 1) % 3, c = (a + 2) % 3;
  const double plane = whole_planes ? static_cast<double>(n[b]) * static_cast<double>(n[c])
                                    : static_cast<double>(n[b] - 2 * radius) * static_cast<double>(n[c] - 2 * radius);
  return 2.0 * (ranks - 1) * radius * plane * sizeof(float);
}

}  // namespace gpsm::apps
