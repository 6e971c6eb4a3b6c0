// The UM page model (sim/um.hpp).
#include "sim/um.hpp"

#include <algorithm>

namespace gpsm::sim {

UmPages::UmPages(int alloc_, std::uint64_t base_, std::uint64_t bytes_, std::uint64_t page_, int gpus_, int home)
    : alloc(alloc_), base(base_), bytes(bytes_), page(std::max<std::uint64_t>(page_, 1)), gpus(std::max(gpus_, 1)),
      n((bytes_ + page - 1) / page), owner(n, home), load(n * gpus, 0.0), store(n * gpus, 0.0),
      first(n * gpus, kUntouched), last(n * gpus, -kUntouched), holder(n, home), events(n, 0), last_move(n, -1.0), pinned_(n, 0) {}

void UmPages::add(std::uint64_t i, int gpu, bool loaded, bool stored, double b, double pos) {
  if (n == 0 || gpu < 0 || gpu >= gpus) return;
  i = std::min(i, n - 1);
  if (loaded) load[i * gpus + gpu] += b;
  if (stored) store[i * gpus + gpu] += b;
  first[i * gpus + gpu] = std::min(first[i * gpus + gpu], pos);
  last[i * gpus + gpu] = std::max(last[i * gpus + gpu], pos);
}

// GPU g touches page i at time t (uvm_perf_thrashing_get_hint, then thrashing_event_cb): a fault
// if g does not hold it. With `threshold` thrashing events and the last migration within the
// lapse, the fault pins the page; otherwise the page migrates to g, and the migration counts as
// a thrashing event if it follows the last one within the lapse, or resets a page that had
// reached the threshold if it does not.
void UmPages::fault(std::uint64_t i, int g, double t, const UmThrashing& th) {
  if (pinned_[i] || holder[i] == g) return;
  const double last = last_move[i];
  const bool within = last >= 0 && t - last <= th.lapse_s;
  if (events[i] >= th.threshold && within) {
    pinned_[i] = 1;
    return;
  }
  holder[i] = g;
  last_move[i] = t;
  if (within) ++events[i];
  else if (last >= 0 && events[i] >= th.threshold) events[i] = 0, last_move[i] = -1;
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
  for (std::uint64_t i = 0; i < n; ++i) holder[i] = owner[i] = decided_owner(i, owner[i]);
  clear_iteration();
}

void UmPages::end_iteration() {
  for (std::uint64_t i = 0; i < n; ++i)
    if (!pinned(i)) owner[i] = decided_owner(i, owner[i]);
  clear_iteration();
}

void UmPages::clear_iteration() {
  std::fill(load.begin(), load.end(), 0.0);
  std::fill(store.begin(), store.end(), 0.0);
  std::fill(first.begin(), first.end(), kUntouched);
  std::fill(last.begin(), last.end(), -kUntouched);
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
