// GPU-SM's H5 (Fig 9): a small structure in another GPU's memory that every thread reads (a
// convolution's filter, the vector of a matrix-vector product): n x n threads, thread i reads word
// i mod (structure words), does 10 FLOPs, stores its own result. Read through the read-only cache
// (__ldg, const __restrict__) or with the L1 bypassed (__ldcg), per structure size and occupancy;
// the same structure in the GPU's own memory, read through the cache, for reference.
// On GPUs since Volta the L1 and the shared memory share one array: lowering the occupancy with
// shared memory (the paper's method) also shrinks the read-only cache, which the figures show.
#include <algorithm>

#include <fmt/format.h>

#include "scope/bench_common.cuh"
#include "scope/remote_kernels.cuh"
#include "scope/remote_study.hpp"

namespace gpsm::scope {
namespace {

using namespace remote;

constexpr std::uint32_t kStructureSeed = 0x5eed3u;

int device_attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  GPSM_CUDA(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

class RemoteCache : public Test {
 public:
  std::string name() const override { return kCache; }
  std::string group() const override { return kGroup; }
  std::string description() const override {
    return "GPU-SM H5 (Fig 9): every thread reads a small structure in another GPU's memory (word i mod size, "
           "10 FLOPs/datum): kernel time vs structure size, through the read-only cache (ldg) or not (ldcg), "
           "per occupancy; the structure local for reference";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "structure_bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w + " (remote memory is another GPU's)";
    Options first = o;
    first.quick = true;
    return missing_peer_access(first, t);
  }

  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int a = o.devices[0], b = o.devices[1];
    std::string why;
    if (!enable_peer(a, b, &why)) throw gpsm::Error("gpsm: " + why);
    const CacheSweep sw = cache_sweep(o.quick);
    const std::uint64_t max_bytes = sw.structure_bytes.back();
    DeviceBuffer remote(b, max_bytes), local(a, max_bytes), out(a, std::size_t(sw.n) * sw.n * sizeof(float));
    for (DeviceBuffer* s : {&remote, &local}) {
      DeviceGuard g(s->device);
      fill_inputs(static_cast<float*>(s->p), max_bytes / 4, kStructureSeed, nullptr);
      GPSM_CUDA(cudaDeviceSynchronize());
    }
    DeviceGuard g(a);
    DeviceStream st(a);
    const int max_by_threads = device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, a) / kThreads;
    const auto smem_sm = std::uint64_t(device_attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor, a));
    const auto reserved = std::uint64_t(device_attr(cudaDevAttrReservedSharedMemoryPerBlock, a));
    const auto optin = std::uint64_t(device_attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, a));
    const int top = *std::max_element(sw.blocks_per_sm.begin(), sw.blocks_per_sm.end());

    auto series = [&](DeviceBuffer& where, bool ldg, int k) {
      const std::size_t smem = smem_for_blocks(k, max_by_threads, smem_sm, reserved, optin);
      const int got = cache_prepare(ldg, smem);
      if (got < 1)
        throw gpsm::Error(fmt::format("gpsm: {}: no block of {} threads with {} B of shared memory fits an SM of {}",
                                      name(), kThreads, smem, gpu_name(a)));
      const double occ = double(got * kThreads) / device_attr(cudaDevAttrMaxThreadsPerMultiProcessor, a);
      const bool is_remote = where.device != a;
      const char* read = ldg ? "ldg" : "ldcg";
      Series s;
      s.label = fmt::format("{} {}, occupancy {:.4g}", is_remote ? "remote" : "local", read, occ);
      s.params = {{"where", is_remote ? "remote" : "local"},
                  {"read", read},
                  {"occupancy", fmt::format("{:.4g}", occ)},
                  {"blocks_per_sm", std::to_string(got)},
                  {"smem_per_block", std::to_string(smem)},
                  {"flops_per_datum", std::to_string(sw.flops)},
                  {"n", std::to_string(sw.n)},
                  {"initiator", gpu_name(a)},
                  {"target", gpu_name(where.device)}};
      if (o.progress) o.progress(name() + " " + s.label);
      for (std::uint64_t bytes : sw.structure_bytes) {
        CacheArgs c;
        c.structure = static_cast<const float*>(where.p);
        c.out = static_cast<float*>(out.p);
        c.n = sw.n;
        c.mask = std::uint32_t(bytes / 4 - 1);
        c.flops = sw.flops;
        c.ldg = ldg;
        GPSM_CUDA(cudaMemsetAsync(out.p, 0, out.bytes, st.s));
        StreamOp op{a, st.s, [c, smem](cudaStream_t s) { cache_launch(c, smem, s); }};
        auto t = time_op(op, o);
        const bool ok = cache_check(c, kStructureSeed, st.s) == 0;
        s.points.push_back(make_point(double(bytes), double(sw.n) * sw.n * 4, t, "us", ok));
      }
      cache_prepare(ldg, 0);  // the default carveout again
      r.series.push_back(std::move(s));
    };
    for (int k : sw.blocks_per_sm)
      for (bool ldg : {true, false}) series(remote, ldg, k);
    series(local, true, top);
  }
};

}  // namespace

void register_remote_cache_tests(std::vector<std::unique_ptr<Test>>& v) { v.push_back(std::make_unique<RemoteCache>()); }

}  // namespace gpsm::scope
