// SM-driven peer stores and loads over NVLink/PCIe: goodput versus bytes written per 128 B line
// (PROACT dissertation Fig 2.2 and Fig 5.1), versus vector width, and versus the number of blocks.
#include <algorithm>

#include "scope/bench_common.cuh"
#include "scope/kernels.cuh"

namespace gpsm::scope {
namespace {

template <class V> __device__ __forceinline__ V make_vec(std::uint64_t w, unsigned seed);
template <> __device__ __forceinline__ std::uint32_t make_vec<std::uint32_t>(std::uint64_t w, unsigned s) {
  return pattern_word(w, s);
}
template <> __device__ __forceinline__ uint2 make_vec<uint2>(std::uint64_t w, unsigned s) {
  return make_uint2(pattern_word(w, s), pattern_word(w + 1, s));
}
template <> __device__ __forceinline__ uint4 make_vec<uint4>(std::uint64_t w, unsigned s) {
  return make_uint4(pattern_word(w, s), pattern_word(w + 1, s), pattern_word(w + 2, s), pattern_word(w + 3, s));
}

// Writes the first (1 << log_per_line) vectors of every 128 B line of dst; consecutive threads
// take consecutive vectors, so a warp's stores to one line are coalesced as an application's
// would be.
template <class V>
__global__ void store_lines(V* __restrict__ dst, size_t lines, int log_per_line, unsigned seed) {
  constexpr int kPerLine = 128 / sizeof(V);
  constexpr int kWords = sizeof(V) / 4;
  const size_t items = lines << log_per_line;
  const size_t mask = (size_t(1) << log_per_line) - 1;
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < items; k += (size_t)gridDim.x * blockDim.x) {
    const size_t elem = (k >> log_per_line) * kPerLine + (k & mask);
    dst[elem] = make_vec<V>(elem * kWords, seed);
  }
}

// Counts words among the first words_per_line of each line that differ from the pattern.
__global__ void check_lines(const std::uint32_t* p, size_t lines, int words_per_line, unsigned seed,
                            unsigned long long* bad) {
  unsigned long long local = 0;
  const size_t items = lines * words_per_line;
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < items; k += (size_t)gridDim.x * blockDim.x) {
    const size_t w = (k / words_per_line) * 32 + (k % words_per_line);
    local += p[w] != pattern_word(w, seed);
  }
  if (local) atomicAdd(bad, local);
}

constexpr int kThreads = 512;

int ilog2(int v) {
  int l = 0;
  while ((1 << l) < v) ++l;
  return l;
}


unsigned long long count_bad_lines(DeviceBuffer& b, size_t lines, int words_per_line, unsigned seed) {
  DeviceGuard g(b.device);
  unsigned long long* bad = nullptr;
  GPSM_CUDA(cudaMalloc(&bad, sizeof(*bad)));
  GPSM_CUDA(cudaMemset(bad, 0, sizeof(*bad)));
  check_lines<<<1024, 256>>>(static_cast<const std::uint32_t*>(b.p), lines, words_per_line, seed, bad);
  GPSM_CUDA_LAUNCH();
  unsigned long long h = 0;
  GPSM_CUDA(cudaMemcpy(&h, bad, sizeof(h), cudaMemcpyDeviceToHost));
  GPSM_CUDA(cudaFree(bad));
  return h;
}

// One store configuration: vector type V, `per_line_bytes` written per 128 B line, `blocks`.
template <class V>
Point measure_store(int src, DeviceBuffer& dst, int per_line_bytes, int blocks, double x, const Options& o) {
  const size_t lines = dst.bytes / 128;
  const int log_per_line = ilog2(per_line_bytes / int(sizeof(V)));
  {
    DeviceGuard g(dst.device);
    GPSM_CUDA(cudaMemset(dst.p, 0, dst.bytes));
  }
  DeviceStream st(src);
  V* p = static_cast<V*>(dst.p);
  StreamOp op{src, st.s, [=](cudaStream_t s) {
                store_lines<V><<<blocks, kThreads, 0, s>>>(p, lines, log_per_line, 31);
                GPSM_CUDA_LAUNCH();
              }};
  auto t = time_op(op, o);
  const bool ok = count_bad_lines(dst, lines, per_line_bytes / 4, 31) == 0;
  return make_point(x, double(lines) * per_line_bytes, t, "GB/s", ok);
}

std::vector<int> block_counts(int sms) {
  std::vector<int> b{1, 2, 4, 8, 16, 32, 64, sms / 2, sms, 2 * sms, 4 * sms};
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

enum class Kind { granularity, vector, store_blocks, load_blocks };

class SmPeer : public Test {
 public:
  explicit SmPeer(Kind k) : k_(k) {}
  std::string name() const override {
    switch (k_) {
      case Kind::granularity: return "sm_store_granularity";
      case Kind::vector: return "sm_store_vector";
      case Kind::store_blocks: return "sm_store_blocks";
      case Kind::load_blocks: return "sm_load_blocks";
    }
    return "";
  }
  std::string group() const override { return "sm"; }
  std::string description() const override {
    switch (k_) {
      case Kind::granularity: return "peer stores (4 B each): goodput vs bytes written per 128 B line";
      case Kind::vector: return "peer stores of full 128 B lines: goodput vs store width (4, 8, 16 B)";
      case Kind::store_blocks: return "peer stores of full lines (16 B stores): goodput vs blocks of 512 threads";
      case Kind::load_blocks: return "peer loads (16 B, L1 bypassed) of full lines: goodput vs blocks of 512 threads";
    }
    return "";
  }
  std::string unit() const override { return "GB/s"; }
  std::string x_name() const override {
    return k_ == Kind::granularity ? "bytes_per_line" : k_ == Kind::vector ? "vector_bytes" : "blocks";
  }
  std::string waived(const Options& o, const topo::Topology& t) const override {
    if (const std::string w = too_few_gpus(o, 2); !w.empty()) return w;
    return missing_peer_access(o, t);
  }
  void run(const Options& o, const topo::Topology&, TestResult& r) override {
    // quick: a smaller region keeps the 1-block points short
    const size_t region = o.quick ? std::min<size_t>(o.peak_size, 64u << 20) : o.peak_size;
    for (auto [a, b] : device_pairs(o)) {
      std::string why;
      if (!enable_peer(a, b, &why) || !enable_peer(b, a, &why)) throw gpsm::Error("gpsm: " + why);
      if (o.progress) o.progress(name() + " " + gpu_name(a) + "->" + gpu_name(b));
      const int sms = sm_count(a);
      DeviceBuffer remote(b, region);
      Series s;
      s.params = {{"src", gpu_name(a)}, {"dst", gpu_name(b)}, {"direction", "uni"}, {"initiator", gpu_name(a)}};
      s.label = gpu_name(a) + "->" + gpu_name(b);
      switch (k_) {
        case Kind::granularity:
          for (int g : {4, 8, 16, 32, 64, 128})
            s.points.push_back(measure_store<std::uint32_t>(a, remote, g, 4 * sms, g, o));
          break;
        case Kind::vector:
          s.points.push_back(measure_store<std::uint32_t>(a, remote, 128, 4 * sms, 4, o));
          s.points.push_back(measure_store<uint2>(a, remote, 128, 4 * sms, 8, o));
          s.points.push_back(measure_store<uint4>(a, remote, 128, 4 * sms, 16, o));
          break;
        case Kind::store_blocks:
          for (int nb : block_counts(sms)) s.points.push_back(measure_store<uint4>(a, remote, 128, nb, nb, o));
          break;
        case Kind::load_blocks: {
          // data lives on b, gpu a reads it: data flows b -> a
          s.params = {{"src", gpu_name(b)}, {"dst", gpu_name(a)}, {"direction", "uni"}, {"initiator", gpu_name(a)}};
          s.label = gpu_name(b) + "->" + gpu_name(a) + " (loads by " + gpu_name(a) + ")";
          fill_device(remote, 41);
          const std::uint32_t expect = pattern_xor(region / 4, 41);
          for (int nb : block_counts(sms)) {
            DeviceStream st(a);
            std::uint32_t* out = nullptr;
            {
              DeviceGuard g(a);
              GPSM_CUDA(cudaMalloc(&out, nb * sizeof(std::uint32_t)));
              GPSM_CUDA(cudaMemset(out, 0, nb * sizeof(std::uint32_t)));
            }
            const uint4* src = static_cast<const uint4*>(remote.p);
            const size_t n = region / 16;
            StreamOp op{a, st.s, [=](cudaStream_t s) {
                          xor_read_kernel<<<nb, kThreads, 0, s>>>(src, n, out);
                          GPSM_CUDA_LAUNCH();
                        }};
            auto t = time_op(op, o);
            std::vector<std::uint32_t> h(nb);
            {
              DeviceGuard g(a);
              GPSM_CUDA(cudaMemcpy(h.data(), out, nb * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
              GPSM_CUDA(cudaFree(out));
            }
            std::uint32_t got = 0;
            for (auto v : h) got ^= v;
            s.points.push_back(make_point(nb, double(region), t, "GB/s", got == expect));
          }
          break;
        }
      }
      r.series.push_back(std::move(s));
    }
  }

 private:
  Kind k_;
};

}  // namespace

void register_sm_tests(std::vector<std::unique_ptr<Test>>& v) {
  v.push_back(std::make_unique<SmPeer>(Kind::granularity));
  v.push_back(std::make_unique<SmPeer>(Kind::vector));
  v.push_back(std::make_unique<SmPeer>(Kind::store_blocks));
  v.push_back(std::make_unique<SmPeer>(Kind::load_blocks));
}

}  // namespace gpsm::scope
