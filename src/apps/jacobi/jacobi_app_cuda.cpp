// Jacobi 2D (`gpsm bench --app jacobi2d`): NVIDIA multi-gpu-programming-models' problem on every
// paradigm this file implements, timed the way that suite times it (host wall clock around the
// whole solve loop, norm every nccheck iterations), verified against the CPU reference.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/harness/app.hpp"
#include "apps/harness/dev_buf.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/jacobi/jacobi_nccl.hpp"
#include "apps/jacobi/jacobi_um_rdl.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/reference.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "scope/cuda_check.hpp"

namespace gpsm::apps {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }


// Boundary values of every local row of a slab (halo rows included), from the global row each
// stands for, uploaded once per run to `dst` on the slab's device.
void upload_boundary(const JacobiSlab& s, DevBuf<float>& dst, int device) {
  std::vector<float> col(static_cast<std::size_t>(s.local_rows()));
  for (std::int64_t lr = 0; lr < s.local_rows(); ++lr) col[lr] = jacobi_boundary(s.global_row(lr), s.ny);
  dst.alloc(device, col.size());
  GPSM_CUDA(cudaMemcpy(dst.p, col.data(), col.size() * sizeof(float), cudaMemcpyHostToDevice));
}

// The whole grid's boundary column (rows 0 .. ny-1), for GPS arrays that hold the whole grid.
void upload_boundary(std::int64_t ny, DevBuf<float>& dst, int device) {
  std::vector<float> col(static_cast<std::size_t>(ny));
  for (std::int64_t iy = 0; iy < ny; ++iy) col[iy] = jacobi_boundary(iy, ny);
  dst.alloc(device, col.size());
  GPSM_CUDA(cudaMemcpy(dst.p, col.data(), col.size() * sizeof(float), cudaMemcpyHostToDevice));
}

// Largest relative difference over the interior rows (1 .. ny-2, every column): halo rows hold
// copies, whose boundary columns differ by design between paradigms.
double interior_error(const std::vector<float>& got, const std::vector<float>& ref, std::int64_t nx, std::int64_t ny) {
  if (got.size() != ref.size()) throw gpsm::Error("gpsm: jacobi2d: gathered grid and reference differ in size");
  double worst = 0, scale = 1;
  for (std::int64_t i = nx; i < (ny - 1) * nx; ++i) scale = std::max(scale, static_cast<double>(std::fabs(ref[i])));
  for (std::int64_t i = nx; i < (ny - 1) * nx; ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
    if (!(d <= worst)) worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;  // NaN never passes
  }
  return worst / scale;
}

struct Timing {
  double seconds = 0;
  int iterations = 0;
  double norm = 0;
};

class JacobiApp final : public App {
 public:
  const char* name() const override { return "jacobi2d"; }
  const char* description() const override {
    return "Jacobi 2D, 5-point, float: NVIDIA multi-gpu-programming-models' problem (periodic top/bottom, "
           "sin boundaries, norm every nccheck iterations)";
  }
  std::string default_sizes() const override { return "4096,16384"; }
  Problem problem(const std::string& size, int iters) const override {
    Problem p;
    std::int64_t nx = 0, ny = 0;
    const auto x = size.find('x');
    try {
      std::size_t used = 0;
      nx = std::stoll(x == std::string::npos ? size : size.substr(0, x), &used);
      ny = x == std::string::npos ? nx : std::stoll(size.substr(x + 1), &used);
    } catch (const std::exception&) {
      nx = ny = 0;
    }
    if (nx < 3 || ny < 3)
      throw std::invalid_argument("bad --size '" + size + "' for jacobi2d (use N or NXxNY, at least 3)");
    p.n[0] = nx;
    p.n[1] = ny;
    p.n[2] = 0;
    p.iters = iters > 0 ? iters : 1000;
    return p;
  }
  bool has(Paradigm p) const override {
    switch (p) {
      case Paradigm::single:
      case Paradigm::memcpy:
      case Paradigm::p2p_inline:
      case Paradigm::gps:
      case Paradigm::cpu_free:
      case Paradigm::infinite:
        return true;
      case Paradigm::um:
      case Paradigm::um_hints:
      case Paradigm::rdl:
        return true;
      case Paradigm::nccl:
        return jacobi::nccl_built();
      default:
        return false;
    }
  }
  RunOutcome run(const RunRequest& r) override;

 private:
  const JacobiResult& reference(const Problem& p, const RunRequest& r) {
    const std::string key = fmt::format("{}:{}:{}:{}", p.label(), p.iters, p.nccheck, p.tol);
    auto it = refs_.find(key);
    if (it == refs_.end()) {
      if (r.progress) r.progress("CPU reference " + p.label());
      JacobiProblem jp;
      jp.nx = p.n[0];
      jp.ny = p.n[1];
      jp.niter = p.iters;
      jp.nccheck = p.nccheck;
      jp.tol = p.tol;
      it = refs_.emplace(key, jacobi_reference(jp)).first;
    }
    return it->second;
  }
  std::map<std::string, JacobiResult> refs_;
};

// Host-driven paradigms over plain slabs: single, memcpy, p2p_inline.
class SlabRun {
 public:
  SlabRun(gps::Context& ctx, const Problem& p, Paradigm par) : ctx_(ctx), p_(p), par_(par), n_(ctx.size()) {
    slabs_.resize(n_);
    buf_.resize(n_);
    norm_.resize(n_);
    bcol_.resize(n_);
    ev_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      slabs_[r] = jacobi_slab(p.n[0], p.n[1], n_, r);
      const int dev = ctx.device(r);
      upload_boundary(slabs_[r], bcol_[r], dev);
      for (auto& b : buf_[r]) {
        b = std::make_unique<DevBuf<float>>();
        b->alloc(dev, slabs_[r].local_rows() * p.n[0]);
      }
      norm_[r].alloc(dev, 1);
      for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    GPSM_CUDA(cudaMallocHost(&host_norm_, sizeof(float) * n_));
  }
  ~SlabRun() {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      for (auto& e : ev_[r]) cudaEventDestroy(e);
    }
    cudaFreeHost(host_norm_);
  }

  void init() {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int b = 0; b < 2; ++b) {
        jacobi::launch_init_rows(buf_[r][b]->p, bcol_[r].p, p_.n[0], slabs_[r].local_rows(),
                                 b == 1 ? jacobi::Poison::halo_rows : jacobi::Poison::none, ctx_.stream(r));
      }
    }
    cur_ = 0;
    ctx_.synchronize();
  }

  Timing solve() {
    const std::int64_t nx = p_.n[0];
    double norm = 1.0;
    int iter = 0;
    const auto t0 = Clock::now();
    while (norm > p_.tol && iter < p_.iters) {
      const bool calc = iter % p_.nccheck == 0;
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (iter > 0 && n_ > 1) {  // neighbours' halos of the last iteration
          GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].top][(iter + 1) & 1], 0));
          GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].bottom][(iter + 1) & 1], 0));
        }
        if (calc) GPSM_CUDA(cudaMemsetAsync(norm_[r].p, 0, sizeof(float), st));
        jacobi::Sweep s;
        s.a = buf_[r][cur_]->p;
        s.a_new = buf_[r][1 - cur_]->p;
        s.nx = nx;
        s.rows = slabs_[r].chunk;
        s.norm = calc ? norm_[r].p : nullptr;
        // One GPU keeps its periodic halo by pushing to itself (every paradigm); between GPUs only
        // p2p_inline pushes.
        if (par_ == Paradigm::p2p_inline || n_ == 1) {
          const int t = slabs_[r].top, b = slabs_[r].bottom;
          s.push_top = buf_[t][1 - cur_]->p + (slabs_[t].chunk + 1) * nx;
          s.push_bottom = buf_[b][1 - cur_]->p;
        }
        jacobi::launch_sweep(s, st);
        GPSM_CUDA(cudaEventRecord(ev_[r][iter & 1], st));
      }
      if (par_ == Paradigm::memcpy && n_ > 1) copy_halos(iter);
      if (calc) {
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaMemcpyAsync(host_norm_ + r, norm_[r].p, sizeof(float), cudaMemcpyDeviceToHost, ctx_.stream(r)));
        }
        double sum = 0;
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(r)));
          sum += host_norm_[r];
        }
        norm = std::sqrt(sum);
      }
      cur_ = 1 - cur_;
      ++iter;
    }
    ctx_.synchronize();
    return Timing{seconds_since(t0), iter, norm};
  }

  std::vector<float> gather() {
    const std::int64_t nx = p_.n[0], ny = p_.n[1];
    std::vector<float> g(static_cast<std::size_t>(nx * ny), 0.0f);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(g.data() + slabs_[r].first_row * nx, buf_[r][cur_]->p + nx,
                           slabs_[r].chunk * nx * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return g;
  }

  // Rows exchanged per iteration: every rank sends its first and last rows to its neighbours.
  double link_bytes_per_iter() const {
    if (n_ == 1) return 0;
    const double row = static_cast<double>(par_ == Paradigm::memcpy ? p_.n[0] : p_.n[0] - 2) * sizeof(float);
    return 2.0 * n_ * row;
  }

 private:
  // memcpy: after every sweep, the first and last computed rows go to the neighbours' halos by
  // copy engine (whole rows, as NVIDIA's copy variants do), in stream order after the sweep.
  // The receiver reads them next iteration after waiting for this rank's event; this rank's
  // next copies overwrite halos the receiver read this iteration, after waiting for its event.
  void copy_halos(int iter) {
    const std::int64_t nx = p_.n[0];
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      const int t = slabs_[r].top, b = slabs_[r].bottom;
      const float* src = buf_[r][1 - cur_]->p;
      GPSM_CUDA(cudaMemcpyPeerAsync(buf_[t][1 - cur_]->p + (slabs_[t].chunk + 1) * nx, ctx_.device(t), src + nx,
                                    ctx_.device(r), nx * sizeof(float), st));
      GPSM_CUDA(cudaMemcpyPeerAsync(buf_[b][1 - cur_]->p, ctx_.device(b), src + slabs_[r].chunk * nx, ctx_.device(r),
                                    nx * sizeof(float), st));
    }
    for (int r = 0; r < n_; ++r) {  // the copies are part of this iteration's event
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaEventRecord(ev_[r][iter & 1], ctx_.stream(r)));
    }
  }

  gps::Context& ctx_;
  Problem p_;
  Paradigm par_;
  int n_;
  std::vector<JacobiSlab> slabs_;
  std::vector<std::array<std::unique_ptr<DevBuf<float>>, 2>> buf_;
  std::vector<DevBuf<float>> norm_, bcol_;
  // Two events per rank, by iteration parity: iteration k waits for the neighbours' iteration
  // k - 1 (recorded earlier), not for the record of iteration k another rank may have made
  // moments before in this same host loop (that would run the ranks one after another).
  std::vector<std::array<cudaEvent_t, 2>> ev_;
  float* host_norm_ = nullptr;
  int cur_ = 0;
};

// gps: the whole grid in two GPS arrays, subscriptions learned by tracking the first iteration
// of the first warm-up, inline publish (each store of a row a neighbour reads goes to it as
// issued); iterations are ordered like p2p_inline (events), the fence ends the solve.
class GpsRun {
 public:
  GpsRun(gps::Context& ctx, const Problem& p) : ctx_(ctx), p_(p), n_(ctx.size()) {
    const std::int64_t nx = p.n[0], ny = p.n[1];
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    // Pages of about one row: a neighbour subscribes to the rows it reads, not much more.
    std::uint64_t page = 4096;
    while (page * 2 <= static_cast<std::uint64_t>(nx) * sizeof(float) && page < (2u << 20)) page *= 2;
    o.page_bytes = page;
    o.name = "jacobi_a";
    arr_[0] = ctx.alloc<float>(static_cast<std::uint64_t>(nx * ny), o);
    o.name = "jacobi_b";
    arr_[1] = ctx.alloc<float>(static_cast<std::uint64_t>(nx * ny), o);
    for (int r = 0; r < n_; ++r) {
      slabs_.push_back(jacobi_slab(nx, ny, n_, r));
      norm_.emplace_back();
    }
    bcol_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      norm_[r].alloc(ctx.device(r), 1);
      upload_boundary(ny, bcol_[r], ctx.device(r));
    }
    GPSM_CUDA(cudaMallocHost(&host_norm_, sizeof(float) * n_));
    ev_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  }
  ~GpsRun() {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      for (auto& e : ev_[r]) cudaEventDestroy(e);
    }
    cudaFreeHost(host_norm_);
  }
  // Every replica written directly (as ArrayBase::upload does, from the device): the fence first
  // publishes anything pending, so nothing lands on top afterwards.
  void init() {
    ctx_.fence();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int k = 0; k < 2; ++k)  // the rows the first sweep writes are poisoned
        jacobi::launch_init_rows(reinterpret_cast<float*>(arr_[k].view(r).c.replica[r]), bcol_[r].p, p_.n[0], p_.n[1],
                                 k == 1 ? jacobi::Poison::inner_rows : jacobi::Poison::none, ctx_.stream(r));
    }
    cur_ = 0;
    ctx_.synchronize();
  }
  // track: learn the subscriptions during the first iteration.
  Timing solve(bool track) {
    const std::int64_t nx = p_.n[0], ny = p_.n[1];
    double norm = 1.0;
    int iter = 0;
    const auto t0 = Clock::now();
    while (norm > p_.tol && iter < p_.iters) {
      const bool calc = iter % p_.nccheck == 0;
      if (track && iter == 0) ctx_.tracking_start();
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (iter > 0 && n_ > 1) {
          GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].top][(iter + 1) & 1], 0));
          GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].bottom][(iter + 1) & 1], 0));
        }
        if (calc) GPSM_CUDA(cudaMemsetAsync(norm_[r].p, 0, sizeof(float), st));
        jacobi::GpsSweep s;
        s.a = arr_[cur_].view(r);
        s.a_new = arr_[1 - cur_].view(r);
        s.nx = nx;
        s.ny = ny;
        s.first_row = slabs_[r].first_row;
        s.rows = slabs_[r].chunk;
        s.norm = calc ? norm_[r].p : nullptr;
        jacobi::launch_gps_sweep(s, st);
        GPSM_CUDA(cudaEventRecord(ev_[r][iter & 1], st));
      }
      // Two iterations tracked: each array is read once (the second array's halo reads happen in
      // iteration 1). tracking_stop waits for the sweeps.
      if (track && ctx_.tracking() && (iter == 1 || iter + 1 >= p_.iters)) ctx_.tracking_stop();
      if (calc) {
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaMemcpyAsync(host_norm_ + r, norm_[r].p, sizeof(float), cudaMemcpyDeviceToHost, ctx_.stream(r)));
        }
        double sum = 0;
        for (int r = 0; r < n_; ++r) {
          GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
          GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(r)));
          sum += host_norm_[r];
        }
        norm = std::sqrt(sum);
      }
      cur_ = 1 - cur_;
      ++iter;
    }
    ctx_.fence();
    return Timing{seconds_since(t0), iter, norm};
  }
  std::vector<float> gather() {
    std::vector<float> g(static_cast<std::size_t>(p_.n[0] * p_.n[1]));
    arr_[cur_].download_coherent(g.data());
    return g;
  }
  // Link bytes of one more iteration, counted by the runtime.
  double count_link_bytes() {
    for (auto& a : arr_) {
      a.set_counting(true);
      a.reset_link_stats();
    }
    const int iters = p_.iters;
    p_.iters = 1;
    solve(false);
    p_.iters = iters;
    double bytes = 0;
    for (auto& a : arr_) {
      bytes += static_cast<double>(a.link_stats().link_bytes);
      a.set_counting(false);
    }
    return bytes;
  }
  // Ranks subscribed to each page of the grid, as learned: subscribers of page p, all pages.
  const gps::SubscriptionTable& subscriptions() const { return arr_[0].subscriptions(); }

 private:
  gps::Context& ctx_;
  Problem p_;
  int n_;
  gps::Array<float> arr_[2];
  std::vector<JacobiSlab> slabs_;
  std::vector<DevBuf<float>> norm_, bcol_;
  // Two events per rank, by iteration parity: iteration k waits for the neighbours' iteration
  // k - 1 (recorded earlier), not for the record of iteration k another rank may have made
  // moments before in this same host loop (that would run the ranks one after another).
  std::vector<std::array<cudaEvent_t, 2>> ev_;
  float* host_norm_ = nullptr;
  int cur_ = 0;
};

// cpu_free: one persistent cooperative kernel per GPU for the whole solve (seed 002 ch. 3).
// elide (the `infinite` bound on more than one GPU): the same kernel, device barrier and norm
// exchange included, with the halo rows stored to scratch rows on the sending GPU instead of
// the neighbour: every transfer between GPUs costs nothing, the result is not a result.
class CpuFreeRun {
 public:
  CpuFreeRun(gps::Context& ctx, const Problem& p, bool elide) : ctx_(ctx), p_(p), n_(ctx.size()), elide_(elide) {
    slabs_.resize(n_);
    buf_.resize(n_);
    acc_.resize(n_);
    bcol_.resize(n_);
    scratch_.resize(n_);
    slots_.resize(n_);
    done_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      slabs_[r] = jacobi_slab(p.n[0], p.n[1], n_, r);
      const int dev = ctx.device(r);
      for (auto& b : buf_[r]) {
        b = std::make_unique<DevBuf<float>>();
        b->alloc(dev, slabs_[r].local_rows() * p.n[0]);
      }
      upload_boundary(slabs_[r], bcol_[r], dev);
      if (elide_) scratch_[r].alloc(dev, 2 * p.n[0]);
      acc_[r].alloc(dev, 2);
      slots_[r].alloc(dev, 16);
      done_[r].alloc(dev, 4);
      GPSM_CUDA(cudaSetDevice(dev));
      blocks_ = r == 0 ? jacobi::cpu_free_blocks(dev) : std::min(blocks_, jacobi::cpu_free_blocks(dev));
    }
    ctx.check_coresident(jacobi::cpu_free_kernel(), blocks_, jacobi::kCpuFreeThreads, 0);
  }
  void init() {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int b = 0; b < 2; ++b)
        jacobi::launch_init_rows(buf_[r][b]->p, bcol_[r].p, p_.n[0], slabs_[r].local_rows(),
                                 b == 1 && !elide_ ? jacobi::Poison::halo_rows : jacobi::Poison::none, ctx_.stream(r));
      GPSM_CUDA(cudaMemset(acc_[r].p, 0, 2 * sizeof(float)));
      GPSM_CUDA(cudaMemset(slots_[r].p, 0, 16 * sizeof(float)));
      GPSM_CUDA(cudaMemset(done_[r].p, 0, 4 * sizeof(int)));
    }
    ctx_.synchronize();
  }
  Timing solve() {
    const std::int64_t nx = p_.n[0];
    std::vector<jacobi::CpuFree> args(n_);
    for (int r = 0; r < n_; ++r) {  // barrier handles read the counters' current base
      auto& c = args[r];
      const int t = slabs_[r].top, b = slabs_[r].bottom;
      for (int k = 0; k < 2; ++k) {
        c.buf[k] = buf_[r][k]->p;
        c.top_halo[k] = elide_ ? scratch_[r].p : buf_[t][k]->p + (slabs_[t].chunk + 1) * nx;
        c.bottom_halo[k] = elide_ ? scratch_[r].p + nx : buf_[b][k]->p;
      }
      c.acc = acc_[r].p;
      for (int g = 0; g < n_; ++g) c.slots[g] = slots_[g].p;
      c.done = done_[r].p;
      c.barrier = ctx_.barrier(r, 1);
      c.nx = nx;
      c.rows = slabs_[r].chunk;
      c.niter = p_.iters;
      c.nccheck = p_.nccheck;
      c.tol = p_.tol;
      c.rank = r;
      c.ranks = n_;
    }
    const auto t0 = Clock::now();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      jacobi::launch_cpu_free(args[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
    const double sec = seconds_since(t0);
    int done[4] = {0, 0, 0, 0};
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(done, done_[0].p, sizeof(done), cudaMemcpyDeviceToHost));
    float norm = 0;
    std::memcpy(&norm, &done[2], sizeof(float));
    final_buf_ = done[0] % 2;  // the buffer the last iteration wrote
    return Timing{sec, done[0], norm};
  }
  std::vector<float> gather() {
    const std::int64_t nx = p_.n[0], ny = p_.n[1];
    std::vector<float> g(static_cast<std::size_t>(nx * ny), 0.0f);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(g.data() + slabs_[r].first_row * nx, buf_[r][final_buf_]->p + nx,
                           slabs_[r].chunk * nx * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return g;
  }
  double link_bytes_per_iter() const {
    if (n_ == 1) return 0;
    if (elide_) return static_cast<double>(n_) * (n_ - 1) * sizeof(float);  // the norm partials only
    return 2.0 * n_ * static_cast<double>(p_.n[0] - 2) * sizeof(float) + static_cast<double>(n_) * (n_ - 1) * sizeof(float);
  }

 private:
  gps::Context& ctx_;
  Problem p_;
  int n_;
  int blocks_ = 0;
  std::vector<JacobiSlab> slabs_;
  std::vector<std::array<std::unique_ptr<DevBuf<float>>, 2>> buf_;
  bool elide_ = false;
  std::vector<DevBuf<float>> acc_, slots_, bcol_, scratch_;
  std::vector<DevBuf<int>> done_;
  int final_buf_ = 0;
};

RunOutcome JacobiApp::run(const RunRequest& req) {
  RunOutcome out;
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  if (req.paradigm == Paradigm::nccl && !jacobi::nccl_built()) {
    out.status = RunStatus::unsupported;
    out.reason = jacobi::kNcclMissing;
    return out;
  }
  if (!has(req.paradigm)) {
    out.status = RunStatus::unsupported;
    out.reason = std::string("the ") + paradigm_name(req.paradigm) + " paradigm is not implemented for jacobi2d yet";
    return out;
  }
  if (req.paradigm == Paradigm::single && n != 1) {
    out.status = RunStatus::unsupported;
    out.reason = "single runs on one GPU";
    return out;
  }
  if (p.n[1] - 2 < n) {
    out.status = RunStatus::unsupported;
    out.reason = "fewer interior rows than GPUs";
    return out;
  }
  const JacobiResult& ref = reference(p, req);
  gps::Settings settings = gps::Settings::from_env();
  gps::Context ctx(req.devices, settings);
  auto say = [&](const std::string& s) {
    if (req.progress) req.progress(s);
  };
  out.timing = "host wall clock of the solve loop (setup excluded), divided by its iterations";
  std::vector<float> got;
  auto timed = [&](auto&& init, auto&& solve) {
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      init();
      say(fmt::format("{} rep {}/{}", k < req.warmup ? "warm-up" : "timed", k < req.warmup ? k + 1 : k - req.warmup + 1,
                      k < req.warmup ? req.warmup : req.reps));
      const Timing t = solve(k == 0);
      if (k >= req.warmup) {
        out.sec_per_iter.push_back(t.seconds / std::max(1, t.iterations));
        out.iterations = t.iterations;
      }
    }
  };
  try {
    if (req.paradigm == Paradigm::gps) {
      GpsRun run(ctx, p);
      timed([&] { run.init(); }, [&](bool first) { return run.solve(first); });
      got = run.gather();
      out.link_bytes_per_iter = run.count_link_bytes();
    } else if (req.paradigm == Paradigm::cpu_free || req.paradigm == Paradigm::infinite) {
      CpuFreeRun run(ctx, p, req.paradigm == Paradigm::infinite && n > 1);
      timed([&] { run.init(); }, [&](bool) { return run.solve(); });
      got = run.gather();
      out.link_bytes_per_iter = run.link_bytes_per_iter();
      out.timing = "host wall clock from the persistent kernels' launch to every GPU idle, divided by the iterations";
    } else if (req.paradigm == Paradigm::nccl || req.paradigm == Paradigm::um ||
               req.paradigm == Paradigm::um_hints || req.paradigm == Paradigm::rdl) {
      std::unique_ptr<jacobi::HostLoopRun> run =
          req.paradigm == Paradigm::nccl  ? jacobi::make_nccl_run(ctx, p)
          : req.paradigm == Paradigm::rdl ? jacobi::make_rdl_run(ctx, p)
                                          : jacobi::make_um_run(ctx, p, req.paradigm == Paradigm::um_hints);
      if (const std::string why = run->check(); !why.empty()) throw gpsm::Error("gpsm: " + why);
      timed([&] { run->init(); }, [&](bool) {
        const jacobi::LoopTiming t = run->solve();
        return Timing{t.seconds, t.iterations, t.norm};
      });
      got = run->gather();
      out.link_bytes_per_iter = run->link_bytes_per_iter();
    } else {
      SlabRun run(ctx, p, req.paradigm);
      timed([&] { run.init(); }, [&](bool) { return run.solve(); });
      got = run.gather();
      out.link_bytes_per_iter = run.link_bytes_per_iter();
    }
  } catch (const gpsm::Error& e) {
    out.status = RunStatus::failed;
    out.reason = e.what();
    out.sec_per_iter.clear();
    return out;
  }
  out.error = interior_error(got, ref.a, p.n[0], p.n[1]);
  out.tolerance = 1e-6;
  const bool elided = req.paradigm == Paradigm::infinite && n > 1;
  if (elided && out.iterations != ref.iterations) {  // the bound must do the same work
    out.status = RunStatus::failed;
    out.reason = fmt::format("ran {} iterations, the reference {}", out.iterations, ref.iterations);
    out.sec_per_iter.clear();
  } else if (elided) {  // the opportunity bound computes without its neighbours' rows: not a result
    out.tolerance = std::numeric_limits<double>::infinity();
    out.timing += "; transfers elided, result not checked";
  } else if (!(out.error <= out.tolerance) || out.iterations != ref.iterations) {
    out.status = RunStatus::failed;
    out.reason = fmt::format("verification failed: max relative error {:.3e} (bound {:.0e}), {} iterations (reference {})",
                             out.error, out.tolerance, out.iterations, ref.iterations);
    out.sec_per_iter.clear();
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_jacobi_app() { return std::make_unique<JacobiApp>(); }

}  // namespace gpsm::apps
