#include "apps/fd3d/fd3d_gps_layout.hpp"

#include <cstdlib>
#include <string>

#include "apps/fd3d/fd3d_layout.hpp"  // box_of
#include "apps/stencil3d/stencil3d_gps_pages.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/page_math.hpp"

namespace gpsm::apps::fd3d {

namespace {

Piece global_of(const Slab3D& s, const float* volume) {
  const int a = static_cast<int>(s.axis);
  const std::int64_t sy = s.n[0], sz = s.n[0] * s.n[1];
  const std::int64_t stride = a == 0 ? 1 : a == 1 ? sy : sz;
  return Piece{volume, sy, sz, (s.first - s.radius) * stride};
}

}  // namespace

Piece global_piece(const Slab3D& s, const float* volume) { return global_of(s, volume); }

Sink global_sink(const Slab3D& s, float* volume) {
  const Piece p = global_of(s, volume);
  return Sink{volume, p.sy, p.sz, p.off};
}

FdStep replica_step(const Slab3D& s, const float* in, float* out) {
  FdStep st;
  st.in.mid = global_piece(s, in);
  st.out = global_sink(s, out);
  st.box = box_of(s);
  st.radius = s.radius;
  st.w = fd_weights(s.radius);
  return st;
}

std::uint64_t fd_gps_page_bytes(const std::int64_t n[3], int axis, int radius) {
  const auto unit = static_cast<std::uint64_t>(axis == 0 ? 1 : axis == 1 ? n[0] : n[0] * n[1]);
  if (const std::uint64_t page = gps::page_bytes_for_runs(unit * sizeof(float)); page != 0) return page;
  return stencil3d::gps_page_bytes(n, axis, radius);
}

std::array<CellBox, 3> read_boxes(const Slab3D& s) {
  const int a = static_cast<int>(s.axis), r = s.radius;
  CellBox upd;
  for (int d = 0; d < 3; ++d) {
    upd.lo[d] = d == a ? s.first : r;
    upd.hi[d] = d == a ? s.first + s.count : s.n[d] - r;
  }
  std::array<CellBox, 3> out;
  for (int d = 0; d < 3; ++d) {
    out[d] = upd;
    out[d].lo[d] -= r;
    out[d].hi[d] += r;
  }
  return out;
}

std::vector<CellBox> published_boxes(const Slab3D& s, const PublishedPlanes& pub) {
  const int a = static_cast<int>(s.axis);
  std::vector<CellBox> out;
  for (const PublishedPlanes::Run& run : pub.runs) {
    CellBox box;
    for (int d = 0; d < 3; ++d) {
      box.lo[d] = d == a ? s.first + (run.begin - s.radius) : s.radius;  // box coordinate -> global plane
      box.hi[d] = d == a ? s.first + (run.end - s.radius) : s.n[d] - s.radius;
    }
    out.push_back(box);
  }
  return out;
}

GpsStepChoice parse_gps_step_choice(const char* text) {
  const std::string v = text == nullptr ? "" : text;
  if (v.empty() || v == "auto") return GpsStepChoice::automatic;
  if (v == "copies") return GpsStepChoice::copies;
  if (v == "items") return GpsStepChoice::items;
  if (v == "checked") return GpsStepChoice::checked;
  throw gpsm::Error("gpsm: GPSM_FD3D_GPS_STEP='" + v +
                    "' is not a step of fd3d's gps paradigm; use auto (the default), copies (the hand-written step, its "
                    "published planes copied after it), items (the tile kernel asking per work item) or checked (every "
                    "load and store through the views)");
}

GpsStepChoice gps_step_choice_from_env() { return parse_gps_step_choice(std::getenv("GPSM_FD3D_GPS_STEP")); }

}  // namespace gpsm::apps::fd3d
