#include "gpsm/gps/subscription.hpp"

#include <cstdio>
#include <string>

#include "gpsm/error.hpp"
#include "runtime/finepack.hpp"

namespace gpsm::gps {

namespace {

std::string range_str(PageRange r) {
  return "[" + std::to_string(r.first) + ", " + std::to_string(r.last) + ")";
}

// Lowest set bit; the caller guarantees mask != 0.
int lowest_bit(std::uint32_t mask) { return __builtin_ctz(mask); }

// Appends page p to merged runs.
void append_page(std::vector<PageRange>& runs, std::uint64_t p) {
  if (!runs.empty() && runs.back().last == p)
    runs.back().last = p + 1;
  else
    runs.push_back({p, p + 1});
}

void check_pages(PageRange r, std::uint64_t pages, const char* what) {
  if (r.first > r.last)
    throw Error(std::string("gpsm: cannot ") + what + " pages " + range_str(r) +
                ": the range is reversed (first > last)");
  if (r.last > pages)
    throw Error(std::string("gpsm: cannot ") + what + " pages " + range_str(r) + ": the allocation has only " +
                std::to_string(pages) + " pages");
}

std::string hex(std::uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", m);
  return buf;
}

std::uint32_t all_devices(int devices) { return devices >= 32 ? ~0u : ((1u << devices) - 1u); }

}  // namespace

SubscriptionTable::SubscriptionTable(std::uint64_t pages, int devices) : devices_(devices) {
  if (devices < 1 || devices > kMaxDevices)
    throw Error("gpsm: a subscription table needs 1 to " + std::to_string(kMaxDevices) + " devices, got " +
                std::to_string(devices) + " (kMaxDevices bounds the subscriber masks)");
  masks_.assign(pages, all_devices(devices));
}

int SubscriptionTable::home(std::uint64_t page) const {
  if (page >= masks_.size())
    throw Error("gpsm: page " + std::to_string(page) + " is out of range (the allocation has " +
                std::to_string(masks_.size()) + " pages)");
  return lowest_bit(masks_[page]);
}

std::uint32_t SubscriptionTable::on_every_page() const {
  std::uint32_t all = all_devices(devices_);
  for (std::uint32_t m : masks_) all &= m;
  return all;
}

std::uint32_t SubscriptionTable::on_any_page() const {
  std::uint32_t any = 0;
  for (std::uint32_t m : masks_) any |= m;
  return any;
}

bool SubscriptionTable::demoted(std::uint64_t page) const {
  if (page >= masks_.size())
    throw Error("gpsm: page " + std::to_string(page) + " is out of range (the allocation has " +
                std::to_string(masks_.size()) + " pages)");
  return popcount32(masks_[page]) == 1;
}

void SubscriptionTable::check_range(PageRange r, int device, const char* what) const {
  if (device < 0 || device >= devices_)
    throw Error(std::string("gpsm: cannot ") + what + " device " + std::to_string(device) + ": the context has " +
                std::to_string(devices_) + " devices (0.." + std::to_string(devices_ - 1) + ")");
  check_pages(r, masks_.size(), what);
}

std::vector<PageRange> SubscriptionTable::subscribe(PageRange range, int device) {
  check_range(range, device, "subscribe");
  std::vector<PageRange> gained;
  const std::uint32_t b = bit(device);
  for (std::uint64_t p = range.first; p < range.last; ++p) {
    if (!(masks_[p] & b)) {
      append_page(gained, p);
      masks_[p] |= b;
    }
  }
  return gained;
}

void SubscriptionTable::unsubscribe(PageRange range, int device) {
  check_range(range, device, "unsubscribe");
  const std::uint32_t b = bit(device);
  // Validate everything first: all or nothing.
  for (std::uint64_t p = range.first; p < range.last; ++p) {
    if (masks_[p] == b)
      throw Error("gpsm: cannot unsubscribe device " + std::to_string(device) + " from page " + std::to_string(p) +
                  ": it is the page's last subscriber (the allocation is left unchanged; subscribe another device "
                  "first or leave this page out of the range)");
  }
  for (std::uint64_t p = range.first; p < range.last; ++p) masks_[p] &= ~b;
}

void SubscriptionTable::demote(PageRange range) {
  check_pages(range, masks_.size(), "demote");
  for (std::uint64_t p = range.first; p < range.last; ++p) masks_[p] = bit(lowest_bit(masks_[p]));
}

void SubscriptionTable::assign(std::vector<std::uint32_t> masks) {
  if (masks.size() != masks_.size())
    throw Error("gpsm: cannot assign " + std::to_string(masks.size()) + " subscriber masks to an allocation of " +
                std::to_string(masks_.size()) + " pages (one mask per page is needed; the table is left unchanged)");
  const std::uint32_t valid = all_devices(devices_);
  for (std::uint64_t p = 0; p < masks.size(); ++p) {
    if (masks[p] == 0)
      throw Error("gpsm: cannot assign an empty subscriber mask to page " + std::to_string(p) +
                  ": every page needs at least one subscriber (the table is left unchanged)");
    if (masks[p] & ~valid)
      throw Error("gpsm: cannot assign subscriber mask " + hex(masks[p]) + " to page " + std::to_string(p) + ": it names devices beyond the context's " +
                  std::to_string(devices_) + " (the table is left unchanged)");
  }
  masks_ = std::move(masks);
}

SubscriptionTable::Summary SubscriptionTable::summary() const {
  Summary s;
  s.pages_per_device.assign(static_cast<std::size_t>(devices_), 0);
  for (std::uint32_t m : masks_) {
    const int n = popcount32(m);
    if (n >= 2) ++s.replicated_pages;
    else if (n == 1) ++s.demoted_pages;
    for (int d = 0; d < devices_; ++d)
      if ((m >> d) & 1u) ++s.pages_per_device[static_cast<std::size_t>(d)];
  }
  return s;
}

std::vector<PageRange> SubscriptionTable::pages_of(int device) const {
  if (device < 0 || device >= devices_)
    throw Error("gpsm: device " + std::to_string(device) + " is not in the subscription table (0.." +
                std::to_string(devices_ - 1) + ")");
  std::vector<PageRange> runs;
  const std::uint32_t b = bit(device);
  for (std::uint64_t p = 0; p < masks_.size(); ++p)
    if (masks_[p] & b) append_page(runs, p);
  return runs;
}

Reach SubscriptionTable::reach(PageRange range, int device) const {
  check_range(range, device, "ask the reach of");
  const std::uint32_t b = bit(device);
  Reach r = Reach::sole;
  for (std::uint64_t p = range.first; p < range.last; ++p) {
    if (!(masks_[p] & b)) return Reach::checked;
    if (masks_[p] != b) r = Reach::shared;
  }
  return r;
}

RangeSubscribers SubscriptionTable::subscribers(PageRange range) const {
  check_pages(range, masks_.size(), "ask the subscribers of");
  RangeSubscribers s;
  if (range.first >= range.last) return s;
  s.mask = masks_[range.first];
  s.uniform = true;
  for (std::uint64_t p = range.first + 1; p < range.last; ++p) {
    if (masks_[p] == s.mask) continue;
    s.uniform = false;
    s.mask &= masks_[p];
  }
  return s;
}

std::vector<std::uint32_t> same_mask_runs(const std::vector<std::uint32_t>& masks) {
  std::vector<std::uint32_t> runs(masks.size());
  std::uint64_t n = 0;  // pages after p with p's mask, counted from the end
  for (std::uint64_t p = masks.size(); p-- > 0;) {
    n = (p + 1 < masks.size() && masks[p + 1] == masks[p]) ? n + 1 : 1;
    runs[p] = n > 0xffffffffull ? 0xffffffffu : static_cast<std::uint32_t>(n);
  }
  return runs;
}

std::vector<PageRange> added_ranges(const std::vector<std::uint32_t>& before, const std::vector<std::uint32_t>& after,
                                    int device) {
  if (before.size() != after.size())
    throw Error("gpsm: cannot compare subscriber masks of " + std::to_string(before.size()) + " and " +
                std::to_string(after.size()) + " pages (both must describe the same allocation)");
  if (device < 0 || device >= kMaxDevices)
    throw Error("gpsm: device " + std::to_string(device) + " is out of range (0.." + std::to_string(kMaxDevices - 1) +
                ")");
  std::vector<PageRange> runs;
  const std::uint32_t b = bit(device);
  for (std::uint64_t p = 0; p < after.size(); ++p)
    if ((after[p] & b) && !(before[p] & b)) append_page(runs, p);
  return runs;
}

}  // namespace gpsm::gps
