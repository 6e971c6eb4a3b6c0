// resident_blocks (common/resident_blocks.hpp): the occupancy query, cached.
#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "common/cuda_check.hpp"
#include "common/resident_blocks.hpp"

namespace gpsm {

long long resident_blocks(const void* kernel, int threads) {
  static std::mutex mu;
  static std::map<std::tuple<const void*, int, int>, long long> cache;
  int dev = 0;
  GPSM_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(kernel, dev, threads);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  int per_sm = 0, sms = 0;
  GPSM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  GPSM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const long long n = std::max<long long>(1, static_cast<long long>(per_sm) * sms);
  cache.emplace(key, n);
  return n;
}

}  // namespace gpsm
