#pragma once
// The pictures of a reconstruction (plain C++, CPU-tested): the central axial, coronal and
// sagittal slices of the phantom, the first iterate and the final image, in HU, and the cost and
// RMSE per iteration, written by `gpsm bench --app ct --pictures DIR` for `gpsm report` to draw
// (people look at CT; they don't read it). Two files per size:
//   ct-<label>.json  schema "gpsm.ct_slices": the geometry's label, voxel sizes, the slices'
//                    shapes and their order in the raw file, cost and RMSE per iteration;
//   ct-<label>.f32   the slices as little-endian float32, one after another, each row-major
//                    [rows][cols]: for each image (phantom, first, final) axial [y][x] at
//                    z = nz / 2, coronal [z][x] at y = ny / 2, sagittal [z][y] at x = nx / 2.
// <label> is the size with ':' and '@' made '_' (a file name every filesystem takes).
#include <string>
#include <vector>

#include "apps/ct/ct_geometry.hpp"

namespace gpsm::apps::ct {

struct Slice {
  std::string plane;  // "axial", "coronal", "sagittal"
  int rows = 0, cols = 0;
  std::vector<float> hu;  // [rows][cols]
};

// The three central slices of `mu` (g.voxels() attenuations, voxel_index order) in HU. Throws
// std::invalid_argument for a volume of another size.
std::vector<Slice> central_slices(const Geometry& g, const std::vector<float>& mu);

struct SlicePictures {
  std::string size;  // the --size text
  Geometry g;
  std::vector<float> phantom, first, final_image;  // attenuations (1/mm)
  int subsets = 0;
  std::vector<double> cost, rmse_hu;  // per iteration, the starting image first
};

// "ct-<label>" for the size text (see above).
std::string slices_stem(const std::string& size);

// Writes DIR/<stem>.json and DIR/<stem>.f32 (each whole or not at all), creating DIR; returns the
// JSON's path. Throws gpsm::Error "gpsm: ct pictures: <path>: <why>; <what to do>" when it cannot.
std::string write_slice_pictures(const std::string& dir, const SlicePictures& p);

}  // namespace gpsm::apps::ct
