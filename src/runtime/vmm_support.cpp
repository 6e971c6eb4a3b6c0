// The VMM and peer-access conditions of distributed arrays, and their messages.
#include "runtime/vmm_support.hpp"

namespace gpsm::detail {
namespace {

std::string keep_without(const std::vector<int>& devices, int drop) {
  std::string keep;
  for (int d : devices)
    if (d != drop) keep += (keep.empty() ? "" : ",") + std::to_string(d);
  return keep;
}

}  // namespace

std::string distributed_support_problem(const std::vector<int>& devices, bool replicate,
                                        const std::function<int(int)>& vmm, const std::function<int(int, int)>& peer) {
  const std::string pre = "gpsm: distributed array: ";
  for (int d : devices)
    if (vmm(d) == 0)
      return pre + "GPU " + std::to_string(d) +
             " does not support CUDA virtual memory management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 0); " +
             (devices.size() > 1 ? "run with --devices " + keep_without(devices, d) + ", or use per-GPU arrays"
                                 : std::string("use per-GPU arrays (cudaMalloc) on this GPU"));
  if (replicate) return "";  // each GPU reads and writes only its own copy
  for (int a : devices)
    for (int b : devices)
      if (a != b && peer(a, b) == 0)
        return pre + "GPU " + std::to_string(a) + " cannot access GPU " + std::to_string(b) +
               "'s memory (cudaDeviceCanAccessPeer = 0), so one range cannot hold blocks of both; run with --devices " +
               keep_without(devices, b) + ", or use DistributedOptions::replicate";
  return "";
}

}  // namespace gpsm::detail
