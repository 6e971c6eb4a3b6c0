#pragma once
// What every benchmark file shares: checked CUDA, the timing core, copy sweeps, the pattern.
#include <memory>
#include <string>
#include <vector>

#include "gpsm/error.hpp"
#include "gpsm/topology.hpp"
#include "scope/copy_sweep.cuh"
#include "common/cuda_check.hpp"
#include "common/pattern.hpp"
#include "scope/registry.hpp"
#include "scope/timing.cuh"

namespace gpsm::scope {

inline void fill_device(DeviceBuffer& b, unsigned seed) {
  DeviceGuard g(b.device);
  fill_pattern_device(b.p, b.bytes, seed, nullptr);
  GPSM_CUDA(cudaDeviceSynchronize());
}

// Non-empty when some selected pair lacks CUDA peer access (the waiver reason names the pair).
std::string missing_peer_access(const Options& o, const gpsm::topo::Topology& t);
// A test's waiver when fewer than `need` GPUs are selected: "no GPU selected" (need 1), "needs two
// GPUs; 0 selected" (need 2); empty when enough are.
std::string too_few_gpus(const Options& o, std::size_t need);

int sm_count(int device);

void register_peer_tests(std::vector<std::unique_ptr<Test>>& v);
void register_host_tests(std::vector<std::unique_ptr<Test>>& v);
void register_sm_tests(std::vector<std::unique_ptr<Test>>& v);
void register_um_tests(std::vector<std::unique_ptr<Test>>& v);
void register_latency_tests(std::vector<std::unique_ptr<Test>>& v);
void register_host_call_tests(std::vector<std::unique_ptr<Test>>& v);
void register_sm_gather_tests(std::vector<std::unique_ptr<Test>>& v);
void register_sm_stream_tests(std::vector<std::unique_ptr<Test>>& v);
void register_sm_l2_tests(std::vector<std::unique_ptr<Test>>& v);
void register_sm_hot_word_tests(std::vector<std::unique_ptr<Test>>& v);
void register_all_to_all_tests(std::vector<std::unique_ptr<Test>>& v);
// The remote-access study (GPU-SM's H1-H5): bench_remote_bandwidth.cu, bench_remote_mix.cu,
// bench_remote_cache.cu.
void register_remote_bandwidth_tests(std::vector<std::unique_ptr<Test>>& v);
void register_remote_mix_tests(std::vector<std::unique_ptr<Test>>& v);
void register_remote_cache_tests(std::vector<std::unique_ptr<Test>>& v);

}  // namespace gpsm::scope
