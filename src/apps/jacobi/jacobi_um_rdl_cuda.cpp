// Jacobi 2D on Unified Memory (um, um_hints) and on remote demand loads (rdl). Same loop as the
// other host-driven paradigms (jacobi_app_cuda.cpp): a sweep per GPU per iteration, each GPU
// waiting for its neighbours' previous iteration, the norm read back every nccheck iterations.
#include "apps/jacobi/jacobi_um_rdl.hpp"

#include <cuda_runtime.h>

#include <array>

#include <fmt/format.h>

#include "common/dev_buf.hpp"
#include "common/mem_location.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::jacobi {
namespace {

class UmRun final : public HostLoop {
 public:
  UmRun(gps::Context& ctx, const Problem& p, bool hints) : HostLoop(ctx, p), hints_(hints) {
    const std::int64_t nx = p.n[0], ny = p.n[1];
    for (auto& g : grid_) GPSM_CUDA(cudaMallocManaged(&g, static_cast<std::size_t>(nx * ny) * sizeof(float)));
    GPSM_CUDA(cudaMallocManaged(&bcol_, static_cast<std::size_t>(ny) * sizeof(float)));
    for (std::int64_t iy = 0; iy < ny; ++iy) bcol_[iy] = jacobi_boundary(iy, ny);
    if (hints_) advise();
  }
  ~UmRun() override {
    ctx_.synchronize();
    for (auto* g : grid_) cudaFree(g);
    cudaFree(bcol_);
  }
  void init() override {
    const std::int64_t nx = p_.n[0], ny = p_.n[1];
    // Each GPU first-touches its own rows (the first and last GPU also the never-read halo rows
    // 0 and ny-1); the rows the first sweep writes start as NaN.
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      const std::int64_t lo = r == 0 ? 0 : slabs_[r].first_row;
      const std::int64_t hi = r == n_ - 1 ? ny : slabs_[r].first_row + slabs_[r].chunk;
      for (int k = 0; k < 2; ++k) {
        launch_init_rows(grid_[k] + lo * nx, bcol_ + lo, nx, hi - lo, k == 1 ? Poison::all_rows : Poison::none, st);
      }
      if (hints_)
        for (auto* g : grid_)
          GPSM_CUDA(cudaMemPrefetchAsync(g + slabs_[r].first_row * nx, rows_bytes(r), device_location(ctx_.device(r)),
                                         0, st));
    }
    cur_ = 0;
    ctx_.synchronize();
  }
  std::vector<float> gather() override {
    ctx_.synchronize();
    const std::size_t cells = static_cast<std::size_t>(p_.n[0] * p_.n[1]);
    std::vector<float> g(cells);
    GPSM_CUDA(cudaMemcpy(g.data(), grid_[cur_], cells * sizeof(float), cudaMemcpyDefault));
    return g;
  }
  double link_bytes_per_iter() override { return -1; }  // page migrations: not counted
  std::string check() const override { return check_; }

 protected:
  void sweep(int r, float* norm, cudaStream_t st) override {
    GridSweep s;
    s.a = grid_[cur_];
    s.a_new = grid_[1 - cur_];
    s.nx = p_.n[0];
    s.ny = p_.n[1];
    s.first_row = slabs_[r].first_row;
    s.rows = slabs_[r].chunk;
    s.norm = norm;
    launch_grid_sweep(s, st);
  }

 private:
  std::size_t rows_bytes(int r) const { return static_cast<std::size_t>(slabs_[r].chunk * p_.n[0]) * sizeof(float); }

  // Preferred location of each GPU's rows on it; its edge rows accessed by the neighbour that
  // reads them. Each hint is read back: the driver accepts some invalid hints silently.
  void advise() {
    const std::int64_t nx = p_.n[0];
    const std::size_t row = static_cast<std::size_t>(nx) * sizeof(float);
    for (int r = 0; r < n_; ++r) {
      const JacobiSlab& s = slabs_[r];
      const cudaMemLocation here = device_location(ctx_.device(r));
      for (auto* g : grid_) {
        float* mine = g + s.first_row * nx;
        GPSM_CUDA(cudaMemAdvise(mine, rows_bytes(r), cudaMemAdviseSetPreferredLocation, here));
        if (n_ > 1) {
          GPSM_CUDA(cudaMemAdvise(mine, row, cudaMemAdviseSetAccessedBy, device_location(ctx_.device(s.top))));
          GPSM_CUDA(cudaMemAdvise(mine + (s.chunk - 1) * nx, row, cudaMemAdviseSetAccessedBy,
                                  device_location(ctx_.device(s.bottom))));
        }
      }
    }
    for (int r = 0; r < n_ && check_.empty(); ++r) check_ = read_back(r);
  }

  std::string read_back(int r) const {
    const JacobiSlab& s = slabs_[r];
    const std::int64_t nx = p_.n[0];
    // Hints act on whole pages: read back over the pages wholly inside this GPU's rows.
    const std::uintptr_t page = 64 * 1024;
    for (auto* g : grid_) {
      const auto lo = reinterpret_cast<std::uintptr_t>(g + s.first_row * nx);
      const auto hi = lo + rows_bytes(r);
      const std::uintptr_t a = (lo + page - 1) / page * page, b = hi / page * page;
      if (b <= a) continue;  // no whole page: nothing to read back
      int where = -2;
      GPSM_CUDA(cudaMemRangeGetAttribute(&where, sizeof(where), cudaMemRangeAttributePreferredLocation,
                                         reinterpret_cast<void*>(a), b - a));
      if (where != ctx_.device(r))
        return fmt::format("um_hints: the preferred location of GPU {}'s rows reads back as {} (asked {})",
                           ctx_.device(r), where, ctx_.device(r));
    }
    if (n_ > 1) {  // the top neighbour is among the devices accessing this GPU's first row
      int by[8];
      for (int& x : by) x = -2;
      GPSM_CUDA(cudaMemRangeGetAttribute(by, sizeof(by), cudaMemRangeAttributeAccessedBy, grid_[0] + s.first_row * nx,
                                         static_cast<std::size_t>(nx) * sizeof(float)));
      bool found = false;
      for (int x : by) found = found || x == ctx_.device(s.top);
      if (!found)
        return fmt::format("um_hints: GPU {} is not among the devices accessing GPU {}'s first row",
                           ctx_.device(s.top), ctx_.device(r));
    }
    return "";
  }

  bool hints_;
  std::array<float*, 2> grid_{nullptr, nullptr};
  float* bcol_ = nullptr;
  std::string check_;
};

class RdlRun final : public HostLoop {
 public:
  RdlRun(gps::Context& ctx, const Problem& p) : HostLoop(ctx, p), s_(ctx, p) {}
  void init() override {
    s_.init(Poison::halo_rows, Poison::halo_rows);  // halo rows are never read here: NaN proves it
    cur_ = 0;
  }
  std::vector<float> gather() override { return s_.gather(cur_); }
  // Each GPU loads its neighbours' edge rows once per iteration (pushed_cells: whole rows on the float4 path).
  double link_bytes_per_iter() override {
    return n_ == 1 ? 0 : 2.0 * n_ * static_cast<double>(jacobi::pushed_cells(p_.n[0])) * sizeof(float);
  }

 protected:
  void sweep(int r, float* norm, cudaStream_t st) override {
    const JacobiSlab& s = slabs_[r];
    const int t = s.top, b = s.bottom;
    Sweep w;
    w.a = s_.buf[r][cur_].p;
    w.a_new = s_.buf[r][1 - cur_].p;
    w.nx = p_.n[0];
    w.rows = s.chunk;
    w.north = s_.row(t, cur_, slabs_[t].chunk);  // the top neighbour's last row (periodic)
    w.south = s_.row(b, cur_, 1);                // the bottom neighbour's first row
    w.norm = norm;
    launch_sweep(w, st);
  }

 private:
  Slabs s_;
};

}  // namespace

std::unique_ptr<JacobiRun> make_um_run(gps::Context& ctx, const Problem& p, bool hints) {
  return std::make_unique<UmRun>(ctx, p, hints);
}

std::unique_ptr<JacobiRun> make_rdl_run(gps::Context& ctx, const Problem& p) { return std::make_unique<RdlRun>(ctx, p); }

}  // namespace gpsm::apps::jacobi
