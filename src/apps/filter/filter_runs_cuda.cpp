// The image filter's paradigms (filter_runs.hpp). Every pass reads buffer `it % 2` and writes the
// other; rank r's pass of iteration it waits for its neighbours' pass it - 1 (the rows it reads
// were written then, and the rows it writes were read then), through two events per rank by
// iteration parity, as jacobi2d's host loop orders its sweeps; gps orders them by fence_async.
#include "apps/filter/filter_runs.hpp"

#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "apps/filter/filter_gps_rows.hpp"
#include "apps/filter/filter_kernels.hpp"
#include "apps/filter/filter_plan.hpp"
#include "apps/filter/filter_slab.hpp"
#include "apps/harness/context_graph.hpp"
#include "apps/harness/loop_launch.hpp"
#include "apps/stencil/row_pages.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "common/fork_join.hpp"
#include "common/multi_gpu_graph.hpp"
#include "gpsm/distributed_array.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::filter {
namespace {

using Clock = std::chrono::steady_clock;

// Where each rank's kernels read the weights (WeightsAt). replicated and remote are distributed
// arrays of the runtime: replicated, a copy on every GPU (DistributedOptions::replicate); remote,
// one block owned by rank 0 that every GPU's view reaches over the link.
class WeightSet {
 public:
  WeightSet(gps::Context& ctx, const FilterJob& j) : at_(j.at), k_(j.k) {
    if (at_ == WeightsAt::constant) {
      for (int r = 0; r < ctx.size(); ++r) {
        GPSM_CUDA(cudaSetDevice(ctx.device(r)));
        set_constant_weights(j.weights);
      }
      return;
    }
    DistributedOptions o;
    o.name = "filter_weights";
    o.replicate = at_ == WeightsAt::replicated;
    w_ = ctx.alloc_distributed<float>(blocks::contiguous(j.weights.size(), 1), o);
    w_.upload(j.weights);
    for (int r = 0; r < ctx.size(); ++r) ptr_.push_back(w_.view(r).data());  // one block: element t at data()[t]
  }
  KernelWeights of(int r) const { return {at_ == WeightsAt::constant ? nullptr : ptr_[r], k_}; }

 private:
  WeightsAt at_;
  int k_;
  DistributedArray<float> w_;
  std::vector<const float*> ptr_;
};

// Halo rows crossing between GPUs per pass: each rank's rows above and below from its neighbours.
double halo_bytes(const std::vector<FilterSlab>& s, std::int64_t width) {
  double rows = 0;
  for (const FilterSlab& x : s) rows += static_cast<double>(x.above + x.below);
  return s.size() > 1 ? rows * static_cast<double>(width) * sizeof(float) : 0.0;
}

// The host loop of the event-ordered paradigms; subclasses issue rank r's pass of iteration it
// (and anything after it on the same stream that the neighbours' next pass needs).
class NeighbourLoop : public FilterRun {
 public:
  NeighbourLoop(gps::Context& ctx, const FilterJob& j)
      : ctx_(ctx), n_(ctx.size()), w_(j.input->width), h_(j.input->height), k_(j.k), job_(j), weights_(ctx, j) {
    if (const std::string why = split_problem(h_, k_, n_); !why.empty()) throw gpsm::Error("gpsm: filter: " + why);
    ev_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      slab_.push_back(filter_slab(h_, k_, n_, r));
      GPSM_CUDA(cudaSetDevice(ctx.device(r)));
      for (auto& e : ev_[r]) GPSM_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
  }
  ~NeighbourLoop() override {
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      for (auto& e : ev_[r]) cudaEventDestroy(e);
    }
  }
  double solve(int iters) override {
    const auto t0 = Clock::now();
    for (int it = 0; it < iters; ++it) {
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        cudaStream_t st = ctx_.stream(r);
        if (it > 0)
          for (int nb : {slab_[r].top, slab_[r].bottom})
            if (nb >= 0) GPSM_CUDA(cudaStreamWaitEvent(st, ev_[nb][(it - 1) & 1], 0));
        pass(r, it, st);
        GPSM_CUDA(cudaEventRecord(ev_[r][it & 1], st));
      }
    }
    ctx_.synchronize();
    last_ = iters;
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }

 protected:
  virtual void pass(int r, int it, cudaStream_t st) = 0;

  gps::Context& ctx_;
  int n_;
  std::int64_t w_, h_;
  int k_;
  FilterJob job_;
  WeightSet weights_;
  std::vector<FilterSlab> slab_;
  std::vector<std::array<cudaEvent_t, 2>> ev_;
  int last_ = 0;  // passes of the last solve: the result is in buffer last_ % 2
};

// single, memcpy, p2p_inline, infinite: each rank's rows and halo rows in local buffers.
class SlabRun final : public NeighbourLoop {
 public:
  SlabRun(gps::Context& ctx, Paradigm par, const FilterJob& j) : NeighbourLoop(ctx, j), par_(par) {
    if (par == Paradigm::single && n_ != 1) throw gpsm::Error("gpsm: filter: single runs on one GPU");
    buf_.resize(n_);
    for (int r = 0; r < n_; ++r)
      for (auto& b : buf_[r]) b.alloc(ctx.device(r), static_cast<std::size_t>(slab_[r].local_rows() * w_));
  }
  // Halo rows start as NaN where a paradigm must fill them (a halo never written fails the
  // check); infinite never fills them, so zeros there keep its arithmetic ordinary.
  void init() override {
    const int fill = par_ == Paradigm::infinite ? 0 : 0xff;
    for (int r = 0; r < n_; ++r) {
      const FilterSlab& s = slab_[r];
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (auto& b : buf_[r]) GPSM_CUDA(cudaMemset(b.p, fill, static_cast<std::size_t>(s.local_rows() * w_) * sizeof(float)));
      const std::int64_t g0 = s.first - s.above, rows = s.above + s.rows + s.below;
      GPSM_CUDA(cudaMemcpy(buf_[r][0].p + s.local_row(g0) * w_, job_.input->px.data() + g0 * w_,
                           static_cast<std::size_t>(rows * w_) * sizeof(float), cudaMemcpyHostToDevice));
    }
    ctx_.synchronize();
  }
  Image gather() override {
    Image im{w_, h_, std::vector<float>(static_cast<std::size_t>(w_ * h_))};
    for (int r = 0; r < n_; ++r) {
      const FilterSlab& s = slab_[r];
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(im.px.data() + s.first * w_, buf_[r][last_ % 2].p + s.halo * w_,
                           static_cast<std::size_t>(s.rows * w_) * sizeof(float), cudaMemcpyDeviceToHost));
    }
    return im;
  }
  double link_bytes_per_iter() const override {
    return par_ == Paradigm::infinite ? 0.0 : halo_bytes(slab_, w_);
  }
  std::string timing() const override {
    std::string t = NeighbourLoop::timing();
    if (par_ == Paradigm::infinite && n_ > 1) t += "; halo transfers elided (the memcpy run without its copies)";
    return t;
  }

 protected:
  void pass(int r, int it, cudaStream_t st) override {
    const int src = it & 1, dst = 1 - src;
    std::vector<float*> out_of(static_cast<std::size_t>(n_));
    for (int q = 0; q < n_; ++q) out_of[q] = buf_[q][dst].p;
    launch_local_pass(local_pass_of(slab_, r, w_, h_, buf_[r][src].p, buf_[r][dst].p, out_of, par_ == Paradigm::p2p_inline),
                      weights_.of(r), st);
    if (par_ != Paradigm::memcpy) return;
    // memcpy: my first and last rows to the neighbours' halos by copy engine, after the pass.
    for (const HaloSend& h : halo_sends(slab_, r))
      GPSM_CUDA(cudaMemcpyPeerAsync(buf_[h.to][dst].p + slab_[h.to].local_row(h.first_row) * w_, ctx_.device(h.to),
                                    buf_[r][dst].p + slab_[r].local_row(h.first_row) * w_, ctx_.device(r),
                                    static_cast<std::size_t>(h.rows * w_) * sizeof(float), st));
  }

 private:
  Paradigm par_;
  std::vector<std::array<DevBuf<float>, 2>> buf_;
};

// um: both images in one managed allocation, no hints: each GPU's pass reads and writes the image
// by its row-major index and the driver migrates the pages it touches.
class UmRun final : public NeighbourLoop {
 public:
  UmRun(gps::Context& ctx, const FilterJob& j) : NeighbourLoop(ctx, j) {
    GPSM_CUDA(cudaSetDevice(ctx.device(0)));
    GPSM_CUDA(cudaMallocManaged(&img_, 2 * bytes()));
  }
  ~UmRun() override { cudaFree(img_); }
  void init() override {
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(img_, job_.input->px.data(), bytes(), cudaMemcpyHostToDevice));
    GPSM_CUDA(cudaMemset(img_ + w_ * h_, 0xff, bytes()));
    ctx_.synchronize();
  }
  Image gather() override {
    Image im{w_, h_, std::vector<float>(static_cast<std::size_t>(w_ * h_))};
    GPSM_CUDA(cudaMemcpy(im.px.data(), img_ + (last_ % 2) * w_ * h_, bytes(), cudaMemcpyDeviceToHost));
    return im;
  }
  double link_bytes_per_iter() const override { return -1; }  // page migrations: not known
  std::string timing() const override {
    return NeighbourLoop::timing() + "; pages migrate on demand, first touches inside the timed passes";
  }

 protected:
  void pass(int r, int it, cudaStream_t st) override {
    LocalPass a;
    a.in = img_ + (it & 1) * w_ * h_;
    a.out = img_ + (1 - (it & 1)) * w_ * h_;
    a.width = w_;
    a.height = h_;
    a.row_base = 0;
    a.y0 = slab_[r].first;
    a.y1 = slab_[r].first + slab_[r].rows;
    launch_local_pass(a, weights_.of(r), st);
  }

 private:
  std::size_t bytes() const { return static_cast<std::size_t>(w_ * h_) * sizeof(float); }
  float* img_ = nullptr;
};

// rdl: both images distributed arrays split in row slabs (GPU-SM): one pointer, each GPU's pass
// loads its halo rows straight from the neighbour's memory.
class DistributedRun final : public NeighbourLoop {
 public:
  DistributedRun(gps::Context& ctx, const FilterJob& j) : NeighbourLoop(ctx, j) {
    const Extents e{static_cast<std::uint64_t>(w_), static_cast<std::uint64_t>(h_), 1};
    for (int b = 0; b < 2; ++b) {
      DistributedOptions o;
      o.name = b == 0 ? "filter_a" : "filter_b";
      img_[b] = ctx.alloc_distributed<float>(blocks::along(e, Axis::y, n_), o);
    }
    // The slabs the passes compute must be the array's blocks (one even split for both).
    for (int r = 0; r < n_; ++r)
      if (img_[0].map().owner(static_cast<std::uint64_t>(slab_[r].first * w_)) != r)
        throw gpsm::Error(fmt::format("gpsm: filter: row {} is not owned by rank {} in the distributed array; the "
                                      "slab split and blocks::along disagree", slab_[r].first, r));
  }
  void init() override {
    img_[0].upload(job_.input->px);
    ctx_.synchronize();
  }
  Image gather() override { return Image{w_, h_, img_[last_ % 2].download()}; }
  double link_bytes_per_iter() const override { return halo_bytes(slab_, w_); }
  std::string timing() const override {
    return NeighbourLoop::timing() + "; link bytes: the halo rows, each loaded remotely (caches may serve repeats)";
  }

 protected:
  void pass(int r, int it, cudaStream_t st) override {
    const DistributedPass a = distributed_pass_of(img_[it & 1].view(r), img_[1 - (it & 1)].view(r), w_, h_, slab_[r].first,
                                                  slab_[r].first + slab_[r].rows, img_[0].map().lookup());
    launch_distributed_pass(a, weights_.of(r), st);
  }

 private:
  std::array<DistributedArray<float>, 2> img_;
};

// gps: both images GPS arrays (inline publish), the subscriptions learned by tracking two passes;
// passes ordered across GPUs by fence_async. Once learned, each rank's rows are split on the host
// by what the runtime says of their pages (split_rows, Array::reach): the slab's interior runs the
// plain pass on the replicas, the rows a neighbour reads the GPS pass, on a side stream beside it.
class GpsRun final : public FilterRun {
 public:
  GpsRun(gps::Context& ctx, const FilterJob& j)
      : ctx_(ctx), n_(ctx.size()), w_(j.input->width), h_(j.input->height), job_(j), weights_(ctx, j) {
    if (const std::string why = split_problem(h_, j.k, n_); !why.empty()) throw gpsm::Error("gpsm: filter: " + why);
    gps::AllocOptions o = gps::with_mode(gps::PublishMode::inline_store);
    o.page_bytes = gps_page_for_rows(w_);
    for (int b = 0; b < 2; ++b) {
      o.name = b == 0 ? "filter_a" : "filter_b";
      img_[b] = ctx.alloc<float>(static_cast<std::uint64_t>(w_ * h_), o);
    }
    for (int r = 0; r < n_; ++r) slab_.push_back(filter_slab(h_, j.k, n_, r));
    split_.resize(n_);
    for (int r = 0; r < n_; ++r) side_.emplace_back(ctx.device(r));
  }
  void init() override {
    if (!tracked_) {  // each GPU subscribes to the pages its passes touch, in both images
      img_[0].upload(job_.input->px);
      ctx_.tracking_start();
      passes(2);
      ctx_.tracking_stop();
      tracked_ = true;
    }
    img_[0].upload(job_.input->px);
    ctx_.fence();
  }
  // On several GPUs the passes run as one CUDA graph (GPSM_HOST_LOOP, apps/harness/loop_launch.hpp),
  // captured again when the pass count or the subscriptions change: a pass enqueues a fork, two
  // GPS launches, a plain one, a join and a fence per GPU, and on 4 GPUs at 4096^2 the host's
  // 50-odd runtime calls per pass took longer than the kernels (gps 64.5 us per pass against the
  // hand-written paradigms' 35, b73a08d on 4xH200).
  double solve(int iters) override {
    const bool graph = launch_ == LoopLaunch::graph && n_ > 1 && iters > 0;
    if (graph) {
      const std::array<std::uint64_t, 2> v{img_[0].subscription_version(), img_[1].subscription_version()};
      if (!graph_) graph_ = context_graph(ctx_);
      if (!graph_->captured() || graph_iters_ != iters || graph_for_ != v) {
        graph_->capture([&] { passes(iters); });  // untimed, like the rest of setup
        ctx_.synchronize();
        graph_iters_ = iters;
        graph_for_ = v;
      }
    }
    const auto t0 = Clock::now();
    if (graph)
      graph_->launch();
    else
      passes(iters);
    ctx_.synchronize();
    last_ = iters;
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
  Image gather() override {
    ctx_.fence();
    return Image{w_, h_, img_[last_ % 2].coherent()};
  }
  double link_bytes_per_iter() const override { return -1; }  // the pages' publishes: not counted here
  std::string timing() const override {
    return std::string("host wall clock of the passes") +
           (launch_ == LoopLaunch::graph && n_ > 1 ? " (one launch of a CUDA graph of every pass on every GPU, captured "
                                                     "untimed)"
                                                   : "") +
           " (setup and tracking excluded), fence_async between passes, every GPU idle at the end, divided by the passes";
  }

 private:
  void passes(int iters) {
    for (int it = 0; it < iters; ++it) {
      for (int r = 0; r < n_; ++r) {
        GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
        const gps::Array<float>& in = img_[it & 1];
        const gps::Array<float>& out = img_[1 - (it & 1)];
        const std::int64_t y0 = slab_[r].first, y1 = slab_[r].first + slab_[r].rows;
        // This GPU alone holds both images (one GPU): every access is to its replica and nothing
        // is published, so the plain kernel runs on it, with no span or mask.
        if (in.sole(r) && out.sole(r)) {
          plain_pass(r, in, out, y0, y1, ctx_.stream(r));
          continue;
        }
        const RowSplit sp = rows_of(r, it & 1);
        if (sp.plain_lo >= sp.plain_hi) {  // tracking, or no plain row: every row through the GPS pass
          gps_pass(r, in, out, y0, y1, ctx_.stream(r));
          continue;
        }
        // The published rows on the side stream (forked, joined), the plain band beside them.
        const cudaStream_t side = side_[r].fork(ctx_.stream(r));
        gps_pass(r, in, out, y0, sp.plain_lo, side);
        gps_pass(r, in, out, sp.plain_hi, y1, side);
        plain_pass(r, in, out, sp.plain_lo, sp.plain_hi, ctx_.stream(r));
        side_[r].join(ctx_.stream(r));
      }
      ctx_.fence_async();
    }
  }
  void plain_pass(int r, const gps::Array<float>& in, const gps::Array<float>& out, std::int64_t y0, std::int64_t y1,
                  cudaStream_t st) {
    LocalPass a;
    a.in = in.view(r).local();
    a.out = out.view(r).local();
    a.width = w_;
    a.height = h_;
    a.y0 = y0;
    a.y1 = y1;
    launch_local_pass(a, weights_.of(r), st);
  }
  void gps_pass(int r, const gps::Array<float>& in, const gps::Array<float>& out, std::int64_t y0, std::int64_t y1,
                cudaStream_t st) {
    GpsPass a;
    a.in = in.view(r);
    a.out = out.view(r);
    a.width = w_;
    a.height = h_;
    a.y0 = y0;
    a.y1 = y1;
    launch_gps_pass(a, weights_.of(r), st);
  }
  // Rank r's split of its rows for the passes reading img_[c], made again when either image's
  // subscriptions changed; none while tracking, whose views must see every access.
  RowSplit rows_of(int r, int c) {
    const std::int64_t y0 = slab_[r].first, y1 = slab_[r].first + slab_[r].rows;
    if (ctx_.tracking()) return {y1, y1};
    Split& s = split_[r][c];
    const std::array<std::uint64_t, 2> v{img_[0].subscription_version(), img_[1].subscription_version()};
    if (s.for_versions != v) {
      const auto reach = [&](const gps::Array<float>& a) {
        return [&a, r, this](std::int64_t lo, std::int64_t hi) {
          return a.reach(static_cast<std::uint64_t>(lo * w_), static_cast<std::uint64_t>((hi - lo) * w_), r);
        };
      };
      s.rows = split_rows(y0, y1, job_.k / 2, h_, reach(img_[c]), reach(img_[1 - c]));
      s.for_versions = v;
    }
    return s.rows;
  }

  gps::Context& ctx_;
  int n_;
  std::int64_t w_, h_;
  FilterJob job_;
  WeightSet weights_;
  std::vector<FilterSlab> slab_;
  std::array<gps::Array<float>, 2> img_;
  bool tracked_ = false;
  struct Split {
    RowSplit rows;
    std::array<std::uint64_t, 2> for_versions{~std::uint64_t{0}, ~std::uint64_t{0}};
  };
  std::vector<std::array<Split, 2>> split_;  // [rank][parity]
  std::vector<ForkJoin> side_;  // per rank: the published rows' stream beside the plain band
  int last_ = 0;
  LoopLaunch launch_ = loop_launch_from_env();
  std::unique_ptr<MultiGpuGraph> graph_;  // the timed passes, for graph_iters_ and subscriptions graph_for_
  int graph_iters_ = -1;
  std::array<std::uint64_t, 2> graph_for_{};
};

}  // namespace

bool filter_has(Paradigm p) {
  switch (p) {
    case Paradigm::single:
    case Paradigm::memcpy:
    case Paradigm::um:
    case Paradigm::p2p_inline:
    case Paradigm::rdl:
    case Paradigm::gps:
    case Paradigm::infinite:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<FilterRun> make_filter_run(gps::Context& ctx, Paradigm par, const FilterJob& job) {
  switch (par) {
    case Paradigm::single:
    case Paradigm::memcpy:
    case Paradigm::p2p_inline:
    case Paradigm::infinite: return std::make_unique<SlabRun>(ctx, par, job);
    case Paradigm::um: return std::make_unique<UmRun>(ctx, job);
    case Paradigm::rdl: return std::make_unique<DistributedRun>(ctx, job);
    case Paradigm::gps: return std::make_unique<GpsRun>(ctx, job);
    default: break;
  }
  throw gpsm::Error(std::string("gpsm: filter: the ") + paradigm_name(par) + " paradigm is not implemented for filter; "
                    "use single, memcpy, um, p2p_inline, rdl, gps or infinite");
}

}  // namespace gpsm::apps::filter
