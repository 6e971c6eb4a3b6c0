#include "common/multi_gpu_graph.hpp"

#include <utility>

#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm {

MultiGpuGraph::MultiGpuGraph(std::vector<int> devices, std::vector<cudaStream_t> streams)
    : dev_(std::move(devices)), st_(std::move(streams)) {
  if (dev_.empty() || dev_.size() != st_.size())
    throw gpsm::Error("gpsm: a multi-GPU graph needs one stream per device and at least one device");
  join_.assign(dev_.size(), nullptr);
  for (std::size_t r = 1; r < dev_.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(dev_[r]));
    GPSM_CUDA(cudaEventCreateWithFlags(&join_[r], cudaEventDisableTiming));
  }
  GPSM_CUDA(cudaSetDevice(dev_[0]));
  GPSM_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
}

MultiGpuGraph::~MultiGpuGraph() {
  drop();
  for (std::size_t r = 1; r < dev_.size(); ++r) {
    cudaSetDevice(dev_[r]);
    if (join_[r] != nullptr) cudaEventDestroy(join_[r]);
  }
  cudaSetDevice(dev_[0]);
  if (fork_ != nullptr) cudaEventDestroy(fork_);
}

void MultiGpuGraph::drop() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

void MultiGpuGraph::capture(const std::function<void()>& enqueue) {
  drop();
  const std::size_t n = dev_.size();
  cudaStream_t s0 = st_[0];
  GPSM_CUDA(cudaSetDevice(dev_[0]));
  GPSM_CUDA(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed));
  try {
    GPSM_CUDA(cudaEventRecord(fork_, s0));
    for (std::size_t r = 1; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(dev_[r]));
      GPSM_CUDA(cudaStreamWaitEvent(st_[r], fork_, 0));
    }
    enqueue();
    for (std::size_t r = 1; r < n; ++r) {
      GPSM_CUDA(cudaSetDevice(dev_[r]));
      GPSM_CUDA(cudaEventRecord(join_[r], st_[r]));
    }
    GPSM_CUDA(cudaSetDevice(dev_[0]));
    for (std::size_t r = 1; r < n; ++r) GPSM_CUDA(cudaStreamWaitEvent(s0, join_[r], 0));
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaSetDevice(dev_[0]);
    cudaStreamEndCapture(s0, &broken);
    if (broken != nullptr) cudaGraphDestroy(broken);
    throw;
  }
  GPSM_CUDA(cudaSetDevice(dev_[0]));
  GPSM_CUDA(cudaStreamEndCapture(s0, &graph_));
  GPSM_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  GPSM_CUDA(cudaGraphUpload(exec_, s0));  // now, so the first timed launch does not pay for it
  GPSM_CUDA(cudaStreamSynchronize(s0));
}

void MultiGpuGraph::launch() {
  if (exec_ == nullptr) throw gpsm::Error("gpsm: a multi-GPU graph launched before it was captured");
  GPSM_CUDA(cudaSetDevice(dev_[0]));
  GPSM_CUDA(cudaGraphLaunch(exec_, st_[0]));
}

}  // namespace gpsm
