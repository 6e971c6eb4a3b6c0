// Prototype, not built by CMake (kept because docs/gps.md quotes it): on 4 GPUs, 4M random 4 B
// stores per GPU into a replicated 2^KBITS-word array, it times
//   local               the stores alone
//   inline              each store also written to the 3 peers
//   packed (no dedupe)  8 B {word, value} entries pushed to the peers from the store kernel,
//                       applied by the receivers in arrival order at the end
//   push+partition      the same, plus region bucketing before the apply
// and checks the last against the inline result. Run on the device machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 [-DKBITS=23] experiments/publish-prototype/publish_proto.cu -o /tmp/p && /tmp/p
// 2026-11-21, 4xH200, KBITS=26 (256 MiB): local 0.29 ms, inline 1.93 ms, packed 1.15 ms of which
// the receivers' arrival-order apply ~0.8 ms, push+partition 1.36 ms (apply 0.6 ms).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::printf("CUDA %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, #x);    \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

constexpr int N = 4;
#ifndef KBITS
#define KBITS 26
#endif
constexpr int kBits = KBITS;
constexpr std::uint64_t kWords = 1ull << kBits;
constexpr std::uint64_t kStores = kWords / N / 4;  // per GPU
constexpr int kSegs = 32;
constexpr std::uint64_t kSegCap = kStores / kSegs * 2;  // entries per segment

__host__ __device__ std::uint32_t perm(std::uint32_t x) {
  const std::uint32_t m = (1u << kBits) - 1u;
  x = (x * 0x9E3779B1u) & m;
  x ^= x >> 13;
  x = (x * 0x85EBCA6Bu) & m;
  x ^= x >> 11;
  x = (x * 0xC2B2AE35u) & m;
  return x;
}
__device__ __forceinline__ std::uint32_t val(std::uint32_t w, std::uint32_t seed) {
  std::uint32_t h = w * 0x27D4EB2Fu + seed;
  h ^= h >> 15;
  return h | 1u;
}

struct Args {
  std::uint32_t* rep[N];
  std::uint32_t* sent;                 // this GPU's first-store bitmap
  unsigned long long* queue[N];        // queue[d]: d's inbound queue from this GPU (in d's memory)
  unsigned* cnt;                       // this GPU's counters [N][kSegs]
  int self;
  std::uint32_t seed;
};

template <int Kind>  // 0 local, 1 inline, 3 push entries, 5 push entries + dirty-bit atomicOr
__global__ void store_kernel(Args a) {
  const unsigned lane = threadIdx.x & 31u;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const unsigned seg = ((blockIdx.x * blockDim.x + threadIdx.x) >> 5) % kSegs;
  for (std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < kStores; k += stride) {
    const std::uint32_t w = perm(static_cast<std::uint32_t>(k * N + a.self));
    const std::uint32_t v = val(w, a.seed);
    a.rep[a.self][w] = v;
    if (Kind == 1) {
      for (int d = 0; d < N; ++d)
        if (d != a.self) a.rep[d][w] = v;
    }
    if (Kind >= 3) {
      if (Kind == 5) atomicOr(a.sent + (w >> 5), 1u << (w & 31u));
      const unsigned active = __activemask();
      const unsigned n = __popc(active);
      const unsigned leader = __ffs(active) - 1;
      const unsigned rank = __popc(active & ((1u << lane) - 1u));
      const unsigned long long e = (static_cast<unsigned long long>(v) << 32) | w;
      for (int d = 0; d < N; ++d) {
        if (d == a.self) continue;
        unsigned base = 0;
        if (lane == leader) base = atomicAdd(a.cnt + d * kSegs + seg, n);
        base = __shfl_sync(active, base, leader);
        a.queue[d][seg * kSegCap + base + rank] = e;
      }
    }
  }
}

struct UArgs {
  std::uint32_t* words;
  const unsigned long long* queue[N];  // from source s, local
  const unsigned* cnt[N];              // source s's counters (peer)
  int self;
};
__global__ void unpack_kernel(UArgs a) {
  const int s = blockIdx.y / kSegs, seg = blockIdx.y % kSegs;
  if (s == a.self) return;
  const unsigned n = a.cnt[s][a.self * kSegs + seg];
  const unsigned long long* q = a.queue[s] + seg * kSegCap;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned long long e = q[i];
    a.words[static_cast<std::uint32_t>(e)] = static_cast<std::uint32_t>(e >> 32);
  }
}


constexpr int kRegions = 16;
constexpr int kRegionShift = kBits - 4;
constexpr std::uint64_t kBucketCap = kStores * (N - 1) / kRegions * 3 / 2;
constexpr int kTile = 2048;
// Bin entries of every (source, segment) queue into region buckets (block-local binning).
__global__ void partition_kernel(UArgs a, unsigned long long* buckets, unsigned* bcnt) {
  const int s = blockIdx.y / kSegs, seg = blockIdx.y % kSegs;
  if (s == a.self) return;
  const unsigned n = a.cnt[s][a.self * kSegs + seg];
  const unsigned long long* q = a.queue[s] + seg * kSegCap;
  __shared__ unsigned hist[kRegions], base[kRegions];
  for (unsigned t0 = blockIdx.x * kTile; t0 < n; t0 += gridDim.x * kTile) {
    if (threadIdx.x < kRegions) hist[threadIdx.x] = 0;
    __syncthreads();
    unsigned long long e[kTile / 256];
    unsigned pos[kTile / 256];
#pragma unroll
    for (int j = 0; j < kTile / 256; ++j) {
      const unsigned i = t0 + j * 256 + threadIdx.x;
      if (i < n) {
        e[j] = __ldcs(q + i);
        pos[j] = atomicAdd(&hist[static_cast<std::uint32_t>(e[j]) >> kRegionShift], 1u);
      }
    }
    __syncthreads();
    if (threadIdx.x < kRegions) base[threadIdx.x] = atomicAdd(bcnt + threadIdx.x, hist[threadIdx.x]);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < kTile / 256; ++j) {
      const unsigned i = t0 + j * 256 + threadIdx.x;
      if (i < n) {
        const unsigned r = static_cast<std::uint32_t>(e[j]) >> kRegionShift;
        const unsigned at = base[r] + pos[j];
        if (at < kBucketCap) buckets[r * kBucketCap + at] = e[j];
        else a.words[static_cast<std::uint32_t>(e[j])] = static_cast<std::uint32_t>(e[j] >> 32);
      }
    }
    __syncthreads();
  }
}
// Region-major apply: blocks take 4096-entry chunks from a work counter, region 0 first.
__global__ void apply_kernel(std::uint32_t* words, const unsigned long long* buckets, const unsigned* bcnt,
                             unsigned* work) {
  __shared__ unsigned chunk;
  unsigned starts[kRegions + 1];
  starts[0] = 0;
  for (int r = 0; r < kRegions; ++r) {
    unsigned c = bcnt[r] < kBucketCap ? bcnt[r] : kBucketCap;
    starts[r + 1] = starts[r] + (c + 4095) / 4096;
  }
  for (;;) {
    if (threadIdx.x == 0) chunk = atomicAdd(work, 1u);
    __syncthreads();
    const unsigned c = chunk;
    __syncthreads();
    if (c >= starts[kRegions]) return;
    int r = 0;
    while (starts[r + 1] <= c) ++r;
    unsigned n = bcnt[r] < kBucketCap ? bcnt[r] : kBucketCap;
    const unsigned lo = (c - starts[r]) * 4096, hi = min(lo + 4096, n);
    for (unsigned i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const unsigned long long e = __ldcs(buckets + r * kBucketCap + i);
      words[static_cast<std::uint32_t>(e)] = static_cast<std::uint32_t>(e >> 32);
    }
  }
}

__global__ void diff_kernel(const std::uint32_t* x, const std::uint32_t* y, unsigned long long* bad) {
  unsigned long long b = 0;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < kWords; i += gridDim.x * blockDim.x)
    b += x[i] != y[i];
  if (b) atomicAdd(bad, b);
}

int main(int argc, char** argv) {
  int ux = argc > 1 ? std::atoi(argv[1]) : 16;  // unpack blocks per (source, segment)
  std::uint32_t* rep[N];
  std::uint32_t* sent[N];
  unsigned* cnt[N];
  unsigned long long* inq[N][N];
  std::uint32_t* ref;
  unsigned long long* buckets[N];
  unsigned* bcnt[N];
  unsigned long long* bad;
  cudaStream_t st[N];
  cudaEvent_t ev[N][4];
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (int d = 0; d < N; ++d) {
    CK(cudaSetDevice(d));
    for (int p = 0; p < N; ++p)
      if (p != d) CK(cudaDeviceEnablePeerAccess(p, 0));
    CK(cudaMalloc(&rep[d], kWords * 4));
    CK(cudaMemset(rep[d], 0, kWords * 4));
    CK(cudaMalloc(&sent[d], kWords / 8));
    CK(cudaMalloc(&cnt[d], N * kSegs * 4));
    for (int s = 0; s < N; ++s)
      if (s != d) CK(cudaMalloc(&inq[d][s], kSegs * kSegCap * 8));
    CK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
    CK(cudaMalloc(&buckets[d], kRegions * kBucketCap * 8));
    CK(cudaMalloc(&bcnt[d], (kRegions + 1) * 4));
    for (auto& e : ev[d]) CK(cudaEventCreate(&e));
  }
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&ref, kWords * 4));
  CK(cudaMallocManaged(&bad, 8));
  const unsigned grid = sms * 8, threads = 256;

  auto args = [&](int r, std::uint32_t seed) {
    Args a{};
    for (int d = 0; d < N; ++d) {
      a.rep[d] = rep[d];
      a.queue[d] = d == r ? nullptr : inq[d][r];
    }
    a.sent = sent[r];
    a.cnt = cnt[r];
    a.self = r;
    a.seed = seed;
    return a;
  };
  auto sync_all = [&] {
    for (int d = 0; d < N; ++d) {
      CK(cudaSetDevice(d));
      CK(cudaStreamSynchronize(st[d]));
    }
  };
  auto reset = [&] {
    for (int d = 0; d < N; ++d) {
      CK(cudaSetDevice(d));
      CK(cudaMemsetAsync(sent[d], 0, kWords / 8, st[d]));
      CK(cudaMemsetAsync(cnt[d], 0, N * kSegs * 4, st[d]));
    }
    sync_all();
  };
  auto check = [&](const char* what) {
    int nb = 0;
    for (int d = 0; d < N; ++d) {
      *bad = 0;
      CK(cudaSetDevice(0));
      diff_kernel<<<sms * 4, 256>>>(rep[d], ref, bad);
      CK(cudaDeviceSynchronize());
      if (*bad) {
        std::printf("  %s: replica %d differs in %llu words\n", what, d, *bad);
        ++nb;
      }
    }
    return nb == 0;
  };

  // reference: inline with seed 7
  for (int d = 0; d < N; ++d) {
    CK(cudaSetDevice(d));
    store_kernel<1><<<grid, threads, 0, st[d]>>>(args(d, 7));
  }
  sync_all();
  CK(cudaSetDevice(0));
  CK(cudaMemcpy(ref, rep[0], kWords * 4, cudaMemcpyDefault));

  // The receivers of kinds 3 and 5: wait for every sender, then apply the entries (kind 3: in
  // arrival order; kind 5: bucketed by region first). Events 2 and 3 mark the phases.
  auto receive = [&](int kind) {
    for (int d = 0; d < N; ++d) {
      CK(cudaSetDevice(d));
      for (int s = 0; s < N; ++s)
        if (s != d) CK(cudaStreamWaitEvent(st[d], ev[s][1], 0));
      UArgs u{};
      u.words = rep[d];
      for (int s = 0; s < N; ++s) {
        u.queue[s] = s == d ? nullptr : inq[d][s];
        u.cnt[s] = cnt[s];
      }
      u.self = d;
      if (kind == 5) {
        CK(cudaMemsetAsync(bcnt[d], 0, (kRegions + 1) * 4, st[d]));
        partition_kernel<<<dim3(8, N * kSegs), 256, 0, st[d]>>>(u, buckets[d], bcnt[d]);
        CK(cudaEventRecord(ev[d][2], st[d]));
        apply_kernel<<<sms * 4, 256, 0, st[d]>>>(rep[d], buckets[d], bcnt[d], bcnt[d] + kRegions);
        CK(cudaEventRecord(ev[d][3], st[d]));
      } else {
        unpack_kernel<<<dim3(ux, N * kSegs), 256, 0, st[d]>>>(u);
        CK(cudaEventRecord(ev[d][2], st[d]));
      }
    }
  };
  auto store = [&](int kind, std::uint32_t seed) {
    for (int d = 0; d < N; ++d) {
      CK(cudaSetDevice(d));
      CK(cudaEventRecord(ev[d][0], st[d]));
      Args a = args(d, seed);
      switch (kind) {
        case 0: store_kernel<0><<<grid, threads, 0, st[d]>>>(a); break;
        case 1: store_kernel<1><<<grid, threads, 0, st[d]>>>(a); break;
        case 3: store_kernel<3><<<grid, threads, 0, st[d]>>>(a); break;
        case 5: store_kernel<5><<<grid, threads, 0, st[d]>>>(a); break;
      }
      CK(cudaEventRecord(ev[d][1], st[d]));
    }
    if (kind >= 3) receive(kind);
  };

  const double useful = double(kStores) * N * 4 * (N - 1);
  auto run = [&](int kind, const char* name) {
    std::vector<double> tot, sk, up;
    for (int it = 0; it < 9; ++it) {
      reset();
      auto t0 = std::chrono::steady_clock::now();
      store(kind, 100 + it);
      sync_all();
      auto t1 = std::chrono::steady_clock::now();
      if (it < 2) continue;
      tot.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      float a = 0, b = 0;
      CK(cudaEventElapsedTime(&a, ev[0][0], ev[0][1]));
      if (kind >= 3) CK(cudaEventElapsedTime(&b, ev[0][1], ev[0][2]));
      sk.push_back(a);
      if (kind == 5) {
        float c = 0;
        CK(cudaEventElapsedTime(&c, ev[0][2], ev[0][3]));
        std::printf("    rep: wait+partition %.3f apply %.3f\n", b, c);
      }
      up.push_back(b);
    }
    std::sort(tot.begin(), tot.end());
    std::sort(sk.begin(), sk.end());
    std::sort(up.begin(), up.end());
    const size_t m = tot.size() / 2;
    std::printf("%-22s total %.3f ms (min %.3f)  gpu0 store %.3f ms, wait+unpack %.3f ms  goodput %.1f GB/s\n", name,
                tot[m], tot[0], sk[m], up[m], useful / tot[m] / 1e6);
    return tot[m];
  };
  run(0, "local");
  const double ti = run(1, "inline");
  for (int kind : {3, 5}) {
    const double t = run(kind, kind == 3 ? "packed (no dedupe)" : "push+partition");
    std::printf("   ratio vs inline %.2fx\n", ti / t);
  }
  // Correctness of push+partition with seed 7 against the inline reference.
  for (int d = 0; d < N; ++d) {
    CK(cudaSetDevice(d));
    CK(cudaMemset(rep[d], 0, kWords * 4));
  }
  reset();
  store(5, 7);
  sync_all();
  std::printf("check push+partition vs inline reference: %s\n", check("packed") ? "ok" : "FAILED");
  return 0;
}
