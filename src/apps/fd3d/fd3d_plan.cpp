#include "apps/fd3d/fd3d_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpsm::apps::fd3d {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t d) { return (a + d - 1) / d; }
}  // namespace

double chunk_cost(std::int64_t planes, std::int64_t tiles, std::int64_t slots, std::int64_t len) {
  const std::int64_t items = tiles * ceil_div(planes, len);
  return static_cast<double>(ceil_div(items, std::max<std::int64_t>(1, slots))) *
         (static_cast<double>(len) + kPrimeSteps);
}

std::int64_t chunk_length(std::int64_t planes, std::int64_t tiles, int radius, std::int64_t slots) {
  if (planes < 1 || tiles < 1 || radius < 1) throw std::invalid_argument("gpsm: fd3d chunk_length: nothing to split");
  std::int64_t best = planes;
  double best_cost = -1;
  std::int64_t best_items = 0;
  for (std::int64_t want = 1; want <= planes; ++want) {
    const std::int64_t len = ceil_div(planes, want);
    if (want > 1 && len == ceil_div(planes, want - 1)) continue;  // the same split as before
    const std::int64_t items = tiles * ceil_div(planes, len);
    const double cost = chunk_cost(planes, tiles, slots, len);
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && items < best_items)) {
      best_cost = cost;
      best = len;
      best_items = items;
    }
  }
  return best;
}

Plan make_plan(const stencil3d::Box& b, int radius, std::int64_t slots) {
  for (int d = 0; d < 3; ++d)
    if (b.n[d] < 2 * radius + 1) throw std::invalid_argument("gpsm: fd3d make_plan: a box with no updated cell");
  Plan p;
  p.tiles[0] = ceil_div(b.n[0] - 2 * radius, kTx);
  p.tiles[1] = ceil_div(b.n[1] - 2 * radius, kTy);
  const std::int64_t planes = b.n[2] - 2 * radius;
  p.chunk = chunk_length(planes, p.tiles[0] * p.tiles[1], radius, slots);
  p.chunks = ceil_div(planes, p.chunk);
  p.items = p.tiles[0] * p.tiles[1] * p.chunks;
  p.edge = b.axis;
  return p;
}

}  // namespace gpsm::apps::fd3d
