// GPU-SM's H1 (Fig 4): remote loads and stores reach the link's bandwidth, alone and concurrently.
// One GPU loads from another's memory, stores to it, both at once, and copies the same bytes with
// cudaMemcpyPeer (the paper's "copy" bar); then every GPU at once reaches its ring neighbour, and
// with three or more GPUs all of them load from the first (several GPUs on one target).
//
// Remote memory is the peer's cudaMalloc memory reached through peer access: the same physical
// path as the runtime's distributed array (whose VMM range maps each chunk of the peer's memory
// into the loading GPU's page table the same way, 2 MiB pages), and scope sits below the runtime.
#include <map>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"
#include "scope/remote_kernels.cuh"
#include "scope/remote_study.hpp"

namespace gpsm::scope {
namespace {

using namespace remote;

constexpr std::uint32_t kReadSeed = 90, kWriteSeed = 190;  // + the device: every buffer its own data

class RemoteBandwidth : public Test {
 public:
  std::string name() const override { return kBandwidth; }
  std::string group() const override { return kGroup; }
  std::string description() const override {
    return "GPU-SM H1 (Fig 4): 16-B SM loads / stores to another GPU's memory from every SM: one GPU reading, "
           "writing, both at once, cudaMemcpyPeer of the same bytes; every GPU at once to its ring neighbour; "
           "3+ GPUs: all reading the first";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "none"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w + " (remote memory is another GPU's)";
    Options all = o;
    all.quick = false;  // the ring and the many-to-one pattern use every pair
    return missing_peer_access(all, t);
  }

  void run(const Options& o, const topo::Topology& machine, TestResult& r) override {
    Options all = o;
    all.quick = false;
    for (auto [p, q] : device_pairs(all)) {
      std::string why;
      if (!enable_peer(p, q, &why)) throw gpsm::Error("gpsm: " + why);
    }
    release();
    bytes_ = bandwidth_bytes(o.quick);
    for (int d : o.devices) {
      src_[d] = std::make_unique<DeviceBuffer>(d, bytes_);
      dst_[d] = std::make_unique<DeviceBuffer>(d, bytes_);
      fill_device(*src_[d], kReadSeed + d);
      streams_[d].push_back(std::make_unique<DeviceStream>(d));
      streams_[d].push_back(std::make_unique<DeviceStream>(d));
      blocks_[d] = 4 * sm_count(d);
      outs_[d] = std::make_unique<DeviceBuffer>(d, blocks_[d] * sizeof(std::uint32_t));
    }
    const int a = o.devices[0], b = o.devices[1];
    const std::string A = gpu_name(a), B = gpu_name(b);
    const std::string peak = std::to_string(link_peak_GBps(machine, a, b));
    auto one = [&](const std::string& access, std::map<std::string, std::string> extra) {
      std::map<std::string, std::string> p{{"access", access}, {"pattern", "one"}, {"gpus", "1"},
                                           {"initiator", A}, {"target", B}, {"link_peak_GBps", peak}};
      for (auto& [k, v] : extra) p[k] = v;
      return p;
    };
    if (o.progress) o.progress(name() + " " + A + " <-> " + B);
    r.series.push_back({A + " reads " + B, one("read", {{"src", B}, {"dst", A}}), {measure(o, {read(a, b, 0)})}});
    r.series.push_back({A + " writes " + B, one("write", {{"src", A}, {"dst", B}}), {measure(o, {write(a, b, 0)})}});
    r.series.push_back({A + " reads+writes " + B, one("read+write", {{"src", A}, {"dst", B}, {"direction", "bidir"}}),
                        {measure(o, {read(a, b, 0), write(a, b, 1)})}});
    r.series.push_back({A + " copies from " + B + " (cudaMemcpyPeer)", one("copy", {{"src", B}, {"dst", A}}),
                        {measure(o, {copy(a, b)})}});
    const int n = int(o.devices.size());
    const std::string ng = std::to_string(n);
    std::vector<Op> reads, writes, to_first;
    for (int i = 0; i < n; ++i) {
      const int d = o.devices[i], next = o.devices[(i + 1) % n];
      reads.push_back(read(d, next, 0));
      writes.push_back(write(d, next, 0));
      if (i > 0) to_first.push_back(read(d, a, 0));
    }
    if (o.progress) o.progress(name() + " " + ng + " GPUs at once");
    r.series.push_back({ng + " GPUs each read the next", {{"access", "read"}, {"pattern", "ring"}, {"gpus", ng}}, {measure(o, reads)}});
    r.series.push_back({ng + " GPUs each write the next", {{"access", "write"}, {"pattern", "ring"}, {"gpus", ng}}, {measure(o, writes)}});
    if (n >= 3)
      r.series.push_back({std::to_string(n - 1) + " GPUs read " + A,
                          {{"access", "read"}, {"pattern", "to_first"}, {"gpus", std::to_string(n - 1)}, {"target", A}},
                          {measure(o, to_first)}});
    release();
  }

 private:
  // One operation to time and how to check what it moved.
  struct Op {
    StreamOp op;
    std::function<void()> poison;
    std::function<bool()> verify;
  };

  // GPU r loads all of q's source buffer (XOR per block into r's out buffer).
  Op read(int r, int q, int stream) {
    const void* src = src_[q]->p;
    const std::size_t n = bytes_;
    const int blocks = blocks_[r];
    auto* out = static_cast<std::uint32_t*>(outs_[r]->p);
    const std::uint32_t want = expected_xor(q);
    cudaStream_t s = streams_[r][stream]->s;
    return {{r, s, [=](cudaStream_t st) { xor_read_launch(src, n, blocks, out, st); }},
            [=] {  // an earlier measurement's XORs must not pass for this one's
              DeviceGuard g(r);
              GPSM_CUDA(cudaMemset(out, 0, blocks * sizeof(std::uint32_t)));
              GPSM_CUDA(cudaDeviceSynchronize());
            },
            [=] {
              DeviceGuard g(r);
              return xor_of(out, blocks, s) == want;
            }};
  }
  // A destination zeroed before the timed run (finished before the non-blocking timed streams
  // start), and checked after it for the pattern of `seed` over its first n bytes.
  static std::function<void()> cleared(DeviceBuffer* d) {
    return [d] {
      DeviceGuard g(d->device);
      GPSM_CUDA(cudaMemset(d->p, 0, d->bytes));
      GPSM_CUDA(cudaDeviceSynchronize());
    };
  }
  static std::function<bool()> holds_pattern(DeviceBuffer* d, std::size_t n, std::uint32_t seed) {
    return [d, n, seed] {
      DeviceGuard g(d->device);
      return check_pattern_device(d->p, n, seed, nullptr) == 0;
    };
  }

  // GPU w stores the pattern into all of q's destination buffer.
  Op write(int w, int q, int stream) {
    DeviceBuffer* d = dst_[q].get();
    const std::size_t n = bytes_;
    const int blocks = blocks_[w];
    const std::uint32_t seed = kWriteSeed + w;
    return {{w, streams_[w][stream]->s, [=](cudaStream_t st) { write_pattern_launch(d->p, n, blocks, seed, st); }},
            cleared(d), holds_pattern(d, n, seed)};
  }
  // q's source copied into r's destination by the copy engines, issued by r.
  Op copy(int r, int q) {
    DeviceBuffer* s = src_[q].get();
    DeviceBuffer* d = dst_[r].get();
    const std::size_t n = bytes_;
    const std::uint32_t seed = kReadSeed + q;
    return {{r, streams_[r][0]->s, [=](cudaStream_t st) { GPSM_CUDA(cudaMemcpyPeerAsync(d->p, r, s->p, q, n, st)); }},
            cleared(d), holds_pattern(d, n, seed)};
  }

  // Streams first (their destructors wait for the work on them), then the buffers.
  void release() {
    streams_.clear();
    src_.clear();
    dst_.clear();
    outs_.clear();
    blocks_.clear();
    xors_.clear();  // they depend on the size
  }

  std::uint32_t expected_xor(int q) {
    auto it = xors_.find(q);
    if (it == xors_.end()) it = xors_.emplace(q, pattern_xor(bytes_ / 4, kReadSeed + q)).first;
    return it->second;
  }

  // All ops at once: bytes moved by all of them over the span of the batch (one op: its own time;
  // ops of one GPU: that GPU's events; several GPUs: the host clock from the gate's release).
  Point measure(const Options& o, std::vector<Op> ops) {
    for (auto& op : ops) op.poison();
    std::vector<StreamOp> sops;
    for (auto& op : ops) sops.push_back(op.op);
    const int iters = pick_iters(sops[0], o);
    ConcurrentSpans spans;
    auto t = time_concurrent(sops, iters, o.reps, o.warmup, true, &spans);
    std::vector<double> per_round;
    std::map<int, int> per_device;
    for (auto& op : ops) per_device[op.op.device]++;
    if (ops.size() == 1) {
      per_round = t[0];
    } else if (per_device.size() == 1) {
      for (double sp : spans.device_span_s.at(ops[0].op.device)) per_round.push_back(sp / iters);
    } else {
      for (double sp : spans.host_span_s) per_round.push_back(sp / iters);
    }
    bool ok = true;
    for (auto& op : ops) ok = op.verify() && ok;
    return make_point(0, double(bytes_) * double(ops.size()), per_round, "GB/s", ok);
  }

  std::size_t bytes_ = 0;
  std::map<int, std::unique_ptr<DeviceBuffer>> src_, dst_, outs_;
  std::map<int, std::vector<std::unique_ptr<DeviceStream>>> streams_;
  std::map<int, int> blocks_;
  std::map<int, std::uint32_t> xors_;
};

}  // namespace

void register_remote_bandwidth_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<RemoteBandwidth>());
}

}  // namespace gpsm::scope
