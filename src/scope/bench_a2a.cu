// All-to-all at once: every GPU pushes to every other concurrently with the copy engines; per GPU
// egress and ingress (sum of its copies' bandwidths, nvbandwidth's convention) and the total.
#include "scope/bench_common.cuh"

namespace gpsm::scope {
namespace {

std::string gpu(int d) { return "gpu" + std::to_string(d); }

class AllToAll : public Test {
 public:
  std::string name() const override { return "all_to_all_ce"; }
  std::string group() const override { return "all-to-all"; }
  std::string description() const override {
    return "every GPU copies to every other at once (cudaMemcpyPeerAsync, one stream per pair): per-GPU egress, "
           "ingress and total";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (o.devices.size() < 2) return "needs two GPUs; " + std::to_string(o.devices.size()) + " selected";
    Options all = o;
    all.quick = false;  // every pair takes part, quick or not
    return missing_peer_access(all, t);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    Options all = o;
    all.quick = false;
    const auto pairs = device_pairs(all);
    for (auto [a, b] : pairs) {
      std::string why;
      if (!enable_peer(a, b, &why)) throw gpsm::Error("gpsm: " + why);
    }
    std::vector<std::uint64_t> sizes = o.quick ? std::vector<std::uint64_t>{64u << 20}
                                               : std::vector<std::uint64_t>{1u << 20, 16u << 20, 256u << 20};
    const size_t maxn = sizes.back();
    std::map<int, std::unique_ptr<DeviceBuffer>> src;
    for (int d : o.devices) {
      src[d] = std::make_unique<DeviceBuffer>(d, maxn);
      fill_device(*src[d], 70 + d);
    }
    std::vector<std::unique_ptr<DeviceBuffer>> dst;
    std::vector<CopySpec> specs;
    for (auto [a, b] : pairs) {
      dst.push_back(std::make_unique<DeviceBuffer>(b, maxn));
      DeviceBuffer* s = src[a].get();
      DeviceBuffer* d = dst.back().get();
      const unsigned seed = 70 + a;
      specs.push_back({a, [s, d](cudaStream_t st, size_t n) { GPSM_CUDA(cudaMemcpyPeerAsync(d->p, d->device, s->p, s->device, n, st)); },
                       [d](size_t n) { DeviceGuard g(d->device); GPSM_CUDA(cudaMemset(d->p, 0, n)); },
                       [d, seed](size_t n) { DeviceGuard g(d->device); return check_pattern_device(d->p, n, seed, nullptr) == 0; }});
    }
    if (o.progress) o.progress(name() + " " + std::to_string(o.devices.size()) + " GPUs");
    auto s = run_copy_sweep(specs, sizes, o, true);
    // per GPU: egress = its copies out, ingress = copies in
    for (int dir = 0; dir < 2; ++dir) {
      for (int d : o.devices) {
        SweepSamples sub;
        for (size_t k = 0; k < pairs.size(); ++k)
          if ((dir == 0 ? pairs[k].first : pairs[k].second) == d) sub.t.push_back(s.t[k]);
        sub.ok = s.ok;
        r.series.push_back(sum_series(sub, sizes, gpu(d) + (dir == 0 ? " egress" : " ingress"),
                                      {{"gpu", gpu(d)}, {"direction", dir == 0 ? "egress" : "ingress"}}));
      }
    }
    r.series.push_back(sum_series(s, sizes, "total", {{"direction", "total"}}));
  }
};

}  // namespace

void register_all_to_all_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<AllToAll>()); }

}  // namespace gpsm::scope
