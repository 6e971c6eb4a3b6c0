#pragma once
// Jacobi 2D on GPS memory (`gpsm bench --paradigm gps`), written the way a user of the public API
// would: the whole grid in two replicated arrays, one persistent kernel per GPU over its rows with
// the runtime's device fence between iterations (the CPU-free model on GPS memory), and the
// subscriptions learned by tracking the first two iterations of an untimed pass. No transfer code.
#include <memory>

#include "apps/harness/app.hpp"
#include "apps/jacobi/jacobi_host_loop.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::jacobi {

std::unique_ptr<JacobiRun> make_gps_run(gps::Context& ctx, const Problem& p);

}  // namespace gpsm::apps::jacobi
