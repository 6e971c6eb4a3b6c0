#pragma once
// Automatic subscription (GPS paper §3.2, §5.2 access tracking unit): during a profiling phase every
// device sets bit p of its own bitmap when it loads, stores or performs an atomic on page p. At
// tracking_stop the bitmaps are reduced into new subscriber masks.
#include <cstdint>
#include <vector>

namespace gpsm::gps {

// touched[d]: device d's bitmap, one bit per page ((pages + 31) / 32 words each).
// Result: per page, the devices that touched it; a page nobody touched keeps only its old home
// (lowest bit of before[p]) so every page keeps one copy of its data.
std::vector<std::uint32_t> reduce_tracking(const std::vector<std::vector<std::uint32_t>>& touched,
                                           const std::vector<std::uint32_t>& before);

}  // namespace gpsm::gps
