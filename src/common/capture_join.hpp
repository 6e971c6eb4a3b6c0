#pragma once
// One node for a capturing stream's dependency set. While a stream is captured into a CUDA graph,
// the next node it captures depends on every node in the stream's dependency set: after a fork and
// join (ForkJoin) that is two kernels, after a cross-GPU wait (Context::fence_async) it is this
// GPU's last node plus every other GPU's. Each later node then gets one edge per member, and an
// event recorded on the stream hands all of them to every waiter: a fence after a fork-join on
// 4 GPUs makes each of the next iteration's kernels depend on 8 nodes, 6 of them on other GPUs.
// An empty node that depends on the set, made the stream's only dependency, turns those
// products into sums. Outside a capture, or with a set of at most one node, nothing happens, so
// stream-launched loops are unchanged.
#include <cuda_runtime.h>

#include <cstddef>

#include "common/cuda_check.hpp"

namespace gpsm {

// Returns whether it joined (the stream was capturing and depended on more than one node).
inline bool join_capture_dependencies(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t* deps = nullptr;
  const cudaGraphEdgeData* edges = nullptr;
  std::size_t n = 0;
  GPSM_CUDA(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &deps, &edges, &n));
  if (status != cudaStreamCaptureStatusActive || n <= 1) return false;
  // Programmatic (non-default) edge data would be lost on an empty node's edges: keep the set.
  if (edges != nullptr)
    for (std::size_t i = 0; i < n; ++i)
      if (edges[i].type != cudaGraphDependencyTypeDefault || edges[i].from_port != 0 || edges[i].to_port != 0)
        return false;
  cudaGraphNode_t node = nullptr;
  GPSM_CUDA(cudaGraphAddEmptyNode(&node, graph, deps, n));
  GPSM_CUDA(cudaStreamUpdateCaptureDependencies(stream, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  return true;
}

}  // namespace gpsm
