// GPU-SM's H2-H4 (Figs 5-8): a kernel whose threads each read a datum, do some FLOPs on it and
// write the result, a share of the reads and writes going to another GPU's memory. Remote rows
// make the first blocks all remote (batch: the accesses come at once); remote columns give every
// row of blocks a few remote blocks (spread: they come throughout the kernel).
//  H2 (Fig 6) when the kernel moves its remote bytes (per-block %globaltimer stamps);
//  H3 (Fig 7) its time against % remote for several FLOPs per datum;
//  H4 (Fig 8) the same at lower occupancies (dynamic shared memory per block, as the paper).
// Remote memory: the peer's memory through peer access (bench_remote_bandwidth.cu says why).
#include <algorithm>

#include <fmt/format.h>

#include "scope/bench_common.cuh"
#include "scope/remote_kernels.cuh"
#include "scope/remote_study.hpp"

namespace gpsm::scope {
namespace {

using namespace remote;

int device_attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  GPSM_CUDA(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

// The matrices of one run: inputs and outputs on the GPU running the kernel (a) and on the GPU
// whose memory is remote (b), each n x n floats.
struct Matrices {
  DeviceBuffer in_a, out_a, in_b, out_b;
  Matrices(int a, int b, std::uint32_t n)
      : in_a(a, bytes(n)), out_a(a, bytes(n)), in_b(b, bytes(n)), out_b(b, bytes(n)) {
    {
      DeviceGuard g(a);
      fill_inputs(static_cast<float*>(in_a.p), std::uint64_t(n) * n, kSeedLocal, nullptr);
      GPSM_CUDA(cudaDeviceSynchronize());
    }
    DeviceGuard g(b);
    fill_inputs(static_cast<float*>(in_b.p), std::uint64_t(n) * n, kSeedRemote, nullptr);
    GPSM_CUDA(cudaDeviceSynchronize());
  }
  static std::size_t bytes(std::uint32_t n) { return std::size_t(n) * n * sizeof(float); }
  MixArgs args(std::uint32_t n, Distribution d, double read_percent, double write_percent, int flops) const {
    MixArgs m;
    m.in_local = static_cast<const float*>(in_a.p);
    m.in_remote = static_cast<const float*>(in_b.p);
    m.out_local = static_cast<float*>(out_a.p);
    m.out_remote = static_cast<float*>(out_b.p);
    m.n = n;
    m.dist = d;
    m.read_cut = cut_for_percent(n, read_percent);
    m.write_cut = cut_for_percent(n, write_percent);
    m.flops = flops;
    return m;
  }
  // Zeroed and finished: cudaMemset may return early, and the timed kernels run on non-blocking
  // streams that do not wait for it.
  void poison() {
    for (DeviceBuffer* b : {&out_a, &out_b}) {
      DeviceGuard g(b->device);
      GPSM_CUDA(cudaMemset(b->p, 0, b->bytes));
      GPSM_CUDA(cudaDeviceSynchronize());
    }
  }
};

std::string occupancy_text(int blocks, int dev) {
  const double occ = double(blocks * kThreads) / device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
  return fmt::format("{:.4g}", occ);
}

class RemoteMixTest : public Test {
 public:
  std::string group() const override { return kGroup; }
  std::string unit() const override { return "us"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w + " (remote memory is another GPU's)";
    Options first = o;
    first.quick = true;  // only the first pair is used
    return missing_peer_access(first, t);
  }

 protected:
  // The kernel's time at each percent (reads and writes alike), verified, as one series.
  static Series sweep(const Options& o, Matrices& m, int a, int b, std::uint32_t n, Distribution d, int flops,
                      const std::vector<double>& percents, std::size_t smem, int blocks_per_sm) {
    Series s;
    s.label = fmt::format("{}, {} FLOPs/datum, occupancy {}", to_string(d), flops, occupancy_text(blocks_per_sm, a));
    s.params = {{"distribution", to_string(d)},
                {"flops_per_datum", std::to_string(flops)},
                {"occupancy", occupancy_text(blocks_per_sm, a)},
                {"blocks_per_sm", std::to_string(blocks_per_sm)},
                {"smem_per_block", std::to_string(smem)},
                {"n", std::to_string(n)},
                {"initiator", gpu_name(a)},
                {"target", gpu_name(b)}};
    DeviceStream st(a);
    for (double pct : percents) {
      const MixArgs args = m.args(n, d, pct, pct, flops);
      m.poison();
      StreamOp op{a, st.s, [args, smem](cudaStream_t s) { mix_launch(args, smem, s); }};
      auto t = time_op(op, o);
      DeviceGuard g(a);
      const bool ok = mix_check(args, st.s) == 0;
      s.points.push_back(make_point(pct, 2.0 * Matrices::bytes(n), t, "us", ok));
    }
    return s;
  }

  static void enable_pair(int a, int b) {
    std::string why;
    if (!enable_peer(a, b, &why)) throw gpsm::Error("gpsm: " + why);
  }
};

class RemoteIntensity : public RemoteMixTest {
 public:
  std::string name() const override { return kIntensity; }
  std::string description() const override {
    return "GPU-SM H2-H3 (Fig 7): kernel time vs % of reads and writes to another GPU, batched (remote rows) or "
           "spread (remote columns), per FLOPs per datum, full occupancy; slowdown = time / the 0 % time";
  }
  std::string x_name() const override { return "remote_percent"; }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int a = o.devices[0], b = o.devices[1];
    enable_pair(a, b);
    const MixSweep sw = intensity_sweep(o.quick);
    Matrices m(a, b, sw.n);
    DeviceGuard g(a);
    const int blocks = mix_prepare(0);
    for (Distribution d : {Distribution::batch, Distribution::spread})
      for (int f : sw.flops) {
        if (o.progress) o.progress(fmt::format("{} {} {} FLOPs", name(), to_string(d), f));
        r.series.push_back(sweep(o, m, a, b, sw.n, d, f, sw.percents, 0, blocks));
      }
  }
};

class RemoteOccupancy : public RemoteMixTest {
 public:
  std::string name() const override { return kOccupancy; }
  std::string description() const override {
    return "GPU-SM H4 (Fig 8): kernel time vs % of remote reads and writes at 10 FLOPs/datum, batch and spread, "
           "occupancy lowered by dynamic shared memory per block (CUDA's occupancy calculator gives the value)";
  }
  std::string x_name() const override { return "remote_percent"; }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int a = o.devices[0], b = o.devices[1];
    enable_pair(a, b);
    const MixSweep sw = occupancy_sweep(o.quick);
    Matrices m(a, b, sw.n);
    DeviceGuard g(a);
    const int max_by_threads = device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, a) / kThreads;
    const auto smem_sm = std::uint64_t(device_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, a));
    const auto reserved = std::uint64_t(device_attr(cudaDevAttrReservedSharedMemoryPerBlock, a));
    const auto optin = std::uint64_t(device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, a));
    for (Distribution d : {Distribution::batch, Distribution::spread})
      for (int k : sw.blocks_per_sm) {
        const std::size_t smem = smem_for_blocks(k, max_by_threads, smem_sm, reserved, optin);
        const int got = mix_prepare(smem);
        if (got < 1)
          throw gpsm::Error(fmt::format("gpsm: {}: no block of {} threads with {} B of shared memory fits an SM of {}",
                                        name(), kThreads, smem, gpu_name(a)));
        if (o.progress) o.progress(fmt::format("{} {} {} blocks/SM", name(), to_string(d), got));
        r.series.push_back(sweep(o, m, a, b, sw.n, d, sw.flops.front(), sw.percents, smem, got));
      }
    mix_prepare(0);  // back to the default carveout for whoever launches the kernel next
  }
};

class RemoteTimeline : public RemoteMixTest {
 public:
  std::string name() const override { return kTimeline; }
  std::string description() const override {
    return "GPU-SM H2 (Figs 5-6): 20 % of reads and 10 % of writes remote, 10 FLOPs/datum: microseconds from the "
           "kernel's start until blocks that had ended had moved each tenth of the remote (and of all) bytes, "
           "batch (remote rows) vs spread (remote columns) vs all local";
  }
  std::string x_name() const override { return "bytes_done_percent"; }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int a = o.devices[0], b = o.devices[1];
    enable_pair(a, b);
    const TimelineConfig c = timeline_config(o.quick);
    Matrices m(a, b, c.n);
    DeviceGuard g(a);
    mix_prepare(0);
    DeviceStream st(a);
    const std::uint32_t gx = (c.n + kBlockX - 1) / kBlockX, gy = (c.n + kBlockY - 1) / kBlockY;
    const std::size_t nblocks = std::size_t(gx) * gy;
    DeviceBuffer start(a, nblocks * 8), end(a, nblocks * 8);
    std::vector<unsigned long long> hs(nblocks), he(nblocks);
    struct Run {
      const char* dist;
      Distribution d;
      double rp, wp;
      const char* label;
    };
    const Run runs[] = {{"batch", Distribution::batch, c.read_percent, c.write_percent, "batch (remote rows)"},
                        {"spread", Distribution::spread, c.read_percent, c.write_percent, "spread (remote columns)"},
                        {"none", Distribution::spread, 0, 0, "all local"}};
    for (const Run& run : runs) {
      if (o.progress) o.progress(name() + " " + run.dist);
      const MixArgs args = m.args(c.n, run.d, run.rp, run.wp, c.flops);
      const auto bb = block_bytes(c.n, run.d, args.read_cut, args.write_cut);
      std::vector<double> remote_b(nblocks), all_b(nblocks);
      double remote_total = 0, all_total = 0;
      for (std::size_t i = 0; i < nblocks; ++i) {
        remote_b[i] = bb[i].remote;
        all_b[i] = bb[i].all;
        remote_total += bb[i].remote;
        all_total += bb[i].all;
      }
      m.poison();
      std::vector<std::vector<double>> t_remote(c.fractions.size()), t_all(c.fractions.size());
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        mix_launch_traced(args, static_cast<unsigned long long*>(start.p), static_cast<unsigned long long*>(end.p), st.s);
        GPSM_CUDA(cudaMemcpyAsync(hs.data(), start.p, nblocks * 8, cudaMemcpyDeviceToHost, st.s));
        GPSM_CUDA(cudaMemcpyAsync(he.data(), end.p, nblocks * 8, cudaMemcpyDeviceToHost, st.s));
        GPSM_CUDA(cudaStreamSynchronize(st.s));
        if (rep < o.warmup) continue;
        const auto fa = fraction_times(hs, he, all_b, c.fractions);
        for (std::size_t k = 0; k < fa.size(); ++k) t_all[k].push_back(fa[k]);
        if (remote_total > 0) {
          const auto fr = fraction_times(hs, he, remote_b, c.fractions);
          for (std::size_t k = 0; k < fr.size(); ++k) t_remote[k].push_back(fr[k]);
        }
      }
      const bool ok = mix_check(args, st.s) == 0;
      std::map<std::string, std::string> p{{"distribution", run.dist},
                                           {"read_percent", fmt::format("{:g}", run.rp)},
                                           {"write_percent", fmt::format("{:g}", run.wp)},
                                           {"flops_per_datum", std::to_string(c.flops)},
                                           {"n", std::to_string(c.n)},
                                           {"initiator", gpu_name(a)},
                                           {"target", gpu_name(b)}};
      auto series = [&](const std::string& traffic, double total, const std::vector<std::vector<double>>& t) {
        Series s{std::string(run.label) + ": " + traffic + " bytes", p, {}};
        s.params["traffic"] = traffic;
        s.params["total_bytes"] = fmt::format("{:.0f}", total);
        for (std::size_t k = 0; k < c.fractions.size(); ++k)
          s.points.push_back(make_point(c.fractions[k] * 100, c.fractions[k] * total, t[k], "us", ok));
        return s;
      };
      if (remote_total > 0) r.series.push_back(series("remote", remote_total, t_remote));
      r.series.push_back(series("all", all_total, t_all));
    }
  }
};

}  // namespace

void register_remote_mix_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<RemoteTimeline>());
  v.push_back(std::make_unique<RemoteIntensity>());
  v.push_back(std::make_unique<RemoteOccupancy>());
}

}  // namespace gpsm::scope
