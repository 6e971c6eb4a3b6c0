#pragma once
// Jacobi 2D on Unified Memory (um, um_hints) and on remote demand loads (rdl): the runs that
// jacobi_app_cuda.cpp drives like its other host-loop paradigms.
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/jacobi/jacobi_host_loop.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::jacobi {

// um: the grid in two managed allocations, each GPU initializes (first-touches) its own rows and
// sweeps them; halo rows fault and migrate on demand. hints: preferred location of each GPU's rows
// on it, accessed-by for the neighbours on its edge rows, prefetch before each solve; the hints
// are read back with cudaMemRangeGetAttribute (check() names the first one that did not stick).
std::unique_ptr<JacobiRun> make_um_run(gps::Context& ctx, const Problem& p, bool hints);

// rdl: per-GPU slabs without halo exchange: the sweep loads the neighbours' edge rows from their
// memory through peer pointers as it needs them (GPU-SM's remote demand loads).
std::unique_ptr<JacobiRun> make_rdl_run(gps::Context& ctx, const Problem& p);

}  // namespace gpsm::apps::jacobi
