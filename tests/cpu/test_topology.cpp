// Topology graph of `gpsm scope`: JSON round trip, graph rules, DOT, validation, sysfs and NVML
// probes (the NVML one against whatever this machine has: no driver in CI).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <nlohmann/json.hpp>

#include "gpsm/topology.hpp"
#include "scope/nvml_probe.hpp"
#include "scope/sysfs_probe.hpp"

namespace fs = std::filesystem;
using namespace gpsm::topo;
using nlohmann::json;

namespace {

json load_json(const std::string& rel) {
  const std::string path = std::string(GPSM_FIXTURES_DIR) + "/" + rel;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return json::parse(f);
}

Topology load_topo(const std::string& name) { return topology_from_json(load_json("topology/" + name)); }

const Node* find_node(const Graph& g, const std::string& id) {
  for (const auto& n : g.nodes)
    if (n.id == id) return &n;
  return nullptr;
}

// the edge joining a and b (either order), or null
const Edge* find_edge(const Graph& g, const std::string& a, const std::string& b) {
  for (const auto& e : g.edges)
    if ((e.a == a && e.b == b) || (e.a == b && e.b == a)) return &e;
  return nullptr;
}

int count_kind(const Graph& g, const std::string& kind) {
  return static_cast<int>(std::count_if(g.edges.begin(), g.edges.end(), [&](const Edge& e) { return e.kind == kind; }));
}

bool contains(const std::vector<std::string>& v, const std::string& needle) {
  return std::any_of(v.begin(), v.end(), [&](const std::string& s) { return s.find(needle) != std::string::npos; });
}

// A temporary copy of the fake sysfs tree that a test may modify.
struct TempTree {
  fs::path root;
  TempTree() {
    std::random_device rd;
    root = fs::temp_directory_path() / ("gpsm_sysfs_" + std::to_string(rd()) + std::to_string(::getpid()));
    fs::copy(fs::path(GPSM_FIXTURES_DIR) / "sysfs_2socket", root, fs::copy_options::recursive);
  }
  ~TempTree() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(root / rel) << text;
  }
};

Topology two_gpus_for_sysfs() {
  Topology t;
  Gpu a;
  a.index = 0;
  a.pci_bus_id = "00000000:3B:00.0";  // CUDA's form: 8-digit domain, upper case
  Gpu b;
  b.index = 1;
  b.pci_bus_id = "0000:86:00.0";      // sysfs form
  t.gpus = {a, b};
  return t;
}

}  // namespace

// ---- JSON --------------------------------------------------------------------------------------

TEST(TopoJson, RoundTripNvswitchFixture) {
  const json j = load_json("topology/nvswitch_8gpu.json");
  const Topology t = topology_from_json(j);
  ASSERT_EQ(t.gpus.size(), 8u);
  EXPECT_EQ(t.gpus[3].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.gpus[3].cc_major, 9);
  EXPECT_EQ(t.gpus[3].sm_count, 132);
  EXPECT_EQ(t.gpus[5].numa_node, 1);
  EXPECT_EQ(t.gpus[0].mem_bytes, 85520809984);
  EXPECT_EQ(t.nvlinks.size(), 8u * 18u);
  EXPECT_EQ(t.peers.size(), 56u);
  EXPECT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.sockets.size(), 2u);
  EXPECT_EQ(to_json(t), j);  // every field written, nothing invented
  EXPECT_EQ(to_json(topology_from_json(json::parse(to_json(t).dump()))), j);
}

TEST(TopoJson, RoundTripPcieFixture) {
  const json j = load_json("topology/pcie_2socket.json");
  const Topology t = topology_from_json(j);
  ASSERT_EQ(t.gpus.size(), 4u);
  EXPECT_TRUE(t.nvlinks.empty());
  EXPECT_EQ(t.peers.size(), 12u);
  EXPECT_EQ(t.gpus[2].cpu_affinity, "20-39,60-79");
  EXPECT_EQ(t.driver_version, "535.183.01");
  EXPECT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(to_json(t), j);
}

TEST(TopoJson, ErrorsNameTheField) {
  json j = load_json("topology/pcie_2socket.json");
  j["gpus"][2]["sm_count"] = "eighty";
  try {
    topology_from_json(j);
    FAIL() << "accepted a string sm_count";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpus[2].sm_count"), std::string::npos) << e.what();
  }
  j = load_json("topology/pcie_2socket.json");
  j["gpus"][1].erase("pci_bus_id");
  try {
    topology_from_json(j);
    FAIL() << "accepted a GPU without pci_bus_id";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpus[1].pci_bus_id: missing"), std::string::npos) << e.what();
  }
  j = load_json("topology/nvswitch_8gpu.json");
  j["nvlinks"][7]["remote_type"] = "bridge";
  EXPECT_THROW(topology_from_json(j), std::runtime_error);
  j = load_json("topology/nvswitch_8gpu.json");
  j["schema"] = "gpsm.results";
  EXPECT_THROW(topology_from_json(j), std::runtime_error);
  EXPECT_THROW(topology_from_json(json::array()), std::runtime_error);
  EXPECT_THROW(topology_from_json(json::object()), std::runtime_error);  // gpus missing
  // minimal document: defaults fill the rest
  const Topology t = topology_from_json(json{{"gpus", {{{"index", 0}, {"pci_bus_id", "0000:01:00.0"}}}}});
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].numa_node, -1);
  EXPECT_EQ(t.gpus[0].pcie_gen, 0);
}

TEST(TopoJson, NormalizesPciBusIds) {
  EXPECT_EQ(normalize_pci_bus_id("00000000:19:00.0"), "0000:19:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:AF:00.0"), "0000:af:00.0");
  EXPECT_EQ(normalize_pci_bus_id("3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_pci_bus_id(" 00000001:3B:1F.7\n"), "0001:3b:1f.7");
  EXPECT_EQ(normalize_pci_bus_id("00010000:01:00.0"), "10000:01:00.0");
  EXPECT_EQ(normalize_pci_bus_id(""), "");
  EXPECT_EQ(normalize_pci_bus_id("GPU-1234"), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:100:00.0"), "");  // bus > 0xff
  EXPECT_EQ(normalize_pci_bus_id("0000:01:20.0"), "");   // device > 31
  EXPECT_EQ(normalize_pci_bus_id("0000:01:00"), "");
}

// ---- graph -------------------------------------------------------------------------------------

TEST(TopoGraph, BandwidthTables) {
  EXPECT_DOUBLE_EQ(pcie_lane_GBps(3), 0.985);
  EXPECT_DOUBLE_EQ(pcie_lane_GBps(4), 1.969);
  EXPECT_DOUBLE_EQ(pcie_lane_GBps(5), 3.938);
  EXPECT_DOUBLE_EQ(pcie_lane_GBps(6), 7.563);
  EXPECT_DOUBLE_EQ(pcie_lane_GBps(0), 0.0);
  EXPECT_DOUBLE_EQ(nvlink_link_GBps(2), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_link_GBps(3), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_link_GBps(4), 25.0);
  EXPECT_DOUBLE_EQ(nvlink_link_GBps(0), 0.0);
  EXPECT_EQ(nvlink_generation_from_nvml(6), 4);  // NVML_NVLINK_VERSION_4_0 (H100)
  EXPECT_EQ(nvlink_generation_from_nvml(5), 3);  // 3.1 (A100 reports this)
  EXPECT_EQ(nvlink_generation_from_nvml(3), 2);  // 2.2
  EXPECT_EQ(nvlink_generation_from_nvml(0), 0);
  EXPECT_EQ(nvlink_generation_from_nvml(99), 0);
}

TEST(TopoGraph, NvswitchNode) {
  const Topology t = load_topo("nvswitch_8gpu.json");
  const Graph g = build_graph(t);
  std::map<std::string, int> kinds;
  for (const auto& n : g.nodes) kinds[n.kind]++;
  EXPECT_EQ(kinds["gpu"], 8);
  EXPECT_EQ(kinds["nvswitch"], 1);
  EXPECT_EQ(kinds["socket"], 2);
  EXPECT_EQ(kinds["numa"], 2);
  ASSERT_NE(find_node(g, "nvswitch"), nullptr);

  int switch_edges = 0;
  for (const auto& e : g.edges) {
    if (e.b != "nvswitch" && e.a != "nvswitch") continue;
    ++switch_edges;
    EXPECT_EQ(e.kind, "nvlink");
    EXPECT_EQ(e.count, 18);
    EXPECT_DOUBLE_EQ(e.est_GBps, 18 * 25.0);
    EXPECT_EQ(e.label, "NVLink4 x18");
  }
  EXPECT_EQ(switch_edges, 8);
  EXPECT_EQ(count_kind(g, "nvlink"), 8);  // no direct GPU-GPU edges

  EXPECT_EQ(count_kind(g, "pcie"), 8);
  for (int i = 0; i < 8; ++i) {
    const std::string gpu = "gpu" + std::to_string(i);
    const Edge* e = find_edge(g, gpu, i < 4 ? "numa0" : "numa1");
    ASSERT_NE(e, nullptr) << gpu;
    EXPECT_EQ(e->kind, "pcie");
    // the max link, not the idle Gen1 the fixture records as current
    EXPECT_EQ(e->label, "PCIe Gen5 x16");
    EXPECT_NEAR(e->est_GBps, 63.0, 0.01);
    EXPECT_EQ(find_edge(g, gpu, i < 4 ? "numa1" : "numa0"), nullptr);
  }
  ASSERT_NE(find_edge(g, "socket0", "numa0"), nullptr);
  EXPECT_EQ(find_edge(g, "socket0", "numa0")->kind, "numa");
  ASSERT_NE(find_edge(g, "socket1", "numa1"), nullptr);
  EXPECT_EQ(find_edge(g, "socket0", "numa1"), nullptr);
  ASSERT_NE(find_edge(g, "socket0", "socket1"), nullptr);
  EXPECT_EQ(count_kind(g, "smp"), 1);

  const json jg = to_json(g);
  EXPECT_EQ(jg["nodes"].size(), g.nodes.size());
  EXPECT_EQ(jg["edges"].size(), g.edges.size());
  EXPECT_EQ(jg["edges"][0].count("est_GBps"), 1u);
}

TEST(TopoGraph, PcieTwoSockets) {
  const Topology t = load_topo("pcie_2socket.json");
  const Graph g = build_graph(t);
  EXPECT_EQ(count_kind(g, "nvlink"), 0);
  EXPECT_EQ(find_node(g, "nvswitch"), nullptr);
  std::map<std::string, int> per_numa;
  for (const auto& e : g.edges)
    if (e.kind == "pcie") {
      per_numa[e.b]++;
      EXPECT_EQ(e.label, "PCIe Gen3 x16");
      EXPECT_NEAR(e.est_GBps, 15.76, 0.01);
    }
  EXPECT_EQ(per_numa["numa0"], 2);
  EXPECT_EQ(per_numa["numa1"], 2);
  EXPECT_NE(find_edge(g, "gpu0", "numa0"), nullptr);
  EXPECT_NE(find_edge(g, "gpu1", "numa0"), nullptr);
  EXPECT_NE(find_edge(g, "gpu2", "numa1"), nullptr);
  EXPECT_NE(find_edge(g, "gpu3", "numa1"), nullptr);
  const Edge* smp = find_edge(g, "socket0", "socket1");
  ASSERT_NE(smp, nullptr);
  EXPECT_EQ(smp->kind, "smp");
}

TEST(TopoGraph, DirectNvlinksMergedPerPair) {
  // DGX-1-like fragment: gpu0-gpu1 by 2 links (seen from both ends), gpu0-gpu2 by 1; one NPU link.
  Topology t = load_topo("pcie_2socket.json");
  auto link = [](int g, int l, int r) { return NvLink{g, l, 2, "", "gpu", r}; };
  t.nvlinks = {link(0, 0, 1), link(0, 1, 1), link(1, 0, 0), link(1, 1, 0), link(0, 2, 2), link(2, 0, 0),
               NvLink{3, 0, 2, "", "cpu", -1}};
  const Graph g = build_graph(t);
  const Edge* e01 = find_edge(g, "gpu0", "gpu1");
  ASSERT_NE(e01, nullptr);
  EXPECT_EQ(e01->count, 2);  // not 4: each end reports the same links
  EXPECT_DOUBLE_EQ(e01->est_GBps, 50.0);
  EXPECT_EQ(e01->label, "NVLink2 x2");
  const Edge* e02 = find_edge(g, "gpu0", "gpu2");
  ASSERT_NE(e02, nullptr);
  EXPECT_EQ(e02->count, 1);
  EXPECT_EQ(find_edge(g, "gpu1", "gpu2"), nullptr);
  const Edge* cpu = find_edge(g, "gpu3", "socket1");  // gpu3 sits on numa1 = socket1
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->kind, "nvlink");
  EXPECT_EQ(count_kind(g, "nvlink"), 3);
}

TEST(TopoGraph, GpuWithoutNumaGoesToSocket0) {
  Topology t = load_topo("pcie_2socket.json");
  t.gpus[3].numa_node = -1;
  t.gpus[3].pcie_max_gen = 0;  // current gen used when max unknown
  t.gpus[3].pcie_gen = 4;
  const Graph g = build_graph(t);
  const Edge* e = find_edge(g, "gpu3", "socket0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->label, "PCIe Gen4 x16");
  EXPECT_EQ(find_edge(g, "gpu3", "numa1"), nullptr);

  // nothing discovered on the host side: a synthetic socket0 still anchors the GPUs
  Topology bare;
  bare.gpus = t.gpus;
  for (auto& gp : bare.gpus) gp.numa_node = -1;
  const Graph gb = build_graph(bare);
  ASSERT_NE(find_node(gb, "socket0"), nullptr);
  EXPECT_EQ(count_kind(gb, "pcie"), 4);
  EXPECT_EQ(count_kind(gb, "smp"), 0);
}

TEST(TopoGraph, DotOutput) {
  const std::string dot = to_dot(build_graph(load_topo("nvswitch_8gpu.json")));
  EXPECT_EQ(dot.rfind("graph gpsm_topology {", 0), 0u);
  EXPECT_EQ(dot.back(), '\n');
  EXPECT_NE(dot.find("\"nvswitch\" [label=\"NVSwitch fabric\""), std::string::npos);
  for (int i = 0; i < 8; ++i) {
    const std::string edge = "\"gpu" + std::to_string(i) + "\" -- \"nvswitch\" [color=\"#76b900\"";
    EXPECT_NE(dot.find(edge), std::string::npos) << edge;
  }
  EXPECT_NE(dot.find("label=\"NVLink4 x18\\n450 GB/s\""), std::string::npos);
  EXPECT_NE(dot.find("\"gpu0\" -- \"numa0\" [color=\"#1f4e9c\", penwidth=1.5, label=\"PCIe Gen5 x16\\n63.0 GB/s\"]"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"gpu7\" -- \"numa1\""), std::string::npos);
  EXPECT_NE(dot.find("\"socket0\" -- \"socket1\""), std::string::npos);
  EXPECT_NE(dot.find("\"socket1\" -- \"numa1\""), std::string::npos);
  EXPECT_EQ(dot.find('\n' + std::string("cpus")), std::string::npos);  // raw newlines never inside labels
  // braces balanced, one statement per line
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}'));

  const std::string pdot = to_dot(build_graph(load_topo("pcie_2socket.json")));
  EXPECT_EQ(pdot.find("#76b900"), std::string::npos);  // no NVLink styling at all
  EXPECT_NE(pdot.find("label=\"PCIe Gen3 x16\\n15.8 GB/s\""), std::string::npos) << pdot;
}

// ---- validation --------------------------------------------------------------------------------

TEST(TopoValidate, FixturesAreConsistent) {
  EXPECT_EQ(validate(load_topo("nvswitch_8gpu.json")), std::vector<std::string>{});
  EXPECT_EQ(validate(load_topo("pcie_2socket.json")), std::vector<std::string>{});
}

TEST(TopoValidate, FlagsBrokenTopology) {
  Topology t = load_topo("pcie_2socket.json");
  t.gpus[1].numa_node = 5;
  t.peers.push_back({0, 9, true, 0, false});
  for (auto& p : t.peers)
    if (p.src == 2 && p.dst == 3) p.access = false;  // 3->2 still allowed
  t.sockets[1].numa_nodes.push_back(7);
  t.nvlinks.push_back({0, 0, 2, "", "gpu", 1});  // gpu1 has no link back, yet has NVLinks itself
  t.nvlinks.push_back({1, 0, 2, "", "switch", -1});
  t.gpus[3].pci_bus_id = t.gpus[2].pci_bus_id;
  const auto p = validate(t);
  EXPECT_TRUE(contains(p, "gpu 1: numa_node 5 refers to a missing NUMA node")) << ::testing::PrintToString(p);
  EXPECT_TRUE(contains(p, "unknown dst gpu 9"));
  EXPECT_TRUE(contains(p, "peer access asymmetric: 2->3 is denied, 3->2 is allowed"));
  EXPECT_TRUE(contains(p, "socket 1 refers to missing NUMA node 7"));
  EXPECT_TRUE(contains(p, "NVLinks asymmetric"));
  EXPECT_TRUE(contains(p, "shared with another GPU"));
  EXPECT_EQ(p.size(), 6u) << ::testing::PrintToString(p);

  Topology u = load_topo("nvswitch_8gpu.json");
  u.gpus[0].cpu_affinity = "3-1";
  u.gpus[1].pcie_gen = 7;
  u.nvlinks[0].gpu = 42;
  u.peers[0].access = false;  // native atomics without access, and asymmetric with 1->0
  const auto q = validate(u);
  EXPECT_TRUE(contains(q, "gpu 0: bad cpu_affinity"));
  EXPECT_TRUE(contains(q, "PCIe generation 7"));
  EXPECT_TRUE(contains(q, "unknown gpu 42"));
  EXPECT_TRUE(contains(q, "native atomics without peer access"));
  EXPECT_TRUE(contains(q, "peer access asymmetric: 0->1"));
}

// ---- cpulists ----------------------------------------------------------------------------------

TEST(Cpulist, ParseAndFormat) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist("5"), std::vector<int>{5});
  EXPECT_EQ(parse_cpulist(""), std::vector<int>{});
  EXPECT_EQ(parse_cpulist(" \n"), std::vector<int>{});
  EXPECT_EQ(parse_cpulist("4,0-2,1"), (std::vector<int>{0, 1, 2, 4}));
  EXPECT_THROW(parse_cpulist("3-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("a"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("1,,2"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("1,"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("-1"), std::invalid_argument);
  EXPECT_THROW(parse_cpulist("1-2-3"), std::invalid_argument);

  EXPECT_EQ(format_cpulist({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(format_cpulist({11, 10, 8, 3, 2, 1, 0, 8}), "0-3,8,10-11");
  EXPECT_EQ(format_cpulist({}), "");
  EXPECT_EQ(format_cpulist({7}), "7");
  for (const char* s : {"0-55,112-167", "0,2,4,6", "1-2", "0-1,4-5", "63"})
    EXPECT_EQ(format_cpulist(parse_cpulist(s)), s);
}

TEST(Cpulist, BindThread) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &before)) allowed.push_back(c);
  ASSERT_FALSE(allowed.empty());

  ASSERT_TRUE(bind_thread_to_cpus({allowed.front()}));
  cpu_set_t now;
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(CPU_COUNT(&now), 1);
  EXPECT_TRUE(CPU_ISSET(allowed.front(), &now));

  errno = 0;
  EXPECT_FALSE(bind_thread_to_cpus({}));
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_FALSE(bind_thread_to_cpus({100000}));  // no such cpu
  EXPECT_EQ(errno, EINVAL);

  ASSERT_TRUE(bind_thread_to_cpus(allowed));  // restore
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &before));
}

// ---- sysfs -------------------------------------------------------------------------------------

TEST(Sysfs, FakeTwoSocketTree) {
  Topology t = two_gpus_for_sysfs();
  probe_sysfs(t, std::string(GPSM_FIXTURES_DIR) + "/sysfs_2socket");
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[0].id, 0);
  EXPECT_EQ(t.numa_nodes[0].cpulist, "0-1,4-5");
  EXPECT_EQ(t.numa_nodes[0].mem_bytes, 16384000LL * 1024);
  EXPECT_EQ(t.numa_nodes[1].cpulist, "2-3,6-7");
  EXPECT_EQ(t.numa_nodes[1].mem_bytes, 8192000LL * 1024);
  ASSERT_EQ(t.sockets.size(), 2u);
  EXPECT_EQ(t.sockets[0].id, 0);
  EXPECT_EQ(t.sockets[0].cpulist, "0-1,4-5");
  EXPECT_EQ(t.sockets[0].numa_nodes, std::vector<int>{0});
  EXPECT_EQ(t.sockets[1].cpulist, "2-3,6-7");
  EXPECT_EQ(t.sockets[1].numa_nodes, std::vector<int>{1});
  EXPECT_EQ(t.gpus[0].numa_node, 0);
  EXPECT_EQ(t.gpus[0].cpu_affinity, "0-1,4-5");
  EXPECT_EQ(t.gpus[1].numa_node, 1);
  EXPECT_EQ(t.gpus[1].cpu_affinity, "2-3,6-7");
  EXPECT_TRUE(t.notes.empty()) << ::testing::PrintToString(t.notes);
  EXPECT_EQ(validate(t), std::vector<std::string>{});

  const Graph g = build_graph(t);
  EXPECT_NE(find_edge(g, "gpu0", "numa0"), nullptr);
  EXPECT_NE(find_edge(g, "gpu1", "numa1"), nullptr);
  EXPECT_EQ(find_edge(g, "gpu1", "numa1")->label, "PCIe");  // no NVML: link unknown
}

TEST(Sysfs, MissingDeviceAndMinusOne) {
  TempTree tree;
  tree.write("bus/pci/devices/0000:86:00.0/numa_node", "-1\n");
  Topology t = two_gpus_for_sysfs();
  t.gpus[1].numa_node = 3;  // stale value must be replaced by the file's -1
  Gpu missing;
  missing.index = 2;
  missing.pci_bus_id = "0000:c1:00.0";
  t.gpus.push_back(missing);
  probe_sysfs(t, tree.root.string());
  EXPECT_EQ(t.gpus[1].numa_node, -1);
  EXPECT_EQ(t.gpus[1].cpu_affinity, "2-3,6-7");
  EXPECT_EQ(t.gpus[2].numa_node, -1);
  EXPECT_TRUE(contains(t.notes, "gpu 2: no ")) << ::testing::PrintToString(t.notes);
}

TEST(Sysfs, FallbackWithoutNodeDirectory) {
  TempTree tree;
  fs::remove_all(tree.root / "devices/system/node");
  Topology t = two_gpus_for_sysfs();
  probe_sysfs(t, tree.root.string());
  ASSERT_EQ(t.numa_nodes.size(), 1u);
  EXPECT_EQ(t.numa_nodes[0].id, 0);
  EXPECT_EQ(t.numa_nodes[0].cpulist, "0-7");
  EXPECT_EQ(t.numa_nodes[0].mem_bytes, 0);  // unknown outside the real /sys
  EXPECT_TRUE(contains(t.notes, "no NUMA nodes")) << ::testing::PrintToString(t.notes);
  ASSERT_EQ(t.sockets.size(), 2u);  // cpu topology is still there
  EXPECT_EQ(t.sockets[0].numa_nodes, std::vector<int>{0});
  EXPECT_TRUE(t.sockets[1].numa_nodes.empty());
  // gpu 1's numa_node file says 1, which the fallback does not list: kept, noted, flagged
  EXPECT_EQ(t.gpus[1].numa_node, 1);
  EXPECT_TRUE(contains(t.notes, "gpu 1 reports NUMA node 1"));
  EXPECT_TRUE(contains(validate(t), "gpu 1: numa_node 1 refers to a missing NUMA node"));

  // no cpu topology either: one socket spanning the online cpus
  fs::remove_all(tree.root / "devices/system/cpu");
  fs::create_directories(tree.root / "devices/system/cpu");
  tree.write("devices/system/cpu/online", "0-3\n");
  Topology u;
  probe_sysfs(u, tree.root.string());
  ASSERT_EQ(u.sockets.size(), 1u);
  EXPECT_EQ(u.sockets[0].cpulist, "0-3");
  EXPECT_EQ(u.sockets[0].numa_nodes, std::vector<int>{0});
  EXPECT_EQ(u.numa_nodes[0].cpulist, "0-3");
}

TEST(Sysfs, ThisMachine) {
  if (!fs::exists("/sys/devices/system/cpu")) GTEST_SKIP() << "no /sys on this machine";
  Topology t;
  probe_sysfs(t);
  ASSERT_FALSE(t.numa_nodes.empty());
  ASSERT_FALSE(t.sockets.empty());
  size_t cpus = 0;
  for (const auto& s : t.sockets) cpus += parse_cpulist(s.cpulist).size();
  EXPECT_GT(cpus, 0u);
  EXPECT_EQ(validate(t), std::vector<std::string>{});
}

// ---- NVML --------------------------------------------------------------------------------------

TEST(Nvml, ProbeFailsCleanlyOrWorks) {
  Topology t = load_topo("pcie_2socket.json");  // bus ids that this machine does not have
  t.notes.clear();
  t.driver_version.clear();
  std::string why;
  const bool ok = probe_nvml(t, &why);
  EXPECT_FALSE(ok);  // either no NVML, or no GPU at these bus ids
  EXPECT_FALSE(why.empty());
  ASSERT_FALSE(t.notes.empty());
  EXPECT_NE(t.notes.front().find("NVML"), std::string::npos) << t.notes.front();
  if (why.find("unavailable") != std::string::npos) {
    // no driver (CI): nothing filled, nothing touched
    EXPECT_NE(why.find("libnvidia-ml.so.1"), std::string::npos) << why;
    EXPECT_TRUE(t.driver_version.empty());
    int sm = -5, mem = -5;
    EXPECT_FALSE(read_current_clocks("0000:3b:00.0", &sm, &mem));
    EXPECT_EQ(sm, -5);
    EXPECT_EQ(mem, -5);
  } else {
    // a driver is present: it answered, and said which GPU it could not find
    EXPECT_FALSE(t.driver_version.empty());
    EXPECT_NE(why.find("gpu 0 (00000000:3B:00.0)"), std::string::npos) << why;
  }
  // a second call reuses the one dlopen and still does not crash
  Topology empty;
  std::string why2;
  const bool ok2 = probe_nvml(empty, &why2);
  EXPECT_EQ(ok2, why2.empty());
  EXPECT_TRUE(probe_nvml(empty, nullptr) || !empty.notes.empty());
}
