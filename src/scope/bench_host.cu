// CPU<->GPU copies from pageable, pinned and write-combined host memory, with the driving thread
// and the host pages bound to each NUMA node (Comm|Scope thesis ch. 4: affinity and anisotropy).
#include <cstring>

#include "scope/bench_common.cuh"
#include "scope/numa_bind.hpp"

namespace gpsm::scope {
namespace {

class HostCopy : public Test {
 public:
  explicit HostCopy(HostKind k) : kind_(k) {}
  std::string name() const override {
    return kind_ == HostKind::pageable ? "host_pageable" : kind_ == HostKind::pinned ? "host_pinned" : "host_wc";
  }
  std::string group() const override { return "host-gpu"; }
  std::string description() const override {
    return std::string("cudaMemcpyAsync host<->GPU from ") + to_string(kind_) +
           " memory, thread and pages bound to each NUMA node, size sweep" +
           (kind_ == HostKind::pinned ? ", one way and both ways" : ", one way");
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology&) const override {
    return too_few_gpus(o, 1);
  }
  void run(const Options& o, const topo::Topology& t, TestResult& r) override {
    auto sizes = sweep_sizes(o);
    const size_t maxn = sizes.back();
    std::vector<topo::NumaNode> nodes = t.numa_nodes;
    if (nodes.empty()) nodes.push_back({-1, "", 0});
    // pageable copies are synchronous for the host: enqueueing them behind a gate would deadlock
    const bool gated = kind_ != HostKind::pageable;
    for (int d : o.devices) {
      for (const auto& node : nodes) {
        if (o.quick && node.id != nodes.front().id) continue;  // quick: the first NUMA node only
        const std::string host = "host_numa" + std::to_string(std::max(node.id, 0));
        const std::string g = "gpu" + std::to_string(d);
        if (o.progress) o.progress(name() + " " + host + "<->" + g);
        NumaBinding bind(node.id, node.cpulist);
        HostBuffer hsrc(kind_, maxn), hdst(kind_, maxn);
        DeviceBuffer dsrc(d, maxn), ddst(d, maxn);
        fill_host(hsrc, maxn, 21, d);
        fill_device(dsrc, 22);
        CopySpec h2d{d,
                     [&](cudaStream_t s, size_t n) { GPSM_CUDA(cudaMemcpyAsync(ddst.p, hsrc.p, n, cudaMemcpyHostToDevice, s)); },
                     [&](size_t n) { DeviceGuard dg(d); GPSM_CUDA(cudaMemset(ddst.p, 0, n)); },
                     [&](size_t n) { DeviceGuard dg(d); return check_pattern_device(ddst.p, n, 21, nullptr) == 0; }};
        CopySpec d2h{d,
                     [&](cudaStream_t s, size_t n) { GPSM_CUDA(cudaMemcpyAsync(hdst.p, dsrc.p, n, cudaMemcpyDeviceToHost, s)); },
                     [&](size_t n) { std::memset(hdst.p, 0, n); },
                     [&](size_t n) { return verify_host(hdst, n, 22, d); }};
        std::map<std::string, std::string> p{{"src", host}, {"dst", g}, {"direction", "uni"},
                                             {"memory", to_string(kind_)}, {"numa", std::to_string(node.id)}};
        std::vector<CopySpec> a{h2d};
        auto s = run_copy_sweep(a, sizes, o, gated);
        r.series.push_back(uni_series(s, 0, sizes, host + "->" + g, p));
        std::vector<CopySpec> b{d2h};
        s = run_copy_sweep(b, sizes, o, gated);
        std::swap(p["src"], p["dst"]);
        r.series.push_back(uni_series(s, 0, sizes, g + "->" + host, p));
        if (kind_ == HostKind::pinned) {
          std::vector<CopySpec> both{h2d, d2h};
          s = run_copy_sweep(both, sizes, o, gated);
          p["direction"] = "bidir";
          p["src"] = host;
          p["dst"] = g;
          r.series.push_back(sum_series(s, sizes, host + "<->" + g + " bidir", p));
        }
      }
    }
  }

 private:
  HostKind kind_;
};

}  // namespace

void register_host_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<HostCopy>(HostKind::pageable));
  v.push_back(std::make_unique<HostCopy>(HostKind::pinned));
  v.push_back(std::make_unique<HostCopy>(HostKind::write_combined));
}

}  // namespace gpsm::scope
