#include "apps/ct/ct_penalty.hpp"

#include "common/omp.hpp"

namespace gpsm::apps::ct {

double penalty_value(const Geometry& g, const Penalty& p, const float* x) {
  double total = 0;
  GPSM_OMP(parallel for reduction(+ : total) schedule(static))
  for (int iy = 0; iy < g.ny; ++iy)
    for (int ix = 0; ix < g.nx; ++ix)
      for (int iz = 0; iz < g.nz; ++iz) total += penalty_pairs(g, p, x, ix, iy, iz);
  return p.beta * total;
}

}  // namespace gpsm::apps::ct
