// The CT app's geometry: the named sizes (the seed's case study among them), the --size syntax and
// its errors, and the helix the derived fields describe.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "apps/ct/ct_geometry.hpp"

using namespace gpsm::apps::ct;

namespace {

std::string error_of(const std::string& spec) {
  try {
    parse_geometry(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(CtGeometry, SeedSizeIsTheCaseStudy) {
  const Geometry g = parse_geometry("seed");
  EXPECT_EQ(g.nx, 512);
  EXPECT_EQ(g.ny, 512);
  EXPECT_EQ(g.nz, 512);
  EXPECT_EQ(g.views, 7256);
  EXPECT_EQ(g.rows, 64);
  EXPECT_EQ(g.channels, 888);
  EXPECT_EQ(g.orbit, Orbit::helical);
  EXPECT_DOUBLE_EQ(g.turns, 9);
  EXPECT_DOUBLE_EQ(g.pitch, 63.0 / 64.0);
  EXPECT_DOUBLE_EQ(g.dx, 1.0);     // 512 mm field of view
  EXPECT_DOUBLE_EQ(g.dz, 0.625);   // 0.625 mm slices
  EXPECT_NEAR(g.collimation(), 40.0, 0.01);
  EXPECT_NEAR(g.channel_size, 1.0239, 1e-12);
  EXPECT_EQ(g.label(), "512x512x512:7256x64x888:helical");
  EXPECT_EQ(validate(g), "");
}

TEST(CtGeometry, NamedAndExplicitSizes) {
  const Geometry s = parse_geometry("small");
  EXPECT_EQ(s.label(), "64x64x64:288x16x96:helical");
  EXPECT_EQ(parse_geometry("64x64x64:288x16x96").label(), s.label());  // helical by default
  EXPECT_EQ(parse_geometry("medium").label(), "256x256x256:1814x32x444:helical");
  const Geometry c = parse_geometry("32x16x8:48x8x48:circular");
  EXPECT_EQ(c.nx, 32);
  EXPECT_EQ(c.ny, 16);
  EXPECT_EQ(c.orbit, Orbit::circular);
  EXPECT_DOUBLE_EQ(c.turns, 1);
  EXPECT_DOUBLE_EQ(c.source_z(0), 0.0);
  EXPECT_NEAR(c.nz * c.dz, c.collimation(), 1e-9);  // the image fills the cone at the isocenter
}

TEST(CtGeometry, BadSpecsSayWhyAndWhatToUse) {
  for (const char* bad : {"", "huge", "64x64", "64x64x64", "64x64x64:288x16", "64x64x0:288x16x96", "64xx64:1x1x1",
                          "64x64x64:288x16x96:spiral", "64x64x64:288x16x96:helical:x", "-4x4x4:4x4x4"}) {
    const std::string e = error_of(bad);
    EXPECT_NE(e.find("bad --size '" + std::string(bad) + "' for ct: "), std::string::npos) << bad << ": " << e;
    EXPECT_NE(e.find(kSizeSyntax), std::string::npos) << e;
  }
  EXPECT_NE(error_of("64x64x64:288x16x96:spiral").find("unknown orbit 'spiral'"), std::string::npos);
  // 64 mm voxels on 0.2 mm channels or 0.03 mm rows: a voxel's shadow would be far wider than the
  // footprint arrays
  EXPECT_NE(error_of("8x8x8:10x16x4096").find("detector cells"), std::string::npos);
  EXPECT_NE(error_of("8x8x8:10x2048x96").find("detector cells"), std::string::npos);
}

TEST(CtGeometry, HelixAdvancesPitchTimesCollimationPerTurnCentredOnTheImage) {
  const Geometry g = parse_geometry("seed");
  const double feed = g.pitch * g.collimation();
  EXPECT_NEAR(g.feed_per_turn(), 39.37, 0.01);
  EXPECT_NEAR(g.source_z(0), -0.5 * g.turns * feed, 1e-9);
  // one turn later: one feed higher, same angle
  const int per_turn = 806;  // 7256 / 9 = 806.2 views per turn
  EXPECT_NEAR(g.source_z(per_turn) - g.source_z(0), feed * per_turn / g.views_per_turn(), 1e-9);
  EXPECT_NEAR(std::fmod(g.angle(g.views), 2 * M_PI), 0.0, 1e-9);  // 9 whole turns
  // the helix spans the image and one collimation more
  EXPECT_GE(g.turns * feed, g.nz * g.dz);
}
