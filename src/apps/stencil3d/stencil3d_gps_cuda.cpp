// heat3d / wave3d on GPS arrays (gps): the whole grid in two replicated arrays, each GPU updating
// its owned cells of the global grid through its views with the marching step the hand-written
// paradigms run (launch_gps_step: float4 rows, the 2R + 1 planes of a column reused along the
// march, loads from this GPU's replica checked once per work item, every stored vector published
// by the runtime to the page's other subscribers through View::span / put). Subscriptions are
// learned by tracking two iterations of an untimed profiling pass before the first timed run.
// Stores are published inline, so a stream-ordered fence (Context::fence_async: every GPU's next
// step waits for every GPU's last one, no host wait) ends every iteration and no other ordering is
// needed. Once the subscriptions are learned, each rank's work items are split on the host by what
// the runtime says of their pages (Array::reach, Array::subscribers, classify_gps_items): the
// slab's interior, whose pages no other GPU holds, runs the hand-written step with no checks; the
// items whose stores are published (the planes a neighbour reads) run the same march putting each
// vector through View::span_with of the mask the host asked, in a kernel of their own beside it
// on a side stream, as does anything else (pages this GPU lacks) through the checked GPS step.
// The split is made again whenever Array::subscription_version changes. The fastest
// hand-written forms of these apps are host-driven steps (p2p_inline, memcpy: the persistent
// cpu_free is 1.1-1.4x slower on 1 and 2 GPUs), so gps is one too, and like them it
// runs its timed loop as one CUDA graph (kernels and the fence's event records and waits).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/gps_link_bytes.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_gps_items.hpp"
#include "apps/stencil3d/stencil3d_gps_lists.hpp"
#include "apps/stencil3d/stencil3d_gps_pages.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "common/fork_join.hpp"

namespace gpsm::apps::stencil3d {
namespace {

class GpsRun final : public HostLoop {
 public:
  GpsRun(gps::Context& ctx, Kind kind, const Problem& p)
      : HostLoop(ctx, p, false), kind_(kind), cells_(static_cast<std::uint64_t>(p.n[0] * p.n[1] * p.n[2])) {
    for (int r = 0; r < n_; ++r) slab_.push_back(slab3d(p.n, p.axis, radius_of(kind), n_, r));
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    o.page_bytes = gps_page_bytes(p.n, dim_of(p.axis), radius_of(kind));
    for (int b = 0; b < 2; ++b) {
      o.name = std::string(kind == Kind::heat ? "heat3d" : "wave3d") + (b == 0 ? "_a" : "_b");
      arr_[b] = ctx.alloc<float>(cells_, o);
    }
    lists_.resize(n_);
    for (int r = 0; r < n_; ++r) side_.emplace_back(ctx.device(r));
  }

  // The timed loop (and the counting pass) runs on the items as split for the current subscriptions.
  Timing solve() override {
    split_items();
    return HostLoop::solve();
  }

  // The first call learns the subscriptions (untimed: init is setup): initial values, tracking
  // on, two iterations (the second array's neighbour reads happen in the second), tracking off.
  void init() override {
    if (!tracked_) {
      write_initial();
      ctx_.tracking_start();
      iterate_launched(2);  // launched iteration by iteration (the graph is captured for the timed loop)
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
  double link_bytes_per_iter() override { return counted_link_bytes(arr_, [&] { iterate_launched(1); }); }

  std::string timing() const override {
    const std::string loop = HostLoop::timing();
    return (loop.empty() ? std::string("host wall clock of the iteration loop") : loop) +
           "; a stream-ordered GPS fence (fence_async) after every iteration included (setup, the untimed tracking "
           "pass, initial values and verification excluded)";
  }

 private:
  // The graph holds the views of its capture: only the plain timed loop is captured; the tracking
  // and counting passes (their views mark pages, count bytes) launch iteration by iteration
  // (iterate_launched).
  bool graph_ok() const override { return true; }
  void step(int r, int it) override {
    const int c = it & 1;
    GpsStep s = base_step(r, c);
    s.sole = arr_[c].sole(r) && arr_[1 - c].sole(r);
    if (!s.sole && split_current()) lists_[r][c].apply(s, &side_[r]);
    launch_gps_step(kind_, s, ctx_.stream(r));
  }
  GpsStep base_step(int r, int c) const {
    GpsStep s;
    s.in = arr_[c].view(r);  // views taken now: counting (link_bytes_per_iter) applies to views taken after it
    s.out = arr_[1 - c].view(r);
    s.slab = slab_[r];
    s.edges_first = n_ > 1;
    return s;
  }

  // The split holds for the subscriptions it was made for; never while tracking, whose views must
  // see every access (the GPS step's checks mark the pages).
  bool split_current() const {
    return !ctx_.tracking() && split_for_[0] == arr_[0].subscription_version() &&
           split_for_[1] == arr_[1].subscription_version();
  }
  // Splits every rank's items of both parities (classify_gps_items) when the subscriptions changed
  // since the last split, and forgets the captured graph, whose launches hold the old lists.
  void split_items() {
    if (ctx_.tracking() || split_current()) return;
    const auto cells = static_cast<std::int64_t>(cells_);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int c = 0; c < 2; ++c) {
        const GpsStep g = base_step(r, c);
        const GpsStepShape shape = gps_step_shape(kind_, g);
        const SubBox sb = sub_box(slab_[r]);
        // Cells [lo, hi) clamped to the grid (an empty range reads nothing and publishes nothing:
        // sole for the input, this rank alone for the output).
        const auto clamp = [&](std::int64_t& lo, std::int64_t& hi) {
          lo = std::max<std::int64_t>(lo, 0);
          hi = std::min(hi, cells);
          return hi > lo;
        };
        const gps::Array<float>& in = arr_[c];
        const gps::Array<float>& out = arr_[1 - c];
        const GpsItems items = classify_gps_items(
            shape.plan, sb, radius_of(kind_), shape.v, sb.offset, r,
            [&](std::int64_t lo, std::int64_t hi) {
              return clamp(lo, hi) ? in.reach(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo), r)
                                   : gps::Reach::sole;
            },
            [&](std::int64_t lo, std::int64_t hi) {
              return clamp(lo, hi) ? out.subscribers(static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi - lo))
                                   : gps::RangeSubscribers{1u << r, true};
            });
        lists_[r][c].upload(ctx_.device(r), items);
      }
    }
    split_for_ = {arr_[0].subscription_version(), arr_[1].subscription_version()};
    drop_graph();
  }
  void after_iteration(int) override { ctx_.fence_async(); }

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
  // Per rank and parity (the iterations reading arr_[c]): the host's split of the items.
  std::vector<std::array<GpsItemLists, 2>> lists_;
  std::array<std::uint64_t, 2> split_for_{~std::uint64_t{0}, ~std::uint64_t{0}};
  std::vector<gpsm::ForkJoin> side_;  // per rank: the gps items' stream beside the plain ones
};

}  // namespace

std::unique_ptr<Run> make_gps_run(gps::Context& ctx, Kind kind, const Problem& p) {
  return std::make_unique<GpsRun>(ctx, kind, p);
}

}  // namespace gpsm::apps::stencil3d
