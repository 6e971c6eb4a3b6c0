// Pair logic of the native peer atomics check (runtime/peer_atomics.hpp).
#include "runtime/peer_atomics.hpp"

#include <algorithm>

namespace gpsm::gps::detail {

std::vector<PeerAtomicGap> pairs_without_native_atomics(const std::vector<int>& devices,
                                                        const std::function<int(int, int)>& native) {
  std::vector<PeerAtomicGap> gaps;
  for (int a : devices)
    for (int b : devices)
      if (a != b && native(a, b) == 0) gaps.push_back({a, b, "cudaDevP2PAttrNativeAtomicSupported = 0"});
  return gaps;
}

std::vector<int> devices_without_gaps(const std::vector<int>& devices, const std::vector<PeerAtomicGap>& gaps) {
  auto gap = [&](int a, int b) {
    return std::any_of(gaps.begin(), gaps.end(), [&](const PeerAtomicGap& g) {
      return (g.from == a && g.to == b) || (g.from == b && g.to == a);
    });
  };
  std::vector<int> keep;
  for (int d : devices)
    if (std::none_of(keep.begin(), keep.end(), [&](int k) { return gap(d, k); })) keep.push_back(d);
  return keep;
}

std::string peer_atomics_message(const std::vector<int>& devices, const std::vector<PeerAtomicGap>& gaps) {
  std::string pairs;
  for (const PeerAtomicGap& g : gaps)
    pairs += (pairs.empty() ? "" : "; ") + ("device " + std::to_string(g.from) + " on device " + std::to_string(g.to) +
                                            "'s memory: " + g.why);
  const std::vector<int> keep = devices_without_gaps(devices, gaps);
  std::string list;
  for (int d : keep) list += (list.empty() ? "" : ",") + std::to_string(d);
  return "gpsm: peer atomics are not native between these GPUs (" + pairs +
         "); the device barrier and atomics at a page's home copy on another GPU need them; run with --devices " +
         list + (keep.size() < 2 ? " (no two of these GPUs have them)" : "") +
         ", or set GPSM_VERIFY_P2P=0 to skip this check at your own risk (those atomics may then lose updates)";
}

}  // namespace gpsm::gps::detail
