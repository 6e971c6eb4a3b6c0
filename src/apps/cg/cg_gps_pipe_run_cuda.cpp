// CG's gps_pipe paradigm, host side (cg_runs.hpp): Pipelined CG as a user of the public GPS API
// writes it. w lives in two GPS arrays, one per iteration parity (inline publishing, pages of one
// chunk of rows): two arrays rather than one of 2n so that both parities' pages start at row 0
// (one array's second half would start mid-page unless n is a page multiple, mixing the two
// parities' subscribers in that page) and each parity's subscriptions come from its own loads.
// The first init() learns the subscriptions by tracking an untimed two-iteration solve (iteration
// 0 gathers w[0] and stores w[1], iteration 1 the reverse); then the host asks the runtime
// (Array::reach over each chunk's column range, in both arrays) which chunks read only pages no
// other GPU holds: those run while the dot products travel, the others after the device fence's
// wait. No halo list and no transfer code.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "apps/cg/cg_data.hpp"
#include "apps/cg/cg_gps_run_common.hpp"
#include "apps/cg/cg_gps_pipe_kernels.hpp"
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


class GpsPipeRun final : public CgRun {
 public:
  GpsPipeRun(gps::Context& ctx, const Plan& plan, const Start& start, int iters)
      : ctx_(ctx), plan_(plan), start_(start), iters_(iters), page_(gps_page_bytes(plan)) {
    if (ctx.size() != plan.ranks) throw gpsm::Error("gpsm: cg: plan and context differ in GPU count");
    done_at_start_ = iters == 0 || start.rho0 == 0.0 || (start.threshold > 0 && std::sqrt(start.rho0) <= start.threshold);
    for (int k = 0; k < 2; ++k) {
      gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);  // visible at the device fence
      o.page_bytes = page_;
      o.name = k == 0 ? "cg_w0" : "cg_w1";
      w_[k] = ctx.alloc<double>(static_cast<std::uint64_t>(plan.n), o);
    }
    d_.resize(static_cast<std::size_t>(plan.ranks));
    const EntryKind kind = entry_kind(plan);
    for (int r = 0; r < plan.ranks; ++r) {
      const RankPlan& p = plan.rank[r];
      Rank& d = d_[r];
      const int dev = ctx.device(r);
      d.ranges = upload_gps_matrix(d, plan, r, dev);
      const auto rows = static_cast<std::size_t>(p.local_rows()), chunks = static_cast<std::size_t>(plan.chunks(r));
      for (DevBuf<double>* b : {&d.x, &d.r, &d.z, &d.s, &d.p}) b->alloc(dev, rows);
      d.part.alloc(dev, 2 * chunks);
      d.order.alloc(dev, chunks);
      d.hist.alloc(dev, static_cast<std::size_t>(iters) + 1);
      d.iters.alloc(dev, 1);
      // The initial state's chunk partials, (r0, r0) and (w0, r0), as cpu_free_pipe starts.
      const auto g = chunk_partials(plan, r, start.b, start.b), dl = chunk_partials(plan, r, start.w0, start.b);
      d.part0.resize(2 * chunks);
      for (std::size_t c = 0; c < chunks; ++c) d.part0[2 * c] = g[c], d.part0[2 * c + 1] = dl[c];
      d.r0.assign(start.b.begin() + p.rows.begin, start.b.begin() + p.rows.end);
      const int most = gps_pipe_blocks(dev, plan.lanes, kind, plan.rows_per_thread);
      resident_ = r == 0 ? most : std::min(resident_, most);
    }
    for (const bool sole : {false, true})
      ctx.check_coresident(gps_pipe_kernel(plan.lanes, kind, sole), resident_, kThreads, gps_pipe_smem(plan.rows_per_thread));
  }

  // Untimed. The first call learns the subscriptions (tracking an untimed solve of up to two
  // iterations, every chunk treated as boundary); every call re-derives the chunk order when the
  // subscriptions changed since the last (Array::subscription_version).
  void init() override {
    if (!learned_ && !done_at_start_) {
      reset();
      ctx_.tracking_start();
      arm(std::min(iters_, 2), true);
      launch();
      ctx_.tracking_stop();
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
  // links for w (inline stores), per update, plus the fence's one round per iteration of a tag
  // word and two doubles per ordered GPU pair.
  std::optional<double> measured_link_bytes() override {
    if (plan_.ranks == 1) return 0.0;
    if (done_at_start_) return std::nullopt;
    for (auto& w : w_) w.set_counting(true);
    reset();
    for (auto& w : w_) w.reset_link_stats();
    arm(std::min(iters_, 2), false);
    launch();
    ctx_.synchronize();
    double bytes = 0;
    for (auto& w : w_) {
      bytes += static_cast<double>(w.link_stats().link_bytes);
      w.set_counting(false);
    }
    std::int32_t it = 0;
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(&it, d_[0].iters.p, sizeof(it), cudaMemcpyDeviceToHost));
    const int updates = std::max(1, it);  // iteration i's update runs only when it does not stop
    const double pairs = static_cast<double>(plan_.ranks) * (plan_.ranks - 1);
    return bytes / updates + pairs * device_word_bytes(2) * syncs_per_iter(Variant::pipelined);
  }

  std::string timing() const override {
    return "host wall clock from the persistent GPS kernels' launch to every GPU idle, divided by the iterations run";
  }

 private:
  struct Rank {
    DevMatrixBufs m;  // global columns
    DevBuf<std::int32_t> col_range, order, iters;
    DevBuf<double> x, r, z, s, p, part, hist;
    std::vector<std::int32_t> ranges;  // chunk_column_ranges, host copy
    std::vector<double> part0, r0;
    std::int32_t boundary = 0;
  };

  // Which chunks read only pages no other GPU holds, from the runtime: both parities' arrays
  // must say sole over the chunk's column range. While tracking (reach says checked) or before
  // it, every chunk is boundary: the kernel then takes the fence's wait before any SpMV.
  void classify() {
    const std::uint64_t version[2] = {w_[0].subscription_version(), w_[1].subscription_version()};
    if (classified_ && version[0] == version_[0] && version[1] == version_[1]) return;
    for (int r = 0; r < plan_.ranks; ++r) {
      Rank& d = d_[r];
      const ChunkOrder co =
          interior_first(plan_.chunks(r), [&](std::int64_t c) { return chunk_interior(d.ranges, c, r, w_[0], w_[1]); });
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(d.order.p, co.order.data(), co.order.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
      d.boundary = static_cast<std::int32_t>(co.boundary);
    }
    version_[0] = version[0];
    version_[1] = version[1];
    classified_ = true;
  }

  // The initial state: w[0] = A b and NaN in w[1] in every replica (upload writes them all: a row
  // of w never published to a GPU that reads it shows in the residual), r = b, the rest zero.
  void reset() {
    w_[0].upload(start_.w0);
    w_[1].upload(std::vector<double>(static_cast<std::size_t>(plan_.n), std::numeric_limits<double>::quiet_NaN()));
    std::vector<double> hist(static_cast<std::size_t>(iters_) + 1, std::numeric_limits<double>::quiet_NaN());
    hist[0] = start_.rho0;
    const std::int32_t none = done_at_start_ ? 0 : -1;
    for (int r = 0; r < plan_.ranks; ++r) {
      Rank& d = d_[r];
      const std::size_t rows = static_cast<std::size_t>(plan_.rank[r].local_rows()) * sizeof(double);
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (DevBuf<double>* b : {&d.x, &d.z, &d.s, &d.p}) GPSM_CUDA(cudaMemset(b->p, 0, rows));
      GPSM_CUDA(cudaMemcpy(d.r.p, d.r0.data(), rows, cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemcpy(d.part.p, d.part0.data(), d.part0.size() * sizeof(double), cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemcpy(d.hist.p, hist.data(), hist.size() * sizeof(double), cudaMemcpyHostToDevice));
      GPSM_CUDA(cudaMemcpy(d.iters.p, &none, sizeof(none), cudaMemcpyHostToDevice));
    }
    ctx_.synchronize();
  }

  // Kernel arguments for a launch of `iters` iterations: views taken now (counting applies to
  // views taken after it is switched on), the chunk order for the current subscriptions, device
  // fences zeroed, the same block count on every GPU.
  void arm(int iters, bool tracking) {
    classify();
    std::int64_t items = 1;
    for (int r = 0; r < plan_.ranks; ++r) items = std::max(items, plan_.chunks(r));
    blocks_ = static_cast<int>(std::min<std::int64_t>(resident_, items + 1));  // + the communication block
    if (blocks_ < 2) throw gpsm::Error("gpsm: cg: gps_pipe needs two resident blocks per GPU (a communication block and a worker)");
    const std::vector<gps::DeviceFence> f = ctx_.device_fences(blocks_);
    args_.assign(static_cast<std::size_t>(plan_.ranks), GpsPipe{});
    for (int r = 0; r < plan_.ranks; ++r) {
      const RankPlan& p = plan_.rank[r];
      Rank& d = d_[r];
      GpsPipe& g = args_[r];
      g.a = d.m.view();
      g.a.rows = static_cast<std::int32_t>(p.local_rows());
      g.a.halo = 0;
      g.a.chunks = static_cast<std::int32_t>(plan_.chunks(r));
      g.a.rows_per_thread = plan_.rows_per_thread;
      g.a.lanes = plan_.lanes;
      g.first_row = p.rows.begin;
      g.col_range = d.col_range.p;
      g.w[0] = w_[0].view(r);
      g.w[1] = w_[1].view(r);
      g.x = d.x.p;
      g.r = d.r.p;
      g.z = d.z.p;
      g.s = d.s.p;
      g.p = d.p.p;
      g.order = d.order.p;
      g.boundary_chunks = tracking ? g.a.chunks : d.boundary;
      g.part = d.part.p;
      g.fence = f[r];
      g.hist = d.hist.p;
      g.iterations = d.iters.p;
      g.iters = iters;
      g.threshold = start_.threshold;
      g.tracking = tracking;
      g.sole = w_[0].sole(r) && w_[1].sole(r);  // false while tracking
    }
  }

  void launch() {
    for (int r = 0; r < plan_.ranks; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      launch_gps_pipe(args_[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
  }

  gps::Context& ctx_;
  const Plan& plan_;
  const Start& start_;
  int iters_;
  std::uint64_t page_;
  bool done_at_start_ = false;
  bool learned_ = false;
  bool classified_ = false;
  std::uint64_t version_[2] = {0, 0};  // the arrays' subscription_version at the last classify
  gps::Array<double> w_[2];
  std::vector<Rank> d_;
  std::vector<GpsPipe> args_;
  int resident_ = 0, blocks_ = 1;
};

}  // namespace

std::unique_ptr<CgRun> make_gps_pipe_run(gps::Context& ctx, const Plan& plan, const Start& start, int iters) {
  return std::make_unique<GpsPipeRun>(ctx, plan, start, iters);
}

}  // namespace gpsm::apps::cg
