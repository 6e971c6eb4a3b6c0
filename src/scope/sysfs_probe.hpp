#pragma once
// Host side of topology discovery from Linux sysfs: NUMA nodes, CPU sockets, and each GPU's NUMA
// node and local CPUs (PCI locality). Plain C++, no hwloc/libnuma needed; `root` makes it testable
// against a fake tree (tests/fixtures/sysfs_2socket).
#include <string>
#include <vector>

#include "gpsm/topology.hpp"

namespace gpsm::topo {

// Replaces t.numa_nodes and t.sockets with what <root> describes and sets numa_node and
// cpu_affinity of every GPU that has a pci_bus_id:
//   <root>/devices/system/node/node<N>/{cpulist,meminfo}          NUMA nodes ("MemTotal" kB)
//   <root>/devices/system/cpu/cpu<N>/topology/physical_package_id  sockets
//   <root>/bus/pci/devices/<dddd:bb:dd.f>/{numa_node,local_cpulist} GPU locality
// Without the node directory (some containers) it records one NUMA node 0 spanning
// <root>/devices/system/cpu/online, and says so in t.notes. Never throws on missing files:
// what cannot be read is left as it was and noted.
void probe_sysfs(Topology& t, const std::string& root = "/sys");

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}; sorted, duplicates removed; "" (or whitespace) -> {}.
// Throws std::invalid_argument on malformed input ("3-1", "a", "1,,2").
std::vector<int> parse_cpulist(const std::string& s);
// Inverse of parse_cpulist: {0,1,2,3,8,10,11} -> "0-3,8,10-11" (input need not be sorted).
std::string format_cpulist(const std::vector<int>& cpus);

// sched_setaffinity of the calling thread to `cpus`. Returns false with errno preserved
// (EINVAL for an empty list or one with no usable CPU).
bool bind_thread_to_cpus(const std::vector<int>& cpus);

}  // namespace gpsm::topo
