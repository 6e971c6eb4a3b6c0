#pragma once
// The UM page model of gpsm sim's um and um_hints paradigms (docs/sim.md "Paradigm models": um):
// where each managed page lives, what each GPU did to it in an iteration, the faults that costs
// and how the driver batches them. Plain C++.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace gpsm::sim {

// UM thrashing mitigation, as the CUDA driver does it (nvidia-uvm uvm_perf_thrashing.c; the
// parameters read on the 4xH200 node, driver 580.159.04: uvm_perf_thrashing_lapse_usec 500,
// _threshold 3). A page's migration that follows its previous one within the lapse is a thrashing
// event; once a page has `threshold` of them, a fault on it within the lapse of its last
// migration pins it where it is and maps it remotely for the others (their accesses then cross
// the link at access granularity, no more faults; NVLink with native atomics takes this fast
// path at once). A migration after a longer gap resets a page that had reached the threshold
// unpinned. So a boundary page pins only if all its migrations come within the lapse of each
// other: jacobi2d um on 2 H200s pins at 8192^2 (175.9 us an iteration, um_hints 176.3) and keeps
// migrating at 11584^2 (593.1 against 317.7) and 16384^2 (857.2 against 612.1), where a page's
// migrations come two iterations apart. Not modelled: the pin's expiry (300 lapses, 150 ms) and
// the throttling phase of processors without the fast path (PCIe).
struct UmThrashing {
  double lapse_s = 500e-6;
  int threshold = 3;
};

// UmPages::first of a GPU that did not touch the page this iteration
inline constexpr double kUntouched = std::numeric_limits<double>::infinity();

// One managed allocation's pages.
struct UmPages {
  int alloc = -1;   // the trace's allocation
  std::uint64_t base = 0, bytes = 0;  // its address range
  std::uint64_t page = 65536;         // page size: page i starts at base + i * page
  int gpus = 1;
  std::uint64_t n = 0;
  std::vector<int> owner;           // um: where the page is now; um_hints: preferred location
  std::vector<double> load, store;  // bytes this iteration, [page * gpus + gpu]
  // When each GPU first and last touched the page this iteration (a position the engine maps to
  // a time: kernel ordinal + block / grid), [page * gpus + gpu]; first +inf: not touched
  std::vector<double> first, last;
  // The driver's view (UmThrashing): where the page is, its thrashing events, when it last
  // migrated (< 0: never, or reset), pinned
  std::vector<int> holder;
  std::vector<int> events;
  std::vector<double> last_move;
  std::vector<char> pinned_;

  // ceil(bytes / page) pages, all on `home` until place_first_touch
  UmPages(int alloc, std::uint64_t base, std::uint64_t bytes, std::uint64_t page, int gpus, int home);
  // page i (clamped to the last), touched at position `pos` of the iteration
  void add(std::uint64_t i, int gpu, bool loaded, bool stored, double bytes, double pos = 0);
  bool touched_by(std::uint64_t i, int g) const { return load[i * gpus + g] > 0 || store[i * gpus + g] > 0; }
  bool touched_by_other_than(std::uint64_t i, int g) const;
  // The GPU that stored most to page i this iteration, else loaded most; `fallback` if none.
  int decided_owner(std::uint64_t i, int fallback) const;
  // Stored by two GPUs or more this iteration (a GPU that loads and stores it faults twice).
  bool write_shared(std::uint64_t i) const;
  // Pinned by the driver, and not stored by two GPUs this iteration (such a page migrates between
  // its writers: driver_faults)
  bool pinned(std::uint64_t i) const { return pinned_[i] != 0 && !write_shared(i); }
  // This iteration's faults as the driver sees them, on the pages stored by one GPU at most:
  // - one GPU's touches all before another's (jacobi2d's edge rows: read by the neighbour at the
  //   end of its kernel, written back at the start of the next): each GPU's first touch of a
  //   page it does not hold, in time order (time_of(gpu, pos) in seconds), migrates it or, by
  //   the UmThrashing rule, pins it;
  // - touches of two GPUs that interleave in time (3D um split along y: both march the planes
  //   that hold a shared page at once) ping-pong it within microseconds, many migrations within
  //   the lapse: it pins.
  // A write-shared page never pins: 3D um split along y measured 11-21 ms per iteration on
  // 4xH200 where pinning predicted 1 ms (the driver's reason is not modelled; its throttling
  // phase, 500-us naps, would fit). Before um_faults: a page pinned here costs no migration.
  template <class TimeOf>
  void driver_faults(const TimeOf& time_of, const UmThrashing& th);
  void place_first_touch();  // every page on its decided owner; counters cleared
  void end_iteration();      // ownership after an iteration (um); counters cleared

 private:
  void fault(std::uint64_t i, int gpu, double t, const UmThrashing& th);
  void clear_iteration();  // this iteration's bytes and touch times
};

template <class TimeOf>
void UmPages::driver_faults(const TimeOf& time_of, const UmThrashing& th) {
  std::vector<std::pair<double, int>> order;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (pinned_[i] || write_shared(i)) continue;
    order.clear();
    bool overlap = false;  // two GPUs' touches of the page interleave in time
    for (int g = 0; g < gpus; ++g) {
      const double f = first[i * gpus + g], l = last[i * gpus + g];
      if (!(f < kUntouched)) continue;
      for (int h = 0; h < g; ++h)
        overlap = overlap || (first[i * gpus + h] < l && f < last[i * gpus + h]);
      order.emplace_back(time_of(g, f), g);
    }
    if (order.size() < 2 && (order.empty() || order[0].second == holder[i])) continue;
    if (overlap) {  // a ping-pong within the iteration: its migrations reach the threshold at once
      pinned_[i] = 1;
      continue;
    }
    // at one time the holder's touch first (it faults nothing), then the others by GPU
    std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      if ((a.second == holder[i]) != (b.second == holder[i])) return a.second == holder[i];
      return a.second < b.second;
    });
    for (const auto& [t, g] : order) fault(i, g, t, th);
  }
}

// What one GPU's accesses to managed pages cost in one iteration.
struct UmFaults {
  double faults = 0;    // page faults (each migrates a page to or from this GPU)
  double batches = 0;   // fault batches the driver services (fault_us each, one after another)
  double remote = 0;    // bytes accessed remotely on pinned pages (no faults)
};
// GPU g's faults this iteration, before end_iteration. A non-owner touching an unpinned page
// faults it over; its owner faults it back when the page ends the iteration there (two moves
// per iteration). A write-shared page that g both loads and stores faults twice on g (its loads
// and its stores are apart in time and the other writer takes the page in between).
// Batching: faults to contiguous pages (by address, across allocations that abut) are one batch
// that costs one fault_us; its further pages cost their migration on the link only. The start-up
// faults of 3D um along z (the neighbour's boundary planes: 4-8 contiguous pages) then cost 4-8x
// less than one 40-us fault each, which predicted 26-233 % over the measured runs; the batch cost
// (one isolated fault's, scope's um_fault_latency) is an estimate, not measured for a batch.
UmFaults um_faults(const std::vector<UmPages>& pages, int g);

}  // namespace gpsm::sim
