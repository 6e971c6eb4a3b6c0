#pragma once
// The pictures of a reconstruction (plain C++, CPU-tested): the central axial, coronal and
// sagittal slices of the phantom, the first iterate and the final image, in HU, and the cost and
// RMSE per iteration, written by `gpsm bench --app ct --pictures DIR` (people look at CT; they
// don't read it). Per size: the slices as PNGs to look at, and their values with the curves for
// `gpsm report` to draw as one figure and a cost plot:
//   ct-<label>.json  schema "gpsm.ct_slices": the geometry's label, voxel sizes, the slices'
//                    shapes and their order in the raw file, cost and RMSE per iteration;
//   ct-<label>.f32   the slices as little-endian float32, one after another, each row-major
//                    [rows][cols]: for each image (phantom, first, final) axial [y][x] at
//                    z = nz / 2, coronal [z][x] at y = ny / 2, sagittal [z][y] at x = nx / 2.
//   ct-<label>-<phantom|first|final>-<axial|coronal|sagittal>.png
//                    each slice as an 8-bit gray PNG in the brain window kSliceWindowHu, y and z
//                    upward (the filter app's PNG writer, stb_image_write), to look at directly.
// <label> is the size with ':' and '@' made '_' (a file name every filesystem takes).
#include <string>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/filter/filter_reference.hpp"

namespace gpsm::apps::ct {

struct Slice {
  std::string plane;  // "axial", "coronal", "sagittal"
  int rows = 0, cols = 0;
  std::vector<float> hu;  // [rows][cols]
};

// The three central slices of `mu` (g.voxels() attenuations, voxel_index order) in HU. Throws
// std::invalid_argument for a volume of another size.
std::vector<Slice> central_slices(const Geometry& g, const std::vector<float>& mu);

// The gray window of the PNGs: -100 HU black, 150 HU white (the phantom's 40 HU brain and its
// +/-10-30 HU lesions apart; skull white, air black). gpsm report's figure uses the same.
inline constexpr double kSliceWindowHu[2] = {-100.0, 150.0};

// A slice as a PNG image: (HU - low) / (high - low) (the writer clamps to [0, 1]), rows reversed.
filter::Image windowed(const Slice& s);

struct SlicePictures {
  std::string size;  // the --size text
  Geometry g;
  std::vector<float> phantom, first, final_image;  // attenuations (1/mm)
  int subsets = 0;
  std::vector<double> cost, rmse_hu;  // per iteration, the starting image first
};

// "ct-<label>" for the size text (see above).
std::string slices_stem(const std::string& size);

// Writes DIR/<stem>.json, DIR/<stem>.f32 and the nine PNGs (each whole or not at all), creating
// DIR; returns the JSON's path. Throws gpsm::Error naming the path and why when it cannot.
std::string write_slice_pictures(const std::string& dir, const SlicePictures& p);

}  // namespace gpsm::apps::ct
