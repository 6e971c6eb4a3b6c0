#pragma once
// Domain decomposition of the stencil apps (plain C++, shared by the GPU code and the CPU tests).
//
// Rows (Jacobi) or planes (3D apps) along one axis are split into contiguous blocks that differ by
// at most one, with the smaller blocks first: NVIDIA's multi-gpu-programming-models rule
// (chunk_size_low = n / p, chunk_size_high = low + 1, num_ranks_low = p * low + p - n).
#include <cstdint>
#include <string>

namespace gpsm::apps {

struct Range {
  std::int64_t begin = 0, end = 0;  // [begin, end)
  std::int64_t size() const { return end - begin; }
};

// Part `rank` of `n` items split over `parts`; throws std::invalid_argument when parts < 1,
// rank is outside [0, parts) or n < parts (a part would be empty).
Range split_range(std::int64_t n, int parts, int rank);

// ---- Jacobi 2D -----------------------------------------------------------------------------
// Global grid ny x nx (row-major, x fastest). Rows 0 and ny-1 are the periodic halo rows, columns
// 0 and nx-1 the fixed boundaries; the ny-2 interior rows are split over the ranks. Rank r owns
// global rows [1 + part.begin, 1 + part.end) and stores them as local rows 1..chunk, with local
// rows 0 and chunk+1 as halos.
struct JacobiSlab {
  int rank = 0, ranks = 1;
  std::int64_t nx = 0, ny = 0;
  std::int64_t first_row = 0;  // global index of local row 1
  std::int64_t chunk = 0;      // rows owned
  int top = 0, bottom = 0;     // neighbour ranks (periodic): top = rank-1 (or last), bottom = rank+1 (or 0)
  std::int64_t local_rows() const { return chunk + 2; }
  // Global row of local row lr (lr in [0, chunk+1]); halo rows wrap: the top halo of the first
  // rank is global row ny-2, the bottom halo of the last rank is global row 1. Throws
  // std::invalid_argument for lr outside that range.
  std::int64_t global_row(std::int64_t lr) const;
};
// Throws std::invalid_argument for nx < 3, ny < 3 or more ranks than interior rows.
JacobiSlab jacobi_slab(std::int64_t nx, std::int64_t ny, int ranks, int rank);

// ---- 3D apps -------------------------------------------------------------------------------
enum class Axis : std::uint8_t { x, y, z };
const char* axis_name(Axis a);   // "x" | "y" | "z"
Axis parse_axis(const std::string& s);  // throws std::invalid_argument naming the bad value

// A global box nx x ny x nz (x fastest) with a fixed boundary layer `radius` cells thick on every
// face (1 for heat3d, 2 for wave3d, the halo for fd3d: up to kMaxSlabRadius); the interior cells
// along `axis` are split over the ranks.
// Each rank stores its part plus `radius` halo planes on both sides of the split axis, and the
// whole extent of the two other axes (their boundary layers included).
struct Slab3D {
  int rank = 0, ranks = 1;
  Axis axis = Axis::z;
  int radius = 1;
  std::int64_t n[3] = {0, 0, 0};       // global extents x, y, z
  std::int64_t first = 0;              // global index (along axis) of the first owned plane
  std::int64_t count = 0;              // planes owned
  std::int64_t local[3] = {0, 0, 0};   // local extents x, y, z (count + 2*radius along axis)
  std::int64_t local_cells() const { return local[0] * local[1] * local[2]; }
  // Local linear index of local coordinates (x fastest).
  std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z) const { return (z * local[1] + y) * local[0] + x; }
  // Global coordinate along axis dim (0 = x, 1 = y, 2 = z) of a local coordinate; throws
  // std::invalid_argument for dim outside [0, 3).
  std::int64_t global(int dim, std::int64_t l) const;
  // Cells in one halo plane (the two non-split extents); bytes = cells * 4 per plane.
  std::int64_t plane_cells() const;
  bool has_lower() const { return rank > 0; }           // a neighbour owns the planes below
  bool has_upper() const { return rank + 1 < ranks; }   // ... and above (no periodic wrap)
};
constexpr int kMaxSlabRadius = 16;  // fd3d's largest halo (GPU-SM's Table 1)
// Throws std::invalid_argument for extents < 2*radius+1, radius outside [1, kMaxSlabRadius], or a rank that would
// own fewer than `radius` planes (interior / ranks < radius): halo planes come only from the
// direct neighbours, so a neighbour must own all `radius` of them (for radius 1 this is simply
// more ranks than interior planes).
Slab3D slab3d(const std::int64_t n[3], Axis axis, int radius, int ranks, int rank);

// The cells of rank s's local box (`local`, Slab3D::local cells, x fastest) that belong in the
// global box: its owned planes and, on the first / last rank, the boundary planes of the split
// axis it holds as halos. Copied into `global` (s.n cells, x fastest); other cells untouched.
void copy_slab3d_to_global(const Slab3D& s, const float* local, float* global);

// Bytes between GPUs per iteration when every rank of `ranks` slabs sends `radius` planes to each
// neighbour: whole planes, or only their interior cells (what a kernel's peer stores write).
double slab3d_halo_bytes(const std::int64_t n[3], Axis axis, int radius, int ranks, bool whole_planes);

}  // namespace gpsm::apps
