#include "scope/copy_sweep.cuh"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <cstring>

#include "common/cuda_check.hpp"

namespace gpsm::scope {

std::vector<std::uint64_t> sweep_sizes(const Options& o) {
  std::vector<std::uint64_t> s;
  if (o.quick) {
    for (std::uint64_t v : pow2_sweep(o.min_size, o.max_size, 4)) s.push_back(v);
  } else {
    s = pow2_sweep(o.min_size, o.max_size, 1);
  }
  bool has_peak = false;
  for (auto v : s) has_peak |= (v == o.peak_size);
  if (!has_peak && o.peak_size <= o.max_size && o.peak_size >= o.min_size) {
    s.push_back(o.peak_size);
    std::sort(s.begin(), s.end());
  }
  return s;
}

SweepSamples run_copy_sweep(std::vector<CopySpec>& specs, const std::vector<std::uint64_t>& sizes,
                            const Options& o, bool gated) {
  SweepSamples out;
  out.t.assign(specs.size(), {});
  for (std::uint64_t n : sizes) {
    std::vector<std::unique_ptr<DeviceStream>> streams;
    std::vector<StreamOp> ops;
    for (auto& sp : specs) {
      sp.poison(n);
      streams.push_back(std::make_unique<DeviceStream>(sp.issue_device));
      ops.push_back({sp.issue_device, streams.back()->s, [&sp, n](cudaStream_t s) { sp.copy(s, n); }});
    }
    // every op's loop is enqueued behind the gate before any runs: keep the pending work per
    // device well under the driver's queue depth, or enqueueing blocks and the gate times out
    const int max_iters = std::clamp(600 / int(specs.size()), 8, 1000);
    const int iters = pick_iters(ops[0], o, max_iters);
    ConcurrentSpans spans;
    auto samples = time_concurrent(ops, iters, o.reps, o.warmup, gated, &spans);
    out.iters.push_back(iters);
    out.spans.push_back(std::move(spans));
    bool ok = true;
    for (size_t k = 0; k < specs.size(); ++k) {
      out.t[k].push_back(samples[k]);
      ok = ok && specs[k].verify(n);
    }
    out.ok.push_back(ok);
  }
  return out;
}

Series uni_series(const SweepSamples& s, size_t k, const std::vector<std::uint64_t>& sizes,
                  std::string label, std::map<std::string, std::string> params) {
  Series r{std::move(label), std::move(params), {}};
  for (size_t i = 0; i < sizes.size(); ++i)
    r.points.push_back(make_point(double(sizes[i]), double(sizes[i]), s.t[k][i], "GB/s", s.ok[i]));
  return r;
}

Series sum_series(const SweepSamples& s, const std::vector<std::uint64_t>& sizes, std::string label,
                  std::map<std::string, std::string> params) {
  Series r{std::move(label), std::move(params), {}};
  const size_t ncopies = s.t.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double total = double(sizes[i]) * ncopies;
    std::vector<double> eff;  // per repetition: total bytes / summed bandwidth
    for (size_t rep = 0; rep < s.t[0][i].size(); ++rep) {
      double bw = 0;
      for (size_t k = 0; k < ncopies; ++k) bw += double(sizes[i]) / s.t[k][i][rep];
      eff.push_back(total / bw);
    }
    r.points.push_back(make_point(double(sizes[i]), total, eff, "GB/s", s.ok[i]));
  }
  return r;
}

DeviceBuffer::DeviceBuffer(int dev, size_t n) : device(dev), bytes(n) {
  DeviceGuard g(dev);
  GPSM_CUDA(cudaMalloc(&p, n));
}
DeviceBuffer::~DeviceBuffer() {
  if (p) {
    cudaSetDevice(device);
    cudaFree(p);
  }
}

const char* to_string(HostKind k) {
  switch (k) {
    case HostKind::pageable: return "pageable";
    case HostKind::pinned: return "pinned";
    case HostKind::write_combined: return "write_combined";
  }
  return "?";
}

HostBuffer::HostBuffer(HostKind k, size_t n) : kind(k), bytes(n) {
  if (k == HostKind::pageable) {
    p = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    if (!p) throw gpsm::Error("gpsm: out of host memory allocating " + std::to_string(n) + " bytes");
    std::memset(p, 0, n);  // first touch under the NUMA policy in force
  } else {
    unsigned flags = cudaHostAllocPortable | cudaHostAllocMapped;
    if (k == HostKind::write_combined) flags |= cudaHostAllocWriteCombined;
    GPSM_CUDA(cudaHostAlloc(&p, n, flags));
  }
}
HostBuffer::~HostBuffer() {
  if (!p) return;
  if (kind == HostKind::pageable) std::free(p);
  else cudaFreeHost(p);
}

void fill_host(HostBuffer& b, size_t n, unsigned seed, int device) {
  if (b.kind == HostKind::pageable) {
    fill_pattern_host(b.p, n, seed);
    return;
  }
  DeviceGuard g(device);
  fill_pattern_device(b.p, n, seed, nullptr);
  GPSM_CUDA(cudaDeviceSynchronize());
}

bool verify_host(const HostBuffer& b, size_t n, unsigned seed, int device) {
  if (b.kind == HostKind::pageable) return check_pattern_host(b.p, n, seed) == 0;
  DeviceGuard g(device);
  return check_pattern_device(b.p, n, seed, nullptr) == 0;
}

}  // namespace gpsm::scope
