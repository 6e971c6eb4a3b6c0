// The UM page model (sim/um.hpp).
#include "sim/um.hpp"

#include <algorithm>

namespace gpsm::sim {

UmPages::UmPages(int alloc_, std::uint64_t base_, std::uint64_t bytes_, std::uint64_t page_, int gpus_, int home)
    : alloc(alloc_), base(base_), bytes(bytes_), page(std::max<std::uint64_t>(page_, 1)), gpus(std::max(gpus_, 1)),
      n((bytes_ + page - 1) / page), owner(n, home), moves(n, 0), load(n * gpus, 0.0), store(n * gpus, 0.0) {}

void UmPages::add(std::uint64_t i, int gpu, bool loaded, bool stored, double b) {
  if (n == 0 || gpu < 0 || gpu >= gpus) return;
  i = std::min(i, n - 1);
  if (loaded) load[i * gpus + gpu] += b;
  if (stored) store[i * gpus + gpu] += b;
}

bool UmPages::touched_by_other_than(std::uint64_t i, int g) const {
  for (int h = 0; h < gpus; ++h)
    if (h != g && touched_by(i, h)) return true;
  return false;
}

int UmPages::decided_owner(std::uint64_t i, int fallback) const {
  int best = -1;
  double bs = 0;
  for (int g = 0; g < gpus; ++g)
    if (store[i * gpus + g] > bs) bs = store[i * gpus + g], best = g;
  if (best >= 0) return best;
  for (int g = 0; g < gpus; ++g)
    if (load[i * gpus + g] > bs) bs = load[i * gpus + g], best = g;
  return best >= 0 ? best : fallback;
}

bool UmPages::write_shared(std::uint64_t i) const {
  int writers = 0;
  for (int g = 0; g < gpus; ++g) writers += store[i * gpus + g] > 0;
  return writers >= 2;
}

void UmPages::place_first_touch() {
  for (std::uint64_t i = 0; i < n; ++i) owner[i] = decided_owner(i, owner[i]);
  std::fill(load.begin(), load.end(), 0.0);
  std::fill(store.begin(), store.end(), 0.0);
}

void UmPages::end_iteration() {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (pinned(i)) continue;
    // A read-shared page another GPU faulted over this iteration moved (there, and back to its
    // writer or on to the next toucher): that counts toward the driver's thrashing detection. A
    // write-shared page keeps migrating: it never pins.
    if (!write_shared(i) && touched_by_other_than(i, owner[i])) ++moves[i];
    owner[i] = decided_owner(i, owner[i]);
  }
  std::fill(load.begin(), load.end(), 0.0);
  std::fill(store.begin(), store.end(), 0.0);
}

namespace {
// Batches among faults to pages starting at `at` (sorted here), pages of `page` bytes: a fault
// joins the batch of the one before when its page starts at most a page after that one's start
// (the next page, also across two allocations that abut).
double batches_of(std::vector<std::uint64_t>& at, std::uint64_t page) {
  std::sort(at.begin(), at.end());
  double n = 0;
  for (std::size_t k = 0; k < at.size(); ++k)
    if (k == 0 || at[k] > at[k - 1] + page) n += 1;
  return n;
}
}  // namespace

UmFaults um_faults(const std::vector<UmPages>& pages, int g) {
  UmFaults f;
  // Where each faulted page starts: `over`, the faults that bring a page over (or back); `again`,
  // the second fault of a write-shared page g loads and stores (its loads and its stores are apart
  // in time: wave3d loads a plane's previous values a step before it stores the plane, and the
  // other writer takes the page in between). Addresses, not page indices: the trace splits one
  // managed buffer into allocations by first-touch home (3D along z: one per rank's span), the
  // real buffer is one allocation, so a batch runs on into the allocation that starts where
  // another ends.
  std::vector<std::uint64_t> over, again;
  std::uint64_t page = 1;
  for (const UmPages& pg : pages) {
    if (g < 0 || g >= pg.gpus) continue;
    page = std::max(page, pg.page);
    for (std::uint64_t i = 0; i < pg.n; ++i) {
      if (!pg.touched_by(i, g)) continue;
      const int o0 = pg.owner[i];
      const double loaded = pg.load[i * pg.gpus + g], stored = pg.store[i * pg.gpus + g];
      if (pg.pinned(i)) {  // remote accesses, no faults
        if (g != o0) f.remote += loaded + stored;
        continue;
      }
      // a non-owner faults the page over; the owner faults it back when it ends there
      if (!(g != o0 || (pg.touched_by_other_than(i, o0) && pg.decided_owner(i, o0) == o0))) continue;
      over.push_back(pg.base + i * pg.page);
      if (pg.write_shared(i) && loaded > 0 && stored > 0) again.push_back(pg.base + i * pg.page);
    }
  }
  f.faults = double(over.size() + again.size());
  f.batches = batches_of(over, page) + batches_of(again, page);
  return f;
}

}  // namespace gpsm::sim
