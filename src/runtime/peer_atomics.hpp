#pragma once
// Native peer atomics, pair by pair. The device barrier's counters and atomics at a page's home
// copy are system-scope atomics on another GPU's memory; a peer link without native atomics
// (some PCIe set-ups) does not make them atomic. A context checks every ordered pair of its
// devices: the driver's attribute (cudaDevP2PAttrNativeAtomicSupported), then an actual
// cross-GPU atomic test (peer_atomic_test.cu). The pair logic is plain C++ so the CPU tests reach
// it with a fake attribute table.
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace gpsm::gps::detail {

// One ordered pair whose atomics failed: `from` performs atomics on `to`'s memory.
struct PeerAtomicGap {
  int from = 0;
  int to = 0;
  std::string why;  // "cudaDevP2PAttrNativeAtomicSupported = 0" or the test's finding
};

// Every ordered pair (a != b) of `devices` for which `native(a, b)` (the attribute: nonzero when
// a's atomics on b's memory are native) is 0, in the order of `devices`.
std::vector<PeerAtomicGap> pairs_without_native_atomics(const std::vector<int>& devices,
                                                        const std::function<int(int, int)>& native);

// The largest prefix-greedy subset of `devices` with no gap between any two of its members (the
// devices a user can keep): each device in order joins unless it has a gap with one already in.
std::vector<int> devices_without_gaps(const std::vector<int>& devices, const std::vector<PeerAtomicGap>& gaps);

// The context's error for `gaps` (non-empty): every pair and why, what needs the atomics, and
// what to do (the devices to keep, or GPSM_VERIFY_P2P=0 at the user's risk).
std::string peer_atomics_message(const std::vector<int>& devices, const std::vector<PeerAtomicGap>& gaps);

}  // namespace gpsm::gps::detail
