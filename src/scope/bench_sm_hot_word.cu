// Stores and atomics from many warps to one word (sssp's `changed` flag: lane 0 of every warp
// holding a row whose distance fell stores 1 into the same int). The memory system serializes
// requests to one address at its L2 slice; what the simulator needs is the time each warp's
// request adds to a kernel that is otherwise busy with its own loads (docs/sim.md "Hot words").
// The kernel: every thread streams `kLoadsPerThread` coalesced words (a row kernel's edge loads),
// then lane 0 of every `every`-th warp stores to (or atomically adds to) one word. Per request
// count, the kernel's time less the same kernel without requests, divided by the requests; each
// repetition times both, back to back (the clocks ramp). A third series has no loads, to tell an
// added cost from one hidden behind the loads.
#include <algorithm>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"
#include "common/pattern.hpp"

namespace gpsm::scope {
namespace {

constexpr int kThreads = 256;
constexpr int kLoadsPerThread = 4;
enum HotMode : int { kNone = 0, kStore = 1, kAtomic = 2 };

// Thread t loads data[j * threads + t] for j < loads (0: none); warp w's lane 0 stores the XOR of
// its warp's words to xors[w] (checked on the host) and, when w % every == 0, stores 1 into *hot
// (kStore) or adds 1 to it (kAtomic).
__global__ void hot_word_kernel(const std::uint32_t* __restrict__ data, int loads, int mode, unsigned every,
                                unsigned* hot, std::uint32_t* xors) {
  const std::uint64_t t = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint32_t acc = 0;
  for (int j = 0; j < loads; ++j) acc ^= data[j * threads + t];
  for (int off = 16; off > 0; off /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
  const std::uint64_t warp = t / 32;
  if ((threadIdx.x & 31) == 0) {
    xors[warp] = acc;
    if (warp % every == 0) {
      if (mode == kStore) *hot = 1u;
      else if (mode == kAtomic) atomicAdd(hot, 1u);
    }
  }
}

class SmHotWord : public Test {
 public:
  std::string name() const override { return "lat_hot_word"; }
  std::string group() const override { return "sm"; }
  std::string description() const override {
    return "a warp's store (or atomicAdd) to one word that every warp of a kernel targets (sssp's changed "
           "flag): the time one request adds, among streaming loads and alone, per request count (kernel "
           "time less the same kernel without the requests, over the requests)";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "requests"; }
  std::string waived(const Options& o, const topo::Topology&) const override { return too_few_gpus(o, 1); }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    // 2^19 warps: sssp rmat:20's row kernel launches 524288 warps, up to 383 K of them store.
    const unsigned blocks = 1u << 16;
    const std::uint64_t warps = std::uint64_t(blocks) * kThreads / 32;
    const std::uint64_t threads = std::uint64_t(blocks) * kThreads;
    const std::uint64_t words = threads * kLoadsPerThread;
    // Every request, then fewer: the first point is the one a machine model keeps.
    const std::vector<unsigned> everys = o.quick ? std::vector<unsigned>{1, 4} : std::vector<unsigned>{1, 2, 4, 8};
    const unsigned seed = 53;
    std::uint32_t want_xor = 0;  // every word is loaded once (the same pattern on every GPU)
    for (std::uint64_t i = 0; i < words; ++i) want_xor ^= pattern_word(i, seed);
    for (int d : o.devices) {
      if (o.progress) o.progress(name() + " " + gpu_name(d));
      DeviceGuard g(d);
      DeviceStream st(d);
      DeviceBuffer data(d, words * 4);
      DeviceBuffer xors(d, warps * 4);
      DeviceBuffer hot(d, 4);
      fill_pattern_device(data.p, words * 4, seed, st.s);
      GPSM_CUDA(cudaStreamSynchronize(st.s));
      // One launch: its time, and whether the hot word (`requests` warps stored or added) and the
      // warps' XORs came out right.
      auto launch = [&](int loads, int mode, unsigned every, std::uint64_t requests, bool check) {
        GPSM_CUDA(cudaMemsetAsync(hot.p, 0, 4, st.s));
        const double sec = time_on_stream(st.s, [&] {
          hot_word_kernel<<<blocks, kThreads, 0, st.s>>>(static_cast<const std::uint32_t*>(data.p), loads, mode, every,
                                                         static_cast<unsigned*>(hot.p), static_cast<std::uint32_t*>(xors.p));
          GPSM_CUDA_LAUNCH();
        });
        bool ok = true;
        if (check) {
          unsigned got = 0;
          GPSM_CUDA(cudaMemcpy(&got, hot.p, 4, cudaMemcpyDeviceToHost));
          ok = mode == kNone ? got == 0 : mode == kStore ? got == 1 : got == requests;
          std::vector<std::uint32_t> x(warps);
          GPSM_CUDA(cudaMemcpy(x.data(), xors.p, warps * 4, cudaMemcpyDeviceToHost));
          std::uint32_t all = 0;
          for (std::uint32_t v : x) all ^= v;
          ok = ok && all == (loads > 0 ? want_xor : 0u);
        }
        return std::make_pair(sec, ok);
      };
      struct Kind {
        const char* what;
        int loads, mode;
      };
      const Kind kinds[] = {{"store, among streaming loads", kLoadsPerThread, kStore},
                            {"atomicAdd, among streaming loads", kLoadsPerThread, kAtomic},
                            {"store, alone (no loads)", 0, kStore}};
      for (const Kind& k : kinds) {
        Series s{gpu_name(d) + " one word, " + k.what, {{"src", gpu_name(d)}, {"dst", gpu_name(d)}}, {}};
        for (unsigned every : everys) {
          const std::uint64_t requests = (warps + every - 1) / every;  // warps 0, every, 2 every, ...
          std::vector<double> t;
          bool ok = true;
          for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
            const bool check = rep == o.warmup;
            const auto base = launch(k.loads, kNone, every, requests, check);
            const auto with = launch(k.loads, k.mode, every, requests, check);
            if (check) ok = base.second && with.second;
            if (rep >= o.warmup) t.push_back((with.first - base.first) / double(requests));
          }
          s.points.push_back(make_point(double(requests), 0, t, "us", ok));
        }
        r.series.push_back(std::move(s));
      }
    }
  }
};

}  // namespace

void register_sm_hot_word_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<SmHotWord>()); }

}  // namespace gpsm::scope
