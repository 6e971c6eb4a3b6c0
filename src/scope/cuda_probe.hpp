#pragma once
// What CUDA says about the GPUs: counts, properties, peer attributes (plain interface; the
// implementation is CUDA).
#include <string>
#include <vector>

#include "gpsm/topology.hpp"

namespace gpsm::scope {

// Number of CUDA devices; 0 with *why set when there is no GPU or no usable driver.
int cuda_device_count(std::string* why);

// Fills gpus, peers and CUDA versions for every visible device (all of them, not only the
// selected ones: the topology describes the machine).
void probe_cuda(gpsm::topo::Topology& t);

// The whole topology: CUDA, then /sys (NUMA, sockets, GPU locality), then NVML (links, PCIe,
// clocks); what could not be discovered is recorded in t.notes.
gpsm::topo::Topology discover_topology();

}  // namespace gpsm::scope
