// The CT pictures' data (ct_slices.hpp): which voxels each central slice holds, in HU, and the
// files `gpsm report` reads: the index's offsets and shapes find every slice in the raw file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_phantom.hpp"
#include "apps/ct/ct_slices.hpp"
#include "apps/filter/png_io.hpp"
#include "test_support.hpp"

using namespace gpsm::apps::ct;

namespace {
// mu whose HU names the voxel: ix + 100 iy + 10000 iz (exact in float at these extents).
std::vector<float> coded(const Geometry& g) {
  std::vector<float> mu(static_cast<std::size_t>(g.voxels()));
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      for (int iz = 0; iz < g.nz; ++iz)
        mu[static_cast<std::size_t>(g.voxel_index(ix, iy, iz))] =
            static_cast<float>(mu_from_hu(ix + 100.0 * iy + 10000.0 * iz));
  return mu;
}
double code(int ix, int iy, int iz) { return ix + 100.0 * iy + 10000.0 * iz; }
}  // namespace

TEST(CtSlices, CentralPlanesInHuRowMajor) {
  const Geometry g = make_geometry(6, 5, 4, 32, 8, 48, Orbit::helical);
  const std::vector<Slice> s = central_slices(g, coded(g));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].plane, "axial");
  EXPECT_EQ(s[0].rows, 5);
  EXPECT_EQ(s[0].cols, 6);
  EXPECT_EQ(s[1].plane, "coronal");
  EXPECT_EQ(s[1].rows, 4);
  EXPECT_EQ(s[1].cols, 6);
  EXPECT_EQ(s[2].plane, "sagittal");
  EXPECT_EQ(s[2].rows, 4);
  EXPECT_EQ(s[2].cols, 5);
  const double tol = 0.05;  // HU through float mu and back
  EXPECT_NEAR(s[0].hu[3 * 6 + 4], code(4, 3, 2), tol);  // axial [y][x] at z = 2
  EXPECT_NEAR(s[1].hu[1 * 6 + 5], code(5, 2, 1), tol);  // coronal [z][x] at y = 2
  EXPECT_NEAR(s[2].hu[3 * 5 + 4], code(3, 4, 3), tol);  // sagittal [z][y] at x = 3
  EXPECT_THROW(central_slices(g, std::vector<float>(7)), std::invalid_argument);
}

TEST(CtSlices, FilesIndexEverySliceOfEveryImage) {
  gpsm::test::TmpDir tmp;
  SlicePictures p;
  p.size = "6x5x4:32x8x48:helical@subsets=4";
  p.g = make_geometry(6, 5, 4, 32, 8, 48, Orbit::helical);
  p.phantom = coded(p.g);
  p.first = p.phantom;
  for (float& v : p.first) v *= 0.5f;
  p.final_image = std::vector<float>(p.phantom.size(), static_cast<float>(kMuWater));  // 0 HU
  p.subsets = 4;
  p.cost = {10, 5, 4};
  p.rmse_hu = {1000, 100, 50};
  const std::string json_path = write_slice_pictures(tmp.path("pics"), p);
  EXPECT_EQ(json_path, tmp.path("pics") + "/ct-6x5x4_32x8x48_helical_subsets_4.json");
  std::ifstream jf(json_path);
  const nlohmann::json j = nlohmann::json::parse(jf);
  EXPECT_EQ(j["schema"], "gpsm.ct_slices");
  EXPECT_EQ(j["size"], p.size);
  EXPECT_EQ(j["cost"].size(), 3u);
  EXPECT_EQ(j["rmse_hu"][2], 50);
  std::ifstream rf(tmp.path("pics") + "/" + j["raw"].get<std::string>(), std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(rf)), std::istreambuf_iterator<char>());
  ASSERT_EQ(j["slices"].size(), 9u);
  std::size_t total = 0;
  for (const auto& s : j["slices"]) total += s["rows"].get<std::size_t>() * s["cols"].get<std::size_t>() * 4;
  EXPECT_EQ(raw.size(), total);
  const auto at = [&](const nlohmann::json& s, int r, int c) {
    float v;
    std::memcpy(&v, raw.data() + s["offset"].get<std::size_t>() + 4 * (r * s["cols"].get<std::size_t>() + c), 4);
    return static_cast<double>(v);
  };
  const nlohmann::json& first_axial = j["slices"][3];
  EXPECT_EQ(first_axial["image"], "first iterate");
  EXPECT_EQ(first_axial["plane"], "axial");
  EXPECT_NEAR(at(first_axial, 3, 4), 0.5 * (code(4, 3, 2) + 1000) - 1000, 0.05);  // mu halved
  const nlohmann::json& final_sagittal = j["slices"][8];
  EXPECT_EQ(final_sagittal["image"], "final image");
  EXPECT_NEAR(at(final_sagittal, 1, 1), 0.0, 1e-3);
  EXPECT_TRUE(tmp.others({"pics"}).empty());
  // the PNGs: one per slice, its shape, the window (the final image's 0 HU is 100 / 250 of white)
  const std::string png = tmp.path("pics") + "/" + final_sagittal["png"].get<std::string>();
  EXPECT_EQ(final_sagittal["png"], "ct-6x5x4_32x8x48_helical_subsets_4-final-sagittal.png");
  const gpsm::apps::filter::Image im = gpsm::apps::filter::read_png_gray(png);
  EXPECT_EQ(im.width, 5);
  EXPECT_EQ(im.height, 4);
  EXPECT_NEAR(im.px[0], std::round(255 * 100.0 / 250) / 255, 1e-6);
  std::size_t pngs = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.path("pics"))) pngs += e.path().extension() == ".png";
  EXPECT_EQ(pngs, 9u);
}

// The PNG's rows run upward (the slice's last row first) through the window [-100, 150] HU.
TEST(CtSlices, WindowedRowsUpwardAndClamped) {
  Slice s{"coronal", 2, 3, {-1000, -100, 25, 150, 400, 0}};
  const gpsm::apps::filter::Image im = windowed(s);
  EXPECT_EQ(im.width, 3);
  EXPECT_EQ(im.height, 2);
  EXPECT_FLOAT_EQ(im.px[0], 1.0f);    // slice row 1: 150 HU
  EXPECT_FLOAT_EQ(im.px[1], 2.0f);    // 400 HU (the writer clamps)
  EXPECT_FLOAT_EQ(im.px[2], 0.4f);    // 0 HU
  EXPECT_FLOAT_EQ(im.px[3], -3.6f);   // slice row 0: air
  EXPECT_FLOAT_EQ(im.px[4], 0.0f);
  EXPECT_FLOAT_EQ(im.px[5], 0.5f);
}
