#pragma once
// Who holds a replica of which page: one subscriber mask (bit d = device d) per page.
// Plain C++ (CPU-tested); the runtime uploads masks() to every device after each change.
#include <cstdint>
#include <vector>

#include "gpsm/gps/page_math.hpp"

namespace gpsm::gps {

// How one device's accesses to a run of pages go: what a launch asks on the host to pick, per work
// item, between its plain kernel and its GPS one (ArrayBase::reach_bytes), so that the checks a
// view makes per access are made once per subscription change instead of once per item.
enum class Reach : std::uint8_t {
  checked,  // the device lacks a page (its loads of it go to the home), or tracking is on: the view's checks
  shared,   // it holds every page and another device holds one: loads are local, stores must be published
  sole,     // it alone holds every page: plain loads and stores on its replica, nothing published
};

// The subscribers of a run of pages, asked on the host (ArrayBase::subscribers_bytes): `mask` is
// the devices holding every page of the run when all its pages have the same subscribers
// (`uniform`), which is what a device's View::span finds for that run; a kernel given the mask
// stores through View::span_with(mask) with no mask read of its own (the 3D apps' published planes).
struct RangeSubscribers {
  std::uint32_t mask = 0;
  bool uniform = false;
};

class SubscriptionTable {
 public:
  SubscriptionTable() = default;
  // Every device subscribed to every page (GPS's subscribed-by-default start).
  SubscriptionTable(std::uint64_t pages, int devices);

  std::uint64_t pages() const { return masks_.size(); }
  int devices() const { return devices_; }
  std::uint32_t mask(std::uint64_t page) const { return masks_.at(page); }
  // The page's home: its lowest-numbered subscriber. Atomics are performed there, and loads of
  // a device that is not subscribed are served from there.
  int home(std::uint64_t page) const;
  bool subscribed(std::uint64_t page, int device) const { return (mask(page) >> device) & 1u; }
  // A page with one subscriber is demoted: a plain local page, nothing is published.
  bool demoted(std::uint64_t page) const;
  const std::vector<std::uint32_t>& masks() const { return masks_; }
  // The devices subscribed to every page (the AND of all masks): such a device's loads are all
  // local, so its views may skip the per-page mask check (View::whole_local).
  std::uint32_t on_every_page() const;
  // The devices subscribed to any page (the OR of all masks): where it is one device that also
  // holds every page, nothing it stores is ever published (View::sole).
  std::uint32_t on_any_page() const;
  // The pages `device` subscribes to, as maximal runs in ascending order: after tracking, where
  // its kernels read and wrote. A kernel that keeps per-GPU state for the data it reads from
  // other GPUs (a solver's search direction at the columns its rows gather) sizes it from this.
  std::vector<PageRange> pages_of(int device) const;
  // How `device`'s accesses to the pages in range go (Reach; an empty range is sole).
  Reach reach(PageRange range, int device) const;
  // The subscribers of the pages in range (RangeSubscribers; an empty range is not uniform).
  RangeSubscribers subscribers(PageRange range) const;

  // Add `device` to the pages in range. Returns the pages it was not subscribed to before (whose
  // replica the runtime must fill from the home) as merged runs.
  std::vector<PageRange> subscribe(PageRange range, int device);
  // Remove `device` from the pages in range. If that would leave any page without a subscriber,
  // throws gpsm::Error naming the first such page and changes nothing.
  void unsubscribe(PageRange range, int device);
  // Collapse the pages to the single copy at their current home (GPS paper §5.3: pages that hold
  // system-scope synchronization variables).
  void demote(PageRange range);
  // Replace all masks (tracking results); each must be non-zero and name only existing devices.
  void assign(std::vector<std::uint32_t> masks);

  struct Summary {
    std::uint64_t replicated_pages = 0;  // two or more subscribers
    std::uint64_t demoted_pages = 0;     // exactly one
    std::vector<std::uint64_t> pages_per_device;
  };
  Summary summary() const;

 private:
  void check_range(PageRange r, int device, const char* what) const;
  std::vector<std::uint32_t> masks_;
  int devices_ = 0;
};

// Per page p: how many pages from p on (p included) have the same mask as p, so that a kernel
// checks a run of pages with two reads instead of one per page (View::span, View::local_span):
// pages p..q share p's subscribers exactly when q - p < runs[p]. Saturates at 2^32 - 1.
std::vector<std::uint32_t> same_mask_runs(const std::vector<std::uint32_t>& masks);

// Runs of pages where `device` is a subscriber in `after` but not in `before`.
std::vector<PageRange> added_ranges(const std::vector<std::uint32_t>& before, const std::vector<std::uint32_t>& after,
                                    int device);

}  // namespace gpsm::gps
