#pragma once
// NVML side of topology discovery: driver version, PCIe link, clocks and NVLinks of each GPU.
// libnvidia-ml.so.1 is dlopen'ed on first use (never linked), so gpsm starts on machines without
// a driver and reports why NVML data is missing instead of failing to load.
#include <string>

#include "gpsm/topology.hpp"

namespace gpsm::topo {

// Fills t.driver_version and, for every t.gpus entry found by its pci_bus_id: pcie_gen/width
// (current and max), SM/memory clocks (current and max), and its active NVLinks (replacing the
// t.nvlinks entries of that GPU; version decoded to the NVLink generation, remote type from
// nvmlDeviceGetNvLinkRemoteDeviceType or, where the driver lacks it, inferred from the remote bus
// id). Attributes the device does not support stay 0.
// Returns false, with *why (may be null) set and the same text appended to t.notes, when NVML
// cannot be loaded or initialised, or a GPU cannot be found by its bus id (the other GPUs are
// still filled). Never throws.
bool probe_nvml(Topology& t, std::string* why);

// Current SM and memory clocks (MHz) of the GPU at pci_bus_id, for recording clocks around a
// benchmark. False when NVML is unavailable or the query fails (outputs untouched then).
bool read_current_clocks(const std::string& pci_bus_id, int* sm_mhz, int* mem_mhz);

// NVML's nvmlNvlinkVersion_t (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0,
// 8 = 6.0) to the NVLink generation 1..6; 0 for values it does not know.
int nvlink_generation_from_nvml(unsigned int nvml_version);

}  // namespace gpsm::topo
