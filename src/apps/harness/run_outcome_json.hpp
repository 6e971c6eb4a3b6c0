#pragma once
// One run's RunOutcome as JSON and back, whole and exact: how a `gpsm bench --isolate` child
// hands its run to the parent (isolated_run.hpp). Doubles keep every bit (the shortest text that
// reads back to the same value); the non-finite ones, which JSON lacks (`infinite`'s tolerance
// is +inf), travel as the strings "inf", "-inf" and "nan". A private format between one gpsm
// binary and itself, tagged kRunOutcomeFormat; not a results schema (docs/results-schema.md).
#include <nlohmann/json_fwd.hpp>

#include "apps/harness/app.hpp"

namespace gpsm::apps {

constexpr const char* kRunOutcomeFormat = "gpsm.run_outcome/1";

nlohmann::json run_outcome_to_json(const RunOutcome& o);
// Throws gpsm::Error naming the field that is missing or of the wrong type, or the format tag
// when it is not kRunOutcomeFormat.
RunOutcome run_outcome_from_json(const nlohmann::json& j);

}  // namespace gpsm::apps
