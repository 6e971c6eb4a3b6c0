#pragma once
// What a request may allocate on the host: checked against the machine before allocating, so an
// impossible request (a file header declaring billions of rows, a huge queue) is refused with
// the figure instead of ending in std::bad_alloc or the kernel's OOM killer.
#include <cstdint>
#include <string>

namespace gpsm {

// Bytes the host can still give: MemAvailable from /proc/meminfo, capped by GPSM_MEMORY_LIMIT
// (a size such as 8G) where set; 0 where neither is known.
std::uint64_t host_memory_budget();

// Throws gpsm::Error "<what> needs about <bytes>; this machine has <budget> available; <hint>"
// when bytes exceed the budget (nothing is checked where the budget is unknown).
void require_host_memory(double bytes, const std::string& what, const std::string& hint);

// "5.9 GB": a byte count for messages.
std::string format_bytes_approx(double bytes);

}  // namespace gpsm
