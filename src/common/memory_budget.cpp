#include "common/memory_budget.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/sizes.hpp"
#include "gpsm/error.hpp"

namespace gpsm {

std::uint64_t host_memory_budget() {
  std::uint64_t budget = 0;
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb) {
    std::getline(f, unit);
    if (key == "MemAvailable:") {
      budget = kb * 1024;
      break;
    }
  }
  if (const char* lim = std::getenv("GPSM_MEMORY_LIMIT"); lim != nullptr && *lim != '\0') {
    std::uint64_t cap = 0;
    try {
      cap = parse_size(lim);
    } catch (const std::invalid_argument& e) {
      throw Error(std::string("gpsm: GPSM_MEMORY_LIMIT: ") + e.what() + "; set it to a size such as 8G or unset it");
    }
    if (budget == 0 || cap < budget) budget = cap;
  }
  return budget;
}

std::string format_bytes_approx(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (u < 6 && bytes >= 1000) {
    bytes /= 1000;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

void require_host_memory(double bytes, const std::string& what, const std::string& hint) {
  const std::uint64_t budget = host_memory_budget();
  if (budget == 0 || !(bytes > double(budget))) return;
  throw Error(what + " needs about " + format_bytes_approx(bytes) + " of host memory; this machine has " +
              format_bytes_approx(double(budget)) + " available" +
              (std::getenv("GPSM_MEMORY_LIMIT") ? " (GPSM_MEMORY_LIMIT)" : "") + "; " + hint);
}

}  // namespace gpsm
