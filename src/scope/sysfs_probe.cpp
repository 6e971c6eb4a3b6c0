#include "scope/sysfs_probe.hpp"

#include <sched.h>  // CPU_ALLOC & co. (g++ defines _GNU_SOURCE)
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace gpsm::topo {

namespace fs = std::filesystem;

// ---- cpulists -----------------------------------------------------------------------------------

std::vector<int> parse_cpulist(const std::string& s_in) {
  std::string s;
  for (char c : s_in)
    if (!std::isspace(static_cast<unsigned char>(c))) s.push_back(c);
  std::vector<int> out;
  if (s.empty()) return out;
  auto number = [&](const std::string& tok) {
    if (tok.empty() || tok.size() > 9 ||
        !std::all_of(tok.begin(), tok.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      throw std::invalid_argument("cpulist \"" + s_in + "\": bad cpu number \"" + tok + "\"");
    return std::stoi(tok);
  };
  std::stringstream ss(s);
  std::string item;
  size_t commas = std::count(s.begin(), s.end(), ',');
  size_t items = 0;
  while (std::getline(ss, item, ',')) {
    ++items;
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(number(item));
      continue;
    }
    const int lo = number(item.substr(0, dash)), hi = number(item.substr(dash + 1));
    if (hi < lo) throw std::invalid_argument("cpulist \"" + s_in + "\": range " + item + " is descending");
    if (hi - lo > (1 << 20)) throw std::invalid_argument("cpulist \"" + s_in + "\": range " + item + " too large");
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  if (items != commas + 1) throw std::invalid_argument("cpulist \"" + s_in + "\": empty item");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string format_cpulist(const std::vector<int>& cpus_in) {
  std::vector<int> c = cpus_in;
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  std::string out;
  for (size_t i = 0; i < c.size();) {
    size_t j = i;
    while (j + 1 < c.size() && c[j + 1] == c[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(c[i]);
    if (j > i) out += "-" + std::to_string(c[j]);
    i = j + 1;
  }
  return out;
}

bool bind_thread_to_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) {
    errno = EINVAL;
    return false;
  }
  int max_cpu = 0;
  for (int c : cpus) {
    if (c < 0) {
      errno = EINVAL;
      return false;
    }
    max_cpu = std::max(max_cpu, c);
  }
  const int n = std::max(max_cpu + 1, static_cast<int>(CPU_SETSIZE));
  cpu_set_t* set = CPU_ALLOC(n);
  if (!set) return false;  // errno = ENOMEM from malloc
  const size_t size = CPU_ALLOC_SIZE(n);
  CPU_ZERO_S(size, set);
  for (int c : cpus) CPU_SET_S(c, size, set);
  const int rc = sched_setaffinity(0, size, set);  // 0: the calling thread
  const int err = errno;
  CPU_FREE(set);
  errno = err;
  return rc == 0;
}

// ---- sysfs --------------------------------------------------------------------------------------

namespace {

bool read_file(const fs::path& p, std::string* out) {
  std::ifstream f(p);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  *out = ss.str();
  while (!out->empty() && std::isspace(static_cast<unsigned char>(out->back()))) out->pop_back();
  return true;
}

// Directories "<prefix><N>" under dir, as (N, path), sorted by N.
std::vector<std::pair<int, fs::path>> numbered_dirs(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string num = name.substr(prefix.size());
    if (num.size() > 9 || !std::all_of(num.begin(), num.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    if (!fs::is_directory(e.path(), ec)) continue;
    out.emplace_back(std::stoi(num), e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "Node 0 MemTotal:       131899128 kB" -> bytes, 0 if absent
int64_t meminfo_total(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto k = line.find("MemTotal:");
    if (k == std::string::npos) continue;
    std::istringstream rest(line.substr(k + 9));
    long long v = 0;
    std::string unit;
    if (!(rest >> v)) return 0;
    rest >> unit;
    if (unit == "kB" || unit == "KB" || unit == "kb") return static_cast<int64_t>(v) * 1024;
    return static_cast<int64_t>(v);
  }
  return 0;
}

std::vector<int> safe_cpulist(const std::string& s, const std::string& where, Topology& t) {
  try {
    return parse_cpulist(s);
  } catch (const std::exception& e) {
    t.notes.push_back("sysfs: " + where + ": " + e.what());
    return {};
  }
}

}  // namespace

void probe_sysfs(Topology& t, const std::string& root_s) {
  const fs::path root(root_s);
  const fs::path node_dir = root / "devices/system/node";
  const fs::path cpu_dir = root / "devices/system/cpu";

  // NUMA nodes
  std::vector<NumaNode> numas;
  for (const auto& [id, path] : numbered_dirs(node_dir, "node")) {
    NumaNode n;
    n.id = id;
    std::string text;
    if (read_file(path / "cpulist", &text))
      n.cpulist = format_cpulist(safe_cpulist(text, (path / "cpulist").string(), t));
    else
      t.notes.push_back("sysfs: cannot read " + (path / "cpulist").string());
    if (read_file(path / "meminfo", &text)) n.mem_bytes = meminfo_total(text);
    numas.push_back(std::move(n));
  }
  std::string online;
  const bool have_online = read_file(cpu_dir / "online", &online);
  if (numas.empty()) {
    NumaNode n;
    n.id = 0;
    if (have_online) n.cpulist = format_cpulist(safe_cpulist(online, (cpu_dir / "online").string(), t));
    if (root_s == "/sys") {  // the running machine: total memory from sysconf
      const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
      if (pages > 0 && page > 0) n.mem_bytes = static_cast<int64_t>(pages) * page;
    }
    t.notes.push_back("sysfs: no NUMA nodes under " + node_dir.string() +
                      "; assuming one NUMA node 0 spanning the online cpus" +
                      (n.cpulist.empty() ? std::string() : " (" + n.cpulist + ")"));
    numas.push_back(std::move(n));
  }

  // Sockets from physical_package_id (offline cpus have no topology directory: skipped).
  std::map<int, std::vector<int>> socket_cpus;
  for (const auto& [cpu, path] : numbered_dirs(cpu_dir, "cpu")) {
    std::string text;
    if (!read_file(path / "topology/physical_package_id", &text)) continue;
    try {
      socket_cpus[std::stoi(text)].push_back(cpu);
    } catch (const std::exception&) {
      t.notes.push_back("sysfs: bad physical_package_id \"" + text + "\" for cpu" + std::to_string(cpu));
    }
  }
  std::vector<CpuSocket> sockets;
  if (socket_cpus.empty()) {
    CpuSocket s;
    s.id = 0;
    if (have_online) s.cpulist = format_cpulist(safe_cpulist(online, (cpu_dir / "online").string(), t));
    sockets.push_back(std::move(s));
    t.notes.push_back("sysfs: no cpu topology under " + cpu_dir.string() + "; assuming one socket 0");
  } else {
    for (auto& [id, cpus] : socket_cpus) {
      CpuSocket s;
      s.id = id;
      s.cpulist = format_cpulist(cpus);
      sockets.push_back(std::move(s));
    }
  }
  // NUMA node -> socket of its first cpu (memory-only nodes belong to none)
  for (const auto& n : numas) {
    const std::vector<int> cpus = parse_cpulist(n.cpulist);  // already normalized above
    if (cpus.empty()) continue;
    bool placed = false;
    for (auto& s : sockets) {
      const std::vector<int> sc = parse_cpulist(s.cpulist);
      if (std::binary_search(sc.begin(), sc.end(), cpus.front())) {
        s.numa_nodes.push_back(n.id);
        placed = true;
        break;
      }
    }
    if (!placed)
      t.notes.push_back("sysfs: NUMA node " + std::to_string(n.id) + " (cpus " + n.cpulist +
                        ") matches no socket");
  }
  t.numa_nodes = std::move(numas);
  t.sockets = std::move(sockets);

  // GPU locality
  for (auto& g : t.gpus) {
    if (g.pci_bus_id.empty()) continue;
    const std::string id = normalize_pci_bus_id(g.pci_bus_id);
    if (id.empty()) {
      t.notes.push_back("sysfs: gpu " + std::to_string(g.index) + ": cannot parse PCI bus id \"" +
                        g.pci_bus_id + "\"");
      continue;
    }
    const fs::path dev = root / "bus/pci/devices" / id;
    std::error_code ec;
    if (!fs::exists(dev, ec)) {
      t.notes.push_back("sysfs: gpu " + std::to_string(g.index) + ": no " + dev.string());
      continue;
    }
    std::string text;
    if (read_file(dev / "numa_node", &text)) {
      try {
        g.numa_node = std::stoi(text);
        if (g.numa_node < -1) g.numa_node = -1;
      } catch (const std::exception&) {
        t.notes.push_back("sysfs: gpu " + std::to_string(g.index) + ": bad numa_node \"" + text + "\"");
      }
    }
    if (g.numa_node >= 0 &&
        std::none_of(t.numa_nodes.begin(), t.numa_nodes.end(), [&](const NumaNode& n) { return n.id == g.numa_node; }))
      t.notes.push_back("sysfs: gpu " + std::to_string(g.index) + " reports NUMA node " +
                        std::to_string(g.numa_node) + ", which " + node_dir.string() + " does not list");
    if (read_file(dev / "local_cpulist", &text))
      g.cpu_affinity = format_cpulist(safe_cpulist(text, (dev / "local_cpulist").string(), t));
  }
}

}  // namespace gpsm::topo
