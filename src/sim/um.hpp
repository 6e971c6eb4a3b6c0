#pragma once
// The UM page model of gpsm sim's um and um_hints paradigms (docs/sim.md "Paradigm models": um):
// where each managed page lives, what each GPU did to it in an iteration, the faults that costs
// and how the driver batches them. Plain C++.
#include <cstdint>
#include <vector>


namespace gpsm::sim {

// UM thrashing mitigation, as the CUDA driver does it: a page that has moved between GPUs this
// many times is pinned where it is and mapped remotely for the others (their accesses then go
// over the link at access granularity, no more faults). Without it a shared boundary page
// ping-pongs every iteration: the model predicted 3x the measured um time on 4xH200
// (jacobi2d 4096^2, 2 and 4 GPUs). Only read-shared pages pin: a write-shared one (below) does not.
constexpr int kUmThrashMoves = 2;

// One managed allocation's pages.
struct UmPages {
  int alloc = -1;   // the trace's allocation
  std::uint64_t base = 0, bytes = 0;  // its address range
  std::uint64_t page = 65536;         // page size: page i starts at base + i * page
  int gpus = 1;
  std::uint64_t n = 0;
  std::vector<int> owner;           // um: where the page is now; um_hints: preferred location
  std::vector<int> moves;           // um: migrations between GPUs so far (read-shared pages pin at kUmThrashMoves)
  std::vector<double> load, store;  // bytes this iteration, [page * gpus + gpu]

  // ceil(bytes / page) pages, all on `home` until place_first_touch
  UmPages(int alloc, std::uint64_t base, std::uint64_t bytes, std::uint64_t page, int gpus, int home);
  void add(std::uint64_t i, int gpu, bool loaded, bool stored, double bytes);  // page i (clamped to the last)
  bool touched_by(std::uint64_t i, int g) const { return load[i * gpus + g] > 0 || store[i * gpus + g] > 0; }
  bool touched_by_other_than(std::uint64_t i, int g) const;
  // The GPU that stored most to page i this iteration, else loaded most; `fallback` if none.
  int decided_owner(std::uint64_t i, int fallback) const;
  // Stored by two GPUs or more this iteration. The driver keeps migrating such a page between its
  // writers every iteration (it is never pinned): 3D um split along y measured 11-21 ms per
  // iteration on 4xH200 where pinning after two moves predicted 1 ms.
  bool write_shared(std::uint64_t i) const;
  bool pinned(std::uint64_t i) const { return moves[i] >= kUmThrashMoves && !write_shared(i); }
  void place_first_touch();  // every page on its decided owner; counters cleared
  void end_iteration();      // ownership after an iteration (um); counters cleared
};

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
