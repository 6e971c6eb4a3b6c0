#include "apps/fd3d/fd3d_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t d) { return (a + d - 1) / d; }

// When the last of n1 items of cost c1 and then n2 of cost c2 ends, each taken in order by the
// first free of `slots` blocks. Items of one cost start in groups at the same times, so the free
// times are kept as (time, blocks) groups: a few per wave.
double makespan(std::int64_t slots, std::int64_t n1, double c1, std::int64_t n2, double c2) {
  std::map<double, std::int64_t> free{{0.0, std::max<std::int64_t>(1, slots)}};
  double end = 0;
  auto place = [&](std::int64_t n, double cost) {
    while (n > 0) {
      const auto it = free.begin();
      const double t = it->first;
      const std::int64_t k = std::min(n, it->second);
      if ((it->second -= k) == 0) free.erase(it);
      free[t + cost] += k;
      end = std::max(end, t + cost);
      n -= k;
    }
  };
  place(n1, c1);
  place(n2, c2);
  return end;
}
}  // namespace

double chunk_cost(std::int64_t planes, std::int64_t tiles, std::int64_t slots, std::int64_t len,
                  std::int64_t edge_tiles, double edge_cost) {
  const std::int64_t chunks = ceil_div(planes, len), edge = std::clamp<std::int64_t>(edge_tiles, 0, tiles);
  const double step = static_cast<double>(len);
  return makespan(slots, edge * chunks, edge_cost * step + kPrimeSteps, (tiles - edge) * chunks, step + kPrimeSteps);
}

std::int64_t chunk_length(std::int64_t planes, std::int64_t tiles, int radius, std::int64_t slots,
                          std::int64_t edge_tiles, double edge_cost) {
  if (planes < 1 || tiles < 1 || radius < 1) throw std::invalid_argument("gpsm: fd3d chunk_length: nothing to split");
  std::int64_t best = planes;
  double best_cost = -1;
  std::int64_t best_items = 0;
  for (std::int64_t want = 1; want <= planes; ++want) {
    const std::int64_t len = ceil_div(planes, want);
    if (want > 1 && len == ceil_div(planes, want - 1)) continue;  // the same split as before
    const std::int64_t items = tiles * ceil_div(planes, len);
    const double cost = chunk_cost(planes, tiles, slots, len, edge_tiles, edge_cost);
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && items < best_items)) {
      best_cost = cost;
      best = len;
      best_items = items;
    }
  }
  return best;
}

Plan make_plan(const stencil3d::Box& b, int radius, std::int64_t slots, int remote_faces) {
  for (int d = 0; d < 3; ++d)
    if (b.n[d] < 2 * radius + 1) throw std::invalid_argument("gpsm: fd3d make_plan: a box with no updated cell");
  Plan p;
  p.tiles[0] = ceil_div(b.n[0] - 2 * radius, kTx);
  p.tiles[1] = ceil_div(b.n[1] - 2 * radius, kTy);
  const std::int64_t planes = b.n[2] - 2 * radius;
  const std::int64_t edge_tiles = b.axis < 2 ? static_cast<std::int64_t>(remote_faces) * p.tiles[1 - b.axis] : 0;
  p.chunk = chunk_length(planes, p.tiles[0] * p.tiles[1], radius, slots, edge_tiles, kRemoteApronStep);
  p.chunks = ceil_div(planes, p.chunk);
  p.items = p.tiles[0] * p.tiles[1] * p.chunks;
  p.edge = b.axis;
  return p;
}

RdlLaunch parse_rdl_launch(const char* text) {
  const std::string v = text == nullptr ? "" : text;
  if (v.empty() || v == "auto") return RdlLaunch::automatic;
  if (v == "split") return RdlLaunch::split;
  if (v == "one") return RdlLaunch::one;
  throw gpsm::Error("gpsm: GPSM_FD3D_RDL_LAUNCH='" + v +
                    "' is not a launch of fd3d's rdl step; use auto (the default: one along x and y, split along z), "
                    "split (the items near a halo in the kernel picking each load's block, the rest in the plain one) "
                    "or one (all items in the picking kernel)");
}

RdlLaunch resolve_rdl_launch(RdlLaunch l, int axis) {
  if (l != RdlLaunch::automatic) return l;
  return axis == 2 ? RdlLaunch::split : RdlLaunch::one;
}

RdlLaunch rdl_launch_from_env() { return parse_rdl_launch(std::getenv("GPSM_FD3D_RDL_LAUNCH")); }

}  // namespace gpsm::apps::fd3d
