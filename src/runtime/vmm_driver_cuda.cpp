// The driver's virtual memory management entry points, looked up once.
#include "runtime/vmm_driver.hpp"

#include <cuda_runtime.h>

#include "gpsm/error.hpp"

namespace gpsm::detail {
namespace {

template <class F>
void find(F& fn, const char* name, std::string& missing) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  // 12000: the ABI of CUDA 12.0 for every symbol (all of these exist since CUDA 10.2).
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess || p == nullptr) {
    cudaGetLastError();
    if (missing.empty()) missing = name;
    return;
  }
  fn = reinterpret_cast<F>(p);
}

}  // namespace

const VmmDriver& VmmDriver::get() {
  static const VmmDriver d = [] {
    VmmDriver v;
    find(v.device_get, "cuDeviceGet", v.missing);
    find(v.device_attribute, "cuDeviceGetAttribute", v.missing);
    find(v.granularity, "cuMemGetAllocationGranularity", v.missing);
    find(v.address_reserve, "cuMemAddressReserve", v.missing);
    find(v.address_free, "cuMemAddressFree", v.missing);
    find(v.create, "cuMemCreate", v.missing);
    find(v.release, "cuMemRelease", v.missing);
    find(v.map, "cuMemMap", v.missing);
    find(v.unmap, "cuMemUnmap", v.missing);
    find(v.set_access, "cuMemSetAccess", v.missing);
    find(v.retain_handle, "cuMemRetainAllocationHandle", v.missing);
    find(v.properties, "cuMemGetAllocationPropertiesFromHandle", v.missing);
    find(v.error_name, "cuGetErrorName", v.missing);
    return v;
  }();
  return d;
}

void VmmDriver::check(CUresult r, const char* call, const std::string& todo) const {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  if (error_name == nullptr || error_name(r, &name) != CUDA_SUCCESS || name == nullptr) name = "an unknown CUresult";
  throw gpsm::Error(std::string("gpsm: distributed array: ") + call + " failed with " + name + " (" +
                    std::to_string(static_cast<int>(r)) + "); " + todo);
}

}  // namespace gpsm::detail
