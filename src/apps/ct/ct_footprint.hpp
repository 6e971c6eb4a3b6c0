#pragma once
// The separable-footprint projector's coefficients (SF-TR, after Long, Fessler and Balter, "3D
// forward and back-projection for X-ray CT using separable footprints"): the one place both the
// forward projector and the back projector get a_ij from, so the back projector is exactly the
// transpose (same coefficients, loops swapped). Header-only and allocation-free, compiled for host
// and device (GPSM_CT_HD): the GPU kernels (ct_project.cu) run this very arithmetic, built
// without FMA contraction so each coefficient is the CPU's to the bit.
//
// For view v and voxel (ix, iy, iz), the coefficient of detector cell (row l, channel k) is
//   a = amp * F1(k) * F2(l)
//   F1(k) = (1 / ds) * integral over channel k of the Trapezoid: the voxel's four transaxial
//           corners projected onto the channel axis (s = D u / d, u the lateral offset, d the
//           distance from the source along the central ray), sorted tau0 <= tau1 <= tau2 <= tau3,
//           rising linearly tau0 -> tau1, height 1 on [tau1, tau2], falling to tau3;
//   F2(l) = (1 / dt) * length of row l covered by the Rectangle [(z - dz/2 - zs) D / d_c,
//           (z + dz/2 - zs) D / d_c], d_c the voxel center's distance (the "TR" of SF-TR);
//   amp   = dx / max(|cos phi|, |sin phi|) / cos theta: the chord length through the voxel along
//           the ray through its center, phi that ray's transaxial angle, theta its angle out of
//           the transaxial plane (the paper's center-ray amplitude; its area-weighted variant
//           differs by < 1 % at these cone angles).
// Units: mm in, so A x of an attenuation image in 1/mm is a dimensionless line integral.
#include <cmath>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

// What a view contributes: its angle's cosine and sine and the source's z.
struct ViewPose {
  double c = 1, s = 0, zs = 0;
};

inline ViewPose view_pose(const Geometry& g, int v) {
  const double b = g.angle(v);
  return {std::cos(b), std::sin(b), g.source_z(v)};
}

// The transaxial part of one voxel column (ix, iy) in one view: channels [k0, k0 + nk) with
// weights f[] = F1(k) * dx / max(|cos phi|, |sin phi|), and what the axial part needs.
struct ColumnFootprint {
  int k0 = 0, nk = 0;
  double f[kMaxFootprintCells];
  double mag = 0;      // D / d_c: the voxel center's magnification
  double s2 = 0;       // D^2 + s_c^2: the axial amplitude's denominator (s_c the center's channel coordinate)
};

namespace detail {

// Integral of the unit-height trapezoid from -infinity to x.
GPSM_CT_HD inline double trapezoid_cdf(double x, const double t[4]) {
  if (x <= t[0]) return 0.0;
  const double rise = t[1] - t[0], flat = t[2] - t[1], fall = t[3] - t[2];
  if (x <= t[1]) return rise > 0 ? 0.5 * (x - t[0]) * (x - t[0]) / rise : 0.0;
  if (x <= t[2]) return 0.5 * rise + (x - t[1]);
  if (x < t[3]) return 0.5 * rise + flat + 0.5 * fall - 0.5 * (t[3] - x) * (t[3] - x) / fall;
  return 0.5 * rise + flat + 0.5 * fall;
}

GPSM_CT_HD inline void sort4(double t[4]) {
  for (int i = 1; i < 4; ++i)
    for (int j = i; j > 0 && t[j - 1] > t[j]; --j) {
      const double x = t[j];
      t[j] = t[j - 1];
      t[j - 1] = x;
    }
}

}  // namespace detail

// D / d_c for column (ix, iy): what column_footprint stores in fp.mag, alone (the GPU back
// projector asks for a column's z reach before it pays for the whole footprint).
GPSM_CT_HD inline double column_magnification(const Geometry& g, const ViewPose& p, int ix, int iy) {
  const double xc = g.x_center(ix), yc = g.y_center(iy);
  return g.source_detector / (g.source_radius - (xc * p.c + yc * p.s));
}

// Returns false when the column's shadow misses the detector (nk == 0 then).
GPSM_CT_HD inline bool column_footprint(const Geometry& g, const ViewPose& p, int ix, int iy, ColumnFootprint& fp) {
  const double R = g.source_radius, D = g.source_detector, h = 0.5 * g.dx;
  const double xc = g.x_center(ix), yc = g.y_center(iy);
  double tau[4];
  int n = 0;
  for (int a = -1; a <= 1; a += 2)
    for (int b = -1; b <= 1; b += 2) {
      const double x = xc + a * h, y = yc + b * h;
      const double d = R - (x * p.c + y * p.s);  // along the central ray, from the source
      const double u = -x * p.s + y * p.c;       // lateral, along the channel axis
      tau[n++] = D * u / d;
    }
  detail::sort4(tau);
  const double uc = -xc * p.s + yc * p.c;
  fp.mag = column_magnification(g, p, ix, iy);
  const double sc = uc * fp.mag;
  fp.s2 = D * D + sc * sc;
  // The ray through the center runs from the source (R c, R s) to the center: its direction's
  // components give |cos phi| and |sin phi| up to the common length.
  const double rx = xc - R * p.c, ry = yc - R * p.s;
  const double amp = g.dx * std::sqrt(rx * rx + ry * ry) / std::fmax(std::fabs(rx), std::fabs(ry));
  // channel k spans [(k - C/2) ds, (k + 1 - C/2) ds]
  const double ds = g.channel_size, half = 0.5 * g.channels;
  int k0 = static_cast<int>(std::floor(tau[0] / ds + half));
  int k1 = static_cast<int>(std::ceil(tau[3] / ds + half));  // exclusive
  if (k0 < 0) k0 = 0;
  if (k1 > g.channels) k1 = g.channels;
  fp.k0 = k0;
  fp.nk = k1 > k0 ? k1 - k0 : 0;
  if (fp.nk > kMaxFootprintCells) fp.nk = kMaxFootprintCells;  // validate() keeps shadows narrower
  double lo = detail::trapezoid_cdf((k0 - half) * ds, tau);
  for (int i = 0; i < fp.nk; ++i) {
    const double hi = detail::trapezoid_cdf((k0 + i + 1 - half) * ds, tau);
    fp.f[i] = amp * (hi - lo) / ds;
    lo = hi;
  }
  return fp.nk > 0;
}

// The voxels of the column a view's cone can reach: [iz0, iz1), conservatively (the rows'
// weights are zero outside).
GPSM_CT_HD inline void column_z_range(const Geometry& g, const ViewPose& p, double mag, int& iz0, int& iz1) {
  const double t_half = 0.5 * g.rows * g.row_size / mag;  // the detector's half height, at the column
  const double lo = (p.zs - t_half - 0.5 * g.dz) / g.dz + 0.5 * (g.nz - 1);
  const double hi = (p.zs + t_half + 0.5 * g.dz) / g.dz + 0.5 * (g.nz - 1);
  iz0 = static_cast<int>(std::fmax(0.0, std::floor(lo)));
  iz1 = static_cast<int>(std::fmin(static_cast<double>(g.nz), std::ceil(hi) + 1));
  if (iz1 < iz0) iz1 = iz0;
}
GPSM_CT_HD inline void column_z_range(const Geometry& g, const ViewPose& p, const ColumnFootprint& fp, int& iz0,
                                      int& iz1) {
  column_z_range(g, p, fp.mag, iz0, iz1);
}

// The voxels of the column whose rows can reach the detector rows [l0, l1) (a forward projection
// row tile): a voxel's rectangle [(z - dz/2 - zs) mag, (z + dz/2 - zs) mag] meets the tile
// [(l0 - rows/2) dt, (l1 - rows/2) dt] only if its center lies within dz/2 of the tile's edges
// brought back to the column; one voxel of margin each side absorbs rounding. voxel_rows still
// decides each voxel's rows exactly: this only skips voxels that cannot reach the tile.
GPSM_CT_HD inline void tile_z_range(const Geometry& g, const ViewPose& p, double mag, int l0, int l1, int& iz0,
                                    int& iz1) {
  const double t0 = (l0 - 0.5 * g.rows) * g.row_size / mag, t1 = (l1 - 0.5 * g.rows) * g.row_size / mag;
  const double lo = (p.zs + t0 - 0.5 * g.dz) / g.dz + 0.5 * (g.nz - 1);
  const double hi = (p.zs + t1 + 0.5 * g.dz) / g.dz + 0.5 * (g.nz - 1);
  iz0 = static_cast<int>(std::fmax(0.0, std::floor(lo) - 1));
  iz1 = static_cast<int>(std::fmin(static_cast<double>(g.nz), std::ceil(hi) + 2));
  if (iz1 < iz0) iz1 = iz0;
}

// The axial part for voxel iz of the column: rows [l0, l0 + nl) with weights w[] = F2(l) / cos theta.
// Returns nl (0: the voxel misses the detector in this view).
GPSM_CT_HD inline int voxel_rows(const Geometry& g, const ViewPose& p, const ColumnFootprint& fp, int iz, int& l0, double* w) {
  const double zc = g.z_center(iz);
  const double t0 = (zc - 0.5 * g.dz - p.zs) * fp.mag, t1 = (zc + 0.5 * g.dz - p.zs) * fp.mag;
  const double dt = g.row_size, half = 0.5 * g.rows;
  int a = static_cast<int>(std::floor(t0 / dt + half));
  int b = static_cast<int>(std::ceil(t1 / dt + half));  // exclusive
  if (a < 0) a = 0;
  if (b > g.rows) b = g.rows;
  if (b <= a) return 0;
  if (b - a > kMaxFootprintCells) b = a + kMaxFootprintCells;
  const double tc = 0.5 * (t0 + t1);
  const double sec = std::sqrt(1.0 + tc * tc / fp.s2);  // 1 / cos theta of the center ray
  for (int l = a; l < b; ++l) {
    const double e0 = (l - half) * dt, e1 = e0 + dt;
    const double cover = std::fmin(t1, e1) - std::fmax(t0, e0);
    w[l - a] = cover > 0 ? sec * cover / dt : 0.0;
  }
  l0 = a;
  return b - a;
}

}  // namespace gpsm::apps::ct
