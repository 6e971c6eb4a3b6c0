// The L2's rate for line-sized requests, inside one kernel (no launch gaps): every SM reads a
// buffer that the L2 holds, again and again, with loads that skip L1 (ld.global.cg), and a second
// series copies between two halves of such a buffer (reads + writes). Per footprint, bytes per
// second. The simulator's l2_GBps (the L2 term of a kernel's roofline) reads the reads' rate
// (sim/model_gpu.hpp); it was an estimate (~2x HBM) before this test.
#include "scope/bench_common.cuh"
#include "common/pattern.hpp"

namespace gpsm::scope {
namespace {

// rounds x n 16-B words read through L2 only; the XOR of everything read goes to *out.
__global__ void l2_read(const uint4* __restrict__ p, std::uint64_t n, int rounds, unsigned* out) {
  unsigned acc = 0;
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (int r = 0; r < rounds; ++r)
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
      const uint4 v = __ldcg(p + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  atomicXor(out, acc);
}

// rounds passes of b[i] = a[i] + 1 then a[i] = b[i] + 1 (32-bit lanes) within one kernel: each
// thread copies only its own words, so no pass waits for another block; after R rounds a = a0 + 2R.
__global__ void l2_copy(uint4* __restrict__ a, uint4* __restrict__ b, std::uint64_t n, int rounds) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (int r = 0; r < rounds; ++r) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
      uint4 v = __ldcg(a + i);
      v.x += 1, v.y += 1, v.z += 1, v.w += 1;
      __stcg(b + i, v);
    }
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride) {
      uint4 v = __ldcg(b + i);
      v.x += 1, v.y += 1, v.z += 1, v.w += 1;
      __stcg(a + i, v);
    }
  }
}

class SmL2 : public Test {
 public:
  std::string name() const override { return "sm_l2_local"; }
  std::string group() const override { return "sm"; }
  std::string description() const override {
    return "the L2's rate inside one kernel: every SM reads a buffer the L2 holds, round after round, skipping L1 "
           "(16-B ld.global.cg); and copies between two halves of it (reads + writes); bytes per second per footprint";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "footprint_bytes"; }
  std::string waived(const Options& o, const topo::Topology&) const override { return too_few_gpus(o, 1); }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    constexpr std::uint64_t MiB = 1ull << 20;
    const std::vector<std::uint64_t> foot = o.quick ? std::vector<std::uint64_t>{4 * MiB, 16 * MiB}
                                                    : std::vector<std::uint64_t>{2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 24 * MiB, 32 * MiB};
    const unsigned seed = 307;
    for (int d : o.devices) {
      if (o.progress) o.progress(name() + " " + gpu_name(d));
      DeviceGuard g(d);
      DeviceStream st(d);
      DeviceBuffer buf(d, foot.back());
      unsigned* out = nullptr;
      GPSM_CUDA(cudaMalloc(&out, sizeof(unsigned)));
      const int blocks = sm_count(d) * 8;
      Series reads{gpu_name(d) + " reads", {{"src", gpu_name(d)}, {"dst", gpu_name(d)}, {"mechanism", "read"}}, {}};
      Series copies{gpu_name(d) + " copy (read + write)", {{"src", gpu_name(d)}, {"dst", gpu_name(d)}, {"mechanism", "copy"}}, {}};
      try {
        for (std::uint64_t f : foot) {
          const std::uint64_t n = f / sizeof(uint4);
          // about 64 MB of reads a kernel at the smallest footprint and more at the larger ones:
          // long enough (tens of us) that the launch and the first round's HBM misses are noise
          // odd: the XOR of every word read is then the buffer's XOR, not 0 (which a kernel that read
          // nothing would also give)
          const int rounds = static_cast<int>(std::max<std::uint64_t>(16, (256 * MiB) / f)) | 1;
          fill_pattern_device(buf.p, f, seed, st.s);
          std::vector<double> t;
          bool ok = true;
          std::uint32_t want = 0;  // the XOR of the buffer's words (an odd number of rounds)
          for (std::uint64_t i = 0; i < f / 4; ++i) want ^= pattern_word(i, seed);
          for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
            GPSM_CUDA(cudaMemsetAsync(out, 0, sizeof(unsigned), st.s));
            const double sec = time_on_stream(st.s, [&] {
              l2_read<<<blocks, 256, 0, st.s>>>(static_cast<const uint4*>(buf.p), n, rounds, out);
              GPSM_CUDA_LAUNCH();
            });
            unsigned got = 0;
            GPSM_CUDA(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
            ok = ok && got == want;
            if (rep >= o.warmup) t.push_back(sec);
          }
          reads.points.push_back(make_point(double(f), double(f) * rounds, t, "GB/s", ok));

          // the copy: halves a and b of the footprint; checked word by word after the repetitions
          const std::uint64_t half = f / 2, hn = half / sizeof(uint4);
          const int crounds = std::max(8, rounds / 4);
          auto* pa = static_cast<uint4*>(buf.p);
          auto* pb = reinterpret_cast<uint4*>(static_cast<char*>(buf.p) + half);
          fill_pattern_device(pa, half, seed, st.s);
          t.clear();
          for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
            const double sec = time_on_stream(st.s, [&] {
              l2_copy<<<blocks, 256, 0, st.s>>>(pa, pb, hn, crounds);
              GPSM_CUDA_LAUNCH();
            });
            if (rep >= o.warmup) t.push_back(sec);
          }
          const std::uint32_t total = 2u * std::uint32_t(crounds) * std::uint32_t(o.warmup + o.reps);
          const bool cok = check_pattern_device(pa, half, seed, st.s, total) == 0;
          // bytes read + written: 2 passes a round, each reading and writing a half
          copies.points.push_back(make_point(double(f), 2.0 * double(f) * crounds, t, "GB/s", cok));
        }
      } catch (...) {
        cudaFree(out);
        throw;
      }
      cudaFree(out);
      r.series.push_back(std::move(reads));
      r.series.push_back(std::move(copies));
    }
  }
};

}  // namespace

void register_sm_l2_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<SmL2>()); }

}  // namespace gpsm::scope
