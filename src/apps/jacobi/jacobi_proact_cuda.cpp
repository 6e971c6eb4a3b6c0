#include "apps/jacobi/jacobi_proact.hpp"

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "apps/jacobi/jacobi_kernels.hpp"
#include "common/dev_buf.hpp"
#include "common/cuda_check.hpp"
#include "proact/stream_wait.hpp"

namespace gpsm::apps::jacobi {

namespace {

class ProactRun final : public HostLoop {
 public:
  ProactRun(gps::Context& ctx, const Problem& p) : HostLoop(ctx, p), s_(ctx, p) {
    ready_.resize(n_);
    waits_.resize(n_);
    side_.assign(n_, nullptr);
    before_.assign(n_, nullptr);
    shipped_.assign(n_, nullptr);
    for (int r = 0; r < n_; ++r) {
      ready_[r].alloc(ctx.device(r), 2);
      GPSM_CUDA(cudaMemset(ready_[r].p, 0, 2 * sizeof(std::uint32_t)));
      GPSM_CUDA(cudaStreamCreateWithFlags(&side_[r], cudaStreamNonBlocking));
      GPSM_CUDA(cudaEventCreateWithFlags(&before_[r], cudaEventDisableTiming));
      GPSM_CUDA(cudaEventCreateWithFlags(&shipped_[r], cudaEventDisableTiming));
      if (n_ > 1 && why_.empty()) {
        const std::string w = proact::stream_wait_unsupported(ctx.device(r));
        if (!w.empty())
          why_ = "the proact paradigm ships halo rows by copy engines waiting on flags (stream memory operations), "
                 "unsupported here: " + w;
      }
    }
  }
  ~ProactRun() override {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      if (side_[r]) cudaStreamDestroy(side_[r]);
      if (before_[r]) cudaEventDestroy(before_[r]);
      if (shipped_[r]) cudaEventDestroy(shipped_[r]);
    }
  }
  std::string check() const override { return why_; }
  void init() override {
    s_.init(Poison::none, Poison::halo_rows);
    cur_ = 0;
  }
  std::vector<float> gather() override { return s_.gather(cur_); }
  // The rank's stream waits for its copy stream (shipped_), so its bounded wait covers the flag
  // waits: a row flag that never arrives fails the run with its name instead of hanging.
  void wait_rank(int r) override {
    GPSM_CUDA(proact::bounded_stream_wait(ctx_.stream(r), waits_[r], ctx_.settings().wait_timeout_ms,
                                          "jacobi2d proact: rank " + std::to_string(r) + "'s iteration"));
  }
  void finish() override {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      wait_rank(r);
    }
    ctx_.synchronize();
  }
  // Whole rows, both edges of every rank, by copy engine (as memcpy).
  double link_bytes_per_iter() override {
    return n_ == 1 ? 0 : 2.0 * n_ * static_cast<double>(p_.n[0]) * sizeof(float);
  }
  std::string timing() const override {
    return "host wall clock of the solve loop (setup excluded), divided by its iterations; halo rows by copy engines "
           "waiting on per-row ready flags";
  }

 protected:
  void before_sweeps(int) override { ++phase_; }
  // The sweep (flags on), then on the copy stream, behind everything this rank's stream waited
  // for (the neighbours' previous iteration, which read the halos about to be overwritten): per
  // edge row, a wait for its flag and the copy into the neighbour's halo. The rank's stream waits
  // for the copies, so the iteration's event covers them. The copy stream's waits are enqueued
  // after the sweep, so a shared hardware queue never holds the sweep behind them.
  void sweep(int r, float* norm, cudaStream_t st) override {
    Sweep w;
    w.a = s_.buf[r][cur_].p;
    w.a_new = s_.buf[r][1 - cur_].p;
    w.nx = p_.n[0];
    w.rows = slabs_[r].chunk;
    w.norm = norm;
    const int t = slabs_[r].top, b = slabs_[r].bottom;
    if (n_ == 1) {  // the periodic halo of one GPU: pushed to itself, as every paradigm does
      w.push_top = s_.row(t, 1 - cur_, slabs_[t].chunk + 1);
      w.push_bottom = s_.row(b, 1 - cur_, 0);
      launch_sweep(w, st);
      return;
    }
    w.ready = ready_[r].p;
    w.phase = phase_;
    GPSM_CUDA(cudaEventRecord(before_[r], st));
    launch_sweep(w, st);
    const std::size_t row = static_cast<std::size_t>(p_.n[0]) * sizeof(float);
    cudaStream_t c = side_[r];
    GPSM_CUDA(cudaStreamWaitEvent(c, before_[r], 0));
    proact::stream_wait_geq(c, ready_[r].p + 0, phase_, "jacobi2d proact: first row ready", &waits_[r]);
    GPSM_CUDA(cudaMemcpyPeerAsync(s_.row(t, 1 - cur_, slabs_[t].chunk + 1), ctx_.device(t), s_.row(r, 1 - cur_, 1),
                                  ctx_.device(r), row, c));
    proact::stream_wait_geq(c, ready_[r].p + 1, phase_, "jacobi2d proact: last row ready", &waits_[r]);
    GPSM_CUDA(cudaMemcpyPeerAsync(s_.row(b, 1 - cur_, 0), ctx_.device(b), s_.row(r, 1 - cur_, slabs_[r].chunk),
                                  ctx_.device(r), row, c));
    GPSM_CUDA(cudaEventRecord(shipped_[r], c));
    GPSM_CUDA(cudaStreamWaitEvent(st, shipped_[r], 0));
  }

 private:
  Slabs s_;
  std::vector<DevBuf<std::uint32_t>> ready_;  // per rank: [0] row 1, [1] row `chunk`
  std::vector<proact::StreamWaits> waits_;    // per rank: its copy stream's flag waits (the watchdog's ledger)
  std::vector<cudaStream_t> side_;
  std::vector<cudaEvent_t> before_, shipped_;
  std::uint32_t phase_ = 0;  // one per iteration, never reset: a flag >= phase is this iteration's
  std::string why_;
};

}  // namespace

std::unique_ptr<JacobiRun> make_proact_run(gps::Context& ctx, const Problem& p) {
  return std::make_unique<ProactRun>(ctx, p);
}

}  // namespace gpsm::apps::jacobi
