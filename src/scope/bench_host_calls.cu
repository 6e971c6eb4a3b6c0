// What a host-driven loop costs beyond its kernels and copies (the simulator's host loop,
// docs/sim.md "Host loop"):
//  - lat_host_calls: host time of one runtime call of the kinds the apps' loops make (set device,
//    launch, event record, stream wait on an event, a peer copy's enqueue), and of one GPU's share
//    of the graph apps' phase (every GPU waits for every other GPU's last event, launches, records);
//  - lat_event_hop: GPU-side time of a dependency that crosses GPUs through an event (a chain of
//    empty kernels alternating between two GPUs, enqueued behind a gate), beside the same chain
//    between two streams of one GPU; and what a phase wait costs when every GPU finishes its step
//    together (all selected GPUs step in lockstep, with and without the waits: behind a gate, as
//    the graph apps' host issues it, and as the 3D apps' CUDA graph holds it);
//  - lat_graph_copy: a peer copy's time as a node of a CUDA graph (kernel -> copy chains, the
//    3D apps' memcpy loop) against the same chain without copies, per copy size.
#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"

namespace gpsm::scope {
namespace {

__global__ void noop_kernel() {}

// One thread busy for about `ns` on the global timer: a phase's kernel of known length.
__global__ void busy_kernel(unsigned long long ns) {
  const unsigned long long t0 = globaltimer_ns();
  while (globaltimer_ns() - t0 < ns) {
  }
}

// Loads `kernel` (noop_kernel by default) on `dev` now. CUDA loads kernels lazily
// (CUDA_MODULE_LOADING=LAZY, the default since 12.2), and loading one while a gate kernel spins
// waits for the gate: a gated chain whose first launch of the kernel on a device comes after the
// gate would open it on its timeout (lat_event_hop alone on 2xH200, 2026-11-22;
// proact/kernels.hpp has the same rule).
void preload(int dev, const void* kernel = reinterpret_cast<const void*>(noop_kernel)) {
  DeviceGuard g(dev);
  cudaFuncAttributes a{};
  GPSM_CUDA(cudaFuncGetAttributes(&a, kernel));
}

void push_us(TestResult& r, std::string label, std::map<std::string, std::string> p, double x,
             const std::vector<double>& t, bool ok) {
  r.series.push_back({std::move(label), std::move(p), {make_point(x, 0, t, "us", ok)}});
}

// One event per listed GPU (default: timing off, the dependency events the apps use).
struct Events {
  std::vector<cudaEvent_t> ev;
  explicit Events(const std::vector<int>& devs, unsigned flags = cudaEventDisableTiming) : ev(devs.size(), nullptr) {
    for (std::size_t i = 0; i < devs.size(); ++i) {
      DeviceGuard g(devs[i]);
      GPSM_CUDA(cudaEventCreateWithFlags(&ev[i], flags));
    }
  }
  ~Events() {
    for (cudaEvent_t e : ev)
      if (e != nullptr) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
};

// Host seconds per call of `once`, `calls` back-to-back per repetition; every GPU drains its
// queue between repetitions, outside the timed span, so the calls never wait for a full queue.
std::vector<double> host_per_call(const Options& o, const std::vector<int>& devs, int calls,
                                  const std::function<void()>& once) {
  return host_loop_samples(o, calls, once, [&] {
    for (int d : devs) {
      DeviceGuard g(d);
      GPSM_CUDA(cudaDeviceSynchronize());
    }
  });
}

class HostCalls : public Test {
 public:
  std::string name() const override { return "lat_host_calls"; }
  std::string group() const override { return "latency"; }
  std::string description() const override {
    return "host time per runtime call of a host-driven loop (set device, launch, event record, stream wait on "
           "an own or a peer GPU's event, a 4-B memset, a 4 B peer copy's enqueue) and per GPU of the graph apps' phase "
           "(set device, a wait for every other GPU's event, launch, record; with and without the memcpy "
           "paradigm's copies), every selected GPU";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "gpus"; }
  std::string waived(const Options& o, const topo::Topology&) const override {
    return too_few_gpus(o, 1);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const std::vector<int>& devs = o.devices;
    const int G = static_cast<int>(devs.size());
    const int d = devs.front();
    const bool two = G >= 2;
    const int e = two ? devs[1] : d;
    std::vector<std::unique_ptr<DeviceStream>> st;
    for (int g : devs) st.push_back(std::make_unique<DeviceStream>(g));
    Events ev(devs);
    for (int i = 0; i < G; ++i) {
      DeviceGuard g(devs[i]);
      GPSM_CUDA(cudaEventRecord(ev.ev[i], st[i]->s));
    }
    const int calls = o.quick ? 100 : 400;
    const std::map<std::string, std::string> p{{"src", "host"}, {"dst", gpu_name(d)}};
    const double x = G;
    DeviceGuard keep(d);
    if (o.progress) o.progress(name() + " single calls");

    int flip = 0;
    auto t = host_per_call(o, devs, calls, [&] { GPSM_CUDA(cudaSetDevice((flip++ & 1) ? e : d)); });
    GPSM_CUDA(cudaSetDevice(d));
    int cur = -1;
    GPSM_CUDA(cudaGetDevice(&cur));
    push_us(r, two ? "set device (alternating " + gpu_name(d) + ", " + gpu_name(e) + ")" : "set device", p, x, t,
            cur == d);

    t = host_per_call(o, devs, calls, [&] {
      noop_kernel<<<1, 32, 0, st[0]->s>>>();
      GPSM_CUDA_LAUNCH();
    });
    push_us(r, "launch", p, x, t, cudaStreamQuery(st[0]->s) == cudaSuccess);

    t = host_per_call(o, devs, calls, [&] { GPSM_CUDA(cudaEventRecord(ev.ev[0], st[0]->s)); });
    push_us(r, "event record", p, x, t, cudaEventQuery(ev.ev[0]) == cudaSuccess);

    t = host_per_call(o, devs, calls, [&] { GPSM_CUDA(cudaStreamWaitEvent(st[0]->s, ev.ev[0], 0)); });
    push_us(r, "wait own event", p, x, t, cudaStreamQuery(st[0]->s) == cudaSuccess);

    {  // a 4-B cudaMemsetAsync (sssp zeroes its `changed` flag so each iteration)
      DeviceBuffer flag(d, 4096);
      GPSM_CUDA(cudaMemset(flag.p, 0xff, 4096));
      GPSM_CUDA(cudaDeviceSynchronize());
      t = host_per_call(o, devs, calls, [&] { GPSM_CUDA(cudaMemsetAsync(flag.p, 0, 4, st[0]->s)); });
      std::uint32_t v[2] = {1, 1};
      GPSM_CUDA(cudaMemcpy(v, flag.p, sizeof(v), cudaMemcpyDeviceToHost));
      push_us(r, "memset 4 B", p, x, t, v[0] == 0 && v[1] == 0xffffffffu);
    }

    if (two) {
      t = host_per_call(o, devs, calls, [&] { GPSM_CUDA(cudaStreamWaitEvent(st[0]->s, ev.ev[1], 0)); });
      push_us(r, "wait peer event (" + gpu_name(e) + ")", p, x, t, cudaStreamQuery(st[0]->s) == cudaSuccess);
      if (enable_peer(d, e)) {
        DeviceBuffer a(d, 4096), b(e, 4096);
        fill_pattern_device(a.p, 4096, 71, st[0]->s);
        {
          DeviceGuard ge(e);
          GPSM_CUDA(cudaMemset(b.p, 0, 4096));
          GPSM_CUDA(cudaDeviceSynchronize());
        }
        GPSM_CUDA(cudaStreamSynchronize(st[0]->s));
        t = host_per_call(o, devs, calls,
                          [&] { GPSM_CUDA(cudaMemcpyAsync(b.p, a.p, 4, cudaMemcpyDefault, st[0]->s)); });
        bool ok = false;
        {
          DeviceGuard ge(e);
          ok = check_pattern_device(b.p, 4, 71, nullptr) == 0;
        }
        push_us(r, "copy 4 B to " + gpu_name(e) + " (enqueue)", p, x, t, ok);
      }
    }

    // The graph apps' phase (graph::PhaseEvents and Exchange::after_kernel): per GPU, set the
    // device, wait for every other GPU's last event, launch, (memcpy: copy the owned rows to every
    // peer), record. Host time per GPU of one phase.
    if (o.progress) o.progress(name() + " phase of " + std::to_string(G) + " GPUs");
    std::vector<std::unique_ptr<DeviceBuffer>> src, dst;  // dst[r * G + s]: r's rows on s
    bool peers = two;
    for (int i = 0; i < G && peers; ++i)
      for (int j = 0; j < G && peers; ++j)
        if (i != j) peers = enable_peer(devs[i], devs[j]);
    for (int with_copies = 0; with_copies < (peers ? 2 : 1); ++with_copies) {
      if (with_copies) {
        for (int i = 0; i < G; ++i) {
          src.push_back(std::make_unique<DeviceBuffer>(devs[i], 4096));
          DeviceGuard g(devs[i]);
          fill_pattern_device(src.back()->p, 4096, 80 + i, st[i]->s);
        }
        for (int i = 0; i < G * G; ++i) {
          dst.push_back(std::make_unique<DeviceBuffer>(devs[i % G], 4096));
          DeviceGuard g(devs[i % G]);
          GPSM_CUDA(cudaMemset(dst.back()->p, 0, 4096));
        }
        for (int i = 0; i < G; ++i) {
          DeviceGuard g(devs[i]);
          GPSM_CUDA(cudaDeviceSynchronize());
        }
      }
      // per GPU: set device, launch, record, and a wait (and a copy) per other GPU
      const int calls_per_gpu = 3 + (G - 1) * (with_copies ? 2 : 1);
      t = host_per_call(o, devs, calls, [&] {
        for (int i = 0; i < G; ++i) {
          GPSM_CUDA(cudaSetDevice(devs[i]));
          for (int s = 0; s < G; ++s)
            if (s != i) GPSM_CUDA(cudaStreamWaitEvent(st[i]->s, ev.ev[s], 0));
          noop_kernel<<<1, 32, 0, st[i]->s>>>();
          GPSM_CUDA_LAUNCH();
          if (with_copies)
            for (int s = 0; s < G; ++s)
              if (s != i)
                GPSM_CUDA(cudaMemcpyAsync(dst[std::size_t(i) * G + s]->p, src[i]->p, 4096, cudaMemcpyDefault, st[i]->s));
          GPSM_CUDA(cudaEventRecord(ev.ev[i], st[i]->s));
        }
      });
      for (double& s : t) s /= G;  // per GPU of the phase
      GPSM_CUDA(cudaSetDevice(d));
      bool ok = true;
      if (with_copies)
        for (int i = 0; i < G; ++i)
          for (int s = 0; s < G; ++s)
            if (s != i) {
              DeviceGuard g(devs[s]);
              ok = ok && check_pattern_device(dst[std::size_t(i) * G + s]->p, 4096, 80 + i, nullptr) == 0;
            }
      std::map<std::string, std::string> q = p;
      q["calls"] = std::to_string(calls_per_gpu);
      push_us(r, std::string("phase per GPU, ") + std::to_string(G) + " GPUs" + (with_copies ? ", with copies" : ""), q,
              x, t, ok);
    }
  }
};

class EventHop : public Test {
 public:
  std::string name() const override { return "lat_event_hop"; }
  std::string group() const override { return "latency"; }
  std::string description() const override {
    return "GPU time per hop of a dependency chain (stream wait on the previous hop's event, empty kernel, record) "
           "alternating between two GPUs, and between two streams of one GPU; enqueued behind a gate. And the graph "
           "apps' phase: every selected GPU steps a 10-us kernel, waiting for every other GPU's previous step, against "
           "the same steps without the waits (their difference: the phase wait), enqueued behind a gate, issued by the "
           "host as the graph apps do, and captured as one CUDA graph as the 3D apps do";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "none"; }
  std::string waived(const Options& o, const topo::Topology&) const override {
    return too_few_gpus(o, 2);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int d = o.devices[0], e = o.devices[1];
    chain(o, r, d, e);
    chain(o, r, d, d);
    phase(o, r);
  }

 private:
  // hops alternate between stream a (on d) and stream b (on e, or a second stream of d); the
  // chain starts and ends on a, so a's timing events bracket it.
  static void chain(const Options& o, TestResult& r, int d, int e) {
    const int hops = o.quick ? 40 : 100;  // even: ends on a
    preload(d);
    preload(e);
    DeviceStream a(d), b(e);
    const std::vector<int> devs{d, e};
    Events ev(devs);
    Events timing({d, d}, cudaEventDefault);  // a's start and stop
    cudaEvent_t t0 = timing.ev[0], t1 = timing.ev[1];
    std::vector<double> t;
    Gate gate;
    bool ok = true;
    for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
      gate.reset();
      {
        DeviceGuard g(d);
        gate.hold(a.s);
        GPSM_CUDA(cudaEventRecord(t0, a.s));
        GPSM_CUDA(cudaEventRecord(ev.ev[0], a.s));
      }
      for (int h = 0; h < hops; ++h) {
        const bool on_b = (h % 2) == 0;
        DeviceGuard g(on_b ? e : d);
        cudaStream_t s = on_b ? b.s : a.s;
        GPSM_CUDA(cudaStreamWaitEvent(s, ev.ev[on_b ? 0 : 1], 0));
        noop_kernel<<<1, 32, 0, s>>>();
        GPSM_CUDA_LAUNCH();
        GPSM_CUDA(cudaEventRecord(ev.ev[on_b ? 1 : 0], s));
      }
      float ms = 0;
      {
        DeviceGuard g(d);
        GPSM_CUDA(cudaEventRecord(t1, a.s));
        gate.release();
        GPSM_CUDA(cudaEventSynchronize(t1));
        GPSM_CUDA(cudaEventElapsedTime(&ms, t0, t1));
      }
      {
        DeviceGuard g(e);
        ok = ok && cudaStreamSynchronize(b.s) == cudaSuccess;
      }
      if (rep >= o.warmup) t.push_back(ms * 1e-3 / hops);
    }
    gate.reset();  // throws if a gate timed out: the chain did not run as enqueued
    const std::string label = d == e ? gpu_name(d) + " stream->stream hop" : gpu_name(d) + "<->" + gpu_name(e) + " hop";
    push_us(r, label, {{"src", gpu_name(d)}, {"dst", gpu_name(e)}}, 0, t, ok);
  }

  // The apps' phase loop (PhaseEvents, HostLoop): every selected GPU, each step, waits for every
  // other GPU's event of the previous step, runs a kernel of kBusyUs and records its event. The
  // same loop without the waits (each GPU after its own stream only) is timed beside it, and each
  // series is the difference per step: the cost of the waits when the GPUs finish together. Three
  // ways to issue it: behind one gate (the host's issue not timed), by the host as the graph apps
  // do, and as one CUDA graph as the 3D apps do. The chain above alternates single kernels, so
  // every hop there waits a whole cross-GPU signal: 7 us a hop on 2xH200, where the host-issued
  // phase waits cost 2.4 us a step and the graph's 1.7 (docs/sim.md, 2026-11-22).
  static constexpr double kBusyUs = 10;
  static void phase(const Options& o, TestResult& r) {
    const std::vector<int>& devs = o.devices;
    const int G = static_cast<int>(devs.size()), steps = o.quick ? 40 : 100;
    for (int dv : devs) preload(dv, reinterpret_cast<const void*>(busy_kernel));  // before the gate
    std::vector<std::unique_ptr<DeviceStream>> st;
    for (int dv : devs) st.push_back(std::make_unique<DeviceStream>(dv));
    Events even(devs), odd(devs);  // the step's event, double-buffered as PhaseEvents
    Events timing({devs[0], devs[0]}, cudaEventDefault);
    Gate gate;
    bool ok = true;
    // The steps, on the streams (or into the capture that started on devs[0]'s stream).
    auto enqueue = [&](bool waits) {
      for (int k = 0; k < steps; ++k)
        for (int i = 0; i < G; ++i) {
          DeviceGuard g(devs[i]);
          cudaStream_t s = st[i]->s;
          if (waits && k > 0)
            for (int j = 0; j < G; ++j)
              if (j != i) GPSM_CUDA(cudaStreamWaitEvent(s, ((k - 1) % 2 ? odd : even).ev[j], 0));
          busy_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(kBusyUs * 1e3));
          GPSM_CUDA_LAUNCH();
          GPSM_CUDA(cudaEventRecord((k % 2 ? odd : even).ev[i], s));
        }
    };
    auto sync_all = [&] {
      for (int i = 0; i < G; ++i) {
        DeviceGuard g(devs[i]);
        ok = ok && cudaStreamSynchronize(st[i]->s) == cudaSuccess;
      }
    };
    // The 3D apps' loop as one CUDA graph (stencil3d_host_loop_cuda.cpp HostLoop::capture): the
    // other GPUs join devs[0]'s capture through a fork event and hand their last step back.
    Events fork({devs[0]});
    auto capture = [&](bool waits) {
      cudaGraph_t gr = nullptr;
      cudaGraphExec_t ex = nullptr;
      DeviceGuard g(devs[0]);
      GPSM_CUDA(cudaStreamBeginCapture(st[0]->s, cudaStreamCaptureModeRelaxed));
      try {
        GPSM_CUDA(cudaEventRecord(fork.ev[0], st[0]->s));
        for (int i = 1; i < G; ++i) {
          DeviceGuard gi(devs[i]);
          GPSM_CUDA(cudaStreamWaitEvent(st[i]->s, fork.ev[0], 0));
        }
        enqueue(waits);
        for (int i = 1; i < G; ++i) GPSM_CUDA(cudaStreamWaitEvent(st[0]->s, ((steps - 1) % 2 ? odd : even).ev[i], 0));
      } catch (...) {  // end the capture, so the stream is usable for the error's clean-up
        cudaSetDevice(devs[0]);
        cudaStreamEndCapture(st[0]->s, &gr);
        if (gr != nullptr) cudaGraphDestroy(gr);
        throw;
      }
      GPSM_CUDA(cudaStreamEndCapture(st[0]->s, &gr));
      GPSM_CUDA(cudaGraphInstantiate(&ex, gr, 0));
      GPSM_CUDA(cudaGraphUpload(ex, st[0]->s));
      GPSM_CUDA(cudaGraphDestroy(gr));
      return ex;
    };
    enum class Mode { gated, host, graph };
    cudaGraphExec_t graphs[2] = {nullptr, nullptr};  // without, with the waits
    // Seconds per step, one repetition. gated: enqueued behind the gate, timed by devs[0]'s
    // events; host: issued by the host as the graph apps do (each step's calls while the GPUs run
    // the previous ones), host clock from the first call to the last GPU's end; graph: one launch
    // of the captured loop, host clock as the 3D apps' solve().
    auto loop = [&](bool waits, Mode m) {
      if (m == Mode::gated) {
        gate.reset();
        for (int i = 0; i < G; ++i) {
          DeviceGuard g(devs[i]);
          gate.hold(st[i]->s);
          if (i == 0) GPSM_CUDA(cudaEventRecord(timing.ev[0], st[0]->s));
        }
      }
      const auto t0 = std::chrono::steady_clock::now();
      if (m == Mode::graph) {
        DeviceGuard g(devs[0]);
        GPSM_CUDA(cudaGraphLaunch(graphs[waits ? 1 : 0], st[0]->s));
      } else {
        enqueue(waits);
      }
      if (m == Mode::gated) {
        DeviceGuard g(devs[0]);
        GPSM_CUDA(cudaEventRecord(timing.ev[1], st[0]->s));
        gate.release();
      }
      sync_all();
      const double host_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      float ms = 0;
      if (m == Mode::gated) GPSM_CUDA(cudaEventElapsedTime(&ms, timing.ev[0], timing.ev[1]));
      return (m == Mode::gated ? ms * 1e-3 : host_s) / steps;
    };
    const std::string k = std::to_string(G) + " GPUs";
    const std::map<std::string, std::string> base{{"src", gpu_name(devs[0])}, {"dst", "all"}, {"gpus", std::to_string(G)}};
    for (const Mode m : {Mode::gated, Mode::host, Mode::graph}) {
      if (m == Mode::graph)
        for (int w = 0; w < 2; ++w) graphs[w] = capture(w == 1);
      std::vector<double> with, alone, diff;
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        const double a = loop(false, m), w = loop(true, m);  // side by side: the same clocks
        if (rep < o.warmup) continue;
        alone.push_back(a);
        with.push_back(w);
        diff.push_back(w - a);
      }
      if (m == Mode::gated) gate.reset();  // throws if a gate timed out
      for (cudaGraphExec_t& ex : graphs)
        if (ex != nullptr) GPSM_CUDA(cudaGraphExecDestroy(std::exchange(ex, nullptr)));
      // Each step at least the busy time: a shorter one means the kernels did not run as asked.
      for (double a : alone) ok = ok && a >= kBusyUs * 1e-6;
      const std::string how = m == Mode::gated ? "" : m == Mode::host ? "host-issued " : "graph ";
      auto with_mech = [&](const char* mech) {
        auto p = base;
        p["mechanism"] = how + mech;
        return p;
      };
      push_us(r, how + "phase step, " + k + ", waits for every other GPU", with_mech("phase step waits"), 0, with, ok);
      push_us(r, how + "phase step, " + k + ", own stream only", with_mech("phase step alone"), 0, alone, ok);
      push_us(r, how + "phase wait per step, " + k, with_mech("phase wait"), 0, diff, ok);
    }
  }
};

class GraphCopy : public Test {
 public:
  std::string name() const override { return "lat_graph_copy"; }
  std::string group() const override { return "latency"; }
  std::string description() const override {
    return "a peer copy as a node of a CUDA graph: per step of a captured chain (empty kernel, then a "
           "cudaMemcpyAsync to the peer) less the chain of kernels alone, per size; and the same on a stream";
  }
  std::string unit() const override { return "us"; }
  std::string x_name() const override { return "bytes"; }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w;
    return missing_peer_access(o, t);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    const int d = o.devices[0], e = o.devices[1];
    std::string why;
    if (!enable_peer(d, e, &why)) throw gpsm::Error("gpsm: lat_graph_copy: " + why);
    const std::vector<std::uint64_t> sizes =
        o.quick ? std::vector<std::uint64_t>{4, 1 << 20}
                : std::vector<std::uint64_t>{4, 64 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20};
    const std::size_t maxn = sizes.back();
    DeviceBuffer src(d, maxn), dst(e, maxn);
    DeviceStream st(d);
    preload(d);  // stream_steps gates its runs
    DeviceGuard g(d);
    fill_pattern_device(src.p, maxn, 91, st.s);
    GPSM_CUDA(cudaStreamSynchronize(st.s));
    const int steps = 32;
    Series graph_s{gpu_name(d) + "->" + gpu_name(e) + " copy node in a graph", {{"src", gpu_name(d)}, {"dst", gpu_name(e)}, {"mode", "graph"}}, {}};
    Series stream_s{gpu_name(d) + "->" + gpu_name(e) + " copy after a kernel on a stream", {{"src", gpu_name(d)}, {"dst", gpu_name(e)}, {"mode", "stream"}}, {}};
    // Per step of a graph of `steps` (kernel[, copy]) pairs, seconds, one sample per repetition.
    auto graph_steps = [&](std::size_t bytes, bool copies) {
      cudaGraph_t gr = nullptr;
      cudaGraphExec_t ex = nullptr;
      GPSM_CUDA(cudaStreamBeginCapture(st.s, cudaStreamCaptureModeThreadLocal));
      cudaError_t err = cudaSuccess;  // the first error while capturing; the capture ends either way
      for (int i = 0; i < steps && err == cudaSuccess; ++i) {
        noop_kernel<<<1, 32, 0, st.s>>>();
        err = cudaGetLastError();
        if (copies && err == cudaSuccess) err = cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDefault, st.s);
      }
      const cudaError_t cap = cudaStreamEndCapture(st.s, &gr);
      if (err == cudaSuccess) err = cap;
      if (err != cudaSuccess) {
        if (gr != nullptr) cudaGraphDestroy(gr);
        throw gpsm::Error(std::string("gpsm: lat_graph_copy: capturing the chain failed: ") + cudaGetErrorString(err));
      }
      GPSM_CUDA(cudaGraphInstantiate(&ex, gr, 0));
      GPSM_CUDA(cudaGraphUpload(ex, st.s));
      std::vector<double> t;
      for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        const double s = time_on_stream(st.s, [&] { GPSM_CUDA(cudaGraphLaunch(ex, st.s)); });
        if (rep >= o.warmup) t.push_back(s / steps);
      }
      cudaGraphExecDestroy(ex);
      cudaGraphDestroy(gr);
      return t;
    };
    auto stream_steps = [&](std::size_t bytes, bool copies) {
      StreamOp op{d, st.s, [&, bytes, copies](cudaStream_t s) {
                    noop_kernel<<<1, 32, 0, s>>>();
                    GPSM_CUDA_LAUNCH();
                    if (copies) GPSM_CUDA(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDefault, s));
                  }};
      std::vector<StreamOp> one{op};
      return time_concurrent(one, steps, o.reps, o.warmup, true)[0];
    };
    auto diff = [](const std::vector<double>& a, const std::vector<double>& b) {
      std::vector<double> t(std::min(a.size(), b.size()));
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = a[i] - b[i];
      return t;
    };
    // The chains without copies are timed again beside each size's: the GPUs' clocks ramp up while
    // the test runs (345 MHz idle at its start), so the difference is taken at the same clocks.
    for (std::uint64_t n : sizes) {
      if (o.progress) o.progress(name() + " " + std::to_string(n) + " B");
      {
        DeviceGuard ge(e);
        GPSM_CUDA(cudaMemset(dst.p, 0, maxn));
        GPSM_CUDA(cudaDeviceSynchronize());
      }
      const auto gk = graph_steps(n, false), gc = graph_steps(n, true);
      bool ok = false;
      {
        DeviceGuard ge(e);
        ok = check_pattern_device(dst.p, n, 91, nullptr) == 0;
        GPSM_CUDA(cudaMemset(dst.p, 0, maxn));
        GPSM_CUDA(cudaDeviceSynchronize());
      }
      graph_s.points.push_back(make_point(double(n), double(n), diff(gc, gk), "us", ok));
      const auto sk = stream_steps(n, false), sc = stream_steps(n, true);
      {
        DeviceGuard ge(e);
        ok = check_pattern_device(dst.p, n, 91, nullptr) == 0;
      }
      stream_s.points.push_back(make_point(double(n), double(n), diff(sc, sk), "us", ok));
    }
    r.series.push_back(std::move(graph_s));
    r.series.push_back(std::move(stream_s));
  }
};

}  // namespace

void register_host_call_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<HostCalls>());
  v.push_back(std::make_unique<EventHop>());
  v.push_back(std::make_unique<GraphCopy>());
}

}  // namespace gpsm::scope
