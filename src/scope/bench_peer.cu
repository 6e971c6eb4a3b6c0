// GPU<->GPU copy-engine tests: cudaMemcpyPeerAsync with and without peer access, one way and both
// ways, issued by the source (push, nvbandwidth's "CE write") or the destination ("CE read").
#include "scope/bench_common.cuh"

namespace gpsm::scope {
namespace {


// src_buf/dst_buf copy spec: copy issued on `issuer`, verify on dst device.
CopySpec peer_spec(DeviceBuffer& src, DeviceBuffer& dst, int issuer, unsigned seed) {
  CopySpec c;
  c.issue_device = issuer;
  c.copy = [&src, &dst](cudaStream_t s, size_t n) {
    GPSM_CUDA(cudaMemcpyPeerAsync(dst.p, dst.device, src.p, src.device, n, s));
  };
  c.poison = [&dst](size_t n) {
    DeviceGuard g(dst.device);
    GPSM_CUDA(cudaMemset(dst.p, 0, n));
  };
  c.verify = [&dst, seed](size_t n) {
    DeviceGuard g(dst.device);
    return check_pattern_device(dst.p, n, seed, nullptr) == 0;
  };
  return c;
}

class CePeer : public Test {
 public:
  CePeer(bool peer, bool read) : peer_(peer), read_(read) {}
  std::string name() const override {
    return peer_ ? (read_ ? "ce_peer_read" : "ce_peer") : "ce_nopeer";
  }
  std::string group() const override { return "gpu-gpu"; }
  std::string description() const override {
    if (!peer_) return "cudaMemcpyPeerAsync with peer access disabled (staged by the driver), size sweep";
    return read_ ? "cudaMemcpyPeerAsync with peer access, issued by the destination (CE read), peak size"
                 : "cudaMemcpyPeerAsync with peer access, issued by the source (CE write), size sweep, one way and both ways";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w;
    if (peer_) return missing_peer_access(o, t);
    return {};
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const auto sizes = read_ ? std::vector<std::uint64_t>{o.peak_size} : sweep_sizes(o);
    const size_t maxn = sizes.back();
    for (auto [a, b] : device_pairs(o)) {
      if (o.progress) o.progress(name() + " " + gpu_name(a) + "->" + gpu_name(b));
      if (peer_) {
        std::string why;
        if (!enable_peer(a, b, &why) || !enable_peer(b, a, &why)) throw gpsm::Error("gpsm: " + why);
      } else {
        disable_peer(a, b);
        disable_peer(b, a);
      }
      DeviceBuffer sa(a, maxn), db(b, maxn), sb(b, maxn), da(a, maxn);
      fill_device(sa, 11);
      fill_device(sb, 12);
      std::map<std::string, std::string> p{{"src", gpu_name(a)}, {"dst", gpu_name(b)}, {"direction", "uni"}};
      // staged (no peer) copies may block the host while enqueueing: never gate those
      const bool gated = peer_;
      std::vector<CopySpec> one{peer_spec(sa, db, read_ ? b : a, 11)};
      auto s1 = run_copy_sweep(one, sizes, o, gated);
      r.series.push_back(uni_series(s1, 0, sizes, gpu_name(a) + "->" + gpu_name(b), p));
      if (read_) continue;
      std::vector<CopySpec> two{peer_spec(sa, db, a, 11), peer_spec(sb, da, b, 12)};
      auto s2 = run_copy_sweep(two, sizes, o, gated);
      p["direction"] = "bidir";
      r.series.push_back(sum_series(s2, sizes, gpu_name(a) + "<->" + gpu_name(b) + " bidir", p));
    }
    if (!peer_) {  // leave peer access as the rest of gpsm expects it: on where possible
      for (auto [a, b] : device_pairs(o)) enable_peer(a, b);
    }
  }

 private:
  bool peer_, read_;
};

}  // namespace

void register_peer_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<CePeer>(true, false));
  v.push_back(std::make_unique<CePeer>(true, true));
  v.push_back(std::make_unique<CePeer>(false, false));
}

}  // namespace gpsm::scope
