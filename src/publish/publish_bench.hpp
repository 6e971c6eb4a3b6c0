#pragma once
// `gpsm publish` on the GPUs: the store kernels and the timed run loop (publish_bench.cu).
#include <string>
#include <vector>

#include "publish/publish_plan.hpp"

namespace gpsm::bench {

// Runs every (pattern, mode) of `cfg` (validated with validate_config first) in one gps::Context
// over cfg.devices. Per (pattern, mode): fill every replica, cfg.warmup untimed reps, cfg.reps
// timed reps (host wall clock: store launches on every GPU -> Context::fence() returned; `local`:
// -> every device idle), each checked on the devices; the last timed rep also checked word by
// word on the host from every replica; then one untimed rep with link counting on. A failed
// check or a CUDA error fails that (pattern, mode) with the reason and drops its times; the run
// goes on with the next one. Throws gpsm::Error only when the context cannot be set up.
std::vector<ModeResult> run_publish(const PublishConfig& cfg);

}  // namespace gpsm::bench
