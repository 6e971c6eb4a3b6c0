#include "scope/cuda_probe.hpp"

#include <unistd.h>

#include "common/cuda_check.hpp"
#include "scope/nvml_probe.hpp"
#include "scope/sysfs_probe.hpp"

namespace gpsm::scope {

int cuda_device_count(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why) *why = "cudaGetDeviceCount found 0 devices";
  return n;
}

void probe_cuda(gpsm::topo::Topology& t) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (n == 0) {
    t.notes.push_back("CUDA: no GPU (" + why + ")");
    return;
  }
  GPSM_CUDA(cudaDriverGetVersion(&t.cuda_driver_version));
  GPSM_CUDA(cudaRuntimeGetVersion(&t.cuda_runtime_version));
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    GPSM_CUDA(cudaGetDeviceProperties(&p, d));
    gpsm::topo::Gpu g;
    g.index = d;
    g.name = p.name;
    char uuid[64];
    const unsigned char* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    std::snprintf(uuid, sizeof(uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    g.uuid = uuid;
    char bus[32];
    GPSM_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
    g.pci_bus_id = bus;
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.sm_count = p.multiProcessorCount;
    g.l2_bytes = p.l2CacheSize;
    g.mem_bytes = static_cast<int64_t>(p.totalGlobalMem);
    t.gpus.push_back(g);
  }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      gpsm::topo::PeerInfo pi;
      pi.src = a;
      pi.dst = b;
      int v = 0;
      GPSM_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, a, b));
      pi.access = v != 0;
      GPSM_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, a, b));
      pi.perf_rank = v;
      GPSM_CUDA(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, a, b));
      pi.native_atomics = v != 0;
      t.peers.push_back(pi);
    }
}

gpsm::topo::Topology discover_topology() {
  gpsm::topo::Topology t;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) t.hostname = host;
  probe_cuda(t);
  gpsm::topo::probe_sysfs(t);
  // NVML only adds detail (links, PCIe, clocks); on failure it records its own note in t.notes
  std::string why;
  if (!t.gpus.empty()) gpsm::topo::probe_nvml(t, &why);
  return t;
}

}  // namespace gpsm::scope
