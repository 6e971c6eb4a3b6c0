// Jacobi 2D on NCCL: NVIDIA multi-gpu-programming-models' jacobi "nccl" variant, one process
// driving every GPU (one communicator per GPU from ncclCommInitAll, every NCCL call of an
// iteration inside ncclGroupStart/End over all ranks).
#include "apps/jacobi/jacobi_nccl.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "common/dev_buf.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>

namespace gpsm::apps::jacobi {
namespace {

class NcclSlabRun final : public HostLoop {
 public:
  NcclSlabRun(gps::Context& ctx, const Problem& p) : HostLoop(ctx, p), s_(ctx, p) {
    gnorm_.resize(n_);
    for (int r = 0; r < n_; ++r) gnorm_[r].alloc(ctx.device(r), 1);
    if (n_ > 1) comms_ = std::make_unique<NcclComms>(ctx);  // one GPU keeps its periodic halo itself: no NCCL
  }

  void init() override {
    s_.init(Poison::none, Poison::halo_rows);
    cur_ = 0;
  }
  std::vector<float> gather() override { return s_.gather(cur_); }

  // bytes/iter = 2 * ranks * nx * 4                        (each rank sends its first and last
  //                                                          computed rows, whole rows)
  //            + ranks * 2 * (ranks - 1) / ranks * 4 / nccheck  (the norm allreduce: a ring moves
  //                                                          2 (ranks-1)/ranks of the 4-byte
  //                                                          float per rank, every nccheck iters)
  // One GPU: 0 (its halo stays on it, no NCCL).
  double link_bytes_per_iter() override {
    if (n_ == 1) return 0;
    const double n = n_;
    const double halo = 2.0 * n * static_cast<double>(p_.n[0]) * sizeof(float);
    const double allreduce = n * 2.0 * (n - 1) / n * sizeof(float) / std::max(1, p_.nccheck);
    return halo + allreduce;
  }

 protected:
  // NCCL orders the ranks: its sends and receives join the streams.
  bool orders_by_events() const override { return false; }
  const float* norm_result(int r) const override { return n_ > 1 ? gnorm_[r].p : norm_[r].p; }
  bool norm_summed() const override { return n_ > 1; }

  void sweep(int r, float* norm, cudaStream_t st) override {
    Sweep w;
    w.a = s_.buf[r][cur_].p;
    w.a_new = s_.buf[r][1 - cur_].p;
    w.nx = p_.n[0];
    w.rows = slabs_[r].chunk;
    w.norm = norm;
    if (n_ == 1) {  // the periodic halo of one GPU: its own halo rows
      w.push_top = s_.row(r, 1 - cur_, slabs_[r].chunk + 1);
      w.push_bottom = s_.row(r, 1 - cur_, 0);
    }
    launch_sweep(w, st);
  }

  void after_sweeps(int, bool calc) override {
    if (n_ == 1) return;
    const std::size_t row = static_cast<std::size_t>(p_.n[0]);
    if (calc) {  // the norm partials, summed on every rank (NVIDIA's order: before the halos)
      GPSM_NCCL(ncclGroupStart());
      for (int r = 0; r < n_; ++r)
        GPSM_NCCL(ncclAllReduce(norm_[r].p, gnorm_[r].p, 1, ncclFloat, ncclSum, (*comms_)[r], ctx_.stream(r)));
      GPSM_NCCL(ncclGroupEnd());
    }
    // Halo rows, whole rows of nx floats, in NVIDIA's order (which also pairs the two
    // transfers each way between the same two ranks correctly on two GPUs).
    GPSM_NCCL(ncclGroupStart());
    for (int r = 0; r < n_; ++r) {
      const std::int64_t chunk = slabs_[r].chunk;
      const int top = slabs_[r].top, bottom = slabs_[r].bottom;
      cudaStream_t st = ctx_.stream(r);
      ncclComm* comm = (*comms_)[r];
      GPSM_NCCL(ncclRecv(s_.row(r, 1 - cur_, 0), row, ncclFloat, top, comm, st));
      GPSM_NCCL(ncclSend(s_.row(r, 1 - cur_, chunk), row, ncclFloat, bottom, comm, st));
      GPSM_NCCL(ncclRecv(s_.row(r, 1 - cur_, chunk + 1), row, ncclFloat, bottom, comm, st));
      GPSM_NCCL(ncclSend(s_.row(r, 1 - cur_, 1), row, ncclFloat, top, comm, st));
    }
    GPSM_NCCL(ncclGroupEnd());
  }

 private:
  Slabs s_;
  std::vector<DevBuf<float>> gnorm_;
  std::unique_ptr<NcclComms> comms_;  // none on one GPU
};

}  // namespace

std::unique_ptr<JacobiRun> make_nccl_run(gps::Context& ctx, const Problem& p) {
  return std::make_unique<NcclSlabRun>(ctx, p);
}

}  // namespace gpsm::apps::jacobi

#else  // built without NCCL

namespace gpsm::apps::jacobi {

std::unique_ptr<JacobiRun> make_nccl_run(gps::Context&, const Problem&) {
  throw gpsm::Error(std::string("gpsm: nccl: ") + kNcclMissing);
}

}  // namespace gpsm::apps::jacobi

#endif
