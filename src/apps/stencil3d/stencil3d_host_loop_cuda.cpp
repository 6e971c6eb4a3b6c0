#include "apps/stencil3d/stencil3d_host_loop.hpp"

#include <chrono>

#include "scope/cuda_check.hpp"

namespace gpsm::apps::stencil3d {

HostLoop::HostLoop(gps::Context& ctx, const Problem& p, bool events)
    : ctx_(ctx), p_(p), n_(ctx.size()), events_(events && ctx.size() > 1) {
  if (!events_) return;
  ev_.resize(n_);
  for (int r = 0; r < n_; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
}

HostLoop::~HostLoop() {
  for (int r = 0; r < static_cast<int>(ev_.size()); ++r) {
    cudaSetDevice(ctx_.device(r));
    for (auto e : ev_[r])
      if (e != nullptr) cudaEventDestroy(e);
  }
}

Timing HostLoop::solve() {
  const auto t0 = std::chrono::steady_clock::now();
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
  ctx_.synchronize();
  return Timing{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), p_.iters};
}

}  // namespace gpsm::apps::stencil3d
