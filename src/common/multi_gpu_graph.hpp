#pragma once
// A loop that enqueues work on several GPUs' streams, captured once into one CUDA graph and then
// launched as a whole. One host thread launching a kernel per GPU per step is what a short step
// costs once several GPUs share that thread: with a fork, a join and a cross-GPU fence per step,
// 4 GPUs take 50-60 runtime calls per step, more host time than a 4096^2 filter pass's 30 us of
// kernels. Rank 0's stream starts the capture; the other streams join it through a fork event and
// hand their ends back to rank 0 through join events, so one launch on rank 0's stream runs it
// all and one synchronize of rank 0's stream waits for every GPU.
#include <cuda_runtime.h>

#include <functional>
#include <vector>

namespace gpsm {

class MultiGpuGraph {
 public:
  // devices[r] and streams[r]: rank r's device and the stream its captured work is enqueued on.
  MultiGpuGraph(std::vector<int> devices, std::vector<cudaStream_t> streams);
  ~MultiGpuGraph();
  MultiGpuGraph(const MultiGpuGraph&) = delete;
  MultiGpuGraph& operator=(const MultiGpuGraph&) = delete;

  // Captures what `enqueue` puts on the streams (stream work only: kernels, copies, event records
  // and waits; capture mode relaxed, so it may still ask the runtime things such as occupancy),
  // instantiates and uploads the graph, and waits for the upload. Replaces any earlier graph.
  void capture(const std::function<void()>& enqueue);
  bool captured() const { return exec_ != nullptr; }
  // One launch of the captured graph on rank 0's stream (asynchronous).
  void launch();
  void drop();  // forgets the graph: the next capture() makes a new one

 private:
  std::vector<int> dev_;
  std::vector<cudaStream_t> st_;
  cudaEvent_t fork_ = nullptr;       // rank 0's capture start, waited by the others
  std::vector<cudaEvent_t> join_;    // [rank]: its end of the capture, waited by rank 0
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace gpsm
