#include "proact/stream_wait.hpp"

#include <cuda.h>  // driver types only: the functions come from cudaGetDriverEntryPointByVersion
#include <cuda_runtime.h>

#include <vector>

#include <fmt/format.h>

#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::proact {

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

// What both probes wait on: a scratch stream of the current device and a device word holding 1,
// so a ">= 1" wait's condition already holds. Freed when the probe returns or throws.
struct Probe {
  cudaStream_t s = nullptr;
  std::uint32_t* one = nullptr;
  Probe() {
    GPSM_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    GPSM_CUDA(cudaMalloc(&one, sizeof(std::uint32_t)));
    const std::uint32_t h = 1;
    GPSM_CUDA(cudaMemcpy(one, &h, sizeof h, cudaMemcpyHostToDevice));
  }
  ~Probe() {
    if (one != nullptr) cudaFree(one);
    if (s != nullptr) cudaStreamDestroy(s);
  }
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;
};

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
  const Probe p;
  cudaStream_t s = p.s;
  const std::uint32_t* one = p.one;
  const CUresult cr =
      wait_fn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(one), 1, CU_STREAM_WAIT_VALUE_GEQ);
  GPSM_CUDA(cudaStreamSynchronize(s));
  if (cr != CUDA_SUCCESS)
    return fmt::format("cuStreamWaitValue32 on device {} returned CUresult {} (CAN_USE_STREAM_MEM_OPS_V1 = {})", device,
                       static_cast<int>(cr), v1);
  return "";
}

std::string stream_wait_capture_unsupported(int device) {
  if (wait_fn() == nullptr) return "the driver has no cuStreamWaitValue32 entry point";
  GPSM_CUDA(cudaSetDevice(device));
  const Probe p;
  cudaStream_t s = p.s;
  const std::uint32_t* one = p.one;
  std::string why;
  cudaGraph_t g = nullptr;
  cudaGraphExec_t exec = nullptr;
  // Thread-local: other threads' CUDA calls neither disturb nor are refused by this capture.
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    why = fmt::format("cudaStreamBeginCapture failed ({})", cudaGetErrorString(e));
  } else {
    const CUresult cr =
        wait_fn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(one), 1, CU_STREAM_WAIT_VALUE_GEQ);
    e = cudaStreamEndCapture(s, &g);
    if (cr != CUDA_SUCCESS)
      why = fmt::format("cuStreamWaitValue32 on a capturing stream returned CUresult {}", static_cast<int>(cr));
    else if (e != cudaSuccess || g == nullptr)
      why = fmt::format("the capture of cuStreamWaitValue32 failed to end ({})", cudaGetErrorString(e));
  }
  if (why.empty()) {
    std::size_t nodes = 0;
    GPSM_CUDA(cudaGraphGetNodes(g, nullptr, &nodes));
    std::vector<cudaGraphNode_t> list(nodes);
    if (nodes > 0) GPSM_CUDA(cudaGraphGetNodes(g, list.data(), &nodes));
    bool memop = false;
    for (cudaGraphNode_t n : list) {
      cudaGraphNodeType t{};
      // On 2xH200 (CUDA 13.0, 2026-11-22) the runtime answered cudaErrorUnknown for the captured
      // wait's node: a node type it cannot name is not a proven wait, so capture is not risked.
      if (const cudaError_t te = cudaGraphNodeGetType(n, &t); te != cudaSuccess) {
        why = fmt::format("cudaGraphNodeGetType refused the captured wait's node ({})", cudaGetErrorString(te));
        break;
      }
      memop = memop || static_cast<int>(t) == static_cast<int>(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP);
    }
    if (why.empty() && !memop) why = fmt::format("the captured graph has {} nodes, none a batch memory operation", nodes);
  }
  if (why.empty()) {
    e = cudaGraphInstantiate(&exec, g, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) why = fmt::format("a graph holding a stream wait did not run ({})", cudaGetErrorString(e));
  }
  cudaGetLastError();  // the probe's refusals are answers, not errors for the next call
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (g != nullptr) cudaGraphDestroy(g);
  return why;
}

void stream_wait_geq(cudaStream_t s, const std::uint32_t* flag, std::uint32_t value, const char* what,
                     StreamWaits* watch) {
  if (wait_fn() == nullptr) throw Error(std::string("gpsm: ") + what + ": the driver has no cuStreamWaitValue32");
  int device = 0;
  if (watch != nullptr) {
    GPSM_CUDA(cudaStreamGetDevice(s, &device));
    prepare_watch(device);  // before the wait is enqueued: its allocation may synchronize
  }
  const CUresult cr = wait_fn()(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(flag), value,
                                CU_STREAM_WAIT_VALUE_GEQ);
  if (cr != CUDA_SUCCESS)
    throw Error(fmt::format("gpsm: {}: cuStreamWaitValue32 failed (CUresult {}); run without the copy-engine agent or "
                            "report this with `gpsm info`",
                            what, static_cast<int>(cr)));
  if (watch != nullptr) watch->note(device, flag, value, what);
}

}  // namespace gpsm::proact
