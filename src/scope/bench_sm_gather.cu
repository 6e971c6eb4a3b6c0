// Random 4-B loads from a GPU's own memory (a graph kernel's x[col] gathers): each load touches
// its own 32-B sector, so what the memory system moves is sectors, not payload. Per footprint,
// from inside the L2 to far beyond it, the sectors' rate in GB/s (loads x 32 B / time). The
// simulator's graph kernels read their gathers as sectors (docs/sim.md "Gathers beyond the L2").
#include <algorithm>

#include "common/splitmix.hpp"
#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"
#include "common/pattern.hpp"

namespace gpsm::scope {
namespace {

// The word load i reads: splitmix64(i ^ seed) & mask (mask + 1 words: a power of two).
GPSM_HD std::uint32_t gather_index(std::uint64_t i, std::uint64_t seed, std::uint32_t mask) {
  return static_cast<std::uint32_t>(splitmix64(i ^ seed)) & mask;
}

// Load i reads word gather_index(i, seed, mask) (mask + 1 words: a power of two); every thread XORs
// what it read and the block's XOR lands in out (atomicXor: one word, checked on the host).
__global__ void gather_words(const std::uint32_t* __restrict__ data, std::uint32_t mask, std::uint64_t seed,
                             std::uint64_t loads, unsigned* out) {
  std::uint32_t acc = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < loads;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    acc ^= data[gather_index(i, seed, mask)];
  atomicXor(out, acc);
}

class SmGather : public Test {
 public:
  std::string name() const override { return "sm_gather_local"; }
  std::string group() const override { return "sm"; }
  std::string description() const override {
    return "random 4-B loads from the GPU's own memory (one 32-B sector each), every SM, per footprint: "
           "sectors moved per second (loads x 32 B / time)";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "footprint_bytes"; }
  std::string waived(const Options& o, const topo::Topology&) const override {
    return too_few_gpus(o, 1);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const std::vector<std::uint64_t> foot =
        o.quick ? std::vector<std::uint64_t>{16ull << 20, 1ull << 30}
                : std::vector<std::uint64_t>{16ull << 20, 32ull << 20, 64ull << 20, 128ull << 20, 256ull << 20, 1ull << 30};
    const std::uint64_t loads = o.quick ? (8ull << 20) : (32ull << 20);
    for (int d : o.devices) {
      if (o.progress) o.progress(name() + " " + gpu_name(d));
      DeviceGuard g(d);
      DeviceStream st(d);
      DeviceBuffer data(d, foot.back());
      unsigned* out = nullptr;
      GPSM_CUDA(cudaMalloc(&out, sizeof(unsigned)));
      const unsigned seed = 101;
      fill_pattern_device(data.p, foot.back(), seed, st.s);
      const int blocks = sm_count(d) * 8;
      Series s{gpu_name(d) + " random 4-B loads", {{"src", gpu_name(d)}, {"dst", gpu_name(d)}}, {}};
      try {
        for (std::uint64_t f : foot) {
          const std::uint32_t mask = static_cast<std::uint32_t>(f / 4 - 1);
          std::vector<double> t;
          bool ok = true;
          for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
            const std::uint64_t gseed = 7919ull * rep + f;
            GPSM_CUDA(cudaMemsetAsync(out, 0, sizeof(unsigned), st.s));
            const double sec = time_on_stream(st.s, [&] {
              gather_words<<<blocks, 256, 0, st.s>>>(static_cast<const std::uint32_t*>(data.p), mask, gseed, loads, out);
              GPSM_CUDA_LAUNCH();
            });
            unsigned got = 0;
            GPSM_CUDA(cudaMemcpy(&got, out, sizeof(got), cudaMemcpyDeviceToHost));
            if (rep == o.warmup) {  // one repetition checked on the host: the XOR of every word read
              std::uint32_t want = 0;
              for (std::uint64_t i = 0; i < loads; ++i) want ^= pattern_word(gather_index(i, gseed, mask), seed);
              ok = got == want;
            }
            if (rep >= o.warmup) t.push_back(sec);
          }
          s.points.push_back(make_point(double(f), double(loads) * 32, t, "GB/s", ok));
        }
      } catch (...) {
        cudaFree(out);
        throw;
      }
      cudaFree(out);
      r.series.push_back(std::move(s));
    }
  }
};

}  // namespace

void register_sm_gather_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<SmGather>()); }

}  // namespace gpsm::scope
