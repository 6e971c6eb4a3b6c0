// The CPU-free CG paradigms (cpu_free_std, cpu_free_pipe, and `infinite`, their pushes elided):
// the host launches one persistent cooperative kernel per GPU and waits; everything else, the
// time loop, the halo pushes, the reductions and the stop, happens on the GPUs (cg_persistent.cu).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/cg/cg_runs.hpp"
#include "apps/cg/cg_sync_states.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

using Clock = std::chrono::steady_clock;

class FreeRun final : public CgRun {
 public:
  FreeRun(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters, bool elided, QStorage q)
      : ctx_(ctx), data_(ctx, plan, start, v, iters, !elided), v_(v), q_(q), sync_(ctx) {
    const bool pipe = v == Variant::pipelined;
    const int n = plan.ranks;
    const void* kernel = free_kernel(pipe, plan.lanes, entry_kind(plan));
    const void* keeping = free_kernel(false, plan.lanes, entry_kind(plan), true);  // Standard with q kept
    blocks_.resize(static_cast<std::size_t>(n));
    q_slots_.assign(static_cast<std::size_t>(n), 0);
    int most = 1, most_slots = 0;
    for (int r = 0; r < n; ++r) {
      blocks_[r] = persistent_blocks(ctx.device(r), v, data_.matrix(r));
      most = std::max(most, blocks_[r]);
      if (!pipe)
        q_slots_[r] = std_q_slots(ctx.device(r), keeping, q, data_.matrix(r).chunks, blocks_[r], plan.rows_per_thread);
    }
    // q in shared memory on every GPU or on none: one kernel configuration, one line in the timing.
    if (std::find(q_slots_.begin(), q_slots_.end(), 0) != q_slots_.end()) std::fill(q_slots_.begin(), q_slots_.end(), 0);
    for (int r = 0; r < n; ++r) most_slots = std::max(most_slots, q_slots_[r]);
    ctx.check_coresident(most_slots > 0 ? keeping : kernel, most, kThreads, free_smem(pipe, plan.rows_per_thread, most_slots));
    for (int r = 0; r < n; ++r) {
      const CgSync sync = sync_.handle(r, arriving_blocks(v, blocks_[r]), ctx.wait_policy(r));
      const Pushes push = data_.peer_pushes(r, elided);
      if (pipe) {
        pipe_.push_back(data_.rank(r).free_pipe(push, sync));
      } else {
        std_.push_back(data_.rank(r).free_std(push, sync));
        std_.back().q_slots = q_slots_[r];
      }
    }
  }

  void init() override {
    data_.init();
    sync_.reset();
  }

  double solve() override {
    const auto t0 = Clock::now();
    if (!data_.done_at_start())
      for (int r = 0; r < data_.ranks(); ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        if (v_ == Variant::pipelined)
          launch_free_pipe(pipe_[r], blocks_[r], ctx_.stream(r));
        else
          launch_free_std(std_[r], blocks_[r], ctx_.stream(r));
      }
    ctx_.synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  Solve result() override { return data_.result(false); }

  std::string timing() const override {
    std::string t = "host wall clock from the persistent kernels' launch to every GPU idle, divided by the iterations run";
    if (v_ == Variant::standard) {
      std::int64_t chunks = 0, blocks = 1;  // the largest GPU's, for the note
      for (int r = 0; r < data_.ranks(); ++r)
        if (data_.matrix(r).chunks > chunks) chunks = data_.matrix(r).chunks, blocks = blocks_[r];
      t += "; " + q_storage_note(q_, q_slots_.empty() ? 0 : q_slots_[0], chunks, blocks);
    }
    return t;
  }
  bool q_shared() const override { return v_ == Variant::standard && !q_slots_.empty() && q_slots_[0] > 0; }

 private:
  gps::Context& ctx_;
  CgData data_;
  Variant v_;
  QStorage q_;
  CgSyncStates sync_;
  std::vector<int> blocks_;
  std::vector<int> q_slots_;  // per GPU, FreeStd::q_slots (all 0 or all > 0)
  std::vector<FreeStd> std_;
  std::vector<FreePipe> pipe_;
};

}  // namespace

std::unique_ptr<CgRun> make_free_run(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters,
                                     bool elided, QStorage q) {
  return std::make_unique<FreeRun>(ctx, plan, start, v, iters, elided, q);
}

}  // namespace gpsm::apps::cg
