// Distributed arrays on CUDA's virtual memory management: one reserved range, one physical chunk
// per owner created on the owner's GPU (cuMemCreate) and mapped at its region (cuMemMap), access
// for every GPU of the context (cuMemSetAccess). The layout is the ownership map's
// (ownership_map.cpp); this file only talks to the driver. Freed in reverse: unmap, release,
// free the addresses.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpsm/distributed_array.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "common/cuda_check.hpp"
#include "common/device.hpp"
#include "runtime/runtime_state.hpp"
#include "runtime/vmm_driver.hpp"
#include "runtime/vmm_support.hpp"

namespace gpsm {
namespace detail {

struct DistributedState {
  std::vector<int> devices;  // CUDA ordinals by rank
  OwnershipMap map;
  bool replicate = false;
  std::string name;
  CUdeviceptr va = 0;
  std::uint64_t va_bytes = 0;  // map.range_bytes(), times the ranks when replicated
  struct Chunk {
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr at = 0;
    std::uint64_t bytes = 0;
    int device = 0;
    bool mapped = false;
  };
  std::vector<Chunk> chunks;
  std::vector<std::uint64_t*> tables;  // per rank, on its GPU: the ownership lookup table

  std::uint64_t copy_offset(int rank) const { return replicate ? static_cast<std::uint64_t>(rank) * map.range_bytes() : 0; }

  // Waits for every GPU (a kernel may still use the range), then unmaps, releases and frees the
  // addresses. Errors are ignored here: this also runs from destructors.
  void release_all() noexcept {
    const VmmDriver& d = VmmDriver::get();
    for (int dev : devices)
      if (cudaSetDevice(dev) == cudaSuccess) cudaDeviceSynchronize();
    for (Chunk& c : chunks)
      if (c.mapped && d.unmap != nullptr) {
        d.unmap(c.at, c.bytes);
        c.mapped = false;
      }
    for (Chunk& c : chunks)
      if (c.handle != 0 && d.release != nullptr) {
        d.release(c.handle);
        c.handle = 0;
      }
    chunks.clear();
    if (va != 0 && d.address_free != nullptr) d.address_free(va, va_bytes);
    va = 0;
    for (std::size_t r = 0; r < tables.size(); ++r)
      if (tables[r] != nullptr && cudaSetDevice(devices[r]) == cudaSuccess) cudaFree(tables[r]);
    tables.clear();
    cudaGetLastError();
  }
  ~DistributedState() { release_all(); }
};

namespace {

[[noreturn]] void fail(const std::string& why, const std::string& todo) {
  throw gpsm::Error("gpsm: distributed array: " + why + "; " + todo);
}

const VmmDriver& driver() {
  const VmmDriver& d = VmmDriver::get();
  if (!d.missing.empty())
    fail("the CUDA driver has no " + d.missing + " entry point (virtual memory management)",
         "update the NVIDIA driver to one of CUDA 12.0 or later");
  return d;
}

CUmemAllocationProp chunk_prop(int device) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  return p;
}

// Every GPU supports VMM, and (for a distributed, not replicated, array) every ordered pair can
// map the other's memory (vmm_support.cpp words the failure).
void check_devices(const VmmDriver& d, const std::vector<int>& devices, bool replicate) {
  const std::string problem = distributed_support_problem(
      devices, replicate,
      [&](int dev) {
        CUdevice cu = 0;
        int vmm = 0;
        d.check(d.device_get(&cu, dev), "cuDeviceGet", "check the --devices list");
        d.check(d.device_attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, cu),
                "cuDeviceGetAttribute", "update the NVIDIA driver");
        return vmm;
      },
      [](int a, int b) {
        int can = 0;
        GPSM_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
        return can;
      });
  if (!problem.empty()) throw gpsm::Error(problem);
}

std::uint64_t granularity_of(const VmmDriver& d, const std::vector<int>& devices) {
  std::uint64_t g = 0;
  for (int dev : devices) {
    const CUmemAllocationProp p = chunk_prop(dev);
    std::size_t gd = 0;
    d.check(d.granularity(&gd, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity",
            "check that GPU " + std::to_string(dev) + " supports virtual memory management");
    g = std::max<std::uint64_t>(g, gd);  // powers of two: the largest is a multiple of the others
  }
  return g;
}

}  // namespace
}  // namespace detail

// ---- DistributedArrayBase ----

static detail::DistributedState& live(const std::shared_ptr<detail::DistributedState>& s) {
  if (s == nullptr || s->va == 0)
    throw gpsm::Error("gpsm: distributed array: used after free() or before allocation; make it with Context::alloc_distributed");
  return *s;
}

const OwnershipMap& DistributedArrayBase::map() const { return live(s_).map; }
bool DistributedArrayBase::replicated() const { return live(s_).replicate; }
const std::string& DistributedArrayBase::name() const { return live(s_).name; }

static void check_rank(const detail::DistributedState& s, int rank) {
  if (rank < 0 || rank >= static_cast<int>(s.devices.size()))
    throw gpsm::Error("gpsm: distributed array '" + s.name + "': rank " + std::to_string(rank) + " is not in the context (0.." +
                      std::to_string(s.devices.size() - 1) + ")");
}

char* DistributedArrayBase::base(int rank) const {
  const auto& s = live(s_);
  check_rank(s, rank);
  return reinterpret_cast<char*>(s.va + s.copy_offset(rank));
}
void* DistributedArrayBase::data(int rank) const { return base(rank); }
const std::uint64_t* DistributedArrayBase::device_table(int rank) const {
  const auto& s = live(s_);
  check_rank(s, rank);
  return s.tables[static_cast<std::size_t>(rank)];
}

int DistributedArrayBase::backing_device(std::uint64_t i, int rank) const {
  const auto& s = live(s_);
  check_rank(s, rank);
  if (i >= s.map.size())
    throw gpsm::Error("gpsm: distributed array '" + s.name + "': element " + std::to_string(i) + " past the end (" +
                      std::to_string(s.map.size()) + ")");
  const detail::VmmDriver& d = detail::driver();
  CUmemGenericAllocationHandle h = 0;
  void* p = base(rank) + s.map.offset(i);
  d.check(d.retain_handle(&h, p), "cuMemRetainAllocationHandle", "report this as a bug");
  CUmemAllocationProp prop{};
  const CUresult r = d.properties(&prop, h);
  d.release(h);  // the retain took a reference
  d.check(r, "cuMemGetAllocationPropertiesFromHandle", "report this as a bug");
  return prop.location.id;
}

// The context's streams do not wait for the legacy stream cudaMemcpy uses (they are
// non-blocking), and a copy from pageable memory may return before its DMA lands: the host copies
// wait for every GPU of the array before (kernels still writing) and after (DMA still landing).
static void sync_devices(const detail::DistributedState& s) {
  for (int dev : s.devices) {
    GPSM_CUDA(cudaSetDevice(dev));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
}

void DistributedArrayBase::upload_bytes(const void* row_major) {
  auto& s = live(s_);
  const DeviceGuard keep(s.devices[0]);
  sync_devices(s);
  std::vector<unsigned char> layout(s.map.range_bytes(), 0);
  s.map.to_layout(row_major, layout.data());
  const int copies = s.replicate ? static_cast<int>(s.devices.size()) : 1;
  for (int r = 0; r < copies; ++r) {
    const DeviceGuard g(s.devices[static_cast<std::size_t>(r)]);
    GPSM_CUDA(cudaMemcpy(base(r), layout.data(), layout.size(), cudaMemcpyHostToDevice));
  }
  sync_devices(s);
}

void DistributedArrayBase::download_bytes(void* row_major, int rank) const {
  const auto& s = live(s_);
  check_rank(s, rank);
  std::vector<unsigned char> layout(s.map.range_bytes(), 0);
  const DeviceGuard g(s.devices[static_cast<std::size_t>(rank)]);
  sync_devices(s);
  GPSM_CUDA(cudaSetDevice(s.devices[static_cast<std::size_t>(rank)]));
  GPSM_CUDA(cudaMemcpy(layout.data(), base(rank), layout.size(), cudaMemcpyDeviceToHost));
  s.map.from_layout(layout.data(), row_major);
}

void DistributedArrayBase::free() {
  if (s_ != nullptr) s_->release_all();
  s_.reset();
}

// ---- the context's side ----

namespace gps {

std::uint64_t Context::distributed_granularity() const {
  const gpsm::detail::VmmDriver& d = gpsm::detail::driver();
  return gpsm::detail::granularity_of(d, impl_->devices);
}

std::shared_ptr<gpsm::detail::DistributedState> Context::alloc_distributed_bytes(gpsm::BlockSpec spec,
                                                                                 std::uint64_t elem_bytes,
                                                                                 const gpsm::DistributedOptions& o) {
  using gpsm::detail::DistributedState;
  const gpsm::detail::VmmDriver& d = gpsm::detail::driver();
  const std::vector<int>& devices = impl_->devices;
  const int n = impl_->size();
  const DeviceGuard guard(devices[0]);
  gpsm::detail::check_devices(d, devices, o.replicate);
  // Every rule of the map is checked here, before any memory is taken.
  auto s = std::make_shared<DistributedState>();
  s->devices = devices;
  const std::uint64_t gran = gpsm::detail::granularity_of(d, devices);
  s->map = OwnershipMap(std::move(spec), elem_bytes, gran, n);
  if (o.replicate) {
    // Every copy holds every block: one region (padded once, not once per owner), rank 0 its
    // nominal owner; each rank's copy then lives on that rank's GPU.
    gpsm::BlockSpec whole = s->map.spec();
    whole.owner.assign(whole.owner.size(), 0);
    s->map = OwnershipMap(std::move(whole), elem_bytes, gran, 1);
  }
  s->replicate = o.replicate;
  s->name = o.name.empty() ? s->map.spec().shape : o.name;
  const std::uint64_t range = s->map.range_bytes(), g = s->map.granularity();
  s->va_bytes = o.replicate ? range * static_cast<std::uint64_t>(n) : range;
  if (o.replicate && s->va_bytes / static_cast<std::uint64_t>(n) != range)
    gpsm::detail::fail("the replicated range passes 2^64 bytes", "use a smaller array");
  const std::string todo = "check free memory on the context's GPUs (nvidia-smi) or use a smaller array";

  // On failure part way, `s` goes out of scope and its destructor undoes what was done.
  d.check(d.address_reserve(&s->va, s->va_bytes, g, 0, 0), "cuMemAddressReserve", todo);
  auto add_chunk = [&](int rank, std::uint64_t offset, std::uint64_t bytes) {
    DistributedState::Chunk c;
    c.device = devices[static_cast<std::size_t>(rank)];
    c.at = s->va + offset;
    c.bytes = bytes;
    const CUmemAllocationProp p = gpsm::detail::chunk_prop(c.device);
    d.check(d.create(&c.handle, bytes, &p, 0), "cuMemCreate", todo + " (" + std::to_string(bytes) + " B on GPU " + std::to_string(c.device) + ")");
    s->chunks.push_back(c);
    d.check(d.map(c.at, bytes, 0, c.handle, 0), "cuMemMap", "report this as a bug");
    s->chunks.back().mapped = true;
  };
  if (o.replicate) {
    for (int r = 0; r < n; ++r) add_chunk(r, s->copy_offset(r), range);
  } else {
    for (const OwnershipMap::Region& reg : s->map.regions())
      if (reg.bytes != 0) add_chunk(reg.owner, reg.offset, reg.bytes);
  }

  // Read/write for every GPU of the context over the whole range; a replicated copy for its GPU.
  std::vector<CUmemAccessDesc> access(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    access[static_cast<std::size_t>(r)].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[static_cast<std::size_t>(r)].location.id = devices[static_cast<std::size_t>(r)];
    access[static_cast<std::size_t>(r)].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  if (o.replicate) {
    for (int r = 0; r < n; ++r)
      d.check(d.set_access(s->va + s->copy_offset(r), range, &access[static_cast<std::size_t>(r)], 1), "cuMemSetAccess",
              "check that GPU " + std::to_string(devices[static_cast<std::size_t>(r)]) + " supports virtual memory management");
  } else {
    d.check(d.set_access(s->va, s->va_bytes, access.data(), access.size()), "cuMemSetAccess",
            "check peer access between the context's GPUs (nvidia-smi topo -m)");
  }

  // Zero every chunk (padding included) from its own GPU, and give every GPU the lookup table.
  for (const DistributedState::Chunk& c : s->chunks) {
    GPSM_CUDA(cudaSetDevice(c.device));
    GPSM_CUDA(cudaMemset(reinterpret_cast<void*>(c.at), 0, c.bytes));
  }
  const std::vector<std::uint64_t>& table = s->map.table();
  s->tables.assign(static_cast<std::size_t>(n), nullptr);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaSetDevice(devices[static_cast<std::size_t>(r)]));
    GPSM_CUDA(cudaMalloc(&s->tables[static_cast<std::size_t>(r)], table.size() * sizeof(std::uint64_t)));
    GPSM_CUDA(cudaMemcpy(s->tables[static_cast<std::size_t>(r)], table.data(), table.size() * sizeof(std::uint64_t),
                         cudaMemcpyHostToDevice));
  }
  for (int dev : devices) {
    GPSM_CUDA(cudaSetDevice(dev));
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  return s;
}

void Context::home_pages_at_owners(ArrayBase& a, const gpsm::OwnershipMap& m) {
  if (!a.valid()) throw gpsm::Error("gpsm: home_pages_at_owners: the GPS array is not allocated");
  if (m.owners() != size())
    throw gpsm::Error("gpsm: home_pages_at_owners: the ownership map has " + std::to_string(m.owners()) +
                      " owners, the context " + std::to_string(size()) + " ranks; use a map made for this context");
  if (a.bytes() != m.size() * m.elem_bytes())
    throw gpsm::Error("gpsm: home_pages_at_owners: the GPS array holds " + std::to_string(a.bytes()) + " B, the map " +
                      std::to_string(m.size() * m.elem_bytes()) + " B; allocate the GPS array with the same elements");
  const std::uint64_t page = a.page_bytes();
  const std::vector<int> owner = m.page_owners(page);
  // Runs of pages with one owner: subscribe each owner to its runs first (its replica is filled
  // from the current home), then take every other rank off, so no page is ever left without one.
  auto for_runs = [&](auto&& f) {
    for (std::size_t p = 0; p < owner.size();) {
      std::size_t q = p;
      while (q < owner.size() && owner[q] == owner[p]) ++q;
      f(owner[p], p * page, std::min<std::uint64_t>(q * page, a.bytes()));
      p = q;
    }
  };
  for_runs([&](int o, std::uint64_t begin, std::uint64_t end) { a.subscribe_bytes(begin, end, o); });
  for_runs([&](int o, std::uint64_t begin, std::uint64_t end) {
    for (int r = 0; r < size(); ++r)
      if (r != o) a.unsubscribe_bytes(begin, end, r);
  });
}

}  // namespace gps
}  // namespace gpsm
