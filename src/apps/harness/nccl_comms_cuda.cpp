#include "apps/harness/nccl_comms.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <string>

#include "gpsm/error.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>

namespace gpsm {

bool nccl_built() { return true; }

void nccl_fail(int result, const char* call, const char* file, int line) {
  std::string what = std::string("gpsm: NCCL ") + call + " failed: " + ncclGetErrorString(static_cast<ncclResult_t>(result));
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') what += std::string(" (") + last + ")";
  throw gpsm::Error(what + " at " + file + ":" + std::to_string(line));
}

NcclComms::NcclComms(gps::Context& ctx) : ctx_(ctx) {
  const int n = ctx.size();
  std::vector<int> devs(n);
  for (int r = 0; r < n; ++r) devs[r] = ctx.device(r);
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  comms_.assign(n, nullptr);
  GPSM_NCCL(ncclCommInitAll(comms_.data(), n, devs.data()));
}

NcclComms::~NcclComms() {
  for (int r = 0; r < static_cast<int>(comms_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    cudaStreamSynchronize(ctx_.stream(r));
  }
  for (auto* c : comms_)
    if (c != nullptr) ncclCommDestroy(c);
}

}  // namespace gpsm

#else  // built without NCCL

namespace gpsm {

bool nccl_built() { return false; }

void nccl_fail(int result, const char* call, const char* file, int line) {
  throw gpsm::Error(std::string("gpsm: NCCL ") + call + " failed (" + std::to_string(result) + ") at " + file + ":" +
                    std::to_string(line));
}

NcclComms::NcclComms(gps::Context& ctx) : ctx_(ctx) { throw gpsm::Error(std::string("gpsm: nccl: ") + kNcclMissing); }

NcclComms::~NcclComms() = default;

}  // namespace gpsm

#endif
