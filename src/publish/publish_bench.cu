// `gpsm publish`: store kernels (GPS view or plain buffer; arithmetic or listed indices), the
// on-device value check, and the timed run loop over patterns x modes.
#include "publish/publish_bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/dev_buf.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "common/cuda_check.hpp"
#include "common/pattern.hpp"

namespace gpsm::bench {
namespace {

constexpr int kThreads = 256;

// Where a store goes: through the GPS view (local replica + publish) or a plain buffer (`local`).
struct GpsSink {
  gps::View<std::uint32_t> v;
  __device__ __forceinline__ void store(std::uint64_t i, std::uint32_t x) const { v.store(i, x); }
  __device__ __forceinline__ const std::uint32_t* data() const { return v.local(); }
};
struct RawSink {
  std::uint32_t* p;
  __device__ __forceinline__ void store(std::uint64_t i, std::uint32_t x) const { p[i] = x; }
  __device__ __forceinline__ const std::uint32_t* data() const { return p; }
};
// The random pattern's precomputed index list (coalesced and strided use AffineIndex: no reads).
struct ListIndex {
  const std::uint64_t* __restrict__ idx;
  __device__ __forceinline__ std::uint64_t operator()(std::uint64_t k) const { return __ldg(idx + k); }
};

template <class Sink, class Index>
__global__ void store_kernel(Sink s, Index ix, std::uint64_t n, std::uint32_t seed) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += stride) {
    const std::uint64_t w = ix(k);
    s.store(w, gpsm::pattern_word(w, seed));
  }
}

// One load through the view per page: while tracking, the page is marked read by this GPU, so it
// stays subscribed to every page (the benchmark's premise: every store reaches N - 1 replicas).
__global__ void touch_kernel(gps::View<std::uint32_t> v, std::uint64_t words, unsigned long long* sink) {
  const std::uint64_t page = v.page_elems();
  std::uint32_t acc = 0;
  for (std::uint64_t i = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * page; i < words;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x * page)
    acc ^= v.load(i);
  if (acc == 0x9E3779B9u) atomicAdd(sink, 1ull);  // keeps the loads; the value does not matter
}

// out[0] += wrong words, out[1] = min(out[1], first wrong word) of this device's copy.
template <class Sink>
__global__ void check_kernel(Sink s, const std::uint32_t* bits, std::uint64_t words, std::uint32_t seed,
                             std::uint32_t init_seed, unsigned long long* out) {
  const std::uint32_t* data = s.data();
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0, first = ~0ull;
  for (std::uint64_t w = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words; w += stride) {
    if (data[w] != expected_word(w, bits, seed, init_seed)) {
      if (bad == 0) first = w;
      ++bad;
    }
  }
  if (bad != 0) {
    atomicAdd(&out[0], bad);
    atomicMin(&out[1], first);
  }
}

unsigned grid_for(std::uint64_t n, int sms) {
  const std::uint64_t want = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(want, 1, static_cast<std::uint64_t>(sms) * 8));
}

struct PerDevice {
  int sms = 1;
  DevBuf<std::uint64_t> idx;            // random: this GPU's word list
  DevBuf<std::uint32_t> all_bits;       // words any GPU stores (expected model of GPS replicas)
  DevBuf<std::uint32_t> mine_bits;      // words this GPU stores (model of its `local` buffer)
  DevBuf<std::uint32_t> local;          // the `local` baseline's plain buffer
  DevBuf<unsigned long long> bad;       // check_kernel output
};

struct VerifyFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string gpu(int device) { return "gpu" + std::to_string(device); }

// Everything one (pattern, mode) run needs.
struct ModeRun {
  gps::Context& ctx;
  const PublishConfig& cfg;
  std::vector<PerDevice>& dev;
  gps::Array<std::uint32_t>& arr;
  const PatternPlan& plan;
  const std::vector<std::uint32_t>& all_bits;
  const std::vector<std::vector<std::uint32_t>>& mine_bits;
  const std::vector<std::uint32_t>& init_array;
  std::uint32_t init_seed;
  BenchMode mode;
  std::string head;  // "[3/12] strided/combine"
  std::vector<gps::View<std::uint32_t>> views;

  int n() const { return ctx.size(); }
  std::uint64_t words() const { return plan.words; }
  bool local() const { return !publishes(mode); }
  void say(const std::string& s) const {
    if (cfg.progress) cfg.progress(head + " " + s);
  }

  void take_views() {
    views.clear();
    if (!local())
      for (int r = 0; r < n(); ++r) views.push_back(arr.view(r, to_publish_mode(mode)));
  }

  template <class Sink>
  void launch_store(const Sink& s, int r, std::uint32_t seed) const {
    const std::uint64_t count = plan.count.at(r);
    if (count == 0) return;
    const unsigned grid = grid_for(count, dev[r].sms);
    if (plan.pattern == Pattern::random) {
      store_kernel<<<grid, kThreads, 0, ctx.stream(r)>>>(s, ListIndex{dev[r].idx.p}, count, seed);
    } else {
      store_kernel<<<grid, kThreads, 0, ctx.stream(r)>>>(s, plan.affine.at(r), count, seed);
    }
    GPSM_CUDA_LAUNCH();
  }

  // One rep: every GPU's store kernel launched back to back, then publish complete. Returns seconds.
  double rep(std::uint32_t seed) const {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < n(); ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      if (local())
        launch_store(RawSink{dev[r].local.p}, r, seed);
      else
        launch_store(GpsSink{views[r]}, r, seed);
    }
    if (local())
      ctx.synchronize();
    else
      ctx.fence();
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  }

  const std::uint32_t* bits_on(int r) const { return local() ? dev[r].mine_bits.p : dev[r].all_bits.p; }

  // Every device checks its own copy against the model (cheap: one read of the array).
  void device_check(std::uint32_t seed, const std::string& which) const {
    for (int r = 0; r < n(); ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      cudaStream_t st = ctx.stream(r);
      GPSM_CUDA(cudaMemsetAsync(dev[r].bad.p, 0, sizeof(unsigned long long), st));
      GPSM_CUDA(cudaMemsetAsync(dev[r].bad.p + 1, 0xFF, sizeof(unsigned long long), st));
      const unsigned grid = grid_for(words(), dev[r].sms);
      if (local()) {
        check_kernel<<<grid, kThreads, 0, st>>>(RawSink{dev[r].local.p}, bits_on(r), words(), seed, init_seed,
                                                dev[r].bad.p);
      } else {
        check_kernel<<<grid, kThreads, 0, st>>>(GpsSink{views[r]}, bits_on(r), words(), seed, init_seed,
                                                dev[r].bad.p);
      }
      GPSM_CUDA_LAUNCH();
    }
    for (int r = 0; r < n(); ++r) {
      unsigned long long out[2] = {0, 0};
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      GPSM_CUDA(cudaMemcpyAsync(out, dev[r].bad.p, sizeof(out), cudaMemcpyDeviceToHost, ctx.stream(r)));
      GPSM_CUDA(cudaStreamSynchronize(ctx.stream(r)));
      if (out[0] != 0)
        throw VerifyFailure(fmt::format("{}: {} of {} words wrong in {}'s {} (device check; first wrong word {})",
                                        which, out[0], words(), gpu(ctx.device(r)), local() ? "buffer" : "replica",
                                        out[1]));
    }
  }

  // Word-by-word on the host, from every replica (Array::replica) or local buffer.
  void host_check(std::uint32_t seed, const std::string& which) const {
    std::vector<std::uint32_t> copy;
    for (int r = 0; r < n(); ++r) {
      if (local()) {
        copy.resize(words());
        GPSM_CUDA(cudaSetDevice(ctx.device(r)));
        GPSM_CUDA(cudaMemcpy(copy.data(), dev[r].local.p, words() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
      } else {
        copy = arr.replica(r);
      }
      const std::uint32_t* bits = local() ? mine_bits.at(r).data() : all_bits.data();
      const Mismatch m = check_words(copy.data(), words(), bits, seed, init_seed);
      if (m.count != 0)
        throw VerifyFailure(fmt::format(
            "{}: {} of {} words wrong in {}'s {} (full check; first: word {} = {:#010x}, expected {:#010x}{})", which,
            m.count, words(), gpu(ctx.device(r)), local() ? "buffer" : "replica", m.first, m.got, m.want,
            m.got == gpsm::pattern_word(m.first, init_seed) ? ", the initial value: never published" : ""));
    }
  }

  // Decoupled: two reps under tracking (stores counted per chunk, every page read by every GPU),
  // checked like any rep; at tracking_stop the runtime keeps the counts both agreed on.
  void learn(const std::vector<std::uint32_t>& seeds, ModeResult& res) {
    ctx.tracking_start();
    take_views();
    for (int k = 0; k < 2; ++k) {
      const std::string which = fmt::format("learning rep {}/2", k + 1);
      say(which);
      for (int r = 0; r < n(); ++r) {
        GPSM_CUDA(cudaSetDevice(ctx.device(r)));
        launch_store(GpsSink{views[r]}, r, seeds[k]);
        touch_kernel<<<grid_for(words() / views[r].page_elems() + 1, dev[r].sms), kThreads, 0, ctx.stream(r)>>>(
            views[r], words(), dev[r].bad.p + 2);
        GPSM_CUDA_LAUNCH();
      }
      ctx.fence();
      device_check(seeds[k], which);
      ++res.reps_checked;
    }
    ctx.tracking_stop();
    take_views();
    res.learned_chunks.clear();
    for (int r = 0; r < n(); ++r) res.learned_chunks.push_back(arr.learned_chunks(r));
  }

  void run(ModeResult& res) {
    const int warm = cfg.warmup, reps = cfg.reps;
    const int learning = mode == BenchMode::decoupled ? 2 : 0;  // seeds[0, learning): learn()'s reps
    const auto all_seeds = rep_seeds(cfg.seed, plan.pattern, mode, learning + warm + reps + 1);
    const std::vector<std::uint32_t> seeds(all_seeds.begin() + learning, all_seeds.end());
    say("filling");
    if (local()) {
      for (int r = 0; r < n(); ++r) {
        GPSM_CUDA(cudaSetDevice(ctx.device(r)));
        GPSM_CUDA(cudaMemcpy(dev[r].local.p, init_array.data(), words() * sizeof(std::uint32_t),
                             cudaMemcpyHostToDevice));
      }
      ctx.synchronize();
    } else {
      ctx.fence();
      arr.set_mode(to_publish_mode(mode));  // the fence publishes by the array's mode
      arr.set_counting(false);              // timed reps never count (GPSM_COUNT_LINK_BYTES notwithstanding)
      arr.upload(init_array);
      ctx.fence();
    }
    take_views();
    if (learning > 0) learn(all_seeds, res);
    for (int k = 0; k < warm + reps; ++k) {
      const bool timed = k >= warm;
      const std::string which = timed ? fmt::format("rep {}/{}", k - warm + 1, reps) : fmt::format("warm-up {}/{}", k + 1, warm);
      say(which);
      const double t = rep(seeds[k]);
      device_check(seeds[k], which);
      ++res.reps_checked;
      if (timed) res.time_s.push_back(t);
    }
    say("full check of the last rep");
    host_check(seeds[warm + reps - 1], fmt::format("rep {}/{}", reps, reps));
    if (!local()) {
      say("counting rep");
      arr.set_counting(true);
      arr.reset_link_stats();
      take_views();  // views taken after set_counting(true) count
      rep(seeds.back());
      const gps::LinkStats st = arr.link_stats();
      arr.set_counting(false);
      take_views();
      device_check(seeds.back(), "counting rep");
      ++res.reps_checked;
      res.link.counted = true;
      res.link.useful_bytes = st.useful_bytes;
      res.link.link_bytes = st.link_bytes;
      res.link.messages = st.messages;
      res.link.fence_rounds = st.fence_rounds;
    }
    res.verified = true;
  }
};

ModeResult blank_result(const PublishConfig& cfg, Pattern p, BenchMode m) {
  ModeResult r;
  r.pattern = p;
  r.mode = m;
  r.devices = cfg.devices;
  r.array_bytes = cfg.bytes;
  return r;
}

}  // namespace

std::vector<ModeResult> run_publish(const PublishConfig& cfg) {
  validate_config(cfg);
  auto say = [&](const std::string& s) {
    if (cfg.progress) cfg.progress(s);
  };
  say(fmt::format("setting up a GPS context over {} GPUs (peer access check)", cfg.devices.size()));
  gps::Context ctx(cfg.devices);
  const int n = ctx.size();
  const std::uint64_t words = cfg.bytes / gps::kWordBytes;
  const bool any_gps = std::any_of(cfg.modes.begin(), cfg.modes.end(), [](BenchMode m) { return publishes(m); });
  const bool any_local = std::any_of(cfg.modes.begin(), cfg.modes.end(), [](BenchMode m) { return !publishes(m); });
  const bool any_random =
      std::find(cfg.patterns.begin(), cfg.patterns.end(), Pattern::random) != cfg.patterns.end();

  std::vector<PerDevice> dev(n);
  for (int r = 0; r < n; ++r) {
    GPSM_CUDA(cudaDeviceGetAttribute(&dev[r].sms, cudaDevAttrMultiProcessorCount, ctx.device(r)));
    dev[r].bad.alloc(ctx.device(r), 3);  // check_kernel's count and first word; touch_kernel's sink
    dev[r].all_bits.alloc(ctx.device(r), (words + 31) / 32);
    if (any_local) {
      dev[r].mine_bits.alloc(ctx.device(r), (words + 31) / 32);
      dev[r].local.alloc(ctx.device(r), words);
    }
  }
  gps::Array<std::uint32_t> arr;
  if (any_gps) {
    BenchMode first = *std::find_if(cfg.modes.begin(), cfg.modes.end(), [](BenchMode m) { return publishes(m); });
    gps::AllocOptions o = gps::with_mode(to_publish_mode(first));
    o.name = "publish";
    arr = ctx.alloc<std::uint32_t>(words, o);
  }

  std::vector<ModeResult> results;
  const int total = static_cast<int>(cfg.patterns.size() * cfg.modes.size());
  int done = 0;
  for (Pattern p : cfg.patterns) {
    PatternPlan plan;
    std::vector<std::uint32_t> all_bits, init_array;
    std::vector<std::vector<std::uint32_t>> mine_bits(n);
    const std::uint32_t init_seed = initial_seed(cfg.seed, p);
    try {
      say(fmt::format("{}: planning the stores and the expected values", pattern_name(p)));
      plan = make_plan(p, n, words, cfg.random_stores, cfg.seed);
      all_bits = stored_bitmap(plan, -1);
      init_array = initial_array(words, init_seed);
      for (int r = 0; r < n; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx.device(r)));
        GPSM_CUDA(cudaMemcpy(dev[r].all_bits.p, all_bits.data(), all_bits.size() * 4, cudaMemcpyHostToDevice));
        if (any_local) {
          mine_bits[r] = stored_bitmap(plan, r);
          GPSM_CUDA(cudaMemcpy(dev[r].mine_bits.p, mine_bits[r].data(), mine_bits[r].size() * 4,
                               cudaMemcpyHostToDevice));
        }
        if (p == Pattern::random) {
          dev[r].idx.alloc(ctx.device(r), plan.list[r].size());
          GPSM_CUDA(cudaMemcpy(dev[r].idx.p, plan.list[r].data(), plan.list[r].size() * sizeof(std::uint64_t),
                               cudaMemcpyHostToDevice));
        }
      }
    } catch (const std::exception& e) {
      for (BenchMode m : cfg.modes) {
        ModeResult r = blank_result(cfg, p, m);
        r.failure = std::string("setup: ") + e.what();
        results.push_back(std::move(r));
        ++done;
      }
      continue;
    }
    const bool any_bulk = std::find(cfg.modes.begin(), cfg.modes.end(), BenchMode::bulk) != cfg.modes.end();
    const std::uint64_t bulk_copies = any_bulk ? bulk_copies_per_fence(plan) : 0;
    for (BenchMode m : cfg.modes) {
      ++done;
      ModeResult res = blank_result(cfg, p, m);
      res.stores_per_gpu = plan.count;
      res.useful_bytes = plan.useful_bytes();
      if (m == BenchMode::bulk && cfg.bulk_max_copies != 0 && bulk_copies > cfg.bulk_max_copies) {
        res.skipped = fmt::format(
            "one fence would issue {} copy-engine copies (a cudaMemcpyPeerAsync per run of dirty words per "
            "destination), above --bulk-max-copies {}; raise it (0: no limit) or use a smaller --size to run it",
            bulk_copies, cfg.bulk_max_copies);
        results.push_back(std::move(res));
        continue;
      }
      ModeRun run{ctx, cfg, dev, arr, plan, all_bits, mine_bits, init_array, init_seed, m,
                  fmt::format("[{}/{}] {}/{}", done, total, pattern_name(p), mode_name(m)), {}};
      try {
        run.run(res);
      } catch (const std::exception& e) {
        res.failure = e.what();
      }
      if (!res.failure.empty()) {
        res.time_s.clear();  // never report a time for wrong data
        res.verified = false;
        res.link = LinkCount{};
      }
      results.push_back(std::move(res));
    }
    if (any_random)
      for (auto& d : dev) d.idx.reset();
  }
  return results;
}

}  // namespace gpsm::bench
