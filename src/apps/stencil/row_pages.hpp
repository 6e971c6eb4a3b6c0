#pragma once
// The GPS page size for a row-major 2D grid of float rows split by rows over GPUs (jacobi2d's and
// the image filter's gps paradigms): pages that hold whole rows (a row's span is one subscriber
// check, and a page never holds rows of two GPUs); where no page of at least one line divides
// the row, pages of about one row.
#include <cstdint>

#include "gpsm/gps/page_math.hpp"

namespace gpsm::apps {

inline std::uint64_t gps_page_for_rows(std::int64_t row_floats) {
  const std::uint64_t row = static_cast<std::uint64_t>(row_floats) * sizeof(float);
  if (const std::uint64_t p = gps::page_bytes_for_runs(row); p != 0) return p;
  std::uint64_t page = 4096;
  while (page * 2 <= row && page < (2u << 20)) page *= 2;
  return page;
}

}  // namespace gpsm::apps
