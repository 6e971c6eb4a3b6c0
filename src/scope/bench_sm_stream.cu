// A loop of streaming kernels over the GPU's own memory, as a stencil's iterations are: each pass
// reads one buffer and writes the other (16-B words, every SM), the next pass the other way. Per
// footprint (both buffers), from inside the L2 to far beyond it, the bytes read and written per
// second in the loop's steady state: inside the L2 the passes' loads hit what the pass before
// wrote and their stores need not reach the HBM; beyond it every pass streams through the HBM. The
// simulator does not read it yet: the branch sim-l2-loop tried it as the loop's DRAM rate (docs/sim.md
// "The L2 between iterations, measured; tried in the model, not merged").
#include "scope/bench_common.cuh"
#include "common/pattern.hpp"

namespace gpsm::scope {
namespace {

// dst[i] = src[i] + 1 on every 32-bit lane: the data after P passes is the pattern + P, checked.
__global__ void stream_pass(const uint4* __restrict__ src, uint4* __restrict__ dst, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    uint4 v = src[i];
    v.x += 1;
    v.y += 1;
    v.z += 1;
    v.w += 1;
    dst[i] = v;
  }
}

class SmStream : public Test {
 public:
  std::string name() const override { return "sm_stream_local"; }
  std::string group() const override { return "sm"; }
  std::string description() const override {
    return "a loop of copy kernels between two buffers of the GPU's own memory (each pass reads one, "
           "writes the other), per footprint of both: bytes read + written per second in the steady state";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "footprint_bytes"; }
  std::string waived(const Options& o, const topo::Topology&) const override { return too_few_gpus(o, 1); }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    constexpr std::uint64_t MiB = 1ull << 20;
    const std::vector<std::uint64_t> foot =
        o.quick ? std::vector<std::uint64_t>{16 * MiB, 32 * MiB, 64 * MiB, 1024 * MiB}
                : std::vector<std::uint64_t>{8 * MiB,  16 * MiB, 24 * MiB, 32 * MiB,  40 * MiB,  48 * MiB,  56 * MiB,
                                             64 * MiB, 80 * MiB, 96 * MiB, 128 * MiB, 256 * MiB, 1024 * MiB};
    constexpr int kPasses = 20;  // per timed repetition (an even number: the data ends where it started)
    constexpr int kWarmPasses = 4;
    for (int d : o.devices) {
      if (o.progress) o.progress(name() + " " + gpu_name(d));
      DeviceGuard g(d);
      DeviceStream st(d);
      DeviceBuffer a(d, foot.back() / 2), b(d, foot.back() / 2);
      const int blocks = sm_count(d) * 8;
      const unsigned seed = 211;
      Series s{gpu_name(d) + " copy loop (read + write)", {{"src", gpu_name(d)}, {"dst", gpu_name(d)}}, {}};
      for (std::uint64_t f : foot) {
        const std::uint64_t half = f / 2, n = half / sizeof(uint4);
        fill_pattern_device(a.p, half, seed, st.s);
        auto* pa = static_cast<uint4*>(a.p);
        auto* pb = static_cast<uint4*>(b.p);
        auto passes = [&](int k) {
          for (int i = 0; i < k; ++i) {
            stream_pass<<<blocks, 256, 0, st.s>>>(i % 2 ? pb : pa, i % 2 ? pa : pb, n);
            GPSM_CUDA_LAUNCH();
          }
        };
        passes(kWarmPasses);  // the L2 reaches the loop's steady state
        std::vector<double> t;
        for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
          const double sec = time_on_stream(st.s, [&] { passes(kPasses); });
          if (rep >= o.warmup) t.push_back(sec / kPasses);
        }
        // every word of the buffer the data ends in: the pattern + the passes it went through
        const std::uint32_t total = kWarmPasses + kPasses * std::uint32_t(o.warmup + o.reps);
        const bool ok = check_pattern_device(a.p, half, seed, st.s, total) == 0;
        s.points.push_back(make_point(double(f), double(f), t, "GB/s", ok));
      }
      r.series.push_back(std::move(s));
    }
  }
};

}  // namespace

void register_sm_stream_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<SmStream>()); }

}  // namespace gpsm::scope
