#include "runtime/tracking.hpp"

#include <string>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"

namespace gpsm::gps {

std::vector<std::uint32_t> reduce_tracking(const std::vector<std::vector<std::uint32_t>>& touched,
                                           const std::vector<std::uint32_t>& before) {
  const std::uint64_t pages = before.size();
  const std::uint64_t words = (pages + 31) / 32;
  const int devices = static_cast<int>(touched.size());
  if (devices > kMaxDevices)
    throw Error("gpsm: access tracking got bitmaps of " + std::to_string(devices) + " devices; at most " +
                std::to_string(kMaxDevices) + " are supported");
  for (int d = 0; d < devices; ++d)
    if (touched[static_cast<std::size_t>(d)].size() < words)
      throw Error("gpsm: access tracking bitmap of device " + std::to_string(d) + " has " +
                  std::to_string(touched[static_cast<std::size_t>(d)].size()) + " words, but " +
                  std::to_string(pages) + " pages need " + std::to_string(words));

  std::vector<std::uint32_t> out(pages, 0);
  for (std::uint64_t p = 0; p < pages; ++p) {
    std::uint32_t m = 0;
    for (int d = 0; d < devices; ++d)
      if ((touched[static_cast<std::size_t>(d)][p / 32] >> (p % 32)) & 1u) m |= bit(d);
    if (m == 0) {
      // Nobody touched the page: keep the single copy at its old home.
      if (before[p] == 0)
        throw Error("gpsm: page " + std::to_string(p) +
                    " had no subscriber before tracking (corrupt subscription table)");
      const int home = __builtin_ctz(before[p]);
      if (home >= devices)
        throw Error("gpsm: page " + std::to_string(p) + " has its home on device " + std::to_string(home) +
                    ", but access tracking got bitmaps of only " + std::to_string(devices) + " devices");
      m = bit(home);
    }
    out[p] = m;
  }
  return out;
}

}  // namespace gpsm::gps
