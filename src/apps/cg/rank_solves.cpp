#include "apps/cg/rank_solves.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

Solve combine_rank_solves(const Plan& plan, std::int32_t cap, const std::vector<RankSolve>& ranks) {
  if (static_cast<int>(ranks.size()) != plan.ranks)
    throw gpsm::Error("gpsm: cg: " + std::to_string(ranks.size()) + " GPUs' results for a split over " +
                      std::to_string(plan.ranks));
  Solve s;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankSolve& g = ranks[r];
    const std::string who = "gpsm: cg: GPU " + std::to_string(r);
    if (g.iterations < 0 || g.iterations > cap) throw gpsm::Error(who + " did not record how many iterations it ran");
    if (g.rho.size() != static_cast<std::size_t>(g.iterations) + 1)
      throw gpsm::Error(who + " returned " + std::to_string(g.rho.size()) + " history entries for " +
                        std::to_string(g.iterations) + " iterations");
    if (g.x.size() != static_cast<std::size_t>(plan.rank[r].local_rows()))
      throw gpsm::Error(who + " returned " + std::to_string(g.x.size()) + " entries of x for its " +
                        std::to_string(plan.rank[r].local_rows()) + " rows");
    if (r == 0) {
      s.iterations = g.iterations;
      s.rho = g.rho;
    } else if (g.iterations != s.iterations ||
               std::memcmp(g.rho.data(), s.rho.data(), g.rho.size() * sizeof(double)) != 0) {
      throw gpsm::Error(who + "'s residual history differs from GPU 0's (every GPU must reduce to the same sums)");
    }
  }
  s.x.resize(static_cast<std::size_t>(plan.n));
  for (int r = 0; r < plan.ranks; ++r)
    std::copy(ranks[r].x.begin(), ranks[r].x.end(), s.x.begin() + plan.rank[r].rows.begin);
  return s;
}

}  // namespace gpsm::apps::cg
