#pragma once
// The GPU side of a bench run's memory check: the app's estimate per GPU (App::gpu_bytes_per_gpu)
// against the free memory cudaMemGetInfo reports, so a size the GPUs cannot hold fails its run
// with the figure instead of a CUDA out-of-memory error part way through setting up.
#include <string>
#include <vector>

#include "apps/harness/app.hpp"

namespace gpsm::apps {

// The least free memory in bytes among `devices` (cudaMemGetInfo on each); 0 where not known.
double gpu_free_bytes(const std::vector<int>& devices);

// gpu_memory_refusal's line for app running p in paradigm `par` on `devices`; "" where it fits or
// either side is not known.
std::string gpu_memory_check(const App& app, const Problem& p, Paradigm par, const std::vector<int>& devices);

}  // namespace gpsm::apps
