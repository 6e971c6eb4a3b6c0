// pagerank (`gpsm bench --app pagerank`): pull PageRank over the in-edges, the rank vector
// published each iteration (graph_exchange.hpp: how, per paradigm); verified against the CPU
// reference (graph_refs.hpp) in L1 distance <= 1e-5 after the same number of iterations.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <new>

#include <fmt/format.h>

#include "apps/graph/graph_app.hpp"
#include "apps/graph/graph_proact_plan.hpp"
#include "apps/harness/proact_bench.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/graph/graph_refs.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::graph {
namespace {

constexpr double kL1Bound = 1e-5;

// What PageRank builds from a graph; shared by gpsm bench --isolate's children (reference_cache.hpp).
struct PrGraph {
  graph_io::Csr in;                // in-edges: row v lists u for every edge u -> v
  std::vector<float> inv_deg;      // 1 / outdeg(u)
  friend void ref_fields(RefFields& f, PrGraph& g) {
    f.object(g.in);
    f.array(g.inv_deg);
  }
};

struct PrData : PrGraph {
  std::string key;
  std::map<int, PageRankResult> ref_by_iters;  // fixed-iteration references
  std::map<double, PageRankResult> ref_by_tol;
};

class PrRun final : public GraphRun {
 public:
  PrRun(gps::Context& ctx, Paradigm par, const PrData& d, const Problem& p, int fixed_iters, std::uint64_t proact_chunk)
      : GraphRun(ctx, par, proact_chunk), d_(d), p_(p), fixed_(fixed_iters) {
    const VecLayout l = layout_for(d.in, n_, p.balance_nnz, 1);
    const double mean = d.in.rows > 0 ? static_cast<double>(d.in.nnz()) / static_cast<double>(d.in.rows) : 1;
    lanes_ = lanes_for(mean);
    x_ = &add(exchange(l, 2, "pagerank_rank", rows_per_block(lanes_)));
    const std::vector<float> inv = to_slots(l, d.inv_deg, 0.0f);
    slices_.resize(n_);
    inv_.resize(n_);
    change_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const Slice s = slice_rows(d.in, l.parts[r], l);
      if (par == Paradigm::rdl) remote_ += remote_read_bytes(l, s, r);
      slices_[r].upload(ctx.device(r), s);
      slices_[r].split_long_rows(ctx.device(r), s, lanes_);  // hub rows: row_segments.hpp
      upload_floats(inv_[r], ctx.device(r), inv);
      if (p.tol > 0) change_[r].alloc(ctx.device(r), 1);
    }
  }

  std::vector<float> result() const { return from_slots(x_->layout(), x_->download(done_ % 2)); }

 private:
  void write_initial() override {
    const VecLayout& l = x_->layout();
    x_->upload(0, to_slots(l, std::vector<float>(static_cast<std::size_t>(l.rows()), 1.0f / l.rows()), 0.0f));
    x_->upload(1, std::vector<float>(static_cast<std::size_t>(l.elems()), std::numeric_limits<float>::quiet_NaN()));
    done_ = 0;
  }

  void phase(int it, bool measure) {
    const int c = it & 1;
    const VecLayout& l = x_->layout();
    const float base = (1.0f - kDamping) / static_cast<float>(l.rows());
    for (int r = 0; r < n_; ++r) {
      ev_.begin(r);
      cudaStream_t st = ctx_.stream(r);
      double* change = measure ? change_[r].p : nullptr;
      if (change != nullptr) GPSM_CUDA(cudaMemsetAsync(change, 0, sizeof(double), st));
      const ReadyArg ready = x_->before_kernel(r, 1 - c);
      launch_pagerank(slices_[r].arg(r * l.chunk), x_->arg(r, c), x_->arg(r, 1 - c), inv_[r].p, base, kDamping, change,
                      lanes_, st, ready);
      x_->after_kernel(r, 1 - c);
      ev_.end(r);
    }
    x_->after_phase(1 - c);
    ev_.next();
  }

  double total_change() {
    ctx_.synchronize();
    double sum = 0;
    for (int r = 0; r < n_; ++r) {
      double v = 0;
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(&v, change_[r].p, sizeof(double), cudaMemcpyDeviceToHost));
      sum += v;
    }
    return sum;
  }

  // Tolerance mode: each iteration computes and reads back its total change. The elided bound
  // (fixed_ > 0) runs exactly fixed_ iterations and does the same (its answer ignored: with
  // transfers elided it means nothing), so it does every paradigm's work per iteration.
  int solve() override {
    const bool tol = p_.tol > 0;
    const int iters = fixed_ > 0 ? fixed_ : p_.iters;
    for (int it = 0; it < iters; ++it) {
      phase(it, tol);
      done_ = it + 1;
      const double change = tol ? total_change() : 0;
      if (tol && fixed_ == 0 && change <= p_.tol) break;
    }
    ctx_.synchronize();
    return done_;
  }

  void iterate_untimed(int n) override {
    for (int k = 0; k < n; ++k) phase(done_++, false);
    ctx_.synchronize();
  }

  double extra_bytes() const override { return remote_; }

  const PrData& d_;
  Problem p_;
  int fixed_;  // > 0: run exactly this many iterations (the elided bound in tolerance mode)
  Exchange* x_ = nullptr;
  std::vector<DeviceSlice> slices_;
  std::vector<DevBuf<float>> inv_;
  std::vector<DevBuf<double>> change_;
  int lanes_ = 1;
  int done_ = 0;
  double remote_ = 0;
};

class PageRankApp final : public App {
 public:
  const char* name() const override { return "pagerank"; }
  const char* description() const override {
    return "PageRank, pull over in-edges (CSR of the transpose), d = 0.85, float ranks published each iteration; "
           "fixed iterations or @tol=X";
  }
  std::string default_sizes() const override { return "rmat:20,rmat:23"; }
  Problem problem(const std::string& size, int iters) const override { return graph_problem(size, iters, 20); }
  double host_bytes(const Problem& p) const override { return graph_problem_host_bytes(p); }
  bool has(Paradigm p) const override { return graph_has(p); }
  bool proact_chunk_is_choice() const override { return true; }  // whole kernel blocks of any count
  RunOutcome run(const RunRequest& req) override;

 private:
  PrData& data(const Problem& p, const RunRequest& req) {
    const GraphSpec s = parse_graph_spec(p.graph);
    const std::string key = fmt::format("{}#{}", s.base(), p.seed);
    if (!d_ || d_->key != key) {
      d_.reset();  // one graph at a time: the large ones take tens of GB of host memory
      auto d = std::make_unique<PrData>();
      d->key = key;
      auto build = [&] {
        if (req.progress) req.progress("graph " + s.base());
        const graph_io::Csr g = build_square_graph(s, false, p.seed, "pagerank");
        PrGraph b;
        b.inv_deg = inverse_out_degree(g);
        b.in = graph_io::transpose(g);
        return b;
      };
      static_cast<PrGraph&>(*d) = cached_reference<PrGraph>(req.references, "pagerank/graph/" + key, build, req.progress);
      d_ = std::move(d);
    }
    return *d_;
  }
  std::unique_ptr<PrData> d_;
};

RunOutcome PageRankApp::run(const RunRequest& req) {
  return guarded_graph_run(req, name(), [&] {
    RunOutcome out;
    const Problem& p = req.problem;
    const int n = static_cast<int>(req.devices.size());
    const bool elided = req.paradigm == Paradigm::infinite && n > 1;
    PrData& d = data(p, req);
    auto ref_for = [&](int iters) -> const PageRankResult& {
      auto it = d.ref_by_iters.find(iters);
      if (it == d.ref_by_iters.end()) {
        auto compute = [&] {
          if (req.progress) req.progress(fmt::format("CPU reference, {} iterations", iters));
          return pagerank_reference(d.in, d.inv_deg, iters, 0);
        };
        it = d.ref_by_iters
                 .emplace(iters, cached_reference<PageRankResult>(
                                     req.references, fmt::format("pagerank/{}/iters:{}", d.key, iters), compute, req.progress))
                 .first;
      }
      return it->second;
    };
    int stop_iters = p.iters;  // where the reference stops
    if (p.tol > 0) {
      auto it = d.ref_by_tol.find(p.tol);
      if (it == d.ref_by_tol.end()) {
        auto compute = [&] {
          if (req.progress) req.progress(fmt::format("CPU reference, tolerance {}", p.tol));
          return pagerank_reference(d.in, d.inv_deg, p.iters, p.tol);
        };
        it = d.ref_by_tol
                 .emplace(p.tol, cached_reference<PageRankResult>(
                                     req.references, fmt::format("pagerank/{}/tol:{}:{}", d.key, p.tol, p.iters),
                                     compute, req.progress))
                 .first;
      }
      stop_iters = it->second.iterations;
    }
    gps::Context ctx(req.devices, gps::Settings::from_env());
    // proact's cache key size: the rank vector's bytes (one float per vertex)
    const std::uint64_t key_size = static_cast<std::uint64_t>(d.in.rows) * sizeof(float);
    const ProactChunk chunk = graph_proact_chunk(req, key_size);
    PrRun run(ctx, proact_runs_as(req.paradigm, chunk.agent), d, p, elided && p.tol > 0 ? stop_iters : 0, chunk.bytes);
    out = timed_graph_run(run, req, [&](RunOutcome& o) -> std::string {
      o.tolerance = elided ? std::numeric_limits<double>::infinity() : kL1Bound;
      if (p.tol > 0 && std::abs(o.iterations - stop_iters) > 1)
        return fmt::format("ran {} iterations to tolerance {}, the CPU reference {}", o.iterations, p.tol, stop_iters);
      if (p.tol == 0 && o.iterations != p.iters)
        return fmt::format("ran {} iterations, {} requested", o.iterations, p.iters);
      o.error = l1_distance(run.result(), ref_for(o.iterations).rank);
      if (!elided && !(o.error <= kL1Bound))
        return fmt::format("verification failed: L1 distance to the CPU reference {:.3e} (bound {:.0e})", o.error,
                           kL1Bound);
      return "";
    });
    note_proact(out, req, chunk, key_size, run);
    if (out.status == RunStatus::ok)
      out.timing = std::string("host wall clock of the iteration loop") +
                   (p.tol > 0 ? ", the per-iteration read of the L1 change included" : "") +
                   (req.paradigm == Paradigm::gps || req.paradigm == Paradigm::gps_all ? ", a GPS fence per iteration" : "") +
                   " (graph, setup, tracking and verification excluded), divided by its iterations" +
                   exchange_timing_note(req, chunk) + (elided ? "; transfers elided, result not checked" : "");
    return out;
  });
}

}  // namespace

std::unique_ptr<App> make_pagerank_app() { return std::make_unique<PageRankApp>(); }

}  // namespace gpsm::apps::graph
