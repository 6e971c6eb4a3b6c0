#include "apps/stencil3d/stencil3d_host_loop.hpp"

#include <chrono>
#include <cstdlib>
#include <string>

#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {

LoopLaunch loop_launch_from_env() {
  const char* v = std::getenv("GPSM_HOST_LOOP");
  if (v == nullptr || *v == '\0' || std::string(v) == "graph") return LoopLaunch::graph;
  if (std::string(v) == "stream") return LoopLaunch::stream;
  throw gpsm::Error(std::string("gpsm: GPSM_HOST_LOOP='") + v +
                    "' is not a host-loop launch mode; use graph (one CUDA graph of all iterations, the default) or "
                    "stream (a launch per GPU per iteration)");
}

HostLoop::HostLoop(gps::Context& ctx, const Problem& p, bool events)
    : ctx_(ctx), p_(p), n_(ctx.size()), events_(events && ctx.size() > 1), launch_(loop_launch_from_env()) {
  if (n_ == 1) return;
  if (events_) ev_.resize(n_);
  join_.resize(n_);
  for (int r = 0; r < n_; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    if (events_)
      for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    GPSM_CUDA(cudaEventCreateWithFlags(&join_[r], cudaEventDisableTiming));
  }
  GPSM_CUDA(cudaSetDevice(ctx.device(0)));
  GPSM_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
}

void HostLoop::drop_graph() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

HostLoop::~HostLoop() {
  drop_graph();
  for (int r = 0; r < static_cast<int>(join_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    if (join_[r] != nullptr) cudaEventDestroy(join_[r]);
  }
  if (fork_ != nullptr) {
    cudaSetDevice(ctx_.device(0));
    cudaEventDestroy(fork_);
  }
  for (int r = 0; r < static_cast<int>(ev_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    for (auto e : ev_[r])
      if (e != nullptr) cudaEventDestroy(e);
  }
}

// Paradigms whose ranks are ordered by something the graph cannot hold (NCCL's matching, host
// fences) never say graph_ok(); the others order them with the loop's events or with stream work
// of their own (gps: the runtime's stream-ordered fence, events recorded and waited on the streams).
bool HostLoop::use_graph() const { return launch_ == LoopLaunch::graph && graph_ok(); }

std::string HostLoop::timing() const {
  if (!use_graph()) return "";
  return "host wall clock of one launch of a CUDA graph holding every iteration's kernels and copies on every GPU "
         "(captured and instantiated once, untimed, like the rest of setup) to every GPU idle, divided by the "
         "iterations";
}

void HostLoop::enqueue_iterations() {
  for (int it = 0; it < p_.iters; ++it) {
    const int c = it & 1;
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      if (events_ && it > 0) {
        if (r > 0) GPSM_CUDA(cudaStreamWaitEvent(st, ev_[r - 1][1 - c], 0));
        if (r + 1 < n_) GPSM_CUDA(cudaStreamWaitEvent(st, ev_[r + 1][1 - c], 0));
      }
      before_step(r, it);
      step(r, it);
      after_step(r, it);
      if (events_) GPSM_CUDA(cudaEventRecord(ev_[r][c], st));
    }
    after_iteration(it);
  }
}

// Rank 0's stream starts the capture; the others join through fork_ and hand their end back to
// rank 0 through join_, so one launch on rank 0's stream runs it all.
void HostLoop::capture() {
  cudaStream_t s0 = ctx_.stream(0);
  GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
  // Relaxed: the hooks may ask the runtime things (occupancy, the current device) while capturing.
  GPSM_CUDA(cudaStreamBeginCapture(s0, cudaStreamCaptureModeRelaxed));
  try {
    if (n_ > 1) {
      GPSM_CUDA(cudaEventRecord(fork_, s0));
      for (int r = 1; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        GPSM_CUDA(cudaStreamWaitEvent(ctx_.stream(r), fork_, 0));
      }
    }
    enqueue_iterations();
    if (n_ > 1) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
      for (int r = 1; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        GPSM_CUDA(cudaEventRecord(join_[r], ctx_.stream(r)));
      }
      GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
      for (int r = 1; r < n_; ++r) GPSM_CUDA(cudaStreamWaitEvent(s0, join_[r], 0));
    }
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaSetDevice(ctx_.device(0));
    cudaStreamEndCapture(s0, &broken);
    if (broken != nullptr) cudaGraphDestroy(broken);
    throw;
  }
  GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
  GPSM_CUDA(cudaStreamEndCapture(s0, &graph_));
  GPSM_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
  // Uploaded now, so the first timed launch does not pay for it.
  GPSM_CUDA(cudaGraphUpload(exec_, s0));
  ctx_.synchronize();
}

Timing HostLoop::solve() {
  const bool graph = use_graph() && p_.iters > 0;
  if (graph && exec_ == nullptr) capture();
  const auto t0 = std::chrono::steady_clock::now();
  if (graph) {
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaGraphLaunch(exec_, ctx_.stream(0)));
  } else {
    enqueue_iterations();
  }
  ctx_.synchronize();
  return Timing{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), p_.iters};
}

}  // namespace gpsm::apps::stencil3d
