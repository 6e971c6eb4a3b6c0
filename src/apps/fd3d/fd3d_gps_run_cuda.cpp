// fd3d on GPS arrays (gps), written as a user of the runtime would write it: the whole volume in
// two replicated arrays (inline publishing; pages that tile the planes of the split axis:
// fd_gps_page_bytes), each GPU updating its slab of it. No halo plane,
// neighbour or transfer in the app: what goes to which GPU is the runtime's subscriptions.
//
// Subscriptions are learned by tracking two iterations of the checked step (every load and store
// through the views) in an untimed pass before the first timed run. After it, once per
// subscription change, the host asks the runtime whether each GPU holds every page its step reads
// (Array::reach over read_boxes, fd3d_gps_layout.hpp) and which of the planes it stores other GPUs
// subscribe to (Array::subscribers: published_planes). Where it holds them, the GPU runs the
// hand-written step on its replica and then has the runtime copy those planes to their
// subscribers (Array::publish_box_async: copy engines, on its stream), the memcpy paradigm's
// structure with the runtime choosing what goes where; where a plane's pages have different
// subscribers (pages across a plane's edge, as a split along x gives), fd3d's
// tile kernel asks the output view per work item (fd3d_gps_kernels.hpp); where it lacks a page,
// the checked step.
//
// Chosen by measurement on one H200 (the step with nothing to publish, forced; the hand-written
// kernel's time = 1): every cell through View::store 1.09-1.10; plain stores per work item and the
// view elsewhere 1.01-1.03 at halos 2-8, 1.06 at 16; p2p_inline's structure (a cell of a published
// plane put with the host-asked mask, View::span_with) 1.05-1.13: any publishing path compiled
// into the march costs it registers and scheduling, so the kernel stays the hand-written one and
// the copies follow it. Where a GPU alone holds both arrays (one GPU), the hand-written step runs on
// its replica (Array::sole); GPSM_FD3D_GPS_STEP forces one of the GPS steps for an A/B
// (fd3d_gps_layout.hpp). A stream-ordered fence (Context::fence_async) ends every iteration:
// every GPU's next step waits for every GPU's stores, with no host wait. The timed loop is one
// CUDA graph, as the other paradigms'.
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_gps_kernels.hpp"
#include "apps/fd3d/fd3d_gps_layout.hpp"
#include "apps/fd3d/fd3d_kernels.hpp"
#include "apps/fd3d/fd3d_runs.hpp"
#include "apps/harness/gps_link_bytes.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"  // launch_grid_init
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {
namespace {

class GpsRun final : public FdRun {
 public:
  GpsRun(gps::Context& ctx, const Problem& p, int radius)
      : FdRun(ctx, p, false), radius_(radius), choice_(gps_step_choice_from_env()) {
    cells_ = static_cast<std::uint64_t>(p.n[0] * p.n[1] * p.n[2]);
    for (int r = 0; r < n_; ++r) slab_.push_back(slab3d(p.n, p.axis, radius, n_, r));
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    o.page_bytes = fd_gps_page_bytes(p.n, static_cast<int>(p.axis), radius);
    for (int b = 0; b < 2; ++b) {
      o.name = b == 0 ? "fd3d_a" : "fd3d_b";
      arr_[b] = ctx.alloc<float>(cells_, o);
    }
    held_.assign(static_cast<std::size_t>(n_), {false, false});
    pub_.resize(static_cast<std::size_t>(n_));
    kind_.assign(static_cast<std::size_t>(n_), StepKind::none);
  }

  stencil3d::Timing solve() override {
    refresh_held();
    return FdRun::solve();
  }

  // The first call learns the subscriptions (untimed: init is setup), on more than one GPU:
  // initial values, tracking on, two iterations (the second array's reads happen in the second),
  // tracking off.
  void init() override {
    if (!tracked_) {
      write_initial();
      if (n_ > 1) {
        ctx_.tracking_start();
        iterate_launched(2);
        ctx_.tracking_stop();
      }
      tracked_ = true;
    }
    write_initial();
  }

  std::vector<float> gather_buffer(int b) const override {
    std::vector<float> g(cells_);
    arr_[b].download_coherent(g.data());
    return g;
  }

  // Link bytes of one more iteration, counted by the runtime.
  double link_bytes_per_iter() override { return counted_link_bytes(arr_, [&] { iterate_launched(1); }); }

  std::string timing_note() const override {
    std::string steps;
    for (int r = 0; r < n_; ++r)
      steps += (r > 0 ? ", " : "") + std::to_string(ctx_.device(r)) + ": " + kind_name(kind_[static_cast<std::size_t>(r)]);
    return "a stream-ordered GPS fence (fence_async) after every iteration included; subscriptions learned by an "
           "untimed tracking pass; link bytes counted by the runtime over one more iteration; the last step per GPU: " +
           steps;
  }

 private:
  // The graph holds the views of its capture: only the plain timed loop is captured; the tracking
  // and counting passes (their views mark pages, count bytes) launch iteration by iteration
  // (iterate_launched).
  bool graph_ok() const override { return true; }

  // Which step a GPU ran last (said in the timing: a run that never left the checked step shows).
  enum class StepKind { none, sole, copies, items, checked };
  static const char* kind_name(StepKind k) {
    switch (k) {
      case StepKind::sole: return "the hand-written step on its replica (sole)";
      case StepKind::copies: return "the hand-written step, published planes copied after it";
      case StepKind::items: return "the tile kernel, published per work item";
      case StepKind::checked: return "the checked step";
      default: return "none";
    }
  }

  void step(int r, int it) override {
    const int c = it & 1;
    const gps::View<float> in = arr_[c].view(r), out = arr_[1 - c].view(r);
    const FdStep st = replica_step(slab_[r], in.local(), out.local());
    const StepKind k = pick(r, c);
    kind_[static_cast<std::size_t>(r)] = k;
    if (k == StepKind::sole)
      launch_fd_step(st, ctx_.stream(r));
    else if (k == StepKind::copies)
      copy_step(st, r, c);
    else if (k == StepKind::items)
      launch_fd_gps_step(st, out, ctx_.stream(r));
    else
      launch_fd_checked_step(st, in, out, ctx_.stream(r));
  }
  // Rank r's step reading array c (GPSM_FD3D_GPS_STEP may force one: gps_step_choice_from_env).
  StepKind pick(int r, int c) const {
    if (ctx_.tracking() || choice_ == GpsStepChoice::checked) return StepKind::checked;
    if (choice_ == GpsStepChoice::automatic && arr_[c].sole(r) && arr_[1 - c].sole(r)) return StepKind::sole;
    const auto q = static_cast<std::size_t>(r);
    if (held_current() && held_[q][c]) {
      if (choice_ != GpsStepChoice::items && pub_[q][c]) return StepKind::copies;
      if (choice_ != GpsStepChoice::copies) return StepKind::items;
    }
    if (choice_ == GpsStepChoice::copies || choice_ == GpsStepChoice::items)
      throw gpsm::Error(fmt::format("gpsm: fd3d gps: GPSM_FD3D_GPS_STEP={} does not apply on GPU {}: {}; use auto",
                                    choice_ == GpsStepChoice::copies ? "copies" : "items", ctx_.device(r),
                                    held_[q][c] ? "a plane it stores has pages with different subscribers"
                                                : "it lacks a page its step reads (its subscriptions)"));
    return StepKind::checked;
  }
  void after_iteration(int) override { ctx_.fence_async(); }

  // The hand-written step on rank r's replica, then each run of its published planes (their
  // updated cells: published_boxes) copied to that run's subscribers by the runtime.
  void copy_step(const FdStep& st, int r, int c) {
    launch_fd_step(st, ctx_.stream(r));
    std::uint64_t n[3];
    for (int d = 0; d < 3; ++d) n[d] = static_cast<std::uint64_t>(p_.n[d]);
    for (const CellBox& b : published_boxes(slab_[r], *pub_[static_cast<std::size_t>(r)][c])) {
      std::uint64_t lo[3], hi[3];
      for (int d = 0; d < 3; ++d) lo[d] = static_cast<std::uint64_t>(b.lo[d]), hi[d] = static_cast<std::uint64_t>(b.hi[d]);
      arr_[1 - c].publish_box_async(n, lo, hi, r);
    }
  }

  bool held_current() const {
    return !ctx_.tracking() && held_for_[0] == arr_[0].subscription_version() &&
           held_for_[1] == arr_[1].subscription_version();
  }
  // Whether each rank holds every page its step reads from each array, and which of the planes it
  // stores other GPUs subscribe to, asked again when the subscriptions changed; the captured
  // graph, whose launches chose by the old answers, is dropped.
  void refresh_held() {
    if (ctx_.tracking() || held_current()) return;
    for (int r = 0; r < n_; ++r)
      for (int c = 0; c < 2; ++c) {
        bool all = true;
        for (const CellBox& b : read_boxes(slab_[r]))
          box_runs(p_.n, b, [&](std::int64_t first, std::int64_t count) {
            all = all && arr_[c].reach(static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(count), r) !=
                             gps::Reach::checked;
          });
        held_[static_cast<std::size_t>(r)][c] = all;
        const gps::Array<float>& out = arr_[1 - c];
        pub_[static_cast<std::size_t>(r)][c] = published_planes(slab_[r], 1u << r, [&](std::int64_t f, std::int64_t n) {
          return out.subscribers(static_cast<std::uint64_t>(f), static_cast<std::uint64_t>(n));
        });
      }
    held_for_ = {arr_[0].subscription_version(), arr_[1].subscription_version()};
    drop_graph();
  }

  // Every replica written directly, the whole volume (the fence first publishes anything pending,
  // so nothing lands on top afterwards): fd3d's initial values, the boundary layer R thick. Buffer
  // 1, written first by the first iteration, is NaN in the interior, so a cell that is neither
  // stored by its GPU nor published to a GPU that reads it shows.
  void write_initial() {
    ctx_.fence();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int b = 0; b < 2; ++b) {
        stencil3d::GridInit in;
        in.buf = arr_[b].view(r).local();
        for (int d = 0; d < 3; ++d) in.n[d] = p_.n[d];
        in.axis = static_cast<int>(p_.axis);
        in.radius = radius_;
        in.lo = 0;
        in.hi = p_.n[in.axis];
        in.poison = b == 1;
        in.seed_interior = in.seed_boundary = p_.seed;
        stencil3d::launch_grid_init(in, ctx_.stream(r));
      }
    }
    ctx_.synchronize();
  }

  int radius_;
  GpsStepChoice choice_;
  std::uint64_t cells_ = 0;
  std::vector<Slab3D> slab_;
  std::array<gps::Array<float>, 2> arr_;
  bool tracked_ = false;
  std::vector<std::array<bool, 2>> held_;  // [rank][array read]
  std::vector<std::array<std::optional<PublishedPlanes>, 2>> pub_;  // [rank][array read]: of the array stored
  std::vector<StepKind> kind_;             // [rank]
  std::array<std::uint64_t, 2> held_for_{~std::uint64_t{0}, ~std::uint64_t{0}};
};

}  // namespace

std::unique_ptr<FdRun> make_fd_gps_run(gps::Context& ctx, const Problem& p, int radius) {
  return std::make_unique<GpsRun>(ctx, p, radius);
}

}  // namespace gpsm::apps::fd3d
