#include "apps/jacobi/jacobi_host_loop.hpp"

#include <chrono>
#include <cmath>

#include "apps/stencil/stencil_math.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::jacobi {

namespace {
void upload_column(const std::vector<float>& col, DevBuf<float>& dst, int device) {
  dst.alloc(device, col.size());
  GPSM_CUDA(cudaMemcpy(dst.p, col.data(), col.size() * sizeof(float), cudaMemcpyHostToDevice));
}
}  // namespace

void upload_boundary(const JacobiSlab& s, DevBuf<float>& dst, int device) {
  std::vector<float> col(static_cast<std::size_t>(s.local_rows()));
  for (std::int64_t lr = 0; lr < s.local_rows(); ++lr) col[lr] = jacobi_boundary(s.global_row(lr), s.ny);
  upload_column(col, dst, device);
}

void upload_boundary(std::int64_t ny, DevBuf<float>& dst, int device) {
  std::vector<float> col(static_cast<std::size_t>(ny));
  for (std::int64_t iy = 0; iy < ny; ++iy) col[iy] = jacobi_boundary(iy, ny);
  upload_column(col, dst, device);
}

Slabs::Slabs(gps::Context& c, const Problem& p) : ctx(c), nx(p.n[0]), ny(p.n[1]) {
  const int n = ctx.size();
  buf.resize(n);
  bcol.resize(n);
  for (int r = 0; r < n; ++r) {
    slab.push_back(jacobi_slab(nx, ny, n, r));
    const int dev = ctx.device(r);
    upload_boundary(slab[r], bcol[r], dev);
    for (auto& b : buf[r]) b.alloc(dev, static_cast<std::size_t>(slab[r].local_rows() * nx));
  }
}

void Slabs::init(Poison first, Poison second) {
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    for (int b = 0; b < 2; ++b)
      launch_init_rows(buf[r][b].p, bcol[r].p, nx, slab[r].local_rows(), b == 0 ? first : second, ctx.stream(r));
  }
  ctx.synchronize();
}

std::vector<float> Slabs::gather(int b) const {
  std::vector<float> g(static_cast<std::size_t>(nx * ny), 0.0f);
  for (int r = 0; r < ctx.size(); ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    GPSM_CUDA(cudaMemcpy(g.data() + slab[r].first_row * nx, buf[r][b].p + nx,
                         static_cast<std::size_t>(slab[r].chunk * nx) * sizeof(float), cudaMemcpyDeviceToHost));
  }
  return g;
}

HostLoop::HostLoop(gps::Context& ctx, const Problem& p) : ctx_(ctx), p_(p), n_(ctx.size()) {
  for (int r = 0; r < n_; ++r) slabs_.push_back(jacobi_slab(p.n[0], p.n[1], n_, r));
  norm_.resize(n_);
  ev_.resize(n_);
  for (int r = 0; r < n_; ++r) {
    norm_[r].alloc(ctx.device(r), 1);
    for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  GPSM_CUDA(cudaMallocHost(&host_norm_, sizeof(float) * n_));
}

HostLoop::~HostLoop() {
  for (int r = 0; r < n_; ++r) {
    cudaSetDevice(ctx_.device(r));
    for (auto& e : ev_[r]) cudaEventDestroy(e);
  }
  cudaFreeHost(host_norm_);
}

void HostLoop::wait_rank(int r) { GPSM_CUDA(cudaStreamSynchronize(ctx_.stream(r))); }

void HostLoop::record(int r, int iter) {
  GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
  GPSM_CUDA(cudaEventRecord(ev_[r][iter & 1], ctx_.stream(r)));
}

LoopTiming HostLoop::solve() {
  double norm = 1.0;
  int iter = 0;
  const bool events = orders_by_events();
  const auto t0 = std::chrono::steady_clock::now();
  while (norm > p_.tol && iter < p_.iters) {
    const bool calc = iter % p_.nccheck == 0;
    before_sweeps(iter);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      if (events && iter > 0 && n_ > 1) {  // the neighbours' previous iteration
        GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].top][(iter + 1) & 1], 0));
        GPSM_CUDA(cudaStreamWaitEvent(st, ev_[slabs_[r].bottom][(iter + 1) & 1], 0));
      }
      if (calc) GPSM_CUDA(cudaMemsetAsync(norm_[r].p, 0, sizeof(float), st));
      sweep(r, calc ? norm_[r].p : nullptr, st);
      if (events) GPSM_CUDA(cudaEventRecord(ev_[r][iter & 1], st));
    }
    after_sweeps(iter, calc);
    if (calc) {
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        GPSM_CUDA(cudaMemcpyAsync(host_norm_ + r, norm_result(r), sizeof(float), cudaMemcpyDeviceToHost, ctx_.stream(r)));
      }
      double sum = 0;
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        wait_rank(r);
        sum += host_norm_[r];
      }
      norm = std::sqrt(norm_summed() ? static_cast<double>(host_norm_[0]) : sum);  // summed: every rank holds it
    }
    cur_ = 1 - cur_;
    ++iter;
  }
  finish();
  return LoopTiming{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), iter, norm};
}

}  // namespace gpsm::apps::jacobi
