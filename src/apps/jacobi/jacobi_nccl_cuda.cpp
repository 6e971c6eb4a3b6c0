// Jacobi 2D on NCCL: NVIDIA multi-gpu-programming-models' jacobi "nccl" variant, one process
// driving every GPU (one communicator per GPU from ncclCommInitAll, every NCCL call of an
// iteration inside ncclGroupStart/End over all ranks).
#include "apps/jacobi/jacobi_nccl.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/dev_buf.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "scope/cuda_check.hpp"

#if GPSM_HAVE_NCCL
#include <nccl.h>

namespace gpsm::apps::jacobi {
namespace {

[[noreturn]] void nccl_fail(ncclResult_t e, const char* call, const char* file, int line) {
  std::string what = std::string("gpsm: NCCL ") + call + " failed: " + ncclGetErrorString(e);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') what += std::string(" (") + last + ")";
  throw gpsm::Error(what + " at " + file + ":" + std::to_string(line));
}

#define GPSM_NCCL(call)                                                                           \
  do {                                                                                            \
    ncclResult_t gpsm_nccl_err_ = (call);                                                         \
    if (gpsm_nccl_err_ != ncclSuccess) nccl_fail(gpsm_nccl_err_, #call, __FILE__, __LINE__);      \
  } while (0)

using Clock = std::chrono::steady_clock;

class NcclSlabRun final : public HostLoopRun {
 public:
  NcclSlabRun(gps::Context& ctx, const Problem& p) : ctx_(ctx), p_(p), n_(ctx.size()) {
    slabs_.resize(n_);
    buf_.resize(n_);
    norm_.resize(n_);
    gnorm_.resize(n_);
    bcol_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      slabs_[r] = jacobi_slab(p.n[0], p.n[1], n_, r);
      const int dev = ctx.device(r);
      std::vector<float> col(static_cast<std::size_t>(slabs_[r].local_rows()));
      for (std::int64_t lr = 0; lr < slabs_[r].local_rows(); ++lr) col[lr] = jacobi_boundary(slabs_[r].global_row(lr), p.n[1]);
      bcol_[r].alloc(dev, col.size());
      GPSM_CUDA(cudaMemcpy(bcol_[r].p, col.data(), col.size() * sizeof(float), cudaMemcpyHostToDevice));
      for (auto& b : buf_[r]) {
        b = std::make_unique<DevBuf<float>>();
        b->alloc(dev, slabs_[r].local_rows() * p.n[0]);
      }
      norm_[r].alloc(dev, 1);
      gnorm_[r].alloc(dev, 1);
    }
    GPSM_CUDA(cudaMallocHost(&host_norm_, sizeof(float) * n_));
    if (n_ > 1) {  // one GPU keeps its periodic halo itself: no NCCL
      std::vector<int> devs(n_);
      for (int r = 0; r < n_; ++r) devs[r] = ctx.device(r);
      comms_.assign(n_, nullptr);
      // NVLink multicast (NVLS) stays off unless asked for: a one-float allreduce and row
      // send/recv gain nothing from it, and on shared hosts it must not be used at all.
      setenv("NCCL_NVLS_ENABLE", "0", 0);
      try {
        GPSM_NCCL(ncclCommInitAll(comms_.data(), n_, devs.data()));
      } catch (...) {
        cudaFreeHost(host_norm_);
        throw;
      }
    }
  }
  ~NcclSlabRun() override {
    // Nothing of NCCL's may still run on the streams (a solve that threw); then the
    // communicators go, one by one from this thread (the last destroy of the process's
    // communicators finalizes them all together).
    for (int r = 0; r < n_ && !comms_.empty(); ++r) {
      cudaSetDevice(ctx_.device(r));
      cudaStreamSynchronize(ctx_.stream(r));
    }
    for (auto c : comms_)
      if (c != nullptr) ncclCommDestroy(c);
    cudaFreeHost(host_norm_);
  }

  void init() override {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int b = 0; b < 2; ++b)
        launch_init_rows(buf_[r][b]->p, bcol_[r].p, p_.n[0], slabs_[r].local_rows(),
                         b == 1 ? Poison::halo_rows : Poison::none, ctx_.stream(r));
    }
    cur_ = 0;
    ctx_.synchronize();
  }

  LoopTiming solve() override {
    const std::int64_t nx = p_.n[0];
    const std::size_t row = static_cast<std::size_t>(nx);
    double norm = 1.0;
    int iter = 0;
    const auto t0 = Clock::now();
    while (norm > p_.tol && iter < p_.iters) {
      const bool calc = iter % p_.nccheck == 0;
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (calc) GPSM_CUDA(cudaMemsetAsync(norm_[r].p, 0, sizeof(float), st));
        Sweep s;
        s.a = buf_[r][cur_]->p;
        s.a_new = buf_[r][1 - cur_]->p;
        s.nx = nx;
        s.rows = slabs_[r].chunk;
        s.norm = calc ? norm_[r].p : nullptr;
        if (n_ == 1) {  // the periodic halo of one GPU: its own halo rows
          s.push_top = s.a_new + (slabs_[r].chunk + 1) * nx;
          s.push_bottom = s.a_new;
        }
        launch_sweep(s, st);
      }
      if (n_ > 1) {
        if (calc) {  // the norm partials, summed on every rank (NVIDIA's order: before the halos)
          GPSM_NCCL(ncclGroupStart());
          for (int r = 0; r < n_; ++r)
            GPSM_NCCL(ncclAllReduce(norm_[r].p, gnorm_[r].p, 1, ncclFloat, ncclSum, comms_[r], ctx_.stream(r)));
          GPSM_NCCL(ncclGroupEnd());
        }
        // Halo rows, whole rows of nx floats, in NVIDIA's order (which also pairs the two
        // transfers each way between the same two ranks correctly on two GPUs).
        GPSM_NCCL(ncclGroupStart());
        for (int r = 0; r < n_; ++r) {
          float* a_new = buf_[r][1 - cur_]->p;
          const std::int64_t chunk = slabs_[r].chunk;
          const int top = slabs_[r].top, bottom = slabs_[r].bottom;
          cudaStream_t st = ctx_.stream(r);
          GPSM_NCCL(ncclRecv(a_new, row, ncclFloat, top, comms_[r], st));
          GPSM_NCCL(ncclSend(a_new + chunk * nx, row, ncclFloat, bottom, comms_[r], st));
          GPSM_NCCL(ncclRecv(a_new + (chunk + 1) * nx, row, ncclFloat, bottom, comms_[r], st));
          GPSM_NCCL(ncclSend(a_new + nx, row, ncclFloat, top, comms_[r], st));
        }
        GPSM_NCCL(ncclGroupEnd());
      }
      if (calc) {
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaMemcpyAsync(host_norm_ + r, n_ > 1 ? gnorm_[r].p : norm_[r].p, sizeof(float),
                                    cudaMemcpyDeviceToHost, ctx_.stream(r)));
        }
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(r)));
        }
        norm = std::sqrt(static_cast<double>(host_norm_[0]));  // every rank holds the same sum
      }
      cur_ = 1 - cur_;
      ++iter;
    }
    ctx_.synchronize();
    return LoopTiming{std::chrono::duration<double>(Clock::now() - t0).count(), iter, norm};
  }

  std::vector<float> gather() override {
    const std::int64_t nx = p_.n[0], ny = p_.n[1];
    std::vector<float> g(static_cast<std::size_t>(nx * ny), 0.0f);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(g.data() + slabs_[r].first_row * nx, buf_[r][cur_]->p + nx,
                           slabs_[r].chunk * nx * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return g;
  }

  // bytes/iter = 2 * ranks * nx * 4                        (each rank sends its first and last
  //                                                          computed rows, whole rows)
  //            + ranks * 2 * (ranks - 1) / ranks * 4 / nccheck  (the norm allreduce: a ring moves
  //                                                          2 (ranks-1)/ranks of the 4-byte
  //                                                          float per rank, every nccheck iters)
  // One GPU: 0 (its halo stays on it, no NCCL).
  double link_bytes_per_iter() const override {
    if (n_ == 1) return 0;
    const double n = n_;
    const double halo = 2.0 * n * static_cast<double>(p_.n[0]) * sizeof(float);
    const double allreduce = n * 2.0 * (n - 1) / n * sizeof(float) / std::max(1, p_.nccheck);
    return halo + allreduce;
  }

 private:
  gps::Context& ctx_;
  Problem p_;
  int n_;
  std::vector<JacobiSlab> slabs_;
  std::vector<std::array<std::unique_ptr<DevBuf<float>>, 2>> buf_;
  std::vector<DevBuf<float>> norm_, gnorm_, bcol_;
  std::vector<ncclComm_t> comms_;
  float* host_norm_ = nullptr;
  int cur_ = 0;
};

}  // namespace

bool nccl_built() { return true; }

std::unique_ptr<HostLoopRun> make_nccl_run(gps::Context& ctx, const Problem& p) {
  return std::make_unique<NcclSlabRun>(ctx, p);
}

}  // namespace gpsm::apps::jacobi

#else  // built without NCCL

namespace gpsm::apps::jacobi {

bool nccl_built() { return false; }

std::unique_ptr<HostLoopRun> make_nccl_run(gps::Context&, const Problem&) {
  throw gpsm::Error(std::string("gpsm: nccl: ") + kNcclMissing);
}

}  // namespace gpsm::apps::jacobi

#endif
