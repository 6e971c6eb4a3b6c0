// The CPU-controlled CG paradigms (single, cpu_ctrl_std, cpu_ctrl_pipe): the host launches every
// step of every iteration on each GPU's stream, as the thesis' CPU-controlled baselines do:
//   Standard, per iteration: SpMV (+ (p, q) chunk partials) -> the GPU's partial -> allgather ->
//     update (+ (r, r) partials, r's sent entries packed) -> copies of the packs into the peers'
//     halo slots -> the GPU's partial -> allgather.
//   Pipelined: the reduction of the previous update's partials runs on a second, higher-priority
//     stream (the GPU's partial, then the allgather) while SpMV runs on the first; the update
//     waits for both, packs w's sent entries, and the copies follow it.
// The reduction is an NCCL allgather of the GPUs' partials, summed in rank order on each GPU by
// the kernel that needs the sum: NCCL's allreduce fixes no summation order over more than two
// GPUs, and every paradigm must add in the same order to reproduce the reference bit for bit.
// No host synchronization inside the loop, except to poll for the stop under a tolerance.
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <vector>

#include "apps/cg/cg_runs.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpsm::apps::cg {
namespace {

using Clock = std::chrono::steady_clock;

class HostRun final : public CgRun {
 public:
  HostRun(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters)
      : ctx_(ctx), data_(ctx, plan, start, v, iters, true), v_(v), n_(plan.ranks), iters_(iters),
        threshold_(start.threshold) {
    if (n_ > 1) comms_ = std::make_unique<NcclComms>(ctx);  // throws without NCCL
    const int count = v == Variant::standard ? 1 : 2;
    ranks_.resize(static_cast<std::size_t>(n_));
    for (int r = 0; r < n_; ++r) {
      Per& p = ranks_[r];
      const int dev = ctx.device(r);
      GPSM_CUDA(cudaSetDevice(dev));
      for (int k = 0; k < 2; ++k) {
        p.send[k].alloc(dev, static_cast<std::size_t>(count));
        if (n_ > 1) p.gath[k].alloc(dev, static_cast<std::size_t>(count * n_));
      }
      for (cudaEvent_t* e : {&p.ev_halo, &p.ev_red, &p.ev_upd}) GPSM_CUDA(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
      int least = 0, greatest = 0;
      GPSM_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      GPSM_CUDA(cudaStreamCreateWithPriority(&p.comm, cudaStreamNonBlocking, greatest));
      for (int g = 0; g < n_; ++g)
        if (g != r && plan.rank[r].recv_off[g + 1] > plan.rank[r].recv_off[g]) p.senders.push_back(g);
      // The steps' constant parts.
      p.s.a = p.pp.a = data_.matrix(r);
      p.s.push = p.pp.push = data_.packed_pushes(r);
      p.s.ctl = p.pp.ctl = data_.control(r);
      p.s.hist = p.pp.hist = data_.hist(r);
      p.s.ranks = p.pp.ranks = n_;
      if (v == Variant::standard) p.s.v = data_.std_vectors(r);
      else p.pp.v = data_.pipe_vectors(r);
      p.s.rho0 = start.rho0;
      p.s.threshold = p.pp.threshold = start.threshold;
      p.pp.iters = iters;
      p.pp.part = data_.part(r, 0);
    }
  }
  ~HostRun() override {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      cudaStreamSynchronize(ranks_[r].comm);
      for (cudaEvent_t e : {ranks_[r].ev_halo, ranks_[r].ev_red, ranks_[r].ev_upd}) cudaEventDestroy(e);
      cudaStreamDestroy(ranks_[r].comm);
    }
  }

  void init() override { data_.init(); }

  double solve() override {
    const auto t0 = Clock::now();
    if (!data_.done_at_start()) {
      if (v_ == Variant::standard)
        solve_standard();
      else
        solve_pipelined();
    }
    ctx_.synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  Solve result() override { return data_.result(true); }

  std::string timing() const override {
    return "host wall clock from the first launch to every GPU idle, divided by the iterations run";
  }

 private:
  struct Per {
    DevBuf<double> send[2], gath[2];  // [reduction]: this GPU's partial(s), and every GPU's
    cudaEvent_t ev_halo = nullptr, ev_red = nullptr, ev_upd = nullptr;
    cudaStream_t comm = nullptr;
    std::vector<int> senders;  // GPUs whose entries land in this GPU's halo
    StdStep s;
    PipeStep pp;
  };

  const double* gathered(int r, int k) const { return n_ > 1 ? ranks_[r].gath[k].p : ranks_[r].send[k].p; }

  // Every GPU's partials of reduction k (count values each) into every GPU's gath[k], on the
  // given streams (NCCL orders the GPUs).
  void allgather(int k, int count, bool comm_streams) {
    if (n_ == 1) return;
#if GPSM_HAVE_NCCL
    GPSM_NCCL(ncclGroupStart());
    for (int r = 0; r < n_; ++r)
      GPSM_NCCL(ncclAllGather(ranks_[r].send[k].p, ranks_[r].gath[k].p, static_cast<std::size_t>(count), ncclDouble,
                              (*comms_)[r], comm_streams ? ranks_[r].comm : ctx_.stream(r)));
    GPSM_NCCL(ncclGroupEnd());
#else
    (void)k, (void)count, (void)comm_streams;
    throw gpsm::Error(std::string("gpsm: cg: ") + kNcclMissing);
#endif
  }

  void wait_halos(int r, cudaStream_t st) const {
    for (int g : ranks_[r].senders) GPSM_CUDA(cudaStreamWaitEvent(st, ranks_[g].ev_halo, 0));
  }

  // Under a tolerance the host learns of the stop from GPU 0 (every GPU decides alike).
  bool stopped() {
    if (threshold_ <= 0) return false;
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(0)));
    Control c;
    GPSM_CUDA(cudaMemcpy(&c, data_.control(0), sizeof(c), cudaMemcpyDeviceToHost));
    return c.stop != 0;
  }

  void solve_standard() {
    for (int k = 0; k < iters_; ++k) {
      for (int r = 0; r < n_; ++r) {
        Per& p = ranks_[r];
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (k > 0) wait_halos(r, st);
        StdStep s = p.s;
        s.k = k;
        s.part = data_.part(r, 0);
        s.gathered = gathered(r, 1);
        launch_std_spmv(s, st);
        launch_rank_partial(s.part, s.a.chunks, 1, p.send[0].p, st);
      }
      allgather(0, 1, false);
      if (stopped()) break;
      for (int r = 0; r < n_; ++r) {
        Per& p = ranks_[r];
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        StdStep s = p.s;
        s.k = k;
        s.part = data_.part(r, 1);
        s.gathered = gathered(r, 0);
        launch_std_update(s, st);
        if (n_ > 1) {
          data_.copy_halos(r, 0, st);
          GPSM_CUDA(cudaEventRecord(p.ev_halo, st));
        }
        launch_rank_partial(s.part, s.a.chunks, 1, p.send[1].p, st);
      }
      allgather(1, 1, false);
    }
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      StdStep s = ranks_[r].s;
      s.gathered = gathered(r, 1);
      launch_std_finish(s, iters_, ctx_.stream(r));
    }
  }

  // The reduction of iteration i's partials on the comm streams, after each GPU's last update.
  void reduce_pipelined(int i) {
    for (int r = 0; r < n_; ++r) {
      Per& p = ranks_[r];
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      if (i > 0) GPSM_CUDA(cudaStreamWaitEvent(p.comm, p.ev_upd, 0));
      launch_rank_partial(data_.part(r, 0), p.pp.a.chunks, 2, p.send[0].p, p.comm);
    }
    allgather(0, 2, true);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaEventRecord(ranks_[r].ev_red, ranks_[r].comm));
    }
  }

  void solve_pipelined() {
    for (int i = 0; i < iters_; ++i) {
      reduce_pipelined(i);
      for (int r = 0; r < n_; ++r) {
        Per& p = ranks_[r];
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (i > 0) wait_halos(r, st);
        PipeStep s = p.pp;
        s.i = i;
        s.gathered = gathered(r, 0);
        launch_pipe_spmv(s, st);
        GPSM_CUDA(cudaStreamWaitEvent(st, p.ev_red, 0));
        launch_pipe_update(s, st);
        if (n_ > 1) {
          data_.copy_halos(r, 1 - (i & 1), st);
          GPSM_CUDA(cudaEventRecord(p.ev_halo, st));
        }
        GPSM_CUDA(cudaEventRecord(p.ev_upd, st));
      }
      if (stopped()) return;
    }
    reduce_pipelined(iters_);
    for (int r = 0; r < n_; ++r) {
      Per& p = ranks_[r];
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      GPSM_CUDA(cudaStreamWaitEvent(st, p.ev_red, 0));
      PipeStep s = p.pp;
      s.i = iters_;
      s.gathered = gathered(r, 0);
      launch_pipe_update(s, st);
    }
  }

  gps::Context& ctx_;
  CgData data_;
  Variant v_;
  int n_, iters_;
  double threshold_;
  std::unique_ptr<NcclComms> comms_;
  std::vector<Per> ranks_;
};

}  // namespace

std::unique_ptr<CgRun> make_host_run(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters) {
  return std::make_unique<HostRun>(ctx, plan, start, v, iters);
}

}  // namespace gpsm::apps::cg
