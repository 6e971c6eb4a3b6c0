// The registry's contents: every test file registers its tests here, in report order.
#include "scope/bench_common.cuh"

namespace gpsm::scope {

std::string missing_peer_access(const Options& o, const gpsm::topo::Topology&) {
  for (auto [a, b] : device_pairs(o)) {
    int can = 0;
    GPSM_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
    if (!can) return "device " + std::to_string(a) + " cannot access device " + std::to_string(b) + " as a peer";
  }
  return {};
}

std::string too_few_gpus(const Options& o, std::size_t need) {
  if (o.devices.size() >= need) return {};
  if (need == 1) return "no GPU selected";
  return "needs " + (need == 2 ? std::string("two") : std::to_string(need)) + " GPUs; " +
         std::to_string(o.devices.size()) + " selected";
}

int sm_count(int device) {
  int n = 0;
  GPSM_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

std::vector<std::unique_ptr<Test>> make_all_tests() {
  std::vector<std::unique_ptr<Test>> v;
  register_host_tests(v);
  register_peer_tests(v);
  register_sm_tests(v);
  register_sm_gather_tests(v);
  register_sm_stream_tests(v);
  register_sm_l2_tests(v);
  register_sm_hot_word_tests(v);
  register_um_tests(v);
  register_latency_tests(v);
  register_host_call_tests(v);
  register_all_to_all_tests(v);
  register_remote_bandwidth_tests(v);
  register_remote_mix_tests(v);
  register_remote_cache_tests(v);
  return v;
}

}  // namespace gpsm::scope
