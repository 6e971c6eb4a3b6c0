// All-to-all at once: every GPU pushes to every other concurrently with the copy engines; per GPU
// egress and ingress (sum of its copies' bandwidths, nvbandwidth's convention) and the total.
#include "scope/bench_common.cuh"

namespace gpsm::scope {
namespace {


class AllToAll : public Test {
 public:
  std::string name() const override { return "all_to_all_ce"; }
  std::string group() const override { return "all-to-all"; }
  std::string description() const override {
    return "every GPU copies to every other at once (cudaMemcpyPeerAsync, one stream per pair): per-GPU egress "
           "(source-issued) and ingress (destination-issued) over the span of that GPU's streams, and the total";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w;
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
    // Two passes: copies issued by the source (push) give each GPU's egress from the span of its
    // own streams; issued by the destination (pull) they give its ingress the same way. Totals
    // divide all bytes by the host-clock span of the whole batch. (Summing per-stream bandwidths
    // would over-count: a stream that ends last runs alone at full speed.)
    const int n = int(o.devices.size());
    for (int pass = 0; pass < 2; ++pass) {
      const bool push = pass == 0;
      std::vector<std::unique_ptr<DeviceBuffer>> dst;
      std::vector<CopySpec> specs;
      for (auto [a, b] : pairs) {
        dst.push_back(std::make_unique<DeviceBuffer>(b, maxn));
        DeviceBuffer* s = src[a].get();
        DeviceBuffer* d = dst.back().get();
        const unsigned seed = 70 + a;
        specs.push_back({push ? a : b,
                         [s, d](cudaStream_t st, size_t m) { GPSM_CUDA(cudaMemcpyPeerAsync(d->p, d->device, s->p, s->device, m, st)); },
                         [d](size_t m) { DeviceGuard g(d->device); GPSM_CUDA(cudaMemset(d->p, 0, m)); },
                         [d, seed](size_t m) { DeviceGuard g(d->device); return check_pattern_device(d->p, m, seed, nullptr) == 0; }});
      }
      if (o.progress) o.progress(name() + " " + std::to_string(n) + " GPUs, " + (push ? "push" : "pull"));
      auto sw = run_copy_sweep(specs, sizes, o, true);
      const std::string dir = push ? "egress" : "ingress";
      for (int d : o.devices) {
        Series se{gpu_name(d) + " " + dir, {{"gpu", gpu_name(d)}, {"direction", dir}}, {}};
        for (size_t i = 0; i < sizes.size(); ++i) {
          std::vector<double> t;  // seconds per round (one copy of each pair)
          for (double span : sw.spans[i].device_span_s.at(d)) t.push_back(span / sw.iters[i]);
          se.points.push_back(make_point(double(sizes[i]), double(sizes[i]) * (n - 1), t, "GB/s", sw.ok[i]));
        }
        r.series.push_back(std::move(se));
      }
      Series tot{std::string("total (") + (push ? "push" : "pull") + ")", {{"direction", "total"}, {"initiator", push ? "src" : "dst"}}, {}};
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::vector<double> t;
        for (double span : sw.spans[i].host_span_s) t.push_back(span / sw.iters[i]);
        tot.points.push_back(make_point(double(sizes[i]), double(sizes[i]) * pairs.size(), t, "GB/s", sw.ok[i]));
      }
      r.series.push_back(std::move(tot));
    }
  }
};

}  // namespace

void register_all_to_all_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<AllToAll>()); }

}  // namespace gpsm::scope
