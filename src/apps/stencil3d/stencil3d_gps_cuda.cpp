// heat3d / wave3d on GPS arrays (gps): the whole grid in two replicated arrays, each GPU updating
// its owned cells of the global grid through its views (one sweep kernel over a GPS accessor,
// stencil3d_grid_kernels.hpp). Subscriptions are learned by tracking two iterations of an untimed
// profiling pass before the first timed run; stores are published inline to the page's other
// subscribers, so a stream-ordered fence (Context::fence_async: every GPU's next sweep waits for
// every GPU's last one, no host wait) ends every iteration and no other ordering is needed.
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

// Pages of about one halo piece, the contiguous bytes of `radius` planes (along z whole planes,
// along y `radius` rows of each z, along x `radius` cells of each row), a power of two from 4 KiB
// to 2 MiB: a neighbour subscribes to the planes it reads and not much more.
std::uint64_t page_for(const Problem& p, int radius) {
  const int a = dim_of(p.axis);
  const auto unit = static_cast<std::uint64_t>(a == 0 ? 1 : a == 1 ? p.n[0] : p.n[0] * p.n[1]);
  const std::uint64_t piece = static_cast<std::uint64_t>(radius) * unit * sizeof(float);
  std::uint64_t page = 4096;
  while (page * 2 <= piece && page < (2u << 20)) page *= 2;
  return page;
}

class GpsRun final : public HostLoop {
 public:
  GpsRun(gps::Context& ctx, Kind kind, const Problem& p)
      : HostLoop(ctx, p, false), kind_(kind), cells_(static_cast<std::uint64_t>(p.n[0] * p.n[1] * p.n[2])) {
    for (int r = 0; r < n_; ++r) slab_.push_back(slab3d(p.n, p.axis, radius_of(kind), n_, r));
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    o.page_bytes = page_for(p, radius_of(kind));
    for (int b = 0; b < 2; ++b) {
      o.name = std::string(kind == Kind::heat ? "heat3d" : "wave3d") + (b == 0 ? "_a" : "_b");
      arr_[b] = ctx.alloc<float>(cells_, o);
    }
  }

  // The first call learns the subscriptions (untimed: init is setup): initial values, tracking
  // on, two iterations (the second array's neighbour reads happen in the second), tracking off.
  void init() override {
    if (!tracked_) {
      write_initial();
      ctx_.tracking_start();
      iterate(2);
      ctx_.tracking_stop();
      tracked_ = true;
    }
    write_initial();
  }

  std::vector<float> gather() const override {
    std::vector<float> g(cells_);
    arr_[p_.iters % 2].download_coherent(g.data());
    return g;
  }

  // Link bytes of one more iteration, counted by the runtime.
  double link_bytes_per_iter() override {
    for (auto& a : arr_) {
      a.set_counting(true);
      a.reset_link_stats();
    }
    iterate(1);
    double bytes = 0;
    for (auto& a : arr_) {
      bytes += static_cast<double>(a.link_stats().link_bytes);
      a.set_counting(false);
    }
    return bytes;
  }

  std::string timing() const override {
    return "host wall clock of the iteration loop, a stream-ordered GPS fence (fence_async) after every iteration "
           "included (setup, the untimed tracking pass, initial values and verification excluded), divided by its "
           "iterations";
  }

 private:
  void step(int r, int it) override {
    const int c = it & 1;
    GpsSweep s;
    s.in = arr_[c].view(r);  // views taken now: counting (link_bytes_per_iter) applies to views taken after it
    s.out = arr_[1 - c].view(r);
    s.sy = p_.n[0];
    s.sz = p_.n[0] * p_.n[1];
    s.region = owned_region(slab_[r]);
    launch_gps_sweep(kind_, s, ctx_.stream(r));
  }
  void after_iteration(int) override { ctx_.fence_async(); }

  void iterate(int iters) {
    const int keep = p_.iters;
    p_.iters = iters;
    solve();
    p_.iters = keep;
  }

  // Every replica written directly, the whole grid (the fence first publishes anything pending,
  // so nothing lands on top afterwards). Buffer 1, written first, is NaN in the interior cells
  // of other ranks' planes (wave3d: its own planes hold prev, which the first iteration reads;
  // heat3d: everything), so a store that is not published shows.
  void write_initial() {
    ctx_.fence();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      const Slab3D& s = slab_[r];
      for (int b = 0; b < 2; ++b) {
        const Seeds seeds = initial_seeds(kind_, p_.seed, b);
        GridInit in;
        in.buf = arr_[b].view(r).local();
        for (int d = 0; d < 3; ++d) in.n[d] = p_.n[d];
        in.axis = dim_of(p_.axis);
        in.radius = s.radius;
        in.lo = 0;
        in.hi = p_.n[in.axis];
        in.poison = b == 1;
        if (kind_ == Kind::wave) {
          in.keep_lo = s.first;
          in.keep_hi = s.first + s.count;
        }
        in.seed_interior = seeds.interior;
        in.seed_boundary = seeds.boundary;
        launch_grid_init(in, ctx_.stream(r));
      }
    }
    ctx_.synchronize();
  }

  Kind kind_;
  std::uint64_t cells_;
  std::vector<Slab3D> slab_;
  std::array<gps::Array<float>, 2> arr_;
  bool tracked_ = false;
};

}  // namespace

std::unique_ptr<Run> make_gps_run(gps::Context& ctx, Kind kind, const Problem& p) {
  return std::make_unique<GpsRun>(ctx, kind, p);
}

}  // namespace gpsm::apps::stencil3d
