#pragma once
// The CT scan and image geometry (plain C++, CPU-tested): a third-generation scanner with a flat
// detector, circular or helical source path, and the voxel grid, after the PROACT dissertation's
// case study (helical scan, 512 x 512 x 512 image over a 512 mm field of view, 0.625 mm slices,
// 7256 views of 64 rows x 888 channels, pitch 63/64, 9 turns).
//
// Every size is the same physical scanner and object, sampled more or less finely:
//   - source radius 541 mm, source-detector distance 949.075 mm (GE LightSpeed-like), detector
//     888 x 1.0239 mm wide and 64 x 1.0963 mm tall (40 mm of collimation at the isocenter), so
//     `channels` and `rows` set the cell sizes;
//   - image: 512 mm field of view across (dx = dy = 512 / nx); helical: 320 mm long
//     (dz = 320 / nz), the table advancing pitch x 40 mm per turn over round((320 + 40) / (pitch
//     x 40)) turns (9 at pitch 63/64); circular: one turn, dz = 40 / nz (the image fills the
//     cone's coverage at the isocenter).
//
// Coordinates: isocenter at the origin, z along the table. View v is at angle
// beta = 2 pi v / views_per_turn; the source sits at (R cos beta, R sin beta, source_z(v)), the
// detector faces it at distance D, its channel axis along (-sin beta, cos beta, 0) and row axis
// along z. Detector cell centers: (k - (channels - 1) / 2) * channel_size and likewise rows.
// Image layout [iy][ix][iz] (z fastest): a y-plane and a voxel column (ix, iy) are contiguous,
// which is what the y-slab partition and the voxel-major back projection want.
#include <cstdint>
#include <string>

// Marks what the GPU kernels share with the CPU core (geometry accessors, footprint and penalty
// arithmetic): compiled for both, so both take each coefficient from the same source.
#if defined(__CUDACC__)
#define GPSM_CT_HD __host__ __device__
#else
#define GPSM_CT_HD
#endif

namespace gpsm::apps::ct {

enum class Orbit : std::uint8_t { circular, helical };

struct Geometry {
  // scanner
  double source_radius = 541.0;       // R, mm: source to isocenter
  double source_detector = 949.075;   // D, mm: source to detector (flat)
  int rows = 64, channels = 888;      // detector cells
  double row_size = 1.0963;           // mm at the detector
  double channel_size = 1.0239;       // mm at the detector
  int views = 7256;
  Orbit orbit = Orbit::helical;
  double turns = 9;                   // helical: source turns over the scan; circular: 1
  double pitch = 63.0 / 64.0;         // helical: table feed per turn / collimation at the isocenter
  // image
  int nx = 512, ny = 512, nz = 512;
  double dx = 1.0, dz = 0.625;        // voxel size, mm (dy = dx)

  double views_per_turn() const { return views / turns; }
  GPSM_CT_HD double collimation() const { return rows * row_size * source_radius / source_detector; }  // mm at isocenter
  double feed_per_turn() const { return orbit == Orbit::helical ? pitch * collimation() : 0.0; }
  double angle(int v) const;     // radians
  double source_z(int v) const;  // mm; the helix is centred on the image
  GPSM_CT_HD double channel_center(int k) const { return (k - 0.5 * (channels - 1)) * channel_size; }
  GPSM_CT_HD double row_center(int l) const { return (l - 0.5 * (rows - 1)) * row_size; }
  GPSM_CT_HD double x_center(int ix) const { return (ix - 0.5 * (nx - 1)) * dx; }
  GPSM_CT_HD double y_center(int iy) const { return (iy - 0.5 * (ny - 1)) * dx; }
  GPSM_CT_HD double z_center(int iz) const { return (iz - 0.5 * (nz - 1)) * dz; }

  GPSM_CT_HD std::int64_t voxels() const { return std::int64_t{nx} * ny * nz; }
  GPSM_CT_HD std::int64_t cells_per_view() const { return std::int64_t{rows} * channels; }
  GPSM_CT_HD std::int64_t sinogram_cells() const { return cells_per_view() * views; }
  GPSM_CT_HD std::int64_t voxel_index(int ix, int iy, int iz) const { return (std::int64_t{iy} * nx + ix) * nz + iz; }
  GPSM_CT_HD std::int64_t cell_index(int view, int row, int channel) const {
    return (std::int64_t{view} * rows + row) * channels + channel;
  }
  std::string label() const;  // "64x64x64:288x16x96:helical"
};

// Bounds the projector's per-voxel loops rely on: a voxel's shadow spans at most this many
// channels or rows (the footprint arrays are this long).
inline constexpr int kMaxFootprintCells = 48;

// The scanner above sampled as asked (the rules in the header comment).
Geometry make_geometry(int nx, int ny, int nz, int views, int rows, int channels, Orbit orbit);

// --size for the CT app:
//   small   64x64x64:288x16x96:helical    (tests; about a second per projection on one core)
//   medium  256x256x256:1814x32x444:helical  (strong scaling: a quarter of the seed's views, an
//                                           eighth of its voxels)
//   seed    512x512x512:7256x64x888:helical  (the PROACT dissertation's case study)
//   or NXxNYxNZ:VIEWSxROWSxCHANNELS[:helical|:circular] (default helical).
// Throws std::invalid_argument("bad --size '<s>' for ct: <why>; use ...") on anything else,
// including a geometry validate() refuses.
Geometry parse_geometry(const std::string& spec);
inline constexpr const char* kSizeSyntax =
    "small, medium, seed or NXxNYxNZ:VIEWSxROWSxCHANNELS[:helical|:circular]";

// Empty when the geometry is usable; else why not (source inside the image, a voxel's shadow
// wider than kMaxFootprintCells, non-positive sizes).
std::string validate(const Geometry& g);

}  // namespace gpsm::apps::ct
