#pragma once
// Jacobi 2D with PROACT decoupled halo transfers (`gpsm bench --paradigm proact`): the sweep marks
// each edge row ready (a flag per row, set by the block that computed it after its barrier:
// PROACT dissertation Algorithm 1 with one writer block per chunk) and copy engines, waiting on the flags
// through stream memory operations (src/proact/stream_wait.hpp), ship the rows into the
// neighbours' halos while the interior is still being swept. No host round trip per row.
#include <memory>

#include "apps/harness/app.hpp"
#include "apps/jacobi/jacobi_host_loop.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::jacobi {

// Slabs, flags and a copy stream per GPU. Its check() says why the run cannot go (stream waits
// unsupported on a GPU: no silent fallback).
std::unique_ptr<JacobiRun> make_proact_run(gps::Context& ctx, const Problem& p);

}  // namespace gpsm::apps::jacobi
