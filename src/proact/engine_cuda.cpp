// The PROACT engine on the GPUs: see engine.hpp. One run:
//   setup (untimed): poison every replica, reset the chunk counters, sync every GPU
//   enqueue: the gate kernel on the timing stream (rank 0), the start event behind it; every
//            producer stream waits for start; agents, copies and the finish events are enqueued
//   release: the host writes the phase to the host-mapped gate flag; the run starts
//   finish: total = start -> end, tail = compute_end -> end; then every destination is verified.
#include "proact/engine.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "gpsm/gps/settings.hpp"
#include "gpsm/gps/sync.hpp"
#include "common/cuda_check.hpp"
#include "proact/chunks.hpp"
#include "proact/destinations.hpp"
#include "proact/kernels.hpp"
#include "proact/stream_wait.hpp"

namespace gpsm::proact {

namespace {

constexpr std::uint8_t kPoison = 0xA5;

}  // namespace

struct Engine::Impl {
  ProactConfig cfg;
  int n = 0;
  std::vector<Slice> slices;
  std::vector<int> producers;  // ranks with a slice
  struct Rank {
    int dev = 0;
    std::uint32_t* buf = nullptr;  // the whole array
    cudaStream_t prod = nullptr, agent = nullptr;
    std::vector<cudaStream_t> copy;  // [dest * ce_streams + s]
    cudaEvent_t prod_end = nullptr, agent_done = nullptr;
    std::vector<cudaEvent_t> copy_done;
    unsigned long long* verify_out = nullptr;  // 2 per producer
    // chunk state of this rank's slice (producers only)
    std::uint64_t chunk_bytes = 0, chunks = 0;
    std::uint32_t* initial = nullptr;      // device copy of ChunkPlan::initial()
    std::uint32_t* remaining = nullptr;
    std::uint32_t* flags_dev = nullptr;    // device memory
    std::uint32_t* flags_host = nullptr;   // host-mapped (host proxy)
    std::uint32_t* dest_mask = nullptr;
    std::vector<std::uint32_t> dest_mask_host;
    unsigned long long* cdp_times = nullptr;
    unsigned int* cdp_error = nullptr;
  };
  std::vector<Rank> ranks;
  cudaStream_t timing = nullptr;
  cudaEvent_t start = nullptr, compute_end = nullptr, end = nullptr;
  std::uint32_t* go = nullptr;         // host-mapped
  std::uint32_t* gate_late = nullptr;  // host-mapped: the phase whose gate timed out
  gps::WaitRecord* record = nullptr;
  std::uint32_t phase = 0, last_phase_work = 0;
  bool ce_wait_ok = false;
  std::string ce_support;
  StreamWaits stream_waits;  // the copy_engine agent's chunk-flag waits of the run (the watchdog's ledger)

  void set(int r) const { GPSM_CUDA(cudaSetDevice(ranks[r].dev)); }

  gps::WaitPolicy policy(int r) const {
    gps::WaitPolicy w;
    w.record = record;
    w.timeout_ns = gps::wait_timeout_ns(cfg.wait_timeout_ms);
    w.rank = r;
    return w;
  }

  void throw_if_wait_failed(const std::string& cuda_msg) const {
    if (reinterpret_cast<volatile gps::WaitRecord*>(record)->valid == 0u) return;
    std::string what(record->what, strnlen(record->what, sizeof(record->what)));
    throw Error(fmt::format("gpsm proact: bounded wait timed out on rank {} (CUDA device {}) block {} thread {}: {} "
                            "expected >= {} observed {} after {} ms (the device context is lost{}); raise "
                            "--wait-timeout-ms if the machine is just slow, else report this with `gpsm info`",
                            record->device, ranks.at(record->device).dev, record->block, record->thread, what,
                            record->expected, record->observed, cfg.wait_timeout_ms,
                            cuda_msg.empty() ? "" : "; " + cuda_msg));
  }

  void sync_all() {
    for (int r = 0; r < n; ++r) {
      cudaError_t e = cudaSetDevice(ranks[r].dev);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (e != cudaSuccess) {
        throw_if_wait_failed(fmt::format("{} on rank {}", cudaGetErrorName(e), r));
        GPSM_CUDA(e);
      }
    }
    throw_if_wait_failed("");
  }

  // Sets up the counters, flags and destination masks of every producer for a chunk size.
  void prepare_chunks(std::uint64_t chunk_bytes) {
    for (int p : producers) {
      auto& R = ranks[p];
      if (R.chunk_bytes == chunk_bytes) continue;
      set(p);
      const ChunkPlan plan(slices[p].bytes, chunk_bytes, uniform_block_ranges(slices[p].bytes, kBlockBytes));
      const ChunkGeometry g{slices[p].bytes, chunk_bytes, kBlockBytes};
      for (std::uint64_t c = 0; c < plan.chunks(); ++c)  // the device's formula must agree with the plan
        if (g.writers(c) != plan.initial()[c])
          throw Error(fmt::format("gpsm proact: internal: chunk {} has {} writers in the plan, {} on the device", c,
                                  plan.initial()[c], g.writers(c)));
      R.dest_mask_host = destinations_all_peers(plan, n, p);
      for (void* q : {static_cast<void*>(R.initial), static_cast<void*>(R.remaining), static_cast<void*>(R.flags_dev),
                      static_cast<void*>(R.dest_mask)})
        if (q) GPSM_CUDA(cudaFree(q));
      if (R.flags_host) GPSM_CUDA(cudaFreeHost(R.flags_host));
      R.flags_host = nullptr;
      const std::size_t bytes = plan.chunks() * sizeof(std::uint32_t);
      GPSM_CUDA(cudaMalloc(&R.initial, bytes));
      GPSM_CUDA(cudaMalloc(&R.remaining, bytes));
      GPSM_CUDA(cudaMalloc(&R.flags_dev, bytes));
      GPSM_CUDA(cudaMalloc(&R.dest_mask, bytes));
      GPSM_CUDA(cudaMemcpy(R.initial, plan.initial().data(), bytes, cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemcpy(R.dest_mask, R.dest_mask_host.data(), bytes, cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemset(R.flags_dev, 0, bytes));
      if (!ce_wait_ok) {
        GPSM_CUDA(cudaHostAlloc(&R.flags_host, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
        std::memset(R.flags_host, 0, bytes);
      }
      R.chunk_bytes = chunk_bytes;
      R.chunks = plan.chunks();
    }
  }

  ProducerArgs producer_args(int p, std::uint32_t work) const {
    ProducerArgs a;
    const auto& R = ranks[p];
    a.local = R.buf + slices[p].offset / 4;
    a.words = slices[p].bytes / 4;
    a.first_word = slices[p].offset / 4;
    a.seed = cfg.seed;
    a.phase = phase;
    a.work = work;
    a.remaining = R.remaining;
    a.flags = R.flags_dev;
    a.chunk_bytes = R.chunk_bytes;
    return a;
  }

  CopyArgs copy_args(int p) const {
    CopyArgs c;
    const auto& R = ranks[p];
    c.src = R.buf + slices[p].offset / 4;
    for (int d = 0; d < n; ++d) c.dst[d] = ranks[d].buf + slices[p].offset / 4;
    c.dest_mask = R.dest_mask;
    c.flags = R.flags_dev;
    c.phase = phase;
    c.words = slices[p].bytes / 4;
    c.chunk_words = R.chunk_bytes / 4;
    c.chunks = R.chunks;
    c.wait = policy(p);
    return c;
  }

  // Untimed: poison every replica, reset the counters, optionally produce the slices.
  void setup(bool chunked_run, bool preproduce, std::uint32_t work) {
    ++phase;
    last_phase_work = work;
    for (int r = 0; r < n; ++r) {
      set(r);
      GPSM_CUDA(cudaMemsetAsync(ranks[r].buf, kPoison, cfg.bytes, ranks[r].prod));
    }
    for (int p : producers) {
      set(p);
      auto& R = ranks[p];
      if (chunked_run)
        GPSM_CUDA(cudaMemcpyAsync(R.remaining, R.initial, R.chunks * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice,
                                  R.prod));
      if (preproduce) {
        launch_producer(Track::none, producer_args(p, work), R.prod);
        GPSM_CUDA_LAUNCH();
      }
    }
    sync_all();
    stream_waits.clear();  // an earlier run that threw before its bounded wait left its notes
  }

  // The gate and the start event; every producer's streams wait for start.
  void open() {
    set(0);
    launch_gate(go, phase, gps::wait_timeout_ns(cfg.wait_timeout_ms), gate_late, timing);
    GPSM_CUDA_LAUNCH();
    GPSM_CUDA(cudaEventRecord(start, timing));
    for (int p : producers) {
      set(p);
      GPSM_CUDA(cudaStreamWaitEvent(ranks[p].prod, start, 0));
      for (auto s : ranks[p].copy) GPSM_CUDA(cudaStreamWaitEvent(s, start, 0));
    }
  }

  void close_compute() {
    set(0);
    for (int p : producers) GPSM_CUDA(cudaStreamWaitEvent(timing, ranks[p].prod_end, 0));
    GPSM_CUDA(cudaEventRecord(compute_end, timing));
  }

  void close_all(const std::vector<cudaEvent_t>& done) {
    set(0);
    for (auto e : done) GPSM_CUDA(cudaStreamWaitEvent(timing, e, 0));
    GPSM_CUDA(cudaEventRecord(end, timing));
  }

  void release() { __atomic_store_n(go, phase, __ATOMIC_RELEASE); }

  // Opens the gate when enqueueing throws after open(): a gate left closed would trap on rank 0
  // after the wait timeout and lose its context.
  struct ReleaseGuard {
    Impl& impl;
    ~ReleaseGuard() { impl.release(); }
  };

  RunTimes finish() {
    set(0);
    // The copy streams wait on chunk flags (stream_waits): a flag that never arrives fails the
    // run with its name, expected and seen values after the wait timeout instead of hanging.
    const cudaError_t e = bounded_event_wait(end, stream_waits, cfg.wait_timeout_ms, "proact copy_engine run");
    if (e != cudaSuccess) {
      throw_if_wait_failed(cudaGetErrorName(e));
      GPSM_CUDA(e);
    }
    sync_all();
    if (__atomic_load_n(gate_late, __ATOMIC_ACQUIRE) == phase)
      throw Error(fmt::format("gpsm proact: the host took over {} ms to enqueue the run (the gate opened on its "
                              "timeout; the run is not timed): for copy_engine lower --ce-max-ops or use larger "
                              "chunks, else raise --wait-timeout-ms",
                              cfg.wait_timeout_ms));
    float total_ms = 0, tail_ms = 0;
    set(0);
    GPSM_CUDA(cudaEventElapsedTime(&total_ms, start, end));
    GPSM_CUDA(cudaEventElapsedTime(&tail_ms, compute_end, end));
    return {total_ms * 1e-3, std::max(0.0, tail_ms * 1e-3)};
  }

  // Copies of slice p to every destination (whole slice per destination, stream 0 of each).
  void enqueue_bulk_copies(int p, cudaEvent_t after, std::vector<cudaEvent_t>& done) {
    auto& R = ranks[p];
    set(p);
    for (int d = 0; d < n; ++d) {
      if (d == p) continue;
      cudaStream_t s = R.copy[d * cfg.ce_streams];
      if (after) GPSM_CUDA(cudaStreamWaitEvent(s, after, 0));
      GPSM_CUDA(cudaMemcpyPeerAsync(ranks[d].buf + slices[p].offset / 4, ranks[d].dev,
                                    R.buf + slices[p].offset / 4, R.dev, slices[p].bytes, s));
      GPSM_CUDA(cudaEventRecord(R.copy_done[d * cfg.ce_streams], s));
      done.push_back(R.copy_done[d * cfg.ce_streams]);
    }
  }

  void enqueue_chunk_copy(int p, std::uint64_t c, bool with_wait) {
    auto& R = ranks[p];
    const std::uint64_t b = c * R.chunk_bytes, len = std::min(slices[p].bytes, b + R.chunk_bytes) - b;
    for (int d = 0; d < n; ++d) {
      if (!((R.dest_mask_host[c] >> d) & 1u)) continue;
      cudaStream_t s = R.copy[d * cfg.ce_streams + static_cast<int>(c % cfg.ce_streams)];
      if (with_wait) stream_wait_geq(s, R.flags_dev + c, phase, "proact copy_engine: chunk ready flag", &stream_waits);
      GPSM_CUDA(cudaMemcpyPeerAsync(ranks[d].buf + (slices[p].offset + b) / 4, ranks[d].dev,
                                    R.buf + (slices[p].offset + b) / 4, R.dev, len, s));
    }
  }

  void record_copy_streams(int p, std::vector<cudaEvent_t>& done) {
    auto& R = ranks[p];
    set(p);
    for (std::size_t i = 0; i < R.copy.size(); ++i) {
      if (static_cast<int>(i / cfg.ce_streams) == p) continue;
      GPSM_CUDA(cudaEventRecord(R.copy_done[i], R.copy[i]));
      done.push_back(R.copy_done[i]);
    }
  }

  // The host proxy (copy_engine where stream waits are unsupported): the calling thread polls the
  // host-mapped flags of every producer in chunk order, round robin over producers, and issues
  // each ready chunk's copies. Bounded by the wait timeout.
  void proxy_loop() {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> next(n, 0);
    std::size_t left = producers.size();
    for (unsigned spin = 0; left > 0; ++spin) {
      bool progressed = false;
      for (int p : producers) {
        auto& R = ranks[p];
        if (next[p] == R.chunks) continue;
        if (__atomic_load_n(&R.flags_host[next[p]], __ATOMIC_ACQUIRE) < phase) continue;
        set(p);
        while (next[p] < R.chunks && __atomic_load_n(&R.flags_host[next[p]], __ATOMIC_ACQUIRE) >= phase)
          enqueue_chunk_copy(p, next[p]++, false);
        if (next[p] == R.chunks) --left;
        progressed = true;
      }
      if (!progressed && (spin & 1023u) == 1023u &&
          std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(cfg.wait_timeout_ms)) {
        for (int p : producers)
          if (next[p] < ranks[p].chunks)
            throw Error(fmt::format("gpsm proact: host proxy waited {} ms for chunk {} of rank {} (flag {} < phase "
                                    "{}); the producer did not finish: check for a device error with `gpsm info`",
                                    cfg.wait_timeout_ms, next[p], p, ranks[p].flags_host[next[p]], phase));
      }
    }
  }

  void check(const std::uint32_t* buf, int rank, int p, std::uint32_t work, const char* what) {
    auto& R = ranks[rank];
    set(rank);
    launch_verify(buf + slices[p].offset / 4, slices[p].bytes / 4, slices[p].offset / 4, cfg.seed, phase, work,
                  R.verify_out + 2 * p, R.prod);
    GPSM_CUDA_LAUNCH();
    (void)what;
  }

  // Every destination's copy of every slice (deliver) and every producer's own slice.
  void verify_run(bool deliver, std::uint32_t work, const std::string& what) {
    for (int p : producers)
      for (int d = 0; d < n; ++d)
        if (d == p || deliver) check(ranks[d].buf, d, p, work, what.c_str());
    sync_all();
    for (int p : producers)
      for (int d = 0; d < n; ++d) {
        if (!(d == p || deliver)) continue;
        unsigned long long out[2];
        set(d);
        GPSM_CUDA(cudaMemcpy(out, ranks[d].verify_out + 2 * p, sizeof out, cudaMemcpyDeviceToHost));
        if (out[0] != 0)
          throw VerifyError(fmt::format(
              "gpsm proact: {}: rank {} (CUDA device {}) holds {} wrong word(s) of rank {}'s slice, first at word {} "
              "(array byte {}); the run is not timed{}",
              what, d, ranks[d].dev, out[0], p, out[1], slices[p].offset + out[1] * 4,
              d == p ? " (the producer's own replica: a producer bug)" : " (the agent did not deliver every byte)"));
      }
  }
};

Engine::Engine(const ProactConfig& cfg) : impl_(std::make_unique<Impl>()) {
  validate(cfg);
  auto& I = *impl_;
  I.cfg = cfg;
  I.n = static_cast<int>(cfg.devices.size());
  I.slices = producer_slices(cfg);
  for (int r = 0; r < I.n; ++r)
    if (I.slices[r].bytes) I.producers.push_back(r);
  I.ranks.resize(I.n);
  for (int r = 0; r < I.n; ++r) I.ranks[r].dev = cfg.devices[r];
  for (int a = 0; a < I.n; ++a)
    for (int b = 0; b < I.n; ++b) {
      if (a == b) continue;
      int ok = 0;
      GPSM_CUDA(cudaDeviceCanAccessPeer(&ok, cfg.devices[a], cfg.devices[b]));
      if (!ok)
        throw Error(fmt::format("gpsm proact: device {} cannot access device {} as a peer; choose GPUs with peer "
                                "access (--gpus) or check `nvidia-smi topo -m`",
                                cfg.devices[a], cfg.devices[b]));
      GPSM_CUDA(cudaSetDevice(cfg.devices[a]));
      const cudaError_t e = cudaDeviceEnablePeerAccess(cfg.devices[b], 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else
        GPSM_CUDA(e);
    }
  int lo = 0, hi = 0;
  for (int r = 0; r < I.n; ++r) {
    auto& R = I.ranks[r];
    I.set(r);
    GPSM_CUDA(cudaMalloc(&R.buf, cfg.bytes));
    GPSM_CUDA(cudaStreamCreateWithFlags(&R.prod, cudaStreamNonBlocking));
    GPSM_CUDA(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    GPSM_CUDA(cudaStreamCreateWithPriority(&R.agent, cudaStreamNonBlocking, hi));  // agent blocks scheduled first
    R.copy.resize(static_cast<std::size_t>(I.n * cfg.ce_streams));
    R.copy_done.resize(R.copy.size());
    for (std::size_t i = 0; i < R.copy.size(); ++i) {
      GPSM_CUDA(cudaStreamCreateWithFlags(&R.copy[i], cudaStreamNonBlocking));
      GPSM_CUDA(cudaEventCreateWithFlags(&R.copy_done[i], cudaEventDisableTiming));
    }
    GPSM_CUDA(cudaEventCreateWithFlags(&R.prod_end, cudaEventDisableTiming));
    GPSM_CUDA(cudaEventCreateWithFlags(&R.agent_done, cudaEventDisableTiming));
    GPSM_CUDA(cudaMalloc(&R.verify_out, 2 * sizeof(unsigned long long) * I.n));
    GPSM_CUDA(cudaMalloc(&R.cdp_times, 2 * sizeof(unsigned long long)));
    GPSM_CUDA(cudaMalloc(&R.cdp_error, 2 * sizeof(unsigned int)));
  }
  I.set(0);
  GPSM_CUDA(cudaStreamCreateWithFlags(&I.timing, cudaStreamNonBlocking));
  GPSM_CUDA(cudaEventCreate(&I.start));
  GPSM_CUDA(cudaEventCreate(&I.compute_end));
  GPSM_CUDA(cudaEventCreate(&I.end));
  GPSM_CUDA(cudaHostAlloc(&I.go, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
  GPSM_CUDA(cudaHostAlloc(&I.gate_late, sizeof(std::uint32_t), cudaHostAllocMapped | cudaHostAllocPortable));
  *I.gate_late = 0;
  GPSM_CUDA(cudaHostAlloc(&I.record, sizeof(gps::WaitRecord), cudaHostAllocMapped | cudaHostAllocPortable));
  *I.go = 0;
  std::memset(I.record, 0, sizeof(gps::WaitRecord));

  // copy_engine: stream memory operations (cuStreamWaitValue32) on every producer, probed with a
  // wait whose condition already holds.
  I.ce_wait_ok = !cfg.force_ce_proxy;
  std::string why = cfg.force_ce_proxy ? "the host proxy was asked for (--ce-proxy)" : "";
  for (int p : I.producers) {
    if (!I.ce_wait_ok) break;
    why = stream_wait_unsupported(cfg.devices[p]);
    if (!why.empty()) {
      I.ce_wait_ok = false;
      break;
    }
  }
  if (I.ce_wait_ok) I.ce_support = "stream memory ops supported (a cuStreamWaitValue32 probe passed on every producer)";
  if (cfg.force_ce_proxy)
    I.ce_support = "copy_engine runs through the host proxy: " + why;
  else if (!I.ce_wait_ok)
    I.ce_support = "stream waits unavailable (" + why + ")" +
                   (cfg.allow_ce_proxy ? ": copy_engine runs through the host proxy" : ": copy_engine skipped");

  // device_launch: room for one pending child launch per chunk of the smallest chunk size
  if (std::find(cfg.agents.begin(), cfg.agents.end(), Agent::device_launch) != cfg.agents.end() &&
      device_launch_built() && !cfg.chunks.empty()) {
    std::uint64_t most = 0;
    for (int p : I.producers) most = std::max(most, ceil_div(I.slices[p].bytes, cfg.chunks.front()));
    for (int p : I.producers) {
      I.set(p);
      GPSM_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, static_cast<std::size_t>(most + 256)));
      preload_device_launch();  // after the limit: the warm-up sets the device runtime up at its final size
    }
  }
  // every kernel loaded before the first gated run (kernels.hpp: lazy loading behind a spinning gate)
  for (int r = 0; r < I.n; ++r) {
    I.set(r);
    preload_producer_kernels();
    preload_persistent_agent();
  }
}

Engine::~Engine() {
  if (!impl_) return;
  auto& I = *impl_;
  for (int r = 0; r < I.n; ++r) {
    auto& R = I.ranks[r];
    if (cudaSetDevice(R.dev) != cudaSuccess) continue;
    cudaDeviceSynchronize();
    for (void* q : {static_cast<void*>(R.buf), static_cast<void*>(R.verify_out), static_cast<void*>(R.initial),
                    static_cast<void*>(R.remaining), static_cast<void*>(R.flags_dev), static_cast<void*>(R.dest_mask),
                    static_cast<void*>(R.cdp_times), static_cast<void*>(R.cdp_error)})
      if (q) cudaFree(q);
    if (R.flags_host) cudaFreeHost(R.flags_host);
    for (auto s : R.copy) cudaStreamDestroy(s);
    for (auto e : R.copy_done) cudaEventDestroy(e);
    if (R.prod) cudaStreamDestroy(R.prod);
    if (R.agent) cudaStreamDestroy(R.agent);
    if (R.prod_end) cudaEventDestroy(R.prod_end);
    if (R.agent_done) cudaEventDestroy(R.agent_done);
  }
  if (cudaSetDevice(I.ranks.empty() ? 0 : I.ranks[0].dev) == cudaSuccess) {
    if (I.timing) cudaStreamDestroy(I.timing);
    for (auto e : {I.start, I.compute_end, I.end})
      if (e) cudaEventDestroy(e);
  }
  if (I.go) cudaFreeHost(I.go);
  if (I.gate_late) cudaFreeHost(I.gate_late);
  if (I.record) cudaFreeHost(I.record);
  cudaGetLastError();
}

std::string Engine::ce_mechanism() const { return impl_->ce_wait_ok ? "stream_wait_value" : "host_proxy"; }
std::string Engine::ce_support() const { return impl_->ce_support; }

std::string Engine::unsupported(Agent a, std::uint64_t chunk_bytes, int threads) const {
  const auto& I = *impl_;
  if (a == Agent::device_launch && !device_launch_built())
    return "this gpsm was built without the device-launch agent (CUDA dynamic parallelism)";
  if (a == Agent::persistent) {
    // the polling warps must leave room for the producer: a grid filling the GPU would spin until
    // the wait timeout while the producer cannot start
    for (int p : I.producers) {
      int sms = 0, per_sm = 0;
      GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, I.ranks[p].dev));
      GPSM_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, I.ranks[p].dev));
      const std::int64_t half = static_cast<std::int64_t>(sms) * per_sm / 2;
      if (threads > half)
        return fmt::format("{} polling threads exceed half of device {}'s {} resident threads ({} SMs x {}); the "
                           "producer needs the rest: use fewer --threads",
                           threads, I.ranks[p].dev, 2 * half, sms, per_sm);
    }
  }
  if (a == Agent::copy_engine) {
    if (!I.ce_wait_ok && !I.cfg.allow_ce_proxy) return I.ce_support;
    const std::uint64_t ops = ce_ops_per_stream(I.cfg, chunk_bytes);
    if (I.ce_wait_ok && ops > I.cfg.ce_max_ops)
      return fmt::format("{} stream operations per copy stream (a wait and a copy per chunk) exceed --ce-max-ops {}: "
                         "enqueued up front they could fill the stream and block the host before the run starts; use "
                         "larger chunks or more --ce-streams",
                         ops, I.cfg.ce_max_ops);
  }
  return "";
}

RunTimes Engine::run_compute(bool tracked, std::uint64_t chunk_bytes) {
  auto& I = *impl_;
  if (tracked) I.prepare_chunks(chunk_bytes);
  I.setup(tracked, false, work_);
  I.open();
  const Impl::ReleaseGuard guard{I};
  for (int p : I.producers) {
    I.set(p);
    launch_producer(tracked ? Track::counters : Track::none, I.producer_args(p, work_), I.ranks[p].prod);
    GPSM_CUDA_LAUNCH();
    GPSM_CUDA(cudaEventRecord(I.ranks[p].prod_end, I.ranks[p].prod));
  }
  I.close_compute();
  I.close_all({});
  I.release();
  const RunTimes t = I.finish();
  I.verify_run(false, work_, tracked ? "tracked producer" : "producer");
  return t;
}

RunTimes Engine::run_transfer() {
  auto& I = *impl_;
  I.setup(false, true, work_);
  I.open();
  const Impl::ReleaseGuard guard{I};
  std::vector<cudaEvent_t> done;
  for (int p : I.producers) {
    I.set(p);
    GPSM_CUDA(cudaEventRecord(I.ranks[p].prod_end, I.ranks[p].prod));  // nothing to compute: start
    I.enqueue_bulk_copies(p, nullptr, done);
  }
  I.close_compute();
  I.close_all(done);
  I.release();
  const RunTimes t = I.finish();
  I.verify_run(true, work_, "copies alone");
  return t;
}

RunTimes Engine::run_agent(Agent a, std::uint64_t chunk_bytes, int threads) {
  auto& I = *impl_;
  const std::string why = unsupported(a, chunk_bytes, threads);
  if (!why.empty()) throw Error("gpsm proact: " + std::string(agent_name(a)) + " cannot run: " + why);
  const bool chunk_run = chunked(a);
  if (chunk_run) I.prepare_chunks(chunk_bytes);
  I.setup(chunk_run, false, work_);
  const bool proxy = a == Agent::copy_engine && !I.ce_wait_ok;
  std::vector<cudaEvent_t> done;
  // the persistent agent starts before the gate opens, so its warps are resident first
  if (a == Agent::persistent)
    for (int p : I.producers) {
      I.set(p);
      launch_persistent_agent(I.copy_args(p), threads, I.ranks[p].agent);
      GPSM_CUDA_LAUNCH();
      GPSM_CUDA(cudaEventRecord(I.ranks[p].agent_done, I.ranks[p].agent));
      done.push_back(I.ranks[p].agent_done);
    }
  if (a == Agent::device_launch)
    for (int p : I.producers) {
      I.set(p);
      GPSM_CUDA(cudaMemsetAsync(I.ranks[p].cdp_times, 0, 2 * sizeof(unsigned long long), I.ranks[p].prod));
      GPSM_CUDA(cudaMemsetAsync(I.ranks[p].cdp_error, 0, 2 * sizeof(unsigned int), I.ranks[p].prod));
    }
  I.open();
  const Impl::ReleaseGuard guard{I};
  for (int p : I.producers) {
    auto& R = I.ranks[p];
    I.set(p);
    ProducerArgs pa = I.producer_args(p, work_);
    switch (a) {
      case Agent::memcpy:
        launch_producer(Track::none, pa, R.prod);
        break;
      case Agent::inline_store:
        for (int d = 0; d < I.n; ++d)
          if (d != p) pa.peers[pa.npeers++] = I.ranks[d].buf + I.slices[p].offset / 4;
        launch_producer(Track::inline_peers, pa, R.prod);
        break;
      case Agent::persistent:
        launch_producer(Track::counters, pa, R.prod);
        break;
      case Agent::copy_engine:
        if (proxy) pa.flags = R.flags_host;
        launch_producer(Track::counters, pa, R.prod);
        break;
      case Agent::device_launch:
        launch_producer_device_launch(pa, I.copy_args(p), threads, {R.cdp_times, R.cdp_error}, R.prod);
        break;
    }
    GPSM_CUDA_LAUNCH();
    GPSM_CUDA(cudaEventRecord(R.prod_end, R.prod));
    if (a == Agent::memcpy) I.enqueue_bulk_copies(p, R.prod_end, done);
    if (a == Agent::inline_store || a == Agent::device_launch) done.push_back(R.prod_end);
    if (a == Agent::copy_engine && !proxy) {
      for (std::uint64_t c = 0; c < R.chunks; ++c) I.enqueue_chunk_copy(p, c, true);
      I.record_copy_streams(p, done);
    }
  }
  I.close_compute();
  if (!proxy) I.close_all(done);
  I.release();
  if (proxy) {
    I.proxy_loop();
    for (int p : I.producers) I.record_copy_streams(p, done);
    I.close_all(done);
  }
  RunTimes t = I.finish();
  if (a == Agent::device_launch) {
    double tail = 0;
    for (int p : I.producers) {
      unsigned long long times[2];
      unsigned int err[2];
      I.set(p);
      GPSM_CUDA(cudaMemcpy(times, I.ranks[p].cdp_times, sizeof times, cudaMemcpyDeviceToHost));
      GPSM_CUDA(cudaMemcpy(err, I.ranks[p].cdp_error, sizeof err, cudaMemcpyDeviceToHost));
      if (err[0] != 0)
        throw Error(fmt::format("gpsm proact: device launch of the copy kernel for chunk {} on rank {} failed: {}; "
                                "use larger chunks (fewer pending launches) or another agent",
                                err[1], p, cudaGetErrorName(static_cast<cudaError_t>(err[0] - 1))));
      if (times[1] > times[0]) tail = std::max(tail, static_cast<double>(times[1] - times[0]) * 1e-9);
    }
    t.tail_s = tail;  // producer compute end -> last copy kernel end, both on the GPU's globaltimer
  }
  I.verify_run(true, work_, agent_name(a));
  return t;
}

bool Engine::healthy() {
  auto& I = *impl_;
  for (int r = 0; r < I.n; ++r) {
    if (cudaSetDevice(I.ranks[r].dev) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
        cudaGetLastError() != cudaSuccess)
      return false;
  }
  return reinterpret_cast<volatile gps::WaitRecord*>(I.record)->valid == 0u;
}

VerifyResult Engine::verify(int rank, int producer) {
  auto& I = *impl_;
  if (rank < 0 || rank >= I.n || producer < 0 || producer >= I.n || I.slices[producer].bytes == 0)
    throw Error(fmt::format("gpsm proact: verify(rank {}, producer {}): not a rank / producer of this engine", rank,
                            producer));
  I.check(I.ranks[rank].buf, rank, producer, I.last_phase_work, "check");
  I.sync_all();
  unsigned long long out[2];
  I.set(rank);
  GPSM_CUDA(cudaMemcpy(out, I.ranks[rank].verify_out + 2 * producer, sizeof out, cudaMemcpyDeviceToHost));
  return {out[0], out[1]};
}

void Engine::corrupt_byte(int rank, std::uint64_t offset) {
  auto& I = *impl_;
  if (rank < 0 || rank >= I.n || offset >= I.cfg.bytes)
    throw Error(fmt::format("gpsm proact: corrupt_byte(rank {}, byte {}) outside the engine", rank, offset));
  I.set(rank);
  std::uint8_t b = 0;
  auto* p = reinterpret_cast<std::uint8_t*>(I.ranks[rank].buf) + offset;
  GPSM_CUDA(cudaMemcpy(&b, p, 1, cudaMemcpyDeviceToHost));
  b ^= 0x01;
  GPSM_CUDA(cudaMemcpy(p, &b, 1, cudaMemcpyHostToDevice));
}

}  // namespace gpsm::proact
