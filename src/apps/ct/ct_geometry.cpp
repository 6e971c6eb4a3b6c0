#include "apps/ct/ct_geometry.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "common/split.hpp"

namespace gpsm::apps::ct {

namespace {

constexpr double kPi = 3.14159265358979323846;
// The seed's scanner: its detector's physical size stays fixed whatever the sampling.
constexpr double kDetectorWidth = 888 * 1.0239;   // mm
constexpr double kDetectorHeight = 64 * 1.0963;   // mm
constexpr double kFov = 512.0;                    // mm across
constexpr double kHelicalLength = 320.0;          // mm: 512 slices of 0.625 mm
constexpr int kMaxExtent = 4096;
constexpr int kMaxViews = 1 << 20;

// "AxBxC" -> three positive ints no larger than cap, or false.
bool parse_triple(const std::string& s, int out[3], int cap) {
  const std::vector<std::string> f = split_fields(s, 'x');
  if (f.size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (f[i].empty() || f[i].size() > 8 || f[i].find_first_not_of("0123456789") != std::string::npos) return false;
    const long v = std::stol(f[i]);
    if (v < 1 || v > cap) return false;
    out[i] = static_cast<int>(v);
  }
  return true;
}

[[noreturn]] void bad(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("bad --size '" + spec + "' for ct: " + why + "; use " + kSizeSyntax);
}

}  // namespace

double Geometry::angle(int v) const { return 2 * kPi * v / views_per_turn(); }

double Geometry::source_z(int v) const {
  if (orbit == Orbit::circular) return 0.0;
  // the source's z runs over turns * feed, centred on the image's center
  return feed_per_turn() * (v / views_per_turn() - 0.5 * turns);
}

std::string Geometry::label() const {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + ":" + std::to_string(views) + "x" +
         std::to_string(rows) + "x" + std::to_string(channels) + (orbit == Orbit::helical ? ":helical" : ":circular");
}

Geometry make_geometry(int nx, int ny, int nz, int views, int rows, int channels, Orbit orbit) {
  Geometry g;
  g.nx = nx, g.ny = ny, g.nz = nz;
  g.views = views, g.rows = rows, g.channels = channels;
  g.orbit = orbit;
  g.channel_size = kDetectorWidth / channels;
  g.row_size = kDetectorHeight / rows;
  g.dx = kFov / std::max(nx, ny);
  if (orbit == Orbit::helical) {
    g.dz = kHelicalLength / nz;
    g.turns = std::round((kHelicalLength + g.collimation()) / (g.pitch * g.collimation()));
  } else {
    g.dz = g.collimation() / nz;
    g.turns = 1;
    g.pitch = 0;
  }
  return g;
}

std::string validate(const Geometry& g) {
  if (g.nx < 1 || g.ny < 1 || g.nz < 1 || g.views < 1 || g.rows < 1 || g.channels < 1)
    return "every extent must be at least 1";
  if (!(g.dx > 0) || !(g.dz > 0) || !(g.row_size > 0) || !(g.channel_size > 0) || !(g.turns > 0))
    return "voxel, cell sizes and turns must be positive";
  // The image's farthest corner from the axis, plus a voxel: the source must stay outside it.
  const double r_img = std::hypot(0.5 * g.nx * g.dx, 0.5 * g.ny * g.dx) + g.dx;
  if (!(g.source_radius > r_img) || !(g.source_detector > g.source_radius))
    return "the source must lie outside the image and the detector beyond the isocenter";
  const double mag = g.source_detector / (g.source_radius - r_img);  // the largest magnification
  const double ch = std::sqrt(2.0) * g.dx * mag / g.channel_size + 2;
  const double rw = g.dz * mag / g.row_size + 2;
  if (ch > kMaxFootprintCells || rw > kMaxFootprintCells)
    return "a voxel's shadow spans up to " + std::to_string(static_cast<int>(std::max(ch, rw))) +
           " detector cells (at most " + std::to_string(kMaxFootprintCells) +
           "): use fewer voxels or more detector cells";
  return "";
}

Geometry parse_geometry(const std::string& spec) {
  if (spec == "small") return make_geometry(64, 64, 64, 288, 16, 96, Orbit::helical);
  if (spec == "medium") return make_geometry(256, 256, 256, 1814, 32, 444, Orbit::helical);
  if (spec == "seed") return make_geometry(512, 512, 512, 7256, 64, 888, Orbit::helical);
  const std::vector<std::string> parts = split_fields(spec, ':');
  if (parts.size() < 2 || parts.size() > 3) bad(spec, "expected a name or IMAGE:DETECTOR[:ORBIT]");
  int img[3], det[3];
  if (!parse_triple(parts[0], img, kMaxExtent))
    bad(spec, "image '" + parts[0] + "' is not NXxNYxNZ with each from 1 to " + std::to_string(kMaxExtent));
  if (!parse_triple(parts[1], det, kMaxViews) || det[1] > kMaxExtent || det[2] > kMaxExtent)
    bad(spec, "detector '" + parts[1] + "' is not VIEWSxROWSxCHANNELS (views up to " + std::to_string(kMaxViews) +
                  ", rows and channels up to " + std::to_string(kMaxExtent) + ")");
  Orbit orbit = Orbit::helical;
  if (parts.size() == 3) {
    if (parts[2] == "circular")
      orbit = Orbit::circular;
    else if (parts[2] != "helical")
      bad(spec, "unknown orbit '" + parts[2] + "' (helical or circular)");
  }
  const Geometry g = make_geometry(img[0], img[1], img[2], det[0], det[1], det[2], orbit);
  const std::string why = validate(g);
  if (!why.empty()) bad(spec, why);
  return g;
}

}  // namespace gpsm::apps::ct
