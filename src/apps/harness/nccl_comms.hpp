#pragma once
// NCCL for the apps' nccl paradigm. Optional (src/CMakeLists.txt: GPSM_HAVE_NCCL): this header
// needs no nccl.h, so every app can ask nccl_built(); the files that call NCCL include <nccl.h>
// under #if GPSM_HAVE_NCCL and check each call with GPSM_NCCL.
#include <vector>

#include "gpsm/gps/context.hpp"

struct ncclComm;  // nccl.h: typedef struct ncclComm* ncclComm_t

namespace gpsm {

// Whether this gpsm was built with NCCL, and why the paradigm is unsupported when not.
bool nccl_built();
constexpr const char* kNcclMissing = "built without NCCL (run scripts/setup.sh)";

// Throws gpsm::Error naming the call, NCCL's error text and its last error message.
[[noreturn]] void nccl_fail(int result, const char* call, const char* file, int line);

// One communicator per rank of a context, in one process: ncclCommInitAll over its devices,
// rank r on ctx.device(r). NVLink multicast (NVLS) stays off unless the environment asks for it:
// halo send/recv and small allreduces gain nothing from it, and on shared hosts it must not be
// used at all. Throws gpsm::Error when NCCL fails or gpsm was built without it.
class NcclComms {
 public:
  explicit NcclComms(gps::Context& ctx);
  // Waits until nothing of NCCL's runs on the ranks' streams (a solve that threw), then destroys
  // the communicators one by one from this thread.
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;
  ncclComm* operator[](int rank) const { return comms_[rank]; }

 private:
  gps::Context& ctx_;
  std::vector<ncclComm*> comms_;
};

}  // namespace gpsm

#define GPSM_NCCL(call)                                                                                      \
  do {                                                                                                       \
    const ncclResult_t gpsm_nccl_err_ = (call);                                                              \
    if (gpsm_nccl_err_ != ncclSuccess) ::gpsm::nccl_fail(static_cast<int>(gpsm_nccl_err_), #call, __FILE__, __LINE__); \
  } while (0)
