// jacobi2d's gps paradigm (jacobi_gps.hpp): host side. The kernel is jacobi_kernels.cu's
// gps_solve_kernel; everything it needs comes from the GPS API (views, spans, device fences).
#include "apps/jacobi/jacobi_gps.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include "apps/harness/gps_link_bytes.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/row_pages.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/page_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::jacobi {
namespace {

class GpsRun final : public JacobiRun {
 public:
  GpsRun(gps::Context& ctx, const Problem& p) : ctx_(ctx), p_(p), n_(ctx.size()) {
    const std::int64_t nx = p.n[0], ny = p.n[1];
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    o.page_bytes = gps_page_for_rows(nx);
    for (int b = 0; b < 2; ++b) {
      o.name = b == 0 ? "jacobi_a" : "jacobi_b";
      arr_[b] = ctx.alloc<float>(static_cast<std::uint64_t>(nx * ny), o);
    }
    bcol_.resize(n_);
    done_.resize(n_);
    args_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const int dev = ctx.device(r);
      upload_boundary(ny, bcol_[r], dev);
      done_[r].alloc(dev, 4);
      GPSM_CUDA(cudaSetDevice(dev));
      blocks_ = r == 0 ? gps_solve_blocks(dev) : std::min(blocks_, gps_solve_blocks(dev));
      const JacobiSlab s = jacobi_slab(nx, ny, n_, r);
      GpsSolve& g = args_[r];
      g.done = done_[r].p;
      g.nx = nx;
      g.ny = ny;
      g.first_row = s.first_row;
      g.rows = s.chunk;
      g.nccheck = p.nccheck;
      g.tol = p.tol;
    }
    ctx.check_coresident(gps_solve_kernel(args_[0]), blocks_, kCpuFreeThreads, 0);
  }

  // Setup, untimed. The first call learns the subscriptions: initial values, tracking on, two
  // iterations (the second array's halo reads happen in the second), tracking off.
  void init() override {
    if (!tracked_) {
      write_initial();
      ctx_.tracking_start();
      arm(2);
      launch();
      ctx_.tracking_stop();
      tracked_ = true;
    }
    write_initial();
    arm(p_.iters);
  }

  LoopTiming solve() override {
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    int done[4] = {0, 0, 0, 0};
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(done, done_[0].p, sizeof(done), cudaMemcpyDeviceToHost));
    float norm = 0;
    std::memcpy(&norm, &done[2], sizeof(float));
    final_ = done[0] % 2;  // iteration t writes a[1 - t % 2]: the last one wrote a[iterations % 2]
    return LoopTiming{sec, done[0], norm};
  }

  std::vector<float> gather() override {
    std::vector<float> g(static_cast<std::size_t>(p_.n[0] * p_.n[1]));
    arr_[final_].download_coherent(g.data());
    return g;
  }

  // One more iteration with counting views: the halo rows the runtime published (inline 32-byte
  // sectors), plus the device fence's tagged word per ordered GPU pair.
  double link_bytes_per_iter() override {
    const double published = counted_link_bytes(arr_, [&] {
      arm(1);
      launch();
    });
    return published + static_cast<double>(n_) * (n_ - 1) * sizeof(std::uint64_t);
  }

  std::string timing() const override {
    return "host wall clock from the persistent GPS kernels' launch to every GPU idle, divided by the iterations";
  }

 private:
  // Kernel arguments for a launch of `iters` iterations: views taken now (counting applies to
  // views taken after it is switched on), device fences reset.
  void arm(int iters) {
    const std::vector<gps::DeviceFence> f = ctx_.device_fences(blocks_);
    for (int r = 0; r < n_; ++r) {
      GpsSolve& g = args_[r];
      g.a[0] = arr_[0].view(r);
      g.a[1] = arr_[1].view(r);
      g.fence = f[r];
      g.niter = iters;
    }
  }
  void launch() {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      launch_gps_solve(args_[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
  }
  // Every replica written directly (the fence first publishes anything pending, so nothing lands
  // on top afterwards). The interior rows of the second array are NaN: the first iteration writes
  // them, and a row not published to a GPU that reads it shows in the result.
  void write_initial() {
    ctx_.fence();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemsetAsync(done_[r].p, 0, 4 * sizeof(int), ctx_.stream(r)));
      for (int b = 0; b < 2; ++b)
        launch_init_rows(arr_[b].view(r).local(), bcol_[r].p, p_.n[0], p_.n[1], b == 1 ? Poison::inner_rows : Poison::none,
                         ctx_.stream(r));
    }
    ctx_.synchronize();
  }

  gps::Context& ctx_;
  Problem p_;
  int n_;
  int blocks_ = 0;
  std::array<gps::Array<float>, 2> arr_;
  std::vector<DevBuf<float>> bcol_;
  std::vector<DevBuf<int>> done_;
  std::vector<GpsSolve> args_;
  bool tracked_ = false;
  int final_ = 0;
};

}  // namespace

std::unique_ptr<JacobiRun> make_gps_run(gps::Context& ctx, const Problem& p) { return std::make_unique<GpsRun>(ctx, p); }

}  // namespace gpsm::apps::jacobi
