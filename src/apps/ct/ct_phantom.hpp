#pragma once
// A deterministic 3D Shepp-Logan-like head phantom in Hounsfield units, voxelized on any grid.
//
// Attenuation from HU: mu = mu_water * (1 + HU / 1000), with mu_water = 0.0193 / mm (water near
// 70 keV); air is -1000 HU (mu = 0). The ellipsoids are the 3D Shepp-Logan's (Kak and Slaney's
// 2D phantom extended along z, as in the common "modified" 3D version), their values given as HU
// added inside each: a skull of +800 HU around 40 HU brain, ventricles near water, and small
// lesions of +/- 10 to 30 HU (the low-contrast detail a regularizer must keep). The head spans
// 0.69 x 0.92 of the half field of view across and 0.9 of the image's half length; voxels take
// the value at their center.
#include <vector>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

inline constexpr double kMuWater = 0.0193;  // 1/mm

inline double mu_from_hu(double hu) { return kMuWater * (1.0 + hu / 1000.0); }
inline double hu_from_mu(double mu) { return 1000.0 * (mu / kMuWater - 1.0); }

struct Ellipsoid {
  double cx, cy, cz;  // center, in units of the half extents (x, y: half field of view; z: half image length)
  double ax, ay, az;  // semi-axes, same units
  double phi;         // rotation about z, degrees
  double hu;          // HU added inside
};

// The phantom's ellipsoids, outermost first.
const std::vector<Ellipsoid>& phantom_ellipsoids();

// HU at a point given in the same normalized units (air outside: -1000).
double phantom_hu(double x, double y, double z);

// The phantom on g's grid as attenuation (1/mm), layout [iy][ix][iz].
std::vector<float> phantom_mu(const Geometry& g);

}  // namespace gpsm::apps::ct
