#pragma once
// CUDA's virtual memory management calls (driver API), found through the runtime's
// cudaGetDriverEntryPointByVersion so gpsm links no libcuda of its own (the runtime is static).
#include <cuda.h>

#include <string>

namespace gpsm::detail {

struct VmmDriver {
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetAttribute) device_attribute = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemAddressReserve) address_reserve = nullptr;
  decltype(&cuMemAddressFree) address_free = nullptr;
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
  decltype(&cuMemRetainAllocationHandle) retain_handle = nullptr;
  decltype(&cuMemGetAllocationPropertiesFromHandle) properties = nullptr;
  decltype(&cuGetErrorName) error_name = nullptr;
  std::string missing;  // the first entry point the driver did not give ("" when all are there)

  // Looked up once; check `missing` before use.
  static const VmmDriver& get();
  // Throws gpsm::Error "gpsm: distributed array: <call> failed with <CUDA error name>; <todo>".
  void check(CUresult r, const char* call, const std::string& todo) const;
};

}  // namespace gpsm::detail
