// Unified Memory (Comm|Scope thesis ch. 5): prefetch and fault-driven (coherence) bandwidth
// CPU<->GPU and GPU<->GPU versus size, and page-fault latency by a linked-list traversal.
#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <random>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"

namespace gpsm::scope {
namespace {

constexpr int kHost = -1;  // location id for the CPU

cudaMemLocation loc(int where) {
  cudaMemLocation l{};
  if (where == kHost) {
    l.type = cudaMemLocationTypeHost;
    l.id = 0;
  } else {
    l.type = cudaMemLocationTypeDevice;
    l.id = where;
  }
  return l;
}
std::string name_of(int where) { return where == kHost ? std::string("host") : gpu_name(where); }

struct Managed {
  void* p = nullptr;
  size_t bytes;
  explicit Managed(size_t n) : bytes(n) { GPSM_CUDA(cudaMallocManaged(&p, n)); }
  ~Managed() { cudaFree(p); }
};

void prefetch_sync(Managed& m, size_t n, int where, cudaStream_t s) {
  GPSM_CUDA(cudaMemPrefetchAsync(m.p, n, loc(where), 0, s));
  GPSM_CUDA(cudaStreamSynchronize(s));
}

// (src, dst) locations: host->each gpu, each gpu->host, gpu pairs.
std::vector<std::pair<int, int>> um_paths(const Options& o) {
  std::vector<std::pair<int, int>> v;
  for (int d : o.devices) {
    if (o.quick && d != o.devices.front()) continue;
    v.emplace_back(kHost, d);
    v.emplace_back(d, kHost);
  }
  for (auto pr : device_pairs(o)) v.push_back(pr);
  return v;
}

std::vector<std::uint64_t> um_sizes(const Options& o) {
  // managed allocations stay far below device memory (a managed oversubscription can hang a GPU)
  const std::uint64_t hi = std::min<std::uint64_t>(o.max_size, 1ull << 30);
  const std::uint64_t lo = std::max<std::uint64_t>(o.min_size, 64ull << 10);
  return pow2_sweep(lo, hi, o.quick ? 4 : 2);
}

bool verify_managed(Managed& m, size_t n, unsigned seed, int where, cudaStream_t s) {
  if (where == kHost) return check_pattern_host(m.p, n, seed) == 0;
  return check_pattern_device(m.p, n, seed, s) == 0;
}

class UmBandwidth : public Test {
 public:
  explicit UmBandwidth(bool prefetch) : prefetch_(prefetch) {}
  std::string name() const override { return prefetch_ ? "um_prefetch" : "um_fault"; }
  std::string group() const override { return "um"; }
  std::string description() const override {
    return prefetch_ ? "cudaMemPrefetchAsync of managed memory between locations, size sweep"
                     : "demand (page-fault driven) migration: the destination reads every byte of a managed "
                       "buffer resident at the source, size sweep";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology&) const override {
    if (const std::string w = too_few_gpus(o, 1); !w.empty()) return w;
    int v = 0;
    GPSM_CUDA(cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, o.devices.front()));
    if (!v) return "device has no concurrent managed access (no demand paging)";
    return {};
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const auto sizes = um_sizes(o);
    for (auto [src, dst] : um_paths(o)) {
      if (o.progress) o.progress(name() + " " + name_of(src) + "->" + name_of(dst));
      const int dev = dst == kHost ? src : dst;  // device whose stream drives the operation
      DeviceStream st(dev);
      Series s;
      s.label = name_of(src) + "->" + name_of(dst);
      s.params = {{"src", src == kHost ? "host" : name_of(src)}, {"dst", dst == kHost ? "host" : name_of(dst)},
                  {"direction", "uni"}};
      Managed m(sizes.back());
      // pattern written where the data starts
      if (src == kHost) fill_pattern_host(m.p, m.bytes, 51);
      else {
        DeviceGuard g(src);
        prefetch_sync(m, m.bytes, src, st.s);
        fill_pattern_device(m.p, m.bytes, 51, st.s);
        GPSM_CUDA(cudaStreamSynchronize(st.s));
      }
      for (std::uint64_t n : sizes) {
        std::vector<double> t;
        bool ok = true;
        const std::uint32_t expect = prefetch_ ? 0 : pattern_xor(n / 4, 51);
        for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
          DeviceGuard g(dev);
          prefetch_sync(m, n, src, st.s);  // untimed: put the data back at the source
          double secs = 0;
          if (prefetch_) {
            const cudaMemLocation to = loc(dst);  // C++17 lambdas cannot capture structured bindings
            secs = time_on_stream(st.s, [&] { GPSM_CUDA(cudaMemPrefetchAsync(m.p, n, to, 0, st.s)); });
          } else if (dst == kHost) {
            const auto t0 = std::chrono::steady_clock::now();
            ok = ok && check_pattern_host(m.p, n, 51) == 0;  // the CPU touches every word
            secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          } else {
            const int blocks = 4 * sm_count(dst);
            const auto t0 = std::chrono::steady_clock::now();
            ok = ok && xor_read(m.p, n, blocks, st.s) == expect;
            secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          }
          if (rep >= o.warmup) t.push_back(secs);
        }
        if (prefetch_) {
          DeviceGuard g(dev);
          ok = verify_managed(m, n, 51, dst, st.s);
        }
        s.points.push_back(make_point(double(n), double(n), t, "GB/s", ok));
      }
      r.series.push_back(std::move(s));
    }
  }

 private:
  bool prefetch_;
};

// Demand migration on several GPUs at once: k GPUs each read every byte of their own managed
// buffer, resident on the next GPU of the ring of all selected GPUs, launched together. Per k
// (1 .. all; quick: 1 and all) the aggregate rate, all k buffers' bytes over the host-clock span
// from the first launch to the last GPU done. It asks whether the driver serves the GPUs' faults
// side by side (the aggregate grows with k) or one after another (it stays at one GPU's): gpsm
// sim's um model needs that for wave3d and jacobi2d, whose GPUs all fault in the same phase.
class UmFaultAll : public Test {
 public:
  std::string name() const override { return "um_fault_all"; }
  std::string group() const override { return "um"; }
  std::string description() const override {
    return "demand migration on k GPUs at once: each reads every byte of its own managed buffer resident on "
           "the next GPU (ring), all launched together; aggregate GB/s of the k buffers, size per GPU";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w;
    return UmBandwidth(false).waived(o, t);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const auto sizes = um_sizes(o);
    const int n = int(o.devices.size());
    std::vector<int> counts;
    for (int k = 1; k <= n; ++k)
      if (!o.quick || k == 1 || k == n) counts.push_back(k);
    // buffer i: read by devices[i], resident on devices[(i + 1) % n]
    std::vector<std::unique_ptr<Managed>> m;
    std::vector<std::unique_ptr<DeviceStream>> st;
    std::vector<std::unique_ptr<DeviceBuffer>> out;  // each reader's per-block XORs
    std::vector<int> blocks(n);
    for (int i = 0; i < n; ++i) {
      const int src = o.devices[(i + 1) % n], dst = o.devices[i];
      m.push_back(std::make_unique<Managed>(sizes.back()));
      st.push_back(std::make_unique<DeviceStream>(dst));
      blocks[i] = 4 * sm_count(dst);
      {
        DeviceGuard g(src);  // the pattern written where the data starts
        prefetch_sync(*m[i], m[i]->bytes, src, nullptr);
        fill_pattern_device(m[i]->p, m[i]->bytes, 52 + i, nullptr);
        GPSM_CUDA(cudaDeviceSynchronize());
      }
      out.push_back(std::make_unique<DeviceBuffer>(dst, blocks[i] * sizeof(std::uint32_t)));
    }
    const auto xors = [&](int i) { return static_cast<std::uint32_t*>(out[i]->p); };
    for (int k : counts) {
      if (o.progress) o.progress(name() + " " + std::to_string(k) + " GPU(s) at once");
      Series s;
      s.label = std::to_string(k) + (k == 1 ? " GPU" : " GPUs") + " at once";
      s.params = {{"gpus", std::to_string(k)}, {"direction", "uni"}};
      for (std::uint64_t bytes : sizes) {
        std::vector<double> t;
        bool ok = true;
        for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
          for (int i = 0; i < k; ++i) {  // untimed: every buffer back on its source
            DeviceGuard g(o.devices[i]);
            prefetch_sync(*m[i], bytes, o.devices[(i + 1) % n], st[i]->s);
          }
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < k; ++i) {
            DeviceGuard g(o.devices[i]);
            xor_read_launch(m[i]->p, bytes, blocks[i], xors(i), st[i]->s);
          }
          for (int i = 0; i < k; ++i) GPSM_CUDA(cudaStreamSynchronize(st[i]->s));
          const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          for (int i = 0; i < k; ++i) {
            DeviceGuard g(o.devices[i]);
            ok = ok && xor_of(xors(i), blocks[i], st[i]->s) == pattern_xor(bytes / 4, 52 + i);
          }
          if (rep >= o.warmup) t.push_back(secs);
        }
        s.points.push_back(make_point(double(bytes), double(bytes) * k, t, "GB/s", ok));
      }
      r.series.push_back(std::move(s));
    }
  }
};

// One thread follows a chain whose every hop lands on a different 2 MiB region (a new page for
// any UM page size), so each hop of a non-resident chain takes one fault + migration.
__global__ void chase_kernel(const std::uint64_t* base, std::uint64_t start, int hops, std::uint64_t* out) {
  std::uint64_t i = start;
  for (int h = 0; h < hops; ++h) i = *(volatile const std::uint64_t*)(base + i);
  *out = i;
}

class UmFaultLatency : public Test {
 public:
  std::string name() const override { return "um_fault_latency"; }
  std::string group() const override { return "um"; }
  std::string description() const override {
    return "page-fault latency: a GPU thread walks a linked list with one node per 2 MiB region of managed "
           "memory resident elsewhere (per hop); 'resident' is the same walk after prefetching";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "none"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    return UmBandwidth(false).waived(o, t);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int hops = o.quick ? 64 : 256;
    const size_t stride = (2u << 20) / sizeof(std::uint64_t);
    const size_t bytes = hops * stride * sizeof(std::uint64_t);
    std::vector<std::pair<int, int>> paths;
    for (int d : o.devices) {
      if (o.quick && d != o.devices.front()) continue;
      paths.emplace_back(kHost, d);
    }
    for (auto pr : device_pairs(o))
      if (!o.quick || pr.first == o.devices.front()) paths.push_back(pr);
    // random cyclic order of nodes
    std::vector<std::uint64_t> order(hops);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(7));
    for (auto [src, dst] : paths) {
      if (o.progress) o.progress(name() + " " + name_of(src) + "->" + name_of(dst));
      DeviceGuard g(dst);
      DeviceStream st(dst);
      Managed m(bytes);
      auto* base = static_cast<std::uint64_t*>(m.p);
      for (int k = 0; k < hops; ++k) base[order[k] * stride] = order[(k + 1) % hops] * stride;
      std::uint64_t* out = nullptr;
      GPSM_CUDA(cudaMalloc(&out, sizeof(*out)));
      std::vector<double> fault, resident;
      bool ok = true;
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        for (int pass = 0; pass < 2; ++pass) {  // 0: data at src (faults), 1: resident on dst
          prefetch_sync(m, bytes, pass == 0 ? src : dst, st.s);
          const double secs = time_on_stream(st.s, [&] {
            chase_kernel<<<1, 1, 0, st.s>>>(base, order[0] * stride, hops, out);
            GPSM_CUDA_LAUNCH();
          });
          std::uint64_t end = 0;
          GPSM_CUDA(cudaMemcpy(&end, out, sizeof(end), cudaMemcpyDeviceToHost));
          ok = ok && end == order[0] * stride;  // a full cycle returns to the start
          if (rep >= o.warmup) (pass == 0 ? fault : resident).push_back(secs / hops);
        }
      }
      cudaFree(out);
      std::map<std::string, std::string> p{{"src", src == kHost ? "host" : name_of(src)}, {"dst", name_of(dst)}};
      r.series.push_back({name_of(src) + "->" + name_of(dst) + " fault", p, {make_point(0, 0, fault, "us", ok)}});
      p["resident"] = "yes";
      r.series.push_back({name_of(dst) + " resident", p, {make_point(0, 0, resident, "us", ok)}});
    }
  }
};

}  // namespace

void register_um_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<UmBandwidth>(true));
  v.push_back(std::make_unique<UmBandwidth>(false));
  v.push_back(std::make_unique<UmFaultAll>());
  v.push_back(std::make_unique<UmFaultLatency>());
}

}  // namespace gpsm::scope
