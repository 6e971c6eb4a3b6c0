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
// Two drivers of the same steps: one host thread issues every GPU's calls in turn (the default),
// or (GPSM_CG_HOST_THREADS=1, several GPUs) one host thread per GPU issues its own, as the thesis'
// baseline runs one MPI process per GPU; the threads meet at a host barrier once per iteration,
// before a GPU's stream waits for its peers' halo copies (each recorded in an event of the
// iteration's parity, so a peer never records over an event another thread has yet to wait on).
#include <cuda_runtime.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "apps/cg/cg_runs.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "common/cuda_check.hpp"
#include "common/host_threads.hpp"
#include "gpsm/error.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>
#endif

namespace gpsm::apps::cg {
namespace {

using Clock = std::chrono::steady_clock;

class HostRun final : public CgRun {
 public:
  HostRun(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters, bool threads)
      : ctx_(ctx), data_(ctx, plan, start, v, iters, true), v_(v), n_(plan.ranks), iters_(iters),
        threshold_(start.threshold), threads_(threads && plan.ranks > 1) {
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
      for (cudaEvent_t* e : {&p.ev_halo[0], &p.ev_halo[1], &p.ev_red, &p.ev_upd})
        GPSM_CUDA(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
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
      for (cudaEvent_t e : {ranks_[r].ev_halo[0], ranks_[r].ev_halo[1], ranks_[r].ev_red, ranks_[r].ev_upd}) cudaEventDestroy(e);
      cudaStreamDestroy(ranks_[r].comm);
    }
  }

  void init() override { data_.init(); }

  double solve() override {
    const auto t0 = Clock::now();
    if (!data_.done_at_start()) {
      if (threads_)
        run_per_gpu_threads(n_, [this](int r, HostBarrier& bar) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          if (v_ == Variant::standard)
            standard_rank(r, bar);
          else
            pipelined_rank(r, bar);
        });
      else if (v_ == Variant::standard)
        solve_standard();
      else
        solve_pipelined();
    }
    ctx_.synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  Solve result() override { return data_.result(true); }

  std::string timing() const override {
    return std::string("host wall clock from the first launch to every GPU idle, divided by the iterations run; ") +
           (threads_ ? "one host thread per GPU" : "one host thread issues every GPU's calls");
  }

 private:
  struct Per {
    DevBuf<double> send[2], gath[2];  // [reduction]: this GPU's partial(s), and every GPU's
    cudaEvent_t ev_halo[2] = {nullptr, nullptr};  // [iteration parity]: its halo copies done
    cudaEvent_t ev_red = nullptr, ev_upd = nullptr;
    cudaStream_t comm = nullptr;
    std::vector<int> senders;  // GPUs whose entries land in this GPU's halo
    StdStep s;
    PipeStep pp;
  };

  const double* gathered(int r, int k) const { return n_ > 1 ? ranks_[r].gath[k].p : ranks_[r].send[k].p; }

  // GPU r's part of the allgather of reduction k (count values per GPU) into its gath[k], on its
  // main or comm stream. One thread for every GPU: inside ncclGroupStart / End (allgather).
  void allgather_rank(int r, int k, int count, bool comm_stream) {
    if (n_ == 1) return;
#if GPSM_HAVE_NCCL
    GPSM_NCCL(ncclAllGather(ranks_[r].send[k].p, ranks_[r].gath[k].p, static_cast<std::size_t>(count), ncclDouble,
                            (*comms_)[r], comm_stream ? ranks_[r].comm : ctx_.stream(r)));
#else
    (void)r, (void)k, (void)count, (void)comm_stream;
    throw gpsm::Error(std::string("gpsm: cg: ") + kNcclMissing);
#endif
  }

  // Every GPU's partials of reduction k into every GPU's gath[k], from one thread (NCCL orders the GPUs).
  void allgather(int k, int count, bool comm_streams) {
    if (n_ == 1) return;
#if GPSM_HAVE_NCCL
    GPSM_NCCL(ncclGroupStart());
    for (int r = 0; r < n_; ++r) allgather_rank(r, k, count, comm_streams);
    GPSM_NCCL(ncclGroupEnd());
#else
    (void)k, (void)count, (void)comm_streams;
    throw gpsm::Error(std::string("gpsm: cg: ") + kNcclMissing);
#endif
  }

  // GPU r's stream waits for its senders' halo copies of iteration `it`.
  void wait_halos(int r, int it, cudaStream_t st) const {
    for (int g : ranks_[r].senders) GPSM_CUDA(cudaStreamWaitEvent(st, ranks_[g].ev_halo[it & 1], 0));
  }

  // Under a tolerance the host learns of the stop from GPU r (every GPU decides alike).
  bool stopped(int r = 0) {
    if (threshold_ <= 0) return false;
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(r)));
    Control c;
    GPSM_CUDA(cudaMemcpy(&c, data_.control(r), sizeof(c), cudaMemcpyDeviceToHost));
    return c.stop != 0;
  }

  // ---- the steps of one GPU (both drivers) -----------------------------------------------------
  // GPU r made current; its stream, after it waits for the senders' halo copies of iteration it - 1.
  cudaStream_t begin_iteration(int r, int it) {
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    cudaStream_t st = ctx_.stream(r);
    if (it > 0) wait_halos(r, it - 1, st);
    return st;
  }
  // Standard iteration k, first half: SpMV after the senders' halo copies of k - 1, the (p, q) partial.
  void std_spmv(int r, int k) {
    Per& p = ranks_[r];
    cudaStream_t st = begin_iteration(r, k);
    StdStep s = p.s;
    s.k = k;
    s.part = data_.part(r, 0);
    s.gathered = gathered(r, 1);
    launch_std_spmv(s, st);
    launch_rank_partial(s.part, s.a.chunks, 1, p.send[0].p, st);
  }
  // Standard iteration k, second half: the update, r's halo copies (event of k's parity), the (r, r) partial.
  void std_update(int r, int k) {
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
      GPSM_CUDA(cudaEventRecord(p.ev_halo[k & 1], st));
    }
    launch_rank_partial(s.part, s.a.chunks, 1, p.send[1].p, st);
  }
  void std_finish(int r) {
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    StdStep s = ranks_[r].s;
    s.gathered = gathered(r, 1);
    launch_std_finish(s, iters_, ctx_.stream(r));
  }
  // Pipelined reduction of iteration i's partials on the comm stream, after GPU r's last update:
  // the GPU's partial, then (the caller) the allgather, then reduced().
  void pipe_partial(int r, int i) {
    Per& p = ranks_[r];
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    if (i > 0) GPSM_CUDA(cudaStreamWaitEvent(p.comm, p.ev_upd, 0));
    launch_rank_partial(data_.part(r, 0), p.pp.a.chunks, 2, p.send[0].p, p.comm);
  }
  void pipe_reduced(int r) {
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    GPSM_CUDA(cudaEventRecord(ranks_[r].ev_red, ranks_[r].comm));
  }
  // Pipelined iteration i on GPU r: SpMV (after the senders' halo copies of i - 1) beside the
  // reduction, the update after both, w's halo copies (event of i's parity).
  void pipe_iteration(int r, int i) {
    Per& p = ranks_[r];
    cudaStream_t st = begin_iteration(r, i);
    PipeStep s = p.pp;
    s.i = i;
    s.gathered = gathered(r, 0);
    launch_pipe_spmv(s, st);
    GPSM_CUDA(cudaStreamWaitEvent(st, p.ev_red, 0));
    launch_pipe_update(s, st);
    if (n_ > 1) {
      data_.copy_halos(r, 1 - (i & 1), st);
      GPSM_CUDA(cudaEventRecord(p.ev_halo[i & 1], st));
    }
    GPSM_CUDA(cudaEventRecord(p.ev_upd, st));
  }
  // After the last iteration: its reduction's stop bookkeeping (the update at i == iters).
  void pipe_last(int r) {
    Per& p = ranks_[r];
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    cudaStream_t st = ctx_.stream(r);
    GPSM_CUDA(cudaStreamWaitEvent(st, p.ev_red, 0));
    PipeStep s = p.pp;
    s.i = iters_;
    s.gathered = gathered(r, 0);
    launch_pipe_update(s, st);
  }

  // ---- one host thread per GPU ----------------------------------------------------------------
  // The barrier before a GPU waits on its peers' halo events of iteration k - 1: every thread has
  // recorded them; and no thread records parity (k - 1) & 1 again (at k + 1) before every thread
  // passed the next barrier, i.e. issued its waits of iteration k.
  void standard_rank(int r, HostBarrier& bar) {
    for (int k = 0; k < iters_; ++k) {
      if (k > 0) bar.wait();
      std_spmv(r, k);
      allgather_rank(r, 0, 1, false);
      if (stopped(r)) break;
      std_update(r, k);
      allgather_rank(r, 1, 1, false);
    }
    std_finish(r);
  }
  void pipelined_rank(int r, HostBarrier& bar) {
    for (int i = 0; i < iters_; ++i) {
      pipe_partial(r, i);
      allgather_rank(r, 0, 2, true);
      pipe_reduced(r);
      if (i > 0) bar.wait();
      pipe_iteration(r, i);
      if (stopped(r)) return;
    }
    pipe_partial(r, iters_);
    allgather_rank(r, 0, 2, true);
    pipe_reduced(r);
    pipe_last(r);
  }

  // ---- one host thread for every GPU ----------------------------------------------------------
  void solve_standard() {
    for (int k = 0; k < iters_; ++k) {
      for (int r = 0; r < n_; ++r) std_spmv(r, k);
      allgather(0, 1, false);
      if (stopped()) break;
      for (int r = 0; r < n_; ++r) std_update(r, k);
      allgather(1, 1, false);
    }
    for (int r = 0; r < n_; ++r) std_finish(r);
  }

  // The reduction of iteration i's partials on the comm streams, after each GPU's last update.
  void reduce_pipelined(int i) {
    for (int r = 0; r < n_; ++r) pipe_partial(r, i);
    allgather(0, 2, true);
    for (int r = 0; r < n_; ++r) pipe_reduced(r);
  }

  void solve_pipelined() {
    for (int i = 0; i < iters_; ++i) {
      reduce_pipelined(i);
      for (int r = 0; r < n_; ++r) pipe_iteration(r, i);
      if (stopped()) return;
    }
    reduce_pipelined(iters_);
    for (int r = 0; r < n_; ++r) pipe_last(r);
  }

  gps::Context& ctx_;
  CgData data_;
  Variant v_;
  int n_, iters_;
  double threshold_;
  bool threads_;  // one host thread per GPU
  std::unique_ptr<NcclComms> comms_;
  std::vector<Per> ranks_;
};

}  // namespace

std::unique_ptr<CgRun> make_host_run(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters,
                                     bool threads) {
  return std::make_unique<HostRun>(ctx, plan, start, v, iters, threads);
}

}  // namespace gpsm::apps::cg
