// CG's gps paradigm, host side (cg_runs.hpp): what a user of the public GPS API writes. The
// residual lives in one GPS array (inline publishing, pages of one chunk of rows); the first
// init() learns the subscriptions by tracking an untimed two-iteration solve, whose SpMV loads
// tell the runtime which pages each GPU reads; each solve is one persistent kernel per GPU
// (cg_gps.cu) with the runtime's device fence. No halo list and no transfer code: the rows a GPU
// needs from its peers arrive because it subscribes to their pages.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/cg/cg_data.hpp"
#include "apps/cg/cg_gps_run_common.hpp"
#include "apps/cg/cg_gps_kernels.hpp"
#include "apps/cg/cg_runs.hpp"
#include "apps/cg/gps_layout.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/traffic.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

using Clock = std::chrono::steady_clock;


class GpsRun final : public CgRun {
 public:
  GpsRun(gps::Context& ctx, const Plan& plan, const Start& start, int iters, QStorage q)
      : ctx_(ctx), plan_(plan), start_(start), iters_(iters), q_(q), page_(gps_page_bytes(plan)) {
    if (ctx.size() != plan.ranks) throw gpsm::Error("gpsm: cg: plan and context differ in GPU count");
    done_at_start_ = iters == 0 || start.rho0 == 0.0 || (start.threshold > 0 && std::sqrt(start.rho0) <= start.threshold);
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);  // visible at the device fence
    o.page_bytes = page_;
    o.name = "cg_r";
    r_ = ctx.alloc<double>(static_cast<std::uint64_t>(plan.n), o);
    const auto n = static_cast<std::size_t>(plan.n);
    d_.resize(static_cast<std::size_t>(plan.ranks));
    const EntryKind kind = entry_kind(plan);
    for (int r = 0; r < plan.ranks; ++r) {
      const RankPlan& p = plan.rank[r];
      Rank& d = d_[r];
      const int dev = ctx.device(r);
      d.ranges = upload_gps_matrix(d, plan, r, dev);
      d.plain.alloc(dev, static_cast<std::size_t>(plan.chunks(r)));
      d.p[0].alloc(dev, n);
      d.p[1].alloc(dev, n);
      d.x.alloc(dev, static_cast<std::size_t>(p.local_rows()));
      d.q.alloc(dev, static_cast<std::size_t>(p.local_rows()));
      d.part[0].alloc(dev, static_cast<std::size_t>(plan.chunks(r)));
      d.part[1].alloc(dev, static_cast<std::size_t>(plan.chunks(r)));
      d.hist.alloc(dev, static_cast<std::size_t>(iters) + 1);
      d.iters.alloc(dev, 1);
      const int most = gps_std_blocks(dev, plan.lanes, kind, plan.rows_per_thread);
      resident_ = r == 0 ? most : std::min(resident_, most);
    }
    for (const bool sole : {false, true})
      ctx.check_coresident(gps_std_kernel(plan.lanes, kind, sole), resident_, kThreads, gps_std_smem(plan.rows_per_thread));
  }

  // Untimed. The first call learns the subscriptions: the initial state, tracking on, a solve of
  // up to two iterations (the first holds every load and store of the pattern), tracking off;
  // then the remote entries of p each GPU forms are the pages of r it now subscribes to.
  void init() override {
    if (!learned_ && !done_at_start_) {
      reset();
      for (int r = 0; r < plan_.ranks; ++r)  // every page but the own rows: all replicas are published to while tracking
        set_pieces(r, {gps::PageRange{0, r_.subscriptions().pages()}});
      ctx_.tracking_start();
      arm(std::min(iters_, 2), true);
      launch();
      ctx_.tracking_stop();
      for (int r = 0; r < plan_.ranks; ++r) set_pieces(r, r_.subscriptions().pages_of(r));
      learned_ = true;
    }
    reset();
    arm(iters_, false);
  }

  double solve() override {
    const auto t0 = Clock::now();
    if (!done_at_start_) launch();
    ctx_.synchronize();
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

  Solve result() override { return gather_gps_solve(ctx_, plan_, iters_, d_); }

  // One more solve of up to two iterations with counting views: what the runtime put on the
  // links for r (inline stores: 32-byte sectors per warp and destination), per iteration, plus the
  // fence's two rounds of a tag word and one double per ordered GPU pair.
  std::optional<double> measured_link_bytes() override {
    if (plan_.ranks == 1) return 0.0;
    if (done_at_start_) return std::nullopt;
    r_.set_counting(true);
    reset();  // its upload and fence are not the solve's traffic: counted from here on
    r_.reset_link_stats();
    const int iters = std::min(iters_, 2);
    arm(iters, false);
    launch();
    ctx_.synchronize();
    const double bytes = static_cast<double>(r_.link_stats().link_bytes);
    r_.set_counting(false);
    std::int32_t it = 0;
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(&it, d_[0].iters.p, sizeof(it), cudaMemcpyDeviceToHost));
    // A solve that stopped before its update published nothing that iteration: count the updates.
    const int updates = std::max(1, it);
    const double pairs = static_cast<double>(plan_.ranks) * (plan_.ranks - 1);
    return bytes / updates + pairs * device_word_bytes(1) * syncs_per_iter(Variant::standard);
  }

  std::string timing() const override {
    std::int64_t chunks = 0;
    for (int r = 0; r < plan_.ranks; ++r) chunks = std::max<std::int64_t>(chunks, plan_.chunks(r));
    return "host wall clock from the persistent GPS kernels' launch to every GPU idle, divided by the iterations run; " +
           q_storage_note(q_, q_slots_, chunks, blocks_);
  }
  bool q_shared() const override { return q_slots_ > 0; }

 private:
  struct Rank {
    DevMatrixBufs m;  // global columns
    DevBuf<std::int32_t> col_range, iters;
    DevBuf<double> p[2], x, q, part[2], hist;
    DevBuf<std::int64_t> piece_begin, piece_end;
    std::int32_t pieces = 0;
    std::int64_t most_items = 0;
    std::vector<std::int32_t> ranges;  // per chunk: the lowest and highest column it reads
    DevBuf<std::uint8_t> plain;        // GpsStd::plain
  };

  // GpsStd::plain for every rank, from the runtime, when r's subscriptions changed since the last
  // time: a chunk runs plain where this rank alone holds every page its column range (its own rows
  // included) covers. False everywhere while tracking (reach says checked).
  void classify() {
    const std::uint64_t version = r_.subscription_version();
    if (classified_at_ == version) return;
    for (int r = 0; r < plan_.ranks; ++r) {
      Rank& d = d_[r];
      std::vector<std::uint8_t> plain(static_cast<std::size_t>(plan_.chunks(r)));
      for (std::size_t c = 0; c < plain.size(); ++c) plain[c] = chunk_interior(d.ranges, static_cast<std::int64_t>(c), r, r_) ? 1 : 0;
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(d.plain.p, plain.data(), plain.size(), cudaMemcpyHostToDevice));
    }
    classified_at_ = version;
  }

  void set_pieces(int r, const std::vector<gps::PageRange>& pages) {
    const Pieces pc = remote_pieces(pages, page_, plan_.n, plan_.rank[r].rows, kThreads);
    Rank& d = d_[r];
    d.piece_begin.assign(ctx_.device(r), pc.begin);
    d.piece_end.assign(ctx_.device(r), pc.end);
    d.pieces = static_cast<std::int32_t>(pc.begin.size());
  }

  // The initial state: r = b in every replica (upload writes them all), p_-1 = 0, and NaN where
  // iteration 0 must write before anything reads (the second p, q): an entry of p that no GPU
  // formed, or a row of r never published to a GPU that reads it, shows in the residual.
  void reset() {
    r_.upload(start_.b);
    const auto n = static_cast<std::size_t>(plan_.n) * sizeof(double);
    std::vector<double> hist(static_cast<std::size_t>(iters_) + 1, std::numeric_limits<double>::quiet_NaN());
    hist[0] = start_.rho0;
    const std::int32_t none = done_at_start_ ? 0 : -1;
    for (int r = 0; r < plan_.ranks; ++r) {
      Rank& d = d_[r];
      const std::size_t rows = static_cast<std::size_t>(plan_.rank[r].local_rows()) * sizeof(double);
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemset(d.p[0].p, 0, n));
      GPSM_CUDA(cudaMemset(d.p[1].p, 0xFF, n));  // all-ones bytes: a NaN in every double
      GPSM_CUDA(cudaMemset(d.x.p, 0, rows));
      GPSM_CUDA(cudaMemset(d.q.p, 0xFF, rows));
      GPSM_CUDA(cudaMemcpy(d.hist.p, hist.data(), hist.size() * sizeof(double), cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemcpy(d.iters.p, &none, sizeof(none), cudaMemcpyHostToDevice));
    }
    ctx_.synchronize();
  }

  // Kernel arguments for a launch of `iters` iterations: views taken now (counting applies to views
  // taken after it is switched on), device fences zeroed, the same block count on every GPU.
  void arm(int iters, bool tracking) {
    if (!tracking) classify();
    std::int64_t items = 1;
    for (int r = 0; r < plan_.ranks; ++r) items = std::max(items, plan_.chunks(r) + d_[r].pieces);
    blocks_ = static_cast<int>(std::min<std::int64_t>(resident_, items));
    // q in shared memory (GPSM_CG_Q=shared) where both kernel variants hold it on every GPU, else
    // nowhere: one configuration for the whole solve. Asked again only when the block count moved.
    if (q_slots_for_ != blocks_) {
      q_slots_ = q_ == QStorage::shared ? 1 << 30 : 0;
      const EntryKind kind = entry_kind(plan_);
      for (int r = 0; r < plan_.ranks && q_slots_ > 0; ++r)
        for (const bool sole : {false, true})
          q_slots_ = std::min(q_slots_, std_q_slots(ctx_.device(r), gps_std_kernel(plan_.lanes, kind, sole, true), q_,
                                                    plan_.chunks(r), blocks_, plan_.rows_per_thread));
      q_slots_for_ = blocks_;
    }
    const std::vector<gps::DeviceFence> f = ctx_.device_fences(blocks_);
    args_.assign(static_cast<std::size_t>(plan_.ranks), GpsStd{});
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankPlan& p = plan_.rank[r];
      Rank& d = d_[r];
      GpsStd& g = args_[r];
      g.a = d.m.view();
      g.a.rows = static_cast<std::int32_t>(p.local_rows());
      g.a.halo = 0;
      g.a.chunks = static_cast<std::int32_t>(plan_.chunks(r));
      g.a.rows_per_thread = plan_.rows_per_thread;
      g.a.lanes = plan_.lanes;
      g.first_row = p.rows.begin;
      g.col_range = d.col_range.p;
      g.r = r_.view(r);
      g.p[0] = d.p[0].p;
      g.p[1] = d.p[1].p;
      g.x = d.x.p;
      g.q = d.q.p;
      g.piece_begin = d.piece_begin.p;
      g.piece_end = d.piece_end.p;
      g.pieces = d.pieces;
      g.part[0] = d.part[0].p;
      g.part[1] = d.part[1].p;
      g.fence = f[r];
      g.hist = d.hist.p;
      g.iterations = d.iters.p;
      g.iters = iters;
      g.rho0 = start_.rho0;
      g.threshold = start_.threshold;
      g.tracking = tracking;
      g.sole = r_.sole(r);  // false while tracking
      g.plain = tracking || g.sole ? nullptr : d.plain.p;
      g.q_slots = q_slots_;
    }
  }

  void launch() {
    for (int r = 0; r < plan_.ranks; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      launch_gps_std(args_[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
  }

  gps::Context& ctx_;
  const Plan& plan_;
  const Start& start_;
  int iters_;
  QStorage q_;
  std::uint64_t page_;
  bool done_at_start_ = false;
  bool learned_ = false;
  std::optional<std::uint64_t> classified_at_;  // r's subscription_version at the last classify()
  gps::Array<double> r_;
  std::vector<Rank> d_;
  std::vector<GpsStd> args_;
  int resident_ = 0, blocks_ = 1;
  int q_slots_ = 0;       // GpsStd::q_slots, every GPU's
  int q_slots_for_ = -1;  // the blocks_ q_slots_ was found for
};

}  // namespace

std::unique_ptr<CgRun> make_gps_run(gps::Context& ctx, const Plan& plan, const Start& start, int iters, QStorage q) {
  return std::make_unique<GpsRun>(ctx, plan, start, iters, q);
}

}  // namespace gpsm::apps::cg
