#include "apps/stencil3d/stencil3d_host_loop.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/context_graph.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {

HostLoop::HostLoop(gps::Context& ctx, const Problem& p, bool events)
    : ctx_(ctx), p_(p), n_(ctx.size()), events_(events && ctx.size() > 1), launch_(loop_launch_from_env()) {
  if (!events_) return;
  ev_.resize(n_);
  for (int r = 0; r < n_; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
}

void HostLoop::drop_graph() {
  if (graph_) graph_->drop();
}

HostLoop::~HostLoop() {
  graph_.reset();
  for (int r = 0; r < static_cast<int>(ev_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    for (auto e : ev_[r])
      if (e != nullptr) cudaEventDestroy(e);
  }
}

// Paradigms whose ranks are ordered by something the graph cannot hold (NCCL's matching, host
// fences) never say graph_ok(); the others order them with the loop's events or with stream work
// of their own (gps: the runtime's stream-ordered fence, events recorded and waited on the streams).
bool HostLoop::use_graph() const { return launch_ == LoopLaunch::graph && graph_ok() && !launched_; }

void HostLoop::iterate_launched(int iters) {
  const int keep = p_.iters;
  p_.iters = iters;
  launched_ = true;
  try {
    solve();
  } catch (...) {
    launched_ = false;
    p_.iters = keep;
    throw;
  }
  launched_ = false;
  p_.iters = keep;
}

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

Timing HostLoop::solve() {
  const bool graph = use_graph() && p_.iters > 0;
  if (graph && !(graph_ && graph_->captured())) {
    if (!graph_) graph_ = context_graph(ctx_);
    graph_->capture([this] { enqueue_iterations(); });  // untimed, like the rest of setup
    ctx_.synchronize();
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (graph) {
    graph_->launch();
  } else {
    enqueue_iterations();
  }
  ctx_.synchronize();
  return Timing{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), p_.iters};
}

}  // namespace gpsm::apps::stencil3d
