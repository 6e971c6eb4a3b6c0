#include "gpsm/topology.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <nlohmann/json.hpp>

#include "scope/sysfs_probe.hpp"

namespace gpsm::topo {

using nlohmann::json;

// ---- PCI bus ids --------------------------------------------------------------------------------

std::string normalize_pci_bus_id(const std::string& id_in) {
  std::string id;
  for (char c : id_in)
    if (!std::isspace(static_cast<unsigned char>(c))) id.push_back(c);
  // domain:bus:device.function, the domain optional
  auto hex = [](const std::string& s, unsigned long long max, unsigned long long* out) {
    if (s.empty() || s.size() > 16) return false;
    unsigned long long v = 0;
    for (char c : s) {
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      v = v * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c))
                                             ? c - '0'
                                             : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
    }
    if (v > max) return false;
    *out = v;
    return true;
  };
  std::vector<std::string> parts;
  std::string cur;
  for (char c : id) {
    if (c == ':') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  parts.push_back(cur);
  if (parts.size() != 2 && parts.size() != 3) return "";
  const std::string domain_s = parts.size() == 3 ? parts[0] : "0";
  const std::string bus_s = parts[parts.size() - 2];
  const std::string& devfn = parts.back();
  const auto dot = devfn.find('.');
  if (dot == std::string::npos) return "";
  unsigned long long domain = 0, bus = 0, dev = 0, fn = 0;
  if (!hex(domain_s, 0xffffffffULL, &domain) || !hex(bus_s, 0xff, &bus) ||
      !hex(devfn.substr(0, dot), 0x1f, &dev) || !hex(devfn.substr(dot + 1), 0x7, &fn))
    return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04llx:%02llx:%02llx.%llx", domain, bus, dev, fn);
  return buf;
}

// ---- JSON ---------------------------------------------------------------------------------------

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("topology: " + path + ": " + what);
}

// Typed field access that names the field in every error.
struct Reader {
  const json& j;
  std::string path;

  std::string at(const char* key) const { return path.empty() ? key : path + "." + key; }

  const json* find(const char* key) const {
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  const json& need(const char* key) const {
    const json* v = find(key);
    if (!v) fail(at(key), "missing");
    return *v;
  }
  int64_t int_of(const json& v, const char* key) const {
    if (!v.is_number_integer()) fail(at(key), "expected an integer, got " + std::string(v.type_name()));
    return v.get<int64_t>();
  }
  int req_int(const char* key) const { return static_cast<int>(int_of(need(key), key)); }
  int opt_int(const char* key, int def) const {
    const json* v = find(key);
    return v ? static_cast<int>(int_of(*v, key)) : def;
  }
  int64_t opt_i64(const char* key, int64_t def) const {
    const json* v = find(key);
    return v ? int_of(*v, key) : def;
  }
  std::string str_of(const json& v, const char* key) const {
    if (!v.is_string()) fail(at(key), "expected a string, got " + std::string(v.type_name()));
    return v.get<std::string>();
  }
  std::string req_str(const char* key) const { return str_of(need(key), key); }
  std::string opt_str(const char* key, const std::string& def = "") const {
    const json* v = find(key);
    return v ? str_of(*v, key) : def;
  }
  bool opt_bool(const char* key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) fail(at(key), "expected a boolean, got " + std::string(v->type_name()));
    return v->get<bool>();
  }
  // Array field (missing -> empty); calls f(Reader for element i).
  template <class F>
  void each(const char* key, F f) const {
    const json* v = find(key);
    if (!v) return;
    if (!v->is_array()) fail(at(key), "expected an array, got " + std::string(v->type_name()));
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string p = at(key) + "[" + std::to_string(i) + "]";
      if (!(*v)[i].is_object()) fail(p, "expected an object, got " + std::string((*v)[i].type_name()));
      f(Reader{(*v)[i], p});
    }
  }
};

}  // namespace

json to_json(const Topology& t) {
  json j;
  j["schema"] = "gpsm.topology";
  j["version"] = 1;
  j["hostname"] = t.hostname;
  j["driver_version"] = t.driver_version;
  j["cuda_driver_version"] = t.cuda_driver_version;
  j["cuda_runtime_version"] = t.cuda_runtime_version;
  j["gpus"] = json::array();
  for (const auto& g : t.gpus) {
    j["gpus"].push_back({{"index", g.index},
                         {"name", g.name},
                         {"uuid", g.uuid},
                         {"pci_bus_id", g.pci_bus_id},
                         {"cc_major", g.cc_major},
                         {"cc_minor", g.cc_minor},
                         {"sm_count", g.sm_count},
                         {"l2_bytes", g.l2_bytes},
                         {"mem_bytes", g.mem_bytes},
                         {"numa_node", g.numa_node},
                         {"cpu_affinity", g.cpu_affinity},
                         {"pcie_gen", g.pcie_gen},
                         {"pcie_width", g.pcie_width},
                         {"pcie_max_gen", g.pcie_max_gen},
                         {"pcie_max_width", g.pcie_max_width},
                         {"sm_clock_mhz", g.sm_clock_mhz},
                         {"mem_clock_mhz", g.mem_clock_mhz},
                         {"sm_clock_max_mhz", g.sm_clock_max_mhz},
                         {"mem_clock_max_mhz", g.mem_clock_max_mhz}});
  }
  j["nvlinks"] = json::array();
  for (const auto& l : t.nvlinks) {
    j["nvlinks"].push_back({{"gpu", l.gpu},
                            {"link", l.link},
                            {"version", l.version},
                            {"remote_pci_bus_id", l.remote_pci_bus_id},
                            {"remote_type", l.remote_type},
                            {"remote_gpu", l.remote_gpu}});
  }
  j["peers"] = json::array();
  for (const auto& p : t.peers) {
    j["peers"].push_back({{"src", p.src},
                          {"dst", p.dst},
                          {"access", p.access},
                          {"perf_rank", p.perf_rank},
                          {"native_atomics", p.native_atomics}});
  }
  j["numa_nodes"] = json::array();
  for (const auto& n : t.numa_nodes)
    j["numa_nodes"].push_back({{"id", n.id}, {"cpulist", n.cpulist}, {"mem_bytes", n.mem_bytes}});
  j["sockets"] = json::array();
  for (const auto& s : t.sockets)
    j["sockets"].push_back({{"id", s.id}, {"cpulist", s.cpulist}, {"numa_nodes", s.numa_nodes}});
  j["notes"] = t.notes;
  return j;
}

Topology topology_from_json(const json& j) {
  if (!j.is_object()) fail("(root)", "expected an object, got " + std::string(j.type_name()));
  Reader r{j, ""};
  const std::string schema = r.opt_str("schema", "gpsm.topology");
  if (schema != "gpsm.topology") fail("schema", "expected \"gpsm.topology\", got \"" + schema + "\"");
  const int version = r.opt_int("version", 1);
  if (version != 1) fail("version", "unsupported version " + std::to_string(version) + " (this build reads 1)");
  if (!r.find("gpus")) fail("gpus", "missing");

  Topology t;
  t.hostname = r.opt_str("hostname");
  t.driver_version = r.opt_str("driver_version");
  t.cuda_driver_version = r.opt_int("cuda_driver_version", 0);
  t.cuda_runtime_version = r.opt_int("cuda_runtime_version", 0);
  r.each("gpus", [&](const Reader& e) {
    Gpu g;
    g.index = e.req_int("index");
    g.name = e.opt_str("name");
    g.uuid = e.opt_str("uuid");
    g.pci_bus_id = e.req_str("pci_bus_id");
    g.cc_major = e.opt_int("cc_major", 0);
    g.cc_minor = e.opt_int("cc_minor", 0);
    g.sm_count = e.opt_int("sm_count", 0);
    g.l2_bytes = e.opt_i64("l2_bytes", 0);
    g.mem_bytes = e.opt_i64("mem_bytes", 0);
    g.numa_node = e.opt_int("numa_node", -1);
    g.cpu_affinity = e.opt_str("cpu_affinity");
    g.pcie_gen = e.opt_int("pcie_gen", 0);
    g.pcie_width = e.opt_int("pcie_width", 0);
    g.pcie_max_gen = e.opt_int("pcie_max_gen", 0);
    g.pcie_max_width = e.opt_int("pcie_max_width", 0);
    g.sm_clock_mhz = e.opt_int("sm_clock_mhz", 0);
    g.mem_clock_mhz = e.opt_int("mem_clock_mhz", 0);
    g.sm_clock_max_mhz = e.opt_int("sm_clock_max_mhz", 0);
    g.mem_clock_max_mhz = e.opt_int("mem_clock_max_mhz", 0);
    t.gpus.push_back(std::move(g));
  });
  r.each("nvlinks", [&](const Reader& e) {
    NvLink l;
    l.gpu = e.req_int("gpu");
    l.link = e.req_int("link");
    l.version = e.opt_int("version", 0);
    l.remote_pci_bus_id = e.opt_str("remote_pci_bus_id");
    l.remote_type = e.opt_str("remote_type", "unknown");
    if (l.remote_type != "gpu" && l.remote_type != "switch" && l.remote_type != "cpu" &&
        l.remote_type != "unknown")
      fail(e.at("remote_type"), "expected gpu|switch|cpu|unknown, got \"" + l.remote_type + "\"");
    l.remote_gpu = e.opt_int("remote_gpu", -1);
    t.nvlinks.push_back(std::move(l));
  });
  r.each("peers", [&](const Reader& e) {
    PeerInfo p;
    p.src = e.req_int("src");
    p.dst = e.req_int("dst");
    p.access = e.opt_bool("access", false);
    p.perf_rank = e.opt_int("perf_rank", 0);
    p.native_atomics = e.opt_bool("native_atomics", false);
    t.peers.push_back(p);
  });
  r.each("numa_nodes", [&](const Reader& e) {
    NumaNode n;
    n.id = e.req_int("id");
    n.cpulist = e.opt_str("cpulist");
    n.mem_bytes = e.opt_i64("mem_bytes", 0);
    t.numa_nodes.push_back(std::move(n));
  });
  r.each("sockets", [&](const Reader& e) {
    CpuSocket s;
    s.id = e.req_int("id");
    s.cpulist = e.opt_str("cpulist");
    if (const json* v = e.find("numa_nodes")) {
      if (!v->is_array()) fail(e.at("numa_nodes"), "expected an array, got " + std::string(v->type_name()));
      for (size_t i = 0; i < v->size(); ++i) {
        if (!(*v)[i].is_number_integer())
          fail(e.at("numa_nodes") + "[" + std::to_string(i) + "]", "expected an integer");
        s.numa_nodes.push_back((*v)[i].get<int>());
      }
    }
    t.sockets.push_back(std::move(s));
  });
  if (const json* v = r.find("notes")) {
    if (!v->is_array()) fail("notes", "expected an array, got " + std::string(v->type_name()));
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) fail("notes[" + std::to_string(i) + "]", "expected a string");
      t.notes.push_back((*v)[i].get<std::string>());
    }
  }
  return t;
}

// ---- bandwidth tables ---------------------------------------------------------------------------

double pcie_lane_GBps(int gen) {
  switch (gen) {
    case 1: return 0.25;   // 2.5 GT/s, 8b/10b
    case 2: return 0.5;    // 5 GT/s, 8b/10b
    case 3: return 0.985;  // 8 GT/s, 128b/130b
    case 4: return 1.969;  // 16 GT/s, 128b/130b
    case 5: return 3.938;  // 32 GT/s, 128b/130b
    case 6: return 7.563;  // 64 GT/s PAM4, FLIT mode (242/256)
    default: return 0.0;
  }
}

double nvlink_link_GBps(int version) {
  switch (version) {
    case 1: return 20.0;  // P100: 8 lanes x 20 Gb/s per direction
    case 2: return 25.0;  // V100: 8 lanes x 25 Gb/s
    case 3: return 25.0;  // A100: 4 lanes x 50 Gb/s
    case 4: return 25.0;  // H100: 2 lanes x 100 Gb/s (PAM4)
    case 5: return 50.0;  // B200: 2 lanes x 200 Gb/s
    default: return 0.0;
  }
}

// ---- graph --------------------------------------------------------------------------------------

namespace {

std::string fmt_GBps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f GB/s" : "%.1f GB/s", v);
  return buf;
}

std::string gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

Graph build_graph(const Topology& t) {
  Graph g;
  std::set<int> socket_ids, numa_ids;
  for (const auto& s : t.sockets) socket_ids.insert(s.id);
  for (const auto& n : t.numa_nodes) numa_ids.insert(n.id);

  // Sockets (a synthetic socket0 when none was discovered but something must attach to it).
  bool need_socket0 = false;
  for (const auto& gp : t.gpus)
    if (gp.numa_node < 0 || !numa_ids.count(gp.numa_node)) need_socket0 = true;
  for (const auto& n : t.numa_nodes) {
    bool owned = false;
    for (const auto& s : t.sockets)
      owned = owned || std::count(s.numa_nodes.begin(), s.numa_nodes.end(), n.id) > 0;
    if (!owned && t.sockets.empty()) need_socket0 = true;
  }
  std::vector<CpuSocket> sockets = t.sockets;
  std::sort(sockets.begin(), sockets.end(), [](auto& a, auto& b) { return a.id < b.id; });
  if (need_socket0 && !socket_ids.count(0)) {
    CpuSocket s0;
    s0.id = 0;
    sockets.insert(sockets.begin(), s0);
  }
  // where "socket 0" attachments go: socket 0 if present, else the lowest id
  std::string host_socket;
  if (!sockets.empty()) {
    int id = sockets.front().id;
    for (const auto& s : sockets)
      if (s.id == 0) id = 0;
    host_socket = "socket" + std::to_string(id);
  }

  for (const auto& s : sockets) {
    std::string label = "Socket " + std::to_string(s.id);
    if (!s.cpulist.empty()) label += "\ncpus " + s.cpulist;
    if (s.cpulist.empty() && !socket_ids.count(s.id)) label += "\n(not discovered)";
    g.nodes.push_back({"socket" + std::to_string(s.id), "socket", label});
  }
  std::vector<NumaNode> numas = t.numa_nodes;
  std::sort(numas.begin(), numas.end(), [](auto& a, auto& b) { return a.id < b.id; });
  for (const auto& n : numas) {
    std::string label = "NUMA " + std::to_string(n.id);
    if (!n.cpulist.empty()) label += "\ncpus " + n.cpulist;
    if (n.mem_bytes > 0) label += "\n" + gib(n.mem_bytes);
    g.nodes.push_back({"numa" + std::to_string(n.id), "numa", label});
  }
  std::vector<Gpu> gpus = t.gpus;
  std::sort(gpus.begin(), gpus.end(), [](auto& a, auto& b) { return a.index < b.index; });
  std::set<int> gpu_ids;
  for (const auto& gp : gpus) {
    gpu_ids.insert(gp.index);
    std::string label = "GPU " + std::to_string(gp.index);
    if (!gp.name.empty()) label += "\n" + gp.name;
    if (!gp.pci_bus_id.empty()) label += "\n" + gp.pci_bus_id;
    g.nodes.push_back({"gpu" + std::to_string(gp.index), "gpu", label});
  }

  // SMP: every pair of sockets (the thesis's assumption for 2-socket systems; on larger machines
  // the real interconnect may not be all-to-all).
  for (size_t a = 0; a < sockets.size(); ++a)
    for (size_t b = a + 1; b < sockets.size(); ++b)
      g.edges.push_back({"socket" + std::to_string(sockets[a].id), "socket" + std::to_string(sockets[b].id),
                         "smp", 1, 0.0, "SMP"});

  // socket -- NUMA node
  std::map<int, int> numa_socket;  // numa id -> socket id
  for (const auto& s : sockets)
    for (int n : s.numa_nodes)
      if (!numa_socket.count(n)) numa_socket[n] = s.id;
  for (const auto& n : numas) {
    auto it = numa_socket.find(n.id);
    if (it != numa_socket.end())
      g.edges.push_back({"socket" + std::to_string(it->second), "numa" + std::to_string(n.id), "numa", 1, 0.0, ""});
    else if (sockets.size() == 1)  // one socket: it owns every node
      g.edges.push_back({"socket" + std::to_string(sockets[0].id), "numa" + std::to_string(n.id), "numa", 1, 0.0, ""});
  }

  // GPU -- host over PCIe. Estimate from the maximum link (current gen drops at idle to save power).
  std::map<int, std::string> gpu_host;  // gpu -> node id of its host attachment
  for (const auto& gp : gpus) {
    std::string host = gp.numa_node >= 0 && numa_ids.count(gp.numa_node)
                           ? "numa" + std::to_string(gp.numa_node)
                           : host_socket;
    if (host.empty()) continue;
    gpu_host[gp.index] = host;
    const int gen = gp.pcie_max_gen > 0 ? gp.pcie_max_gen : gp.pcie_gen;
    const int width = gp.pcie_max_width > 0 ? gp.pcie_max_width : gp.pcie_width;
    std::string label = "PCIe";
    if (gen > 0) label += " Gen" + std::to_string(gen);
    if (width > 0) label += " x" + std::to_string(width);
    g.edges.push_back({"gpu" + std::to_string(gp.index), host, "pcie", 1, pcie_lane_GBps(gen) * width, label});
  }

  // NVLink. Each direct GPU-GPU link is reported by both ends: count per ordered pair, take the
  // larger side (one side may be missing when only some GPUs were probed).
  std::map<std::pair<int, int>, int> directed;          // (from, to) -> links
  std::map<std::pair<int, int>, int> pair_version;      // unordered pair -> min version seen
  std::map<int, int> to_switch, switch_version;         // gpu -> links / min version
  std::map<int, int> to_cpu, cpu_version;
  auto min_ver = [](std::map<int, int>& m, int k, int v) { m[k] = m.count(k) ? std::min(m[k], v) : v; };
  for (const auto& l : t.nvlinks) {
    if (!gpu_ids.count(l.gpu)) continue;
    if (l.remote_type == "gpu") {
      if (l.remote_gpu < 0 || !gpu_ids.count(l.remote_gpu) || l.remote_gpu == l.gpu) continue;
      directed[{l.gpu, l.remote_gpu}]++;
      std::pair<int, int> key{std::min(l.gpu, l.remote_gpu), std::max(l.gpu, l.remote_gpu)};
      pair_version[key] = pair_version.count(key) ? std::min(pair_version[key], l.version) : l.version;
    } else if (l.remote_type == "switch") {
      to_switch[l.gpu]++;
      min_ver(switch_version, l.gpu, l.version);
    } else if (l.remote_type == "cpu") {
      to_cpu[l.gpu]++;
      min_ver(cpu_version, l.gpu, l.version);
    }
  }
  auto nvlink_label = [](int version, int count) {
    return "NVLink" + (version > 0 ? std::to_string(version) : std::string("?")) + " x" + std::to_string(count);
  };
  for (const auto& [key, version] : pair_version) {
    auto get = [&](int a, int b) { auto it = directed.find({a, b}); return it == directed.end() ? 0 : it->second; };
    const int count = std::max(get(key.first, key.second), get(key.second, key.first));
    g.edges.push_back({"gpu" + std::to_string(key.first), "gpu" + std::to_string(key.second), "nvlink", count,
                       count * nvlink_link_GBps(version), nvlink_label(version, count)});
  }
  if (!to_switch.empty()) {
    g.nodes.push_back({"nvswitch", "nvswitch", "NVSwitch fabric"});
    for (const auto& [gpu, count] : to_switch)
      g.edges.push_back({"gpu" + std::to_string(gpu), "nvswitch", "nvlink", count,
                         count * nvlink_link_GBps(switch_version[gpu]), nvlink_label(switch_version[gpu], count)});
  }
  for (const auto& [gpu, count] : to_cpu) {
    // NVLink to the CPU (POWER9 NPU, Grace C2C is not reported this way): the GPU's own socket.
    std::string sock = host_socket;
    const std::string& host = gpu_host[gpu];
    if (host.rfind("numa", 0) == 0) {
      auto it = numa_socket.find(std::stoi(host.substr(4)));
      if (it != numa_socket.end()) sock = "socket" + std::to_string(it->second);
    }
    if (sock.empty()) continue;
    g.edges.push_back({"gpu" + std::to_string(gpu), sock, "nvlink", count,
                       count * nvlink_link_GBps(cpu_version[gpu]), nvlink_label(cpu_version[gpu], count)});
  }
  return g;
}

namespace {

// Graphviz quoted string: quotes and backslashes escaped, newlines as centred line breaks.
std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string to_dot(const Graph& g) {
  std::ostringstream o;
  o << "graph gpsm_topology {\n"
    << "  graph [overlap=false, splines=true, fontname=\"Helvetica\"];\n"
    << "  node [fontname=\"Helvetica\", fontsize=10];\n"
    << "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (const auto& n : g.nodes) {
    o << "  " << dot_quote(n.id) << " [label=" << dot_quote(n.label);
    if (n.kind == "socket")
      o << ", shape=box, style=filled, fillcolor=\"#d0d8e8\"";
    else if (n.kind == "numa")
      o << ", shape=ellipse, style=filled, fillcolor=\"#eeeeee\"";
    else if (n.kind == "gpu")
      o << ", shape=box, style=\"filled,rounded\", fillcolor=\"#c9e7a5\"";
    else if (n.kind == "nvswitch")
      o << ", shape=hexagon, style=filled, fillcolor=\"#76b900\", fontcolor=white";
    o << "];\n";
  }
  for (const auto& e : g.edges) {
    std::string label = e.label;
    if (e.est_GBps > 0) label += (label.empty() ? "" : "\n") + fmt_GBps(e.est_GBps);
    o << "  " << dot_quote(e.a) << " -- " << dot_quote(e.b) << " [";
    if (e.kind == "nvlink") {
      char pw[16];
      std::snprintf(pw, sizeof pw, "%.1f", 2.0 + std::log2(1.0 + std::max(e.count, 1)));
      o << "color=\"#76b900\", penwidth=" << pw << ", label=" << dot_quote(label);
    } else if (e.kind == "pcie") {
      o << "color=\"#1f4e9c\", penwidth=1.5, label=" << dot_quote(label);
    } else if (e.kind == "smp") {
      o << "color=\"#555555\", penwidth=2, style=dashed, label=" << dot_quote(label);
    } else {
      o << "color=\"#999999\"";
      if (!label.empty()) o << ", label=" << dot_quote(label);
    }
    o << "];\n";
  }
  o << "}\n";
  return o.str();
}

json to_json(const Graph& g) {
  json j;
  j["nodes"] = json::array();
  for (const auto& n : g.nodes) j["nodes"].push_back({{"id", n.id}, {"kind", n.kind}, {"label", n.label}});
  j["edges"] = json::array();
  for (const auto& e : g.edges)
    j["edges"].push_back({{"a", e.a}, {"b", e.b}, {"kind", e.kind}, {"count", e.count},
                          {"est_GBps", e.est_GBps}, {"label", e.label}});
  return j;
}

// ---- validation ---------------------------------------------------------------------------------

std::vector<std::string> validate(const Topology& t) {
  std::vector<std::string> p;
  auto S = [](int v) { return std::to_string(v); };

  std::set<int> gpus, numas, sockets;
  std::set<std::string> bus_ids;
  for (const auto& g : t.gpus) {
    if (!gpus.insert(g.index).second) p.push_back("gpu " + S(g.index) + " is listed twice");
    const std::string bid = normalize_pci_bus_id(g.pci_bus_id);
    if (bid.empty())
      p.push_back("gpu " + S(g.index) + ": pci_bus_id \"" + g.pci_bus_id + "\" is not a PCI bus id");
    else if (!bus_ids.insert(bid).second)
      p.push_back("gpu " + S(g.index) + ": pci_bus_id " + bid + " is shared with another GPU");
  }
  for (const auto& n : t.numa_nodes) {
    if (!numas.insert(n.id).second) p.push_back("NUMA node " + S(n.id) + " is listed twice");
    try {
      parse_cpulist(n.cpulist);
    } catch (const std::exception& e) {
      p.push_back("NUMA node " + S(n.id) + ": bad cpulist: " + e.what());
    }
  }
  for (const auto& s : t.sockets) {
    if (!sockets.insert(s.id).second) p.push_back("socket " + S(s.id) + " is listed twice");
    for (int n : s.numa_nodes)
      if (!numas.count(n)) p.push_back("socket " + S(s.id) + " refers to missing NUMA node " + S(n));
  }
  std::map<int, int> numa_owner;
  for (const auto& s : t.sockets)
    for (int n : s.numa_nodes) {
      auto [it, fresh] = numa_owner.emplace(n, s.id);
      if (!fresh && it->second != s.id)
        p.push_back("NUMA node " + S(n) + " belongs to sockets " + S(it->second) + " and " + S(s.id));
    }

  for (const auto& g : t.gpus) {
    const std::string who = "gpu " + S(g.index);
    if (g.numa_node >= 0 && !numas.count(g.numa_node))
      p.push_back(who + ": numa_node " + S(g.numa_node) + " refers to a missing NUMA node");
    try {
      parse_cpulist(g.cpu_affinity);
    } catch (const std::exception& e) {
      p.push_back(who + ": bad cpu_affinity: " + e.what());
    }
    for (int gen : {g.pcie_gen, g.pcie_max_gen})
      if (gen < 0 || gen > 6) p.push_back(who + ": PCIe generation " + S(gen) + " is out of range 0..6");
    if (g.pcie_max_gen > 0 && g.pcie_gen > g.pcie_max_gen)
      p.push_back(who + ": current PCIe Gen" + S(g.pcie_gen) + " above its maximum Gen" + S(g.pcie_max_gen));
    if (g.pcie_max_width > 0 && g.pcie_width > g.pcie_max_width)
      p.push_back(who + ": current PCIe width x" + S(g.pcie_width) + " above its maximum x" + S(g.pcie_max_width));
  }

  std::set<std::pair<int, int>> seen_links;
  std::map<std::pair<int, int>, int> directed;
  for (const auto& l : t.nvlinks) {
    const std::string who = "gpu " + S(l.gpu) + " NVLink " + S(l.link);
    if (!gpus.count(l.gpu)) p.push_back(who + ": unknown gpu " + S(l.gpu));
    if (!seen_links.insert({l.gpu, l.link}).second) p.push_back(who + " is listed twice");
    if (l.remote_type == "gpu") {
      if (l.remote_gpu >= 0 && !gpus.count(l.remote_gpu))
        p.push_back(who + ": remote_gpu " + S(l.remote_gpu) + " is not a known GPU");
      else if (l.remote_gpu == l.gpu)
        p.push_back(who + ": links the GPU to itself");
      else if (l.remote_gpu >= 0)
        directed[{l.gpu, l.remote_gpu}]++;
    } else {
      if (l.remote_gpu >= 0) p.push_back(who + ": remote_gpu set but remote_type is " + l.remote_type);
      if (l.remote_type == "unknown") p.push_back(who + ": remote device type unknown");
    }
  }
  for (const auto& [key, n] : directed) {
    if (key.first > key.second && directed.count({key.second, key.first})) continue;
    auto it = directed.find({key.second, key.first});
    const int back = it == directed.end() ? 0 : it->second;
    // Both GPUs probed: the two ends must agree. One end absent: fine only if that GPU has no
    // NVLink entries at all (not probed).
    bool other_probed = false;
    for (const auto& l : t.nvlinks) other_probed = other_probed || l.gpu == key.second;
    if (back != n && (back > 0 || other_probed))
      p.push_back("NVLinks asymmetric: gpu " + S(key.first) + " has " + S(n) + " to gpu " + S(key.second) +
                  ", gpu " + S(key.second) + " has " + S(back) + " back");
  }

  std::map<std::pair<int, int>, const PeerInfo*> peers;
  for (const auto& pi : t.peers) {
    const std::string who = "peer " + S(pi.src) + "->" + S(pi.dst);
    if (!gpus.count(pi.src)) p.push_back(who + ": unknown src gpu " + S(pi.src));
    if (!gpus.count(pi.dst)) p.push_back(who + ": unknown dst gpu " + S(pi.dst));
    if (pi.src == pi.dst) p.push_back(who + ": a GPU is not its own peer");
    if (!pi.access && pi.native_atomics) p.push_back(who + ": native atomics without peer access");
    if (!peers.emplace(std::make_pair(pi.src, pi.dst), &pi).second) p.push_back(who + " is listed twice");
  }
  for (const auto& [key, pi] : peers) {
    if (key.first >= key.second) continue;
    auto it = peers.find({key.second, key.first});
    if (it == peers.end()) continue;
    if (pi->access != it->second->access)
      p.push_back("peer access asymmetric: " + S(key.first) + "->" + S(key.second) + " is " +
                  (pi->access ? "allowed" : "denied") + ", " + S(key.second) + "->" + S(key.first) + " is " +
                  (it->second->access ? "allowed" : "denied"));
  }
  return p;
}

}  // namespace gpsm::topo
