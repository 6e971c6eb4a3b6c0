#include "transfer/stream_wait.hpp"

#include <cuda.h>  // driver types only: the functions come from cudaGetDriverEntryPointByVersion
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "scope/cuda_check.hpp"

namespace gpsm::transfer {

namespace {

using WaitValueFn = CUresult(CUDAAPI*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using DeviceGetFn = CUresult(CUDAAPI*)(CUdevice*, int);
using DeviceAttrFn = CUresult(CUDAAPI*)(int*, CUdevice_attribute, CUdevice);

template <class F>
F driver_fn(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

WaitValueFn wait_fn() {
  static const WaitValueFn fn = driver_fn<WaitValueFn>("cuStreamWaitValue32");
  return fn;
}

}  // namespace

std::string stream_wait_unsupported(int device) {
  if (wait_fn() == nullptr) return "the driver has no cuStreamWaitValue32 entry point";
  GPSM_CUDA(cudaSetDevice(device));
  int v1 = -1;
  CUdevice cu = 0;
  auto device_get = driver_fn<DeviceGetFn>("cuDeviceGet");
  auto device_attr = driver_fn<DeviceAttrFn>("cuDeviceGetAttribute");
  if (device_get && device_attr && device_get(&cu, device) == CUDA_SUCCESS)
    device_attr(&v1, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, cu);
  std::uint32_t* one = nullptr;
  cudaStream_t s = nullptr;
  GPSM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  GPSM_CUDA(cudaMalloc(&one, sizeof(std::uint32_t)));
  const std::uint32_t h = 1;
  GPSM_CUDA(cudaMemcpy(one, &h, sizeof h, cudaMemcpyHostToDevice));
  const CUresult cr =
      wait_fn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(one), 1, CU_STREAM_WAIT_VALUE_GEQ);
  GPSM_CUDA(cudaStreamSynchronize(s));
  GPSM_CUDA(cudaFree(one));
  GPSM_CUDA(cudaStreamDestroy(s));
  if (cr != CUDA_SUCCESS)
    return fmt::format("cuStreamWaitValue32 on device {} returned CUresult {} (CAN_USE_STREAM_MEM_OPS_V1 = {})", device,
                       static_cast<int>(cr), v1);
  return "";
}

void stream_wait_geq(cudaStream_t s, const std::uint32_t* flag, std::uint32_t value, const char* what) {
  if (wait_fn() == nullptr) throw Error(std::string("gpsm: ") + what + ": the driver has no cuStreamWaitValue32");
  const CUresult cr = wait_fn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(flag), value,
                                CU_STREAM_WAIT_VALUE_GEQ);
  if (cr != CUDA_SUCCESS)
    throw Error(fmt::format("gpsm: {}: cuStreamWaitValue32 failed (CUresult {}); run without the copy-engine agent or "
                            "report this with `gpsm info`",
                            what, static_cast<int>(cr)));
}

}  // namespace gpsm::transfer
