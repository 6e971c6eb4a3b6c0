#include "scope/nvml_probe.hpp"

#include <dlfcn.h>
#include <nvml.h>  // types and prototypes only: every call goes through a dlsym'ed pointer

#include <algorithm>
#include <string>

namespace gpsm::topo {

namespace {

// The NVML entry points gpsm uses. nvml.h #defines the unversioned names to the current ABI
// (nvmlInit -> nvmlInit_v2, nvmlDeviceGetHandleByPciBusId -> _v2, nvmlDeviceGetNvLinkRemotePciInfo
// -> _v2); dlsym needs those real symbol names, so they are spelled out here.
struct Nvml {
  void* lib = nullptr;
  std::string error;  // non-empty: NVML unusable, and why

  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) handle_by_bus_id = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  // optional: missing in a driver -> the attribute stays unknown
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkGeneration) pcie_gen = nullptr;
  decltype(&nvmlDeviceGetCurrPcieLinkWidth) pcie_width = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkGeneration) pcie_max_gen = nullptr;
  decltype(&nvmlDeviceGetMaxPcieLinkWidth) pcie_max_width = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) nvlink_state = nullptr;
  decltype(&nvmlDeviceGetNvLinkVersion) nvlink_version = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemotePciInfo_v2) nvlink_remote_pci = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemoteDeviceType) nvlink_remote_type = nullptr;

  std::string str(nvmlReturn_t rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return (s ? std::string(s) : std::string("error")) + " (" + std::to_string(static_cast<int>(rc)) + ")";
  }
};

template <class F>
void sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
}

Nvml load() {
  Nvml n;
  const char* so = "libnvidia-ml.so.1";
  n.lib = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    const char* e = dlerror();
    n.error = std::string("NVML unavailable: dlopen(") + so + ") failed: " + (e ? e : "unknown error") +
              " (no NVIDIA driver on this machine, or not on the loader path)";
    return n;
  }
  sym(n.lib, "nvmlInit_v2", &n.init);
  sym(n.lib, "nvmlErrorString", &n.error_string);
  sym(n.lib, "nvmlSystemGetDriverVersion", &n.driver_version);
  sym(n.lib, "nvmlDeviceGetHandleByPciBusId_v2", &n.handle_by_bus_id);
  sym(n.lib, "nvmlDeviceGetClockInfo", &n.clock);
  sym(n.lib, "nvmlDeviceGetMaxClockInfo", &n.max_clock);
  sym(n.lib, "nvmlDeviceGetCurrPcieLinkGeneration", &n.pcie_gen);
  sym(n.lib, "nvmlDeviceGetCurrPcieLinkWidth", &n.pcie_width);
  sym(n.lib, "nvmlDeviceGetMaxPcieLinkGeneration", &n.pcie_max_gen);
  sym(n.lib, "nvmlDeviceGetMaxPcieLinkWidth", &n.pcie_max_width);
  sym(n.lib, "nvmlDeviceGetNvLinkState", &n.nvlink_state);
  sym(n.lib, "nvmlDeviceGetNvLinkVersion", &n.nvlink_version);
  sym(n.lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &n.nvlink_remote_pci);
  sym(n.lib, "nvmlDeviceGetNvLinkRemoteDeviceType", &n.nvlink_remote_type);
  std::string missing;
  if (!n.init) missing += " nvmlInit_v2";
  if (!n.driver_version) missing += " nvmlSystemGetDriverVersion";
  if (!n.handle_by_bus_id) missing += " nvmlDeviceGetHandleByPciBusId_v2";
  if (!n.clock) missing += " nvmlDeviceGetClockInfo";
  if (!missing.empty()) {
    n.error = std::string("NVML unavailable: ") + so + " lacks" + missing + " (driver too old?)";
    return n;
  }
  // Initialised once for the life of the process; NVML is reference counted and nothing here
  // calls nvmlShutdown, so handles stay valid for read_current_clocks later.
  const nvmlReturn_t rc = n.init();
  if (rc != NVML_SUCCESS) n.error = "NVML unavailable: nvmlInit_v2 failed: " + n.str(rc);
  return n;
}

const Nvml& nvml() {
  static const Nvml n = load();  // one dlopen per process, thread-safe initialisation
  return n;
}

bool get_handle(const Nvml& n, const std::string& bus_id, nvmlDevice_t* dev, nvmlReturn_t* rc_out) {
  const std::string norm = normalize_pci_bus_id(bus_id);
  const nvmlReturn_t rc = n.handle_by_bus_id((norm.empty() ? bus_id : norm).c_str(), dev);
  if (rc_out) *rc_out = rc;
  return rc == NVML_SUCCESS;
}

}  // namespace

int nvlink_generation_from_nvml(unsigned int v) {
  switch (v) {
    case 1: return 1;  // NVML_NVLINK_VERSION_1_0
    case 2: return 2;  // 2.0
    case 3: return 2;  // 2.2
    case 4: return 3;  // 3.0
    case 5: return 3;  // 3.1
    case 6: return 4;  // 4.0
    case 7: return 5;  // 5.0
    case 8: return 6;  // 6.0
    default: return 0;
  }
}

bool probe_nvml(Topology& t, std::string* why) {
  std::string failures;
  auto failed = [&](const std::string& msg) {
    t.notes.push_back(msg);
    if (!failures.empty()) failures += "; ";
    failures += msg;
  };
  try {
    const Nvml& n = nvml();
    if (!n.error.empty()) {
      failed(n.error);
      if (why) *why = failures;
      return false;
    }
    char ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    nvmlReturn_t rc = n.driver_version(ver, sizeof ver);
    if (rc == NVML_SUCCESS)
      t.driver_version = ver;
    else
      t.notes.push_back("NVML: nvmlSystemGetDriverVersion failed: " + n.str(rc));

    // bus id -> index of every GPU we know, for naming NVLink peers
    auto gpu_at = [&](const std::string& bus_id) {
      const std::string norm = normalize_pci_bus_id(bus_id);
      for (const auto& g : t.gpus)
        if (!norm.empty() && normalize_pci_bus_id(g.pci_bus_id) == norm) return g.index;
      return -1;
    };

    for (auto& g : t.gpus) {
      const std::string who = "NVML: gpu " + std::to_string(g.index) + " (" + g.pci_bus_id + ")";
      if (g.pci_bus_id.empty()) {
        failed(who + ": no PCI bus id to look it up by");
        continue;
      }
      nvmlDevice_t dev{};
      if (!get_handle(n, g.pci_bus_id, &dev, &rc)) {
        failed(who + ": nvmlDeviceGetHandleByPciBusId_v2 failed: " + n.str(rc));
        continue;
      }
      std::string soft;  // unexpected errors on single attributes: noted, not fatal
      auto note = [&](const char* what, nvmlReturn_t r) {
        if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED && soft.empty())
          soft = std::string(what) + ": " + n.str(r);
      };
      auto uint_query = [&](auto fn, const char* what, int* out) {
        if (!fn) return;
        unsigned int v = 0;
        const nvmlReturn_t r = fn(dev, &v);
        if (r == NVML_SUCCESS) *out = static_cast<int>(v);
        note(what, r);
      };
      uint_query(n.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration", &g.pcie_gen);
      uint_query(n.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth", &g.pcie_width);
      uint_query(n.pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration", &g.pcie_max_gen);
      uint_query(n.pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth", &g.pcie_max_width);
      auto clock_query = [&](auto fn, nvmlClockType_t type, const char* what, int* out) {
        if (!fn) return;
        unsigned int v = 0;
        const nvmlReturn_t r = fn(dev, type, &v);
        if (r == NVML_SUCCESS) *out = static_cast<int>(v);
        note(what, r);
      };
      clock_query(n.clock, NVML_CLOCK_SM, "nvmlDeviceGetClockInfo(SM)", &g.sm_clock_mhz);
      clock_query(n.clock, NVML_CLOCK_MEM, "nvmlDeviceGetClockInfo(MEM)", &g.mem_clock_mhz);
      clock_query(n.max_clock, NVML_CLOCK_SM, "nvmlDeviceGetMaxClockInfo(SM)", &g.sm_clock_max_mhz);
      clock_query(n.max_clock, NVML_CLOCK_MEM, "nvmlDeviceGetMaxClockInfo(MEM)", &g.mem_clock_max_mhz);

      // NVLinks: replace whatever this GPU had
      if (n.nvlink_state) {
        std::vector<NvLink> links;
        for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
          nvmlEnableState_t active = NVML_FEATURE_DISABLED;
          const nvmlReturn_t r = n.nvlink_state(dev, link, &active);
          if (r == NVML_ERROR_NOT_SUPPORTED) break;     // no NVLink on this device
          if (r == NVML_ERROR_INVALID_ARGUMENT) continue;  // link index beyond this device's links
          if (r != NVML_SUCCESS) {
            note("nvmlDeviceGetNvLinkState", r);
            continue;
          }
          if (active != NVML_FEATURE_ENABLED) continue;
          NvLink l;
          l.gpu = g.index;
          l.link = static_cast<int>(link);
          if (n.nvlink_version) {
            unsigned int v = 0;
            const nvmlReturn_t rv = n.nvlink_version(dev, link, &v);
            if (rv == NVML_SUCCESS) l.version = nvlink_generation_from_nvml(v);
            note("nvmlDeviceGetNvLinkVersion", rv);
          }
          if (n.nvlink_remote_pci) {
            nvmlPciInfo_t pci{};
            const nvmlReturn_t rp = n.nvlink_remote_pci(dev, link, &pci);
            if (rp == NVML_SUCCESS) l.remote_pci_bus_id = pci.busId;
            note("nvmlDeviceGetNvLinkRemotePciInfo_v2", rp);
          }
          l.remote_type = "unknown";
          bool typed = false;
          if (n.nvlink_remote_type) {
            nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
            if (n.nvlink_remote_type(dev, link, &type) == NVML_SUCCESS) {
              typed = true;
              switch (type) {
                case NVML_NVLINK_DEVICE_TYPE_GPU: l.remote_type = "gpu"; break;
                case NVML_NVLINK_DEVICE_TYPE_IBMNPU: l.remote_type = "cpu"; break;
                case NVML_NVLINK_DEVICE_TYPE_SWITCH: l.remote_type = "switch"; break;
                default: l.remote_type = "unknown"; break;
              }
            }
          }
          const int peer = l.remote_pci_bus_id.empty() ? -1 : gpu_at(l.remote_pci_bus_id);
          if (!typed && !l.remote_pci_bus_id.empty()) {
            // Older drivers: a GPU if the bus id is one NVML knows as a GPU, else a switch.
            nvmlDevice_t remote{};
            l.remote_type = peer >= 0 || get_handle(n, l.remote_pci_bus_id, &remote, nullptr) ? "gpu" : "switch";
          }
          if (l.remote_type == "gpu") l.remote_gpu = peer;  // -1: a GPU outside t.gpus
          links.push_back(std::move(l));
        }
        t.nvlinks.erase(std::remove_if(t.nvlinks.begin(), t.nvlinks.end(),
                                       [&](const NvLink& l) { return l.gpu == g.index; }),
                        t.nvlinks.end());
        t.nvlinks.insert(t.nvlinks.end(), links.begin(), links.end());
      }
      if (!soft.empty()) t.notes.push_back(who + ": " + soft);
    }
    std::stable_sort(t.nvlinks.begin(), t.nvlinks.end(), [](const NvLink& a, const NvLink& b) {
      return a.gpu != b.gpu ? a.gpu < b.gpu : a.link < b.link;
    });
  } catch (const std::exception& e) {
    failed(std::string("NVML probe failed: ") + e.what());
  }
  if (why) *why = failures;
  return failures.empty();
}

bool read_current_clocks(const std::string& pci_bus_id, int* sm_mhz, int* mem_mhz) {
  const Nvml& n = nvml();
  if (!n.error.empty()) return false;
  nvmlDevice_t dev{};
  if (!get_handle(n, pci_bus_id, &dev, nullptr)) return false;
  unsigned int sm = 0, mem = 0;
  if (n.clock(dev, NVML_CLOCK_SM, &sm) != NVML_SUCCESS) return false;
  if (n.clock(dev, NVML_CLOCK_MEM, &mem) != NVML_SUCCESS) return false;
  if (sm_mhz) *sm_mhz = static_cast<int>(sm);
  if (mem_mhz) *mem_mhz = static_cast<int>(mem);
  return true;
}

}  // namespace gpsm::topo
