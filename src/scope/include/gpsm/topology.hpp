#pragma once
// System topology of one node, as `gpsm scope` discovers it (CUDA for the GPUs and peer
// attributes, /sys for CPUs, NUMA nodes and PCI locality, NVML for links and clocks), its JSON
// encoding (schema "gpsm.topology", docs/topology.md) and the derived hardware graph G_s
// (sockets, NUMA nodes, GPUs, NVSwitch fabric; SMP, NUMA, PCIe and NVLink edges) with a
// Graphviz rendering.
//
// Plain C++: no CUDA, no NVML needed to build or use this header.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>  // declarations only: the .cpp files that build or read JSON include json.hpp

namespace gpsm::topo {

struct Gpu {
  int index = 0;               // CUDA device ordinal
  std::string name, uuid;
  std::string pci_bus_id;      // as reported (CUDA/NVML "00000000:19:00.0" or sysfs "0000:19:00.0")
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t l2_bytes = 0, mem_bytes = 0;
  int numa_node = -1;          // from /sys/bus/pci/devices/<id>/numa_node; -1 = unknown / none
  std::string cpu_affinity;    // cpulist like "0-15,32-47" (local_cpulist)
  int pcie_gen = 0, pcie_width = 0, pcie_max_gen = 0, pcie_max_width = 0;  // 0 = unknown
  int sm_clock_mhz = 0, mem_clock_mhz = 0, sm_clock_max_mhz = 0, mem_clock_max_mhz = 0;
};

// One active NVLink of one GPU, as seen from that GPU.
struct NvLink {
  int gpu = 0;                   // Gpu::index of the GPU owning the link
  int link = 0;                  // link number on that GPU
  int version = 0;               // NVLink generation (1..6), 0 = unknown (NVML's enum is decoded)
  std::string remote_pci_bus_id;
  std::string remote_type;       // "gpu" | "switch" | "cpu" | "unknown"
  int remote_gpu = -1;           // Gpu::index of the remote GPU when it is one of Topology::gpus
};

// cudaDeviceGetP2PAttribute for the ordered pair src -> dst.
struct PeerInfo {
  int src = 0, dst = 0;
  bool access = false;           // cudaDevP2PAttrAccessSupported
  int perf_rank = 0;             // cudaDevP2PAttrPerformanceRank (lower is better)
  bool native_atomics = false;   // cudaDevP2PAttrNativeAtomicSupported
};

struct NumaNode {
  int id = 0;
  std::string cpulist;           // may be empty (memory-only node)
  int64_t mem_bytes = 0;         // 0 = unknown
};

struct CpuSocket {
  int id = 0;                    // physical_package_id
  std::string cpulist;
  std::vector<int> numa_nodes;   // NUMA nodes whose first CPU lies in this socket
};

struct Topology {
  std::string hostname, driver_version;
  int cuda_driver_version = 0, cuda_runtime_version = 0;  // e.g. 12040
  std::vector<Gpu> gpus;
  std::vector<NvLink> nvlinks;
  std::vector<PeerInfo> peers;
  std::vector<NumaNode> numa_nodes;
  std::vector<CpuSocket> sockets;
  std::vector<std::string> notes;  // what could not be discovered and why, e.g. "NVML unavailable: ..."
};

// JSON: {"schema":"gpsm.topology","version":1,...}; every field is written.
nlohmann::json to_json(const Topology& t);
// Throws std::runtime_error naming the offending field, e.g. "topology: gpus[2].sm_count: expected
// an integer". Only gpus[].index and gpus[].pci_bus_id are required in a GPU, src/dst in a peer,
// gpu/link in an NVLink, id in a NUMA node or socket; other fields default as in the structs.
Topology topology_from_json(const nlohmann::json& j);

// "00000000:19:00.0", "0000:19:00.0", "19:00.0" (any case) -> "0000:19:00.0", the form /sys uses
// (domain at least 4 hex digits, lower case). Returns "" when `id` is not a PCI bus id.
std::string normalize_pci_bus_id(const std::string& id);

// ---- the hardware graph -------------------------------------------------------------------------

struct Node {
  std::string id;     // "socket<N>", "numa<N>", "gpu<N>", "nvswitch"
  std::string kind;   // "socket" | "numa" | "gpu" | "nvswitch"
  std::string label;  // human readable, may contain '\n'
};

struct Edge {
  std::string a, b;   // node ids
  std::string kind;   // "nvlink" | "pcie" | "numa" | "smp"
  int count = 1;      // number of physical links aggregated (NVLink), else 1
  double est_GBps = 0;  // theoretical bandwidth per direction, GB/s (1e9 B/s); 0 = no estimate
  std::string label;  // e.g. "PCIe Gen5 x16", "NVLink4 x18"
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

// Per-direction data rate of one PCIe lane in GB/s after line coding (Gen1-2 8b/10b, Gen3-5
// 128b/130b, Gen6 FLIT 242/256): 0.25, 0.5, 0.985, 1.969, 3.938, 7.563. 0 for unknown gens.
double pcie_lane_GBps(int gen);
// Per-direction bandwidth of one NVLink of the given generation in GB/s:
// v1 20, v2 25, v3 25, v4 25, v5 50. 0 for unknown generations.
double nvlink_link_GBps(int version);

// Rules (docs/topology.md): one node per socket, NUMA node and GPU; socket--numa edges ("numa");
// every GPU attached by PCIe to its NUMA node (socket 0 when numa_node < 0 or unknown); direct
// GPU-GPU NVLinks merged into one edge per pair (count = links); switch links to one shared
// "nvswitch" node, one edge per GPU; NVLinks to a CPU to the GPU's socket; sockets joined pairwise
// by "smp" edges. Node and edge order is deterministic.
Graph build_graph(const Topology& t);

std::string to_dot(const Graph& g);   // Graphviz `graph` (undirected)
nlohmann::json to_json(const Graph& g);

// Consistency problems, one sentence each; empty when the topology is consistent.
std::vector<std::string> validate(const Topology& t);

}  // namespace gpsm::topo
