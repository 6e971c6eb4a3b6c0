#pragma once
// A distributed array: one virtual range, one index space, each block of elements backed by
// memory on its owner GPU, loaded and stored directly by kernels on any GPU of the context
// (GPU-SM's NUMA shared memory, GPU-SM paper §5.1 and §6.1; the ownership rules are in
// gpsm/ownership_map.hpp). Made by the context:
//
//   gpsm::gps::Context ctx({0, 1, 2, 3});
//   auto img = ctx.alloc_distributed<float>(gpsm::blocks::owner_grid({w, h, 1}, 2, 2));
//   filter<<<g, b, 0, ctx.stream(r)>>>(img.view(r), ...);   // device: v(x, y), v[i]; any element
//
// CUDA's virtual memory management maps physical chunks created on each GPU side by side into
// one reserved range, readable and writable by every GPU of the context: no per-GPU pointers in
// the kernel. With DistributedOptions::replicate every GPU gets its own full copy instead (a
// read-mostly array: a filter, a lookup table), through the same view.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/gps/config.hpp"
#include "gpsm/ownership_map.hpp"

namespace gpsm {

namespace detail {
struct DistributedState;
}

struct DistributedOptions {
  std::string name;        // used in messages
  // A full copy on every GPU (each reads and writes its own copy). The copies' map has one region
  // holding every block: owner(i) is 0 for every i, and rank r's copy is on rank r's GPU.
  bool replicate = false;
};

// What a kernel takes by value. operator[] takes the row-major element index, operator() the
// coordinates; both find the element's block through the ownership lookup (a division per axis
// for even tiles, else a search over the cuts). When the map is the identity (map().identity()),
// data()[i] is the same element without the lookup.
template <class T>
struct DistributedView {
  char* base = nullptr;
  OwnershipLookup map;

  GPSM_HD std::uint64_t size() const { return map.size(); }
  GPSM_HD T& operator[](std::uint64_t i) const { return *reinterpret_cast<T*>(base + map.offset(i)); }
  GPSM_HD T& operator()(std::uint64_t x, std::uint64_t y, std::uint64_t z = 0) const {
    return *reinterpret_cast<T*>(base + map.offset(x, y, z));
  }
  GPSM_HD int owner(std::uint64_t i) const { return map.owner(i); }
  // The block holding (x, y, z) and its first element's address: inside the block, element
  // (x', y', z') is block_data(box)[box.local(x', y', z')], with no further lookup.
  GPSM_HD BlockBox block(std::uint64_t x, std::uint64_t y, std::uint64_t z = 0) const { return map.box(x, y, z); }
  GPSM_HD T* block_data(const BlockBox& b) const { return reinterpret_cast<T*>(base + b.base); }
  GPSM_HD T* data() const { return reinterpret_cast<T*>(base); }
};

class DistributedArrayBase {
 public:
  DistributedArrayBase() = default;
  explicit DistributedArrayBase(std::shared_ptr<detail::DistributedState> s) : s_(std::move(s)) {}
  bool valid() const { return s_ != nullptr; }
  const OwnershipMap& map() const;
  std::uint64_t size() const { return map().size(); }
  bool replicated() const;
  const std::string& name() const;
  // The driver's allocation granularity the layout was built on (the unit of every chunk).
  std::uint64_t granularity() const { return map().granularity(); }
  // Start of the range (rank's own copy when replicated); element i is at map().offset(i) from it.
  void* data(int rank = 0) const;
  // The CUDA ordinal whose memory backs element i (of rank's copy when replicated), asked from the
  // driver (cuMemRetainAllocationHandle): where the element physically is.
  int backing_device(std::uint64_t i, int rank = 0) const;
  // GPS interoperation: the owner of each GPS page (gps::Context::home_pages_at_owners uses it).
  std::vector<int> page_owners(std::uint64_t page_bytes) const { return map().page_owners(page_bytes); }
  // Row-major host data in and out (size() * element bytes). Upload writes every copy. Both wait
  // for every GPU of the context first (work on the context's streams), upload also after.
  void upload_bytes(const void* row_major);
  void download_bytes(void* row_major, int rank = 0) const;
  // Waits for the context's GPUs, then unmaps, releases the chunks and frees the range (also done
  // when the last handle goes). Views taken before are dangling afterwards.
  void free();

 protected:
  char* base(int rank) const;
  const std::uint64_t* device_table(int rank) const;
  std::shared_ptr<detail::DistributedState> s_;
};

template <class T>
class DistributedArray : public DistributedArrayBase {
 public:
  DistributedArray() = default;
  explicit DistributedArray(std::shared_ptr<detail::DistributedState> s) : DistributedArrayBase(std::move(s)) {}
  DistributedView<T> view(int rank) const { return DistributedView<T>{base(rank), map().lookup_over(device_table(rank))}; }
  void upload(const std::vector<T>& v) {
    if (v.size() != size())
      throw gpsm::Error("gpsm: distributed array '" + name() + "': upload of " + std::to_string(v.size()) +
                        " elements into " + std::to_string(size()) + "; pass exactly size() elements");
    upload_bytes(v.data());
  }
  std::vector<T> download(int rank = 0) const {
    std::vector<T> v(size());
    download_bytes(v.data(), rank);
    return v;
  }
};

}  // namespace gpsm
