#include "scope/timing.cuh"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/cuda_check.hpp"

namespace gpsm::scope {

namespace {

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Holds its stream until the host sets *flag. Bounded: gives up after timeout_ns and says so.
__global__ void gate_kernel(volatile int* flag, volatile int* timed_out, unsigned long long timeout_ns) {
  const unsigned long long t0 = globaltimer_ns();
  while (*flag == 0) {
    if (globaltimer_ns() - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(256);
  }
}

constexpr unsigned long long kGateTimeoutNs = 20ull * 1000 * 1000 * 1000;  // 20 s

}  // namespace

Gate::Gate() {
  void* p = nullptr;
  GPSM_CUDA(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_ = static_cast<volatile int*>(p);
  timed_out_ = flag_ + 1;
  flag_[0] = 0;
  timed_out_[0] = 0;
}

Gate::~Gate() {
  if (flag_) {
    flag_[0] = 1;  // never leave a spinning kernel behind
    cudaFreeHost(const_cast<int*>(flag_));
  }
}

void Gate::hold(cudaStream_t s) {
  gate_kernel<<<1, 1, 0, s>>>(flag_, timed_out_, kGateTimeoutNs);
  GPSM_CUDA_LAUNCH();
}

void Gate::release() {
  __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_RELEASE);
}

void Gate::reset() {
  if (timed_out_[0])
    throw gpsm::Error("gpsm: a gate kernel timed out (20 s) before the host released it; enqueueing "
                      "blocked (queue full or a synchronous call on a held stream)");
  __atomic_store_n(const_cast<int*>(flag_), 0, __ATOMIC_RELEASE);
}


DeviceStream::DeviceStream(int dev) : device(dev) {
  DeviceGuard g(dev);
  GPSM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
}
DeviceStream::~DeviceStream() {
  if (s) {
    cudaSetDevice(device);
    cudaStreamSynchronize(s);
    cudaStreamDestroy(s);
  }
}

std::vector<std::vector<double>> time_concurrent(std::vector<StreamOp>& ops, int iters, int reps,
                                                 int warmup, bool gated, ConcurrentSpans* spans) {
  if (ops.empty() || iters < 1 || reps < 1) throw gpsm::Error("time_concurrent: nothing to time");
  int prev = 0;
  GPSM_CUDA(cudaGetDevice(&prev));
  for (auto& op : ops) {
    GPSM_CUDA(cudaSetDevice(op.device));
    for (int w = 0; w < warmup; ++w) op.enqueue(op.stream);
  }
  for (auto& op : ops) {
    GPSM_CUDA(cudaSetDevice(op.device));
    GPSM_CUDA(cudaStreamSynchronize(op.stream));
  }
  std::vector<cudaEvent_t> start(ops.size()), stop(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    GPSM_CUDA(cudaSetDevice(ops[i].device));
    GPSM_CUDA(cudaEventCreate(&start[i]));
    GPSM_CUDA(cudaEventCreate(&stop[i]));
  }
  std::vector<std::vector<double>> samples(ops.size());
  Gate gate;
  try {
    for (int r = 0; r < reps; ++r) {
      gate.reset();
      for (size_t i = 0; i < ops.size(); ++i) {
        GPSM_CUDA(cudaSetDevice(ops[i].device));
        if (gated) gate.hold(ops[i].stream);
        GPSM_CUDA(cudaEventRecord(start[i], ops[i].stream));
        for (int k = 0; k < iters; ++k) ops[i].enqueue(ops[i].stream);
        GPSM_CUDA(cudaEventRecord(stop[i], ops[i].stream));
      }
      const auto released = std::chrono::steady_clock::now();
      gate.release();
      for (size_t i = 0; i < ops.size(); ++i) {
        GPSM_CUDA(cudaSetDevice(ops[i].device));
        GPSM_CUDA(cudaEventSynchronize(stop[i]));
      }
      const double host_span = std::chrono::duration<double>(std::chrono::steady_clock::now() - released).count();
      std::map<int, std::pair<double, double>> dev_span;  // device -> (min start, max stop) vs its first start
      std::map<int, size_t> ref;
      for (size_t i = 0; i < ops.size(); ++i) {
        GPSM_CUDA(cudaSetDevice(ops[i].device));
        float ms = 0;
        GPSM_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
        samples[i].push_back(ms * 1e-3 / iters);
        if (!spans) continue;
        auto [it, first] = ref.emplace(ops[i].device, i);
        float s0 = 0, s1 = 0;
        GPSM_CUDA(cudaEventElapsedTime(&s0, start[it->second], start[i]));
        GPSM_CUDA(cudaEventElapsedTime(&s1, start[it->second], stop[i]));
        auto& sp = dev_span[ops[i].device];
        if (first) sp = {s0, s1};
        sp.first = std::min<double>(sp.first, s0);
        sp.second = std::max<double>(sp.second, s1);
      }
      if (spans) {
        spans->host_span_s.push_back(host_span);
        for (auto& [d, sp] : dev_span) spans->device_span_s[d].push_back((sp.second - sp.first) * 1e-3);
      }
    }
    gate.reset();  // throws if any gate timed out during the last batch
  } catch (...) {
    gate.release();
    for (size_t i = 0; i < ops.size(); ++i) {
      cudaSetDevice(ops[i].device);
      cudaStreamSynchronize(ops[i].stream);
      cudaEventDestroy(start[i]);
      cudaEventDestroy(stop[i]);
    }
    cudaSetDevice(prev);
    throw;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    GPSM_CUDA(cudaSetDevice(ops[i].device));
    GPSM_CUDA(cudaEventDestroy(start[i]));
    GPSM_CUDA(cudaEventDestroy(stop[i]));
  }
  GPSM_CUDA(cudaSetDevice(prev));
  return samples;
}

int pick_iters(StreamOp& op, const Options& o, int max_iters) {
  std::vector<StreamOp> one{op};
  // one ungated probe run, warm-up included, gives the per-op time
  auto s = time_concurrent(one, 1, 1, 1, /*gated=*/false);
  const double t = std::max(s[0][0], 1e-7);
  return std::clamp(static_cast<int>(o.target_rep_s / t), 1, max_iters);
}

std::vector<double> time_op(StreamOp op, const Options& o, bool gated) {
  const int iters = pick_iters(op, o);
  std::vector<StreamOp> one{op};
  return time_concurrent(one, iters, o.reps, o.warmup, gated)[0];
}

double time_on_stream(cudaStream_t s, const std::function<void()>& enqueue) {
  cudaEvent_t a, b;
  GPSM_CUDA(cudaEventCreate(&a));
  GPSM_CUDA(cudaEventCreate(&b));
  float ms = 0;
  try {
    GPSM_CUDA(cudaEventRecord(a, s));
    enqueue();
    GPSM_CUDA(cudaEventRecord(b, s));
    GPSM_CUDA(cudaEventSynchronize(b));
    GPSM_CUDA(cudaEventElapsedTime(&ms, a, b));
  } catch (...) {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    throw;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1e-3;
}

std::vector<double> host_loop_samples(const Options& o, int n, const std::function<void()>& once,
                                      const std::function<void()>& after_rep) {
  std::vector<double> t;
  for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) once();
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (after_rep) after_rep();
    if (rep >= o.warmup) t.push_back(el / n);
  }
  return t;
}

std::string gpu_name(int device) { return "gpu" + std::to_string(device); }

}  // namespace gpsm::scope
