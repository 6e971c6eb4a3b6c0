// Latencies: kernel launch, small copies, peer load round trip, peer atomic, host<->device flag
// round trip, and a device-side barrier across all selected GPUs.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"

namespace gpsm::scope {
namespace {

using clk = std::chrono::steady_clock;
double secs_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

__global__ void empty_kernel() {}

// Dependent loads: each hop's address comes from the previous load (volatile: no caching in L1).
__global__ void chase(const std::uint32_t* base, std::uint32_t start, int hops, std::uint32_t* out) {
  std::uint32_t i = start;
  for (int h = 0; h < hops; ++h) i = *(volatile const std::uint32_t*)(base + i);
  *out = i;
}

// Dependent atomics: each atomic's address depends on the previous one's result.
__global__ void atomic_chain(unsigned* base, unsigned mask, int hops, unsigned* out) {
  unsigned v = 0;
  for (int h = 0; h < hops; ++h) v = atomicAdd(base + ((v * 32u) & mask), 1u);
  *out = v;
}

// Ping-pong through mapped host memory: wait for the host's i, answer i. Bounded.
__global__ void flag_pong(volatile int* to_dev, volatile int* to_host, int rounds, int* timed_out) {
  for (int i = 1; i <= rounds; ++i) {
    const unsigned long long t0 = globaltimer_ns();
    while (*to_dev != i) {
      if (globaltimer_ns() - t0 > 5000000000ull) {
        *timed_out = 1;
        return;
      }
    }
    __threadfence_system();
    *to_host = i;
  }
}

// Barrier across GPUs on a monotonically increasing counter in one GPU's memory (never reset):
// round r completes when the counter reaches ngpus * r. Bounded; device 0's block times rounds.
__global__ void barrier_rounds(unsigned* counter, int ngpus, int rounds, int warm, unsigned long long* t,
                               int* timed_out) {
  unsigned long long t_warm = 0;
  for (int r = 1; r <= rounds; ++r) {
    if (r == warm + 1) t_warm = globaltimer_ns();
    __threadfence_system();
    atomicAdd_system(counter, 1u);
    const unsigned target = unsigned(ngpus) * unsigned(r);
    const unsigned long long t0 = globaltimer_ns();
    while (true) {
      unsigned v;
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
      if (v >= target) break;
      if (globaltimer_ns() - t0 > 5000000000ull) {
        *timed_out = 1;
        return;
      }
    }
  }
  *t = globaltimer_ns() - t_warm;
}

class Latency : public Test {
 public:
  enum Kind { launch, copy_small, peer_load, peer_atomic, host_flag, device_barrier };
  explicit Latency(Kind k) : k_(k) {}
  std::string name() const override {
    const char* n[] = {"lat_launch", "lat_copy_small", "lat_peer_load", "lat_peer_atomic", "lat_host_flag",
                       "lat_device_barrier"};
    return n[k_];
  }
  std::string group() const override { return "latency"; }
  std::string description() const override {
    switch (k_) {
      case launch: return "empty kernel: back-to-back launch cost (events over 1000 launches) and launch+sync round trip";
      case copy_small: return "4-byte cudaMemcpyAsync + stream synchronize, host clock";
      case peer_load: return "dependent 4-byte loads (pointer chase over 64 MiB) from local and peer memory";
      case peer_atomic: return "dependent atomicAdd round trips on local and peer memory";
      case host_flag: return "host<->device flag ping-pong through mapped pinned memory (round trip)";
      case device_barrier: return "device-side barrier across all selected GPUs (one block each, counter in GPU 0 memory)";
    }
    return "";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "none"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    const bool pairs = k_ == peer_load || k_ == peer_atomic || k_ == device_barrier;
    if (o.devices.empty()) return too_few_gpus(o, 1);
    if (const std::string w = too_few_gpus(o, pairs ? 2 : 1); !w.empty()) return w;
    return pairs ? missing_peer_access(o, t) : std::string{};
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    switch (k_) {
      case launch: return run_launch(o, r);
      case copy_small: return run_copy(o, r);
      case peer_load: return run_chase(o, r, false);
      case peer_atomic: return run_chase(o, r, true);
      case host_flag: return run_flag(o, r);
      case device_barrier: return run_barrier(o, r);
    }
  }

 private:
  Kind k_;

  static void push(TestResult& r, std::string label, std::map<std::string, std::string> p,
                   const std::vector<double>& t, bool ok = true) {
    r.series.push_back({std::move(label), std::move(p), {make_point(0, 0, t, "us", ok)}});
  }

  void run_launch(const Options& o, TestResult& r) {
    const int d = o.devices.front();
    DeviceStream st(d);
    DeviceGuard g(d);
    StreamOp op{d, st.s, [](cudaStream_t s) {
                  empty_kernel<<<1, 32, 0, s>>>();
                  GPSM_CUDA_LAUNCH();
                }};
    std::vector<StreamOp> one{op};
    auto t = time_concurrent(one, 1000, o.reps, o.warmup, true)[0];
    push(r, gpu_name(d) + " launch (back-to-back)", {{"src", "host"}, {"dst", gpu_name(d)}}, t);
    auto rt = host_loop_samples(o, 200, [&] {
      empty_kernel<<<1, 32, 0, st.s>>>();
      GPSM_CUDA_LAUNCH();
      GPSM_CUDA(cudaStreamSynchronize(st.s));
    });
    push(r, gpu_name(d) + " launch+sync", {{"src", "host"}, {"dst", gpu_name(d)}}, rt);
  }

  void run_copy(const Options& o, TestResult& r) {
    const int d = o.devices.front();
    DeviceGuard g(d);
    DeviceStream st(d);
    HostBuffer h(HostKind::pinned, 4096);
    DeviceBuffer a(d, 4096);
    fill_host(h, 4096, 61, d);
    auto timed = [&](const std::string& label, std::map<std::string, std::string> p,
                     const std::function<void()>& copy, const std::function<bool()>& check) {
      auto t = host_loop_samples(o, 200, [&] {
        copy();
        GPSM_CUDA(cudaStreamSynchronize(st.s));
      });
      push(r, label, std::move(p), t, check());
    };
    timed("host->" + gpu_name(d) + " 4 B", {{"src", "host"}, {"dst", gpu_name(d)}},
          [&] { GPSM_CUDA(cudaMemcpyAsync(a.p, h.p, 4, cudaMemcpyHostToDevice, st.s)); },
          [&] { return check_pattern_device(a.p, 4, 61, st.s) == 0; });
    timed(gpu_name(d) + "->host 4 B", {{"src", gpu_name(d)}, {"dst", "host"}},
          [&] { GPSM_CUDA(cudaMemcpyAsync(static_cast<char*>(h.p) + 2048, a.p, 4, cudaMemcpyDeviceToHost, st.s)); },
          [&] { return static_cast<std::uint32_t*>(h.p)[512] == pattern_word(0, 61); });
    if (o.devices.size() >= 2) {
      const int e = o.devices[1];
      std::string why;
      if (enable_peer(d, e, &why)) {
        DeviceBuffer b(e, 4096);
        {
          DeviceGuard ge(e);
          GPSM_CUDA(cudaMemset(b.p, 0, 4096));
        }
        timed(gpu_name(d) + "->" + gpu_name(e) + " 4 B", {{"src", gpu_name(d)}, {"dst", gpu_name(e)}},
              [&] { GPSM_CUDA(cudaMemcpyPeerAsync(b.p, e, a.p, d, 4, st.s)); },
              [&] {
                DeviceGuard ge(e);
                return check_pattern_device(b.p, 4, 61, nullptr) == 0;
              });
      }
    }
  }

  // Local chase on each device, then peer chases (atomics: local and peer chains).
  void run_chase(const Options& o, TestResult& r, bool atomics) {
    const size_t bytes = 64u << 20;
    const size_t words = bytes / 4;
    const int hops = o.quick ? 2000 : 10000;
    // host-built random cycle over nodes 4 KiB apart (defeats prefetching and line reuse)
    const size_t stride = 1024;
    const size_t nodes = words / stride;
    std::vector<std::uint32_t> order(nodes), chain(words, 0);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(5));
    for (size_t k = 0; k < nodes; ++k) chain[order[k] * stride] = order[(k + 1) % nodes] * stride;
    std::uint32_t expect_end = 0;
    {
      std::uint32_t i = 0;
      for (int h = 0; h < hops; ++h) i = chain[i];
      expect_end = i;
    }
    std::vector<std::pair<int, int>> paths;
    paths.emplace_back(o.devices[0], o.devices[0]);
    for (auto pr : device_pairs(o)) paths.push_back(pr);
    for (auto [a, b] : paths) {
      if (a != b) {
        std::string why;
        if (!enable_peer(a, b, &why)) throw gpsm::Error("gpsm: " + why);
      }
      if (o.progress) o.progress(name() + " " + gpu_name(a) + "->" + gpu_name(b));
      DeviceBuffer mem(b, bytes);
      {
        DeviceGuard gb(b);
        GPSM_CUDA(cudaMemcpy(mem.p, chain.data(), bytes, cudaMemcpyHostToDevice));
      }
      DeviceGuard ga(a);
      DeviceStream st(a);
      std::uint32_t* out = nullptr;
      GPSM_CUDA(cudaMalloc(&out, 4));
      std::vector<double> t;
      bool ok = true;
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        const double secs = time_on_stream(st.s, [&] {
          if (atomics)
            atomic_chain<<<1, 1, 0, st.s>>>(static_cast<unsigned*>(mem.p), unsigned(words - 1), hops, out);
          else
            chase<<<1, 1, 0, st.s>>>(static_cast<const std::uint32_t*>(mem.p), 0, hops, out);
          GPSM_CUDA_LAUNCH();
        });
        std::uint32_t end = 0;
        GPSM_CUDA(cudaMemcpy(&end, out, 4, cudaMemcpyDeviceToHost));
        if (!atomics) ok = ok && end == expect_end;
        if (rep >= o.warmup) t.push_back(secs / hops);
      }
      if (atomics) {  // every atomic landed: the buffer's sum grew by exactly hops per run
        std::vector<std::uint32_t> after(words);
        DeviceGuard gb(b);
        GPSM_CUDA(cudaMemcpy(after.data(), mem.p, bytes, cudaMemcpyDeviceToHost));
        unsigned long long before = 0, now = 0;
        for (size_t i = 0; i < words; ++i) {
          before += chain[i];
          now += after[i];
        }
        ok = now - before == (unsigned long long)hops * (o.warmup + o.reps);
      }
      cudaFree(out);
      push(r, a == b ? gpu_name(a) + " local" : gpu_name(a) + "->" + gpu_name(b), {{"src", gpu_name(a)}, {"dst", gpu_name(b)}}, t, ok);
    }
  }

  void run_flag(const Options& o, TestResult& r) {
    const int d = o.devices.front();
    DeviceGuard g(d);
    DeviceStream st(d);
    HostBuffer flags(HostKind::pinned, 4096);
    volatile int* to_dev = static_cast<int*>(flags.p);
    volatile int* to_host = to_dev + 32;  // separate 128 B lines
    int* timed_out = const_cast<int*>(to_dev) + 64;
    std::vector<double> t;
    const int rounds = o.quick ? 2000 : 10000;
    for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
      *to_dev = 0;
      *to_host = 0;
      *timed_out = 0;
      flag_pong<<<1, 1, 0, st.s>>>(to_dev, to_host, rounds, timed_out);
      GPSM_CUDA_LAUNCH();
      // the first round absorbs the launch; time the rest
      clk::time_point t0;
      bool stuck = false;
      for (int i = 1; i <= rounds && !stuck; ++i) {
        if (i == 2) t0 = clk::now();
        __atomic_store_n(const_cast<int*>(to_dev), i, __ATOMIC_RELEASE);
        const auto w0 = clk::now();
        while (__atomic_load_n(const_cast<int*>(to_host), __ATOMIC_ACQUIRE) != i) {
          if (secs_since(w0) > 5.0) {
            stuck = true;
            break;
          }
        }
      }
      const double el = secs_since(t0);
      GPSM_CUDA(cudaStreamSynchronize(st.s));
      if (stuck || *timed_out)
        throw gpsm::Error("gpsm: host<->device flag ping-pong on " + gpu_name(d) + " stalled (device saw " +
                          std::to_string(*to_dev) + ", host saw " + std::to_string(*to_host) + ")");
      if (rep >= o.warmup) t.push_back(el / (rounds - 1));
    }
    push(r, "host<->" + gpu_name(d) + " round trip", {{"src", "host"}, {"dst", gpu_name(d)}}, t);
  }

  void run_barrier(const Options& o, TestResult& r) {
    const int home = o.devices.front();
    for (int d : o.devices)
      if (d != home) {
        std::string why;
        if (!enable_peer(d, home, &why)) throw gpsm::Error("gpsm: " + why);
      }
    const int ngpus = int(o.devices.size());
    const int rounds = o.quick ? 2000 : 10000, warm = 100;
    DeviceBuffer counter(home, 256);
    std::vector<std::unique_ptr<DeviceStream>> streams;
    for (int d : o.devices) streams.push_back(std::make_unique<DeviceStream>(d));
    unsigned long long* t_dev = nullptr;
    HostBuffer flag(HostKind::pinned, 4096);  // mapped: every GPU can raise it
    volatile int* timed_out = static_cast<int*>(flag.p);
    {
      DeviceGuard g(home);
      GPSM_CUDA(cudaMalloc(&t_dev, sizeof(*t_dev)));
    }
    std::vector<double> t;
    for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
      {
        DeviceGuard g(home);
        GPSM_CUDA(cudaMemset(counter.p, 0, 256));  // zeroed and synchronized before any peer starts
        GPSM_CUDA(cudaDeviceSynchronize());
      }
      *timed_out = 0;
      // one block per GPU: trivially co-resident; launches land at different times and the first
      // `warm` rounds absorb that skew before timing starts
      for (size_t i = 0; i < o.devices.size(); ++i) {
        DeviceGuard g(o.devices[i]);
        unsigned long long* tt = t_dev;
        if (i != 0) GPSM_CUDA(cudaMallocAsync(&tt, sizeof(*tt), streams[i]->s));
        barrier_rounds<<<1, 1, 0, streams[i]->s>>>(static_cast<unsigned*>(counter.p), ngpus, rounds, warm, tt,
                                                   const_cast<int*>(timed_out));
        GPSM_CUDA_LAUNCH();
        if (i != 0) GPSM_CUDA(cudaFreeAsync(tt, streams[i]->s));
      }
      for (size_t i = 0; i < o.devices.size(); ++i) {
        DeviceGuard g(o.devices[i]);
        GPSM_CUDA(cudaStreamSynchronize(streams[i]->s));
      }
      if (*timed_out) throw gpsm::Error("gpsm: device barrier across " + std::to_string(ngpus) + " GPUs timed out");
      unsigned long long ns = 0, final_count = 0;
      DeviceGuard g(home);
      GPSM_CUDA(cudaMemcpy(&ns, t_dev, sizeof(ns), cudaMemcpyDeviceToHost));
      unsigned c = 0;
      GPSM_CUDA(cudaMemcpy(&c, counter.p, sizeof(c), cudaMemcpyDeviceToHost));
      final_count = c;
      if (final_count != (unsigned long long)ngpus * rounds)
        throw gpsm::Error("gpsm: barrier counter ended at " + std::to_string(final_count) + ", expected " +
                          std::to_string(ngpus * rounds));
      if (rep >= o.warmup) t.push_back(ns * 1e-9 / (rounds - warm));
    }
    {
      DeviceGuard g(home);
      cudaFree(t_dev);
    }
    push(r, std::to_string(ngpus) + "-GPU barrier", {{"src", gpu_name(home)}, {"gpus", std::to_string(ngpus)}}, t);
  }
};

}  // namespace

void register_latency_tests(std::vector<std::unique_ptr<Test>>& v) {
  for (int k = Latency::launch; k <= Latency::device_barrier; ++k)
    v.push_back(std::make_unique<Latency>(static_cast<Latency::Kind>(k)));
}

}  // namespace gpsm::scope
