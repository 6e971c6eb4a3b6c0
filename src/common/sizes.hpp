#pragma once
// Byte sizes as people write them on command lines and in settings ("64K", "1MiB", "2G") and as
// the tools print them back ("64KiB"): one parser and one printer for the CLI, the runtime's
// settings and every results file.
#include <cstdint>
#include <string>

namespace gpsm {

// Throws std::invalid_argument naming the input for an empty, zero, unknown-suffix or too-large size.
std::uint64_t parse_size(const std::string& s);
// Largest binary unit that divides the size exactly: 65536 -> "64KiB", 1000 -> "1000B".
std::string format_size(std::uint64_t bytes);

}  // namespace gpsm
