// heat3d and wave3d (`gpsm bench --app heat3d|wave3d`): 3D stencils on slabs along one axis, on
// every paradigm this file implements, timed with the host wall clock around the iteration loop,
// verified against the CPU reference (apps/stencil/reference.hpp) bit for bit. Buffers and their
// initial values: stencil3d_slabs.hpp; um, um_hints, rdl, gps, nccl and proact live in their own
// files (stencil3d_paradigms.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/harness/app.hpp"
#include "apps/harness/memory_estimate.hpp"
#include "apps/harness/proact_bench.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/stencil/nvshmem_launch.hpp"
#include "common/dev_buf.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/reference.hpp"
#include "apps/stencil3d/stencil3d_host_loop.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/stencil3d/stencil3d_halo_copies.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "apps/stencil/iter_sync_states.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps {
namespace {

using stencil3d::box_of;
using stencil3d::dim_of;
using stencil3d::Kind;
using stencil3d::Slabs;
using stencil3d::stride;
using stencil3d::Timing;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

const char* app_name(Kind k) { return k == Kind::heat ? "heat3d" : "wave3d"; }

// Largest extent --size takes: far beyond any GPU's memory as a cube, and small enough that cell
// counts and indices stay well inside 64 bits.
constexpr std::int64_t kMaxExtent = 999999;

// "N" (a cube) or "NXxNYxNZ"; false when the text is neither or an extent exceeds kMaxExtent.
// Digits only, so "12.5" or "-3" cannot pass as a prefix.
bool parse_extents(const std::string& size, std::int64_t n[3]) {
  std::vector<std::string> parts{""};
  for (char ch : size) {
    if (ch == 'x')
      parts.emplace_back();
    else if (ch >= '0' && ch <= '9' && parts.back().size() < 7)
      parts.back() += ch;
    else
      return false;
  }
  if (parts.size() != 1 && parts.size() != 3) return false;
  for (const auto& s : parts)
    if (s.empty()) return false;
  for (int d = 0; d < 3; ++d) n[d] = std::stoll(parts[parts.size() == 1 ? 0 : d]);
  return std::max({n[0], n[1], n[2]}) <= kMaxExtent;
}

// Host-driven paradigms: single, memcpy, p2p_inline: one kernel per rank and iteration, each
// rank waiting for its neighbours' previous iteration (stencil3d::HostLoop).
class SlabRun final : public stencil3d::HostLoop {
 public:
  SlabRun(gps::Context& ctx, Kind kind, const Problem& p, Paradigm par, bool elide = false)
      : HostLoop(ctx, p, true),
        slabs_(ctx, kind, p),
        kind_(kind),
        par_(par),
        elide_(elide),
        copies_(ctx, slabs_, par == Paradigm::memcpy) {
    if (elide_ && par_ != Paradigm::p2p_inline) throw gpsm::Error("gpsm: only p2p_inline's host loop runs elided");
    scratch_.resize(n_);
    for (int r = 0; r < n_; ++r)
      if (elide_)
        for (auto& s : scratch_[r]) s.alloc(ctx.device(r), slabs_.scratch_cells(r));
  }

  // Elided halos are never filled: they keep plausible values, not poison.
  void init() override { slabs_.init(!elide_); }
  std::vector<float> gather() const override { return slabs_.gather(p_.iters % 2); }

  // memcpy copies whole planes (the other axes' boundary cells included); p2p_inline's kernel
  // stores only the cells it updates.
  double link_bytes_per_iter() override { return elide_ ? 0 : slabs_.halo_bytes(par_ == Paradigm::memcpy); }

 private:
  bool graph_ok() const override { return true; }  // kernels and peer copies only
  bool linked() const { return n_ > 1; }
  void before_step(int r, int it) override { copies_.before_step(r, it, ctx_.stream(r)); }
  void after_step(int r, int it) override { copies_.after_step(r, it, ctx_.stream(r)); }

  void step(int r, int it) override {
    const int c = it & 1;
    const Slab3D& s = slabs_.slab(r);
    stencil3d::Step k;
    k.in = slabs_.buf(r, c);
    k.out = slabs_.buf(r, 1 - c);
    k.box = box_of(s);
    if (par_ == Paradigm::p2p_inline && linked()) {
      if (s.has_lower()) k.lower = elide_ ? slabs_.to_scratch(r, 0, scratch_[r][0].p) : slabs_.push_to(r, r - 1, 1 - c);
      if (s.has_upper()) k.upper = elide_ ? slabs_.to_scratch(r, 1, scratch_[r][1].p) : slabs_.push_to(r, r + 1, 1 - c);
    }
    stencil3d::launch_step(kind_, k, ctx_.stream(r));
  }

  Slabs slabs_;
  Kind kind_;
  Paradigm par_;
  bool elide_;
  stencil3d::HaloCopies copies_;  // memcpy's copies (stencil3d_halo_copies.hpp)
  std::vector<std::array<DevBuf<float>, 2>> scratch_;                  // [rank][side]: elided pushes land here
};

// cpu_free: one persistent cooperative kernel per GPU for the whole run (stencil3d_kernels.hpp):
// boundary planes go to the neighbours' halos by peer stores, computed first; every iteration
// ends in IterSync (apps/stencil/iter_sync.hpp), no grid barrier.
// elide (one of the two runs of the `infinite` bound on more than one GPU): the same kernel,
// iteration sync included, with the boundary planes stored to scratch planes on the sending GPU
// instead of the neighbours: every transfer between GPUs costs nothing, the result is not a result.
class CpuFreeRun {
 public:
  CpuFreeRun(gps::Context& ctx, Kind kind, const Problem& p, bool elide)
      : ctx_(ctx), slabs_(ctx, kind, p), kind_(kind), p_(p), n_(ctx.size()), elide_(elide), sync_(ctx) {
    done_.resize(n_);
    scratch_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const int dev = ctx.device(r);
      done_[r].alloc(dev, 1);
      if (elide_)
        for (auto& s : scratch_[r]) s.alloc(dev, slabs_.scratch_cells(r));
      GPSM_CUDA(cudaSetDevice(dev));
      const int b = stencil3d::cpu_free_blocks(kind, dev);
      blocks_ = r == 0 ? b : std::min(blocks_, b);
    }
    args_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const Slab3D& s = slabs_.slab(r);
      auto& c = args_[r];
      for (int b = 0; b < 2; ++b) {
        c.buf[b] = slabs_.buf(r, b);
        if (s.has_lower()) c.lower[b] = elide_ ? slabs_.to_scratch(r, 0, scratch_[r][0].p) : slabs_.push_to(r, r - 1, b);
        if (s.has_upper()) c.upper[b] = elide_ ? slabs_.to_scratch(r, 1, scratch_[r][1].p) : slabs_.push_to(r, r + 1, b);
      }
      c.peer = !elide_;
      c.box = box_of(s);
      c.sync = sync_.handle(r, static_cast<unsigned>(blocks_), ctx_.wait_policy(r));
      c.iters = p_.iters;
      c.done = done_[r].p;
    }
    // Ranks may take different variants (float4 or not: along x, the local row lengths differ).
    for (int r = 0; r < n_; ++r)
      ctx.check_coresident(stencil3d::cpu_free_kernel(kind_, args_[r]), blocks_, stencil3d::kCpuFreeThreads, 0);
  }

  // Elided halos are never filled: they keep plausible values, not poison.
  void init() {
    slabs_.init(!elide_);
    sync_.reset();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemset(done_[r].p, 0, sizeof(int)));
    }
    ctx_.synchronize();
  }

  Timing solve() {
    const auto t0 = Clock::now();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      stencil3d::launch_cpu_free(kind_, args_[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
    const double sec = seconds_since(t0);
    return Timing{sec, iterations_run()};
  }

  std::vector<float> gather() const { return slabs_.gather(p_.iters % 2); }
  // The kernel stores only the cells it updates, plus one tagged 8-byte word per ordered GPU pair
  // per iteration (IterSync: the last block of each GPU to arrive writes it into every GPU).
  double link_bytes_per_iter() const {
    const double words = static_cast<double>(n_) * (n_ - 1) * sizeof(std::uint64_t);
    return (elide_ ? 0 : slabs_.halo_bytes(false)) + words;
  }

 private:
  // The fewest iterations any GPU's kernel reports: a kernel that stopped early shows.
  int iterations_run() const {
    int least = std::numeric_limits<int>::max();
    for (int r = 0; r < n_; ++r) {
      int done = 0;
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemcpy(&done, done_[r].p, sizeof(int), cudaMemcpyDeviceToHost));
      least = std::min(least, done);
    }
    return least;
  }

  gps::Context& ctx_;
  Slabs slabs_;
  Kind kind_;
  Problem p_;
  int n_;
  bool elide_;
  IterSyncStates sync_;
  int blocks_ = 0;
  std::vector<DevBuf<int>> done_;
  std::vector<std::array<DevBuf<float>, 2>> scratch_;  // [rank][side]: elided pushes land here
  std::vector<stencil3d::CpuFree> args_;
};

// The paradigms in their own files (stencil3d_paradigms.hpp); nullptr for the others.
std::unique_ptr<stencil3d::Run> paradigm_run(gps::Context& ctx, Kind kind, const Problem& p, Paradigm par) {
  switch (par) {
    case Paradigm::um: return stencil3d::make_um_run(ctx, kind, p, false);
    case Paradigm::um_hints: return stencil3d::make_um_run(ctx, kind, p, true);
    case Paradigm::rdl: return stencil3d::make_rdl_run(ctx, kind, p);
    case Paradigm::gps: return stencil3d::make_gps_run(ctx, kind, p);
    case Paradigm::nccl: return stencil3d::make_nccl_run(ctx, kind, p);
    case Paradigm::proact: return stencil3d::make_proact_run(ctx, kind, p);
    default: return nullptr;
  }
}

class Stencil3DApp final : public App {
 public:
  explicit Stencil3DApp(Kind kind) : kind_(kind) {}
  const char* name() const override { return app_name(kind_); }
  const char* description() const override {
    return kind_ == Kind::heat
               ? "Heat 3D, 7-point explicit diffusion, float: fixed 1-cell boundary layer, hashed initial values, "
                 "slabs along one axis"
               : "Wave 3D, 4th-order 13-point star, leapfrog, float: fixed 2-cell boundary layer, hashed initial "
                 "values, slabs along one axis";
  }
  std::string default_sizes() const override { return "256,512"; }
  Problem problem(const std::string& size, int iters) const override {
    Problem p;
    const int least = 2 * stencil3d::radius_of(kind_) + 1;
    if (!parse_extents(size, p.n) || std::min({p.n[0], p.n[1], p.n[2]}) < least)
      throw std::invalid_argument(fmt::format("bad --size '{}' for {} (use N or NXxNYxNZ, each from {} to {})", size,
                                              name(), least, kMaxExtent));
    p.iters = iters > 0 ? iters : 100;
    return p;
  }
  double host_bytes(const Problem& p) const override { return stencil3d_host_bytes(p.n); }
  double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm par) const override {
    if (par == Paradigm::gps)
      return gps_replica_bytes(static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]) * static_cast<double>(p.n[2]));
    return stencil3d_gpu_bytes(p.n, p.axis, stencil3d::radius_of(kind_), gpus);
  }
  bool has(Paradigm p) const override {
    switch (p) {
      case Paradigm::single:
      case Paradigm::memcpy:
      case Paradigm::p2p_inline:
      case Paradigm::cpu_free:
      case Paradigm::infinite:
      case Paradigm::um:
      case Paradigm::um_hints:
      case Paradigm::rdl:
      case Paradigm::gps:
      case Paradigm::proact:
        return true;
      case Paradigm::nccl:
        return nccl_built();
      case Paradigm::nvshmem:
        return jacobi::nvshmem_built();
      default:
        return false;
    }
  }
  RunOutcome run(const RunRequest& r) override;

 private:
  // nvshmem: one worker process per GPU (apps/stencil/nvshmem_launch.hpp); no context in this
  // process. The same checks as the other paradigms' (iterations, error bound 1e-6).
  RunOutcome run_nvshmem(const RunRequest& req, const std::vector<float>& ref) const;
  // Why this request can't run, or empty.
  std::string unsupported_reason(const RunRequest& r) const;
  const std::vector<float>& reference(const Problem& p, const RunRequest& r) {
    const std::string key = fmt::format("{}:{}:{}", p.label(), p.iters, p.seed);
    auto it = refs_.find(key);
    if (it == refs_.end()) {
      auto compute = [&] {
        if (r.progress) r.progress("CPU reference " + p.label());
        Stencil3DProblem sp;
        for (int d = 0; d < 3; ++d) sp.n[d] = p.n[d];
        sp.iters = p.iters;
        sp.seed = p.seed;
        return kind_ == Kind::heat ? heat3d_reference(sp) : wave3d_reference(sp);
      };
      it = refs_.emplace(key, cached_reference<std::vector<float>>(r.references, std::string(name()) + "/" + key,
                                                                    compute, r.progress))
               .first;
    }
    return it->second;
  }
  Kind kind_;
  std::map<std::string, std::vector<float>> refs_;  // the axis doesn't change the result
};

std::string Stencil3DApp::unsupported_reason(const RunRequest& r) const {
  const int n = static_cast<int>(r.devices.size());
  if (r.paradigm == Paradigm::nccl && !nccl_built()) return kNcclMissing;
  if (r.paradigm == Paradigm::nvshmem && !jacobi::nvshmem_built()) return jacobi::kNvshmemMissing;
  if (!has(r.paradigm))
    return std::string("the ") + paradigm_name(r.paradigm) + " paradigm is not implemented for " + name() + " yet";
  if (n < 1) return "no GPUs given";
  if (r.paradigm == Paradigm::single && n != 1) return "single runs on one GPU";
  if (r.paradigm == Paradigm::um_hints && r.problem.axis == Axis::x) return stencil3d::kUmHintsAlongX;
  if (r.paradigm == Paradigm::proact && r.problem.axis == Axis::x && n > 1) return stencil3d::kProactAlongX;
  // slab3d's limit: halos come only from the direct neighbours, which must own `radius` planes.
  const int radius = stencil3d::radius_of(kind_);
  const std::int64_t interior = r.problem.n[dim_of(r.problem.axis)] - 2 * radius;
  if (interior / n < radius)
    return fmt::format("{} interior planes along {} leave a GPU fewer than {} (the halo depth)", interior,
                       axis_name(r.problem.axis), radius);
  return "";
}

RunOutcome Stencil3DApp::run_nvshmem(const RunRequest& req, const std::vector<float>& ref) const {
  RunOutcome out;
  try {
    jacobi::NvshmemRun r =
        jacobi::run_nvshmem(req, kind_ == Kind::heat ? jacobi::WorkerApp::heat3d : jacobi::WorkerApp::wave3d);
    out.sec_per_iter = std::move(r.gathered.sec_per_iter);
    out.iterations = r.gathered.iterations;
    out.link_bytes_per_iter = r.link_bytes_per_iter;
    out.error = max_rel_error(r.gathered.grid, ref);
  } catch (const gpsm::Error& e) {
    out.status = RunStatus::failed;
    out.reason = e.what();
    out.sec_per_iter.clear();
    return out;
  }
  out.tolerance = 1e-6;
  out.timing = "host wall clock of each worker's step loop (after an NVSHMEM barrier, setup excluded), the "
               "slowest worker's, divided by the iterations";
  std::string why;
  if (out.iterations != req.problem.iters)
    why = fmt::format("ran {} iterations, {} requested", out.iterations, req.problem.iters);
  else if (!(out.error <= 1e-6))
    why = fmt::format("verification failed: max relative error {:.3e} (bound 1e-06)", out.error);
  if (!why.empty()) {
    out.status = RunStatus::failed;
    out.reason = why;
    out.sec_per_iter.clear();
  }
  return out;
}

// One run's timed reps (after the warm-ups), its last result and its link bytes.
struct Timed {
  std::vector<double> sec_per_iter;
  int iterations = 0;
  std::vector<float> got;
  double link_bytes_per_iter = 0;
  double median_us() const {
    std::vector<double> v = sec_per_iter;
    std::sort(v.begin(), v.end());
    if (v.empty()) return std::numeric_limits<double>::infinity();
    const std::size_t h = v.size() / 2;
    return 1e6 * (v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]));
  }
};

template <class Run>
Timed timed(Run& run, const RunRequest& req, const std::string& what) {
  Timed t;
  for (int k = 0; k < req.warmup + req.reps; ++k) {
    run.init();
    const bool warm = k < req.warmup;
    if (req.progress)
      req.progress(fmt::format("{}{} rep {}/{}", what, warm ? "warm-up" : "timed", warm ? k + 1 : k - req.warmup + 1,
                               warm ? req.warmup : req.reps));
    const Timing r = run.solve();
    if (!warm) {
      t.sec_per_iter.push_back(r.seconds / std::max(1, r.iterations));
      t.iterations = r.iterations;
    }
  }
  t.got = run.gather();
  t.link_bytes_per_iter = run.link_bytes_per_iter();
  return t;
}

RunOutcome Stencil3DApp::run(const RunRequest& req) {
  RunOutcome out;
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  out.reason = unsupported_reason(req);
  if (!out.reason.empty()) {
    out.status = RunStatus::unsupported;
    return out;
  }
  const std::vector<float>& ref = reference(p, req);
  if (req.paradigm == Paradigm::nvshmem) return run_nvshmem(req, ref);
  // proact: the agent asked for. The chunk is structural (one edge: `radius` halo planes, shipped
  // once every block of its tiles is done): a requested size does not apply. Cache key size: one
  // grid's bytes.
  const int radius = stencil3d::radius_of(kind_);
  std::uint64_t plane = sizeof(float), grid = sizeof(float);
  for (int d = 0; d < 3; ++d) {
    grid *= static_cast<std::uint64_t>(p.n[d]);
    if (d != static_cast<int>(p.axis)) plane *= static_cast<std::uint64_t>(p.n[d]);
  }
  const ProactChunk asked = ask_proact_chunk(req, grid);
  const Paradigm par = proact_runs_as(req.paradigm, asked.agent);  // the paradigm whose run is built
  if (req.paradigm == Paradigm::proact)
    out.proact = fixed_chunk_use(
        asked, radius == 1 ? std::string("halo plane") : fmt::format("edge of {} halo planes", radius),
        plane * static_cast<std::uint64_t>(radius), grid);
  gps::Context ctx(req.devices, gps::Settings::from_env());
  const std::string loop_timing = "host wall clock of the iteration loop (setup, initial values and verification "
                                  "excluded), divided by its iterations";
  const std::string kernel_timing =
      "host wall clock from the persistent kernels' launch to every GPU idle, divided by the iterations";
  // `infinite` on more than one GPU: transfers elided, the result is not checked.
  const bool elided = req.paradigm == Paradigm::infinite && n > 1;
  auto fail = [&](const std::string& why) {
    out.status = RunStatus::failed;
    out.reason = why;
    out.sec_per_iter.clear();
    return out;
  };
  // Every run must run the requested iterations (the bound must do the same work too) and,
  // unless elided, match the reference.
  auto check = [&](const Timed& t, const char* what) -> std::string {
    if (t.iterations != p.iters) return fmt::format("{}ran {} iterations, {} requested", what, t.iterations, p.iters);
    const double err = max_rel_error(t.got, ref);
    if (!elided && !(err <= 1e-6))
      return fmt::format("{}verification failed: max relative error {:.3e} (bound 1e-06)", what, err);
    return "";
  };
  Timed chosen;
  try {
    if (req.paradigm == Paradigm::infinite) {
      // The bound is the faster of two runs with every transfer between GPUs elided (one GPU: no
      // transfers, both verified): cpu_free's persistent kernel, iteration sync kept, and the
      // host-driven step loop (p2p_inline's, event waits kept; single's on one GPU). The other
      // paradigms run one of these two structures plus their transfers, so none should beat the
      // faster one by more than noise (docs/bench.md).
      Timed kernel, loop;
      std::string loop_how = loop_timing;
      {
        CpuFreeRun run(ctx, kind_, p, elided);
        kernel = timed(run, req, "infinite (persistent kernel) ");
      }
      {
        SlabRun run(ctx, kind_, p, elided ? Paradigm::p2p_inline : Paradigm::single, elided);
        loop = timed(run, req, "infinite (host loop) ");
        if (!run.timing().empty()) loop_how = run.timing();
      }
      for (const auto& [t, what] : {std::pair<const Timed*, const char*>{&kernel, "infinite's persistent kernel "},
                                   std::pair<const Timed*, const char*>{&loop, "infinite's host loop "}})
        if (const std::string why = check(*t, what); !why.empty()) return fail(why);
      const bool use_kernel = kernel.median_us() <= loop.median_us();
      // Worded before the move below empties one of the two.
      const std::string which = fmt::format(
          "the faster of two runs{} (medians: persistent kernel {:.2f} us, host-driven step loop {:.2f} us): the {}",
          elided ? " with every transfer between GPUs elided" : "", kernel.median_us(), loop.median_us(),
          use_kernel ? "persistent kernel" : "host-driven step loop");
      chosen = std::move(use_kernel ? kernel : loop);
      out.timing = which + "; " + (use_kernel ? kernel_timing : loop_how);
      out.reason = which;  // not shown for ok runs by the harness; kept for callers
      if (req.progress) req.progress(which);
    } else if (req.paradigm == Paradigm::cpu_free) {
      CpuFreeRun run(ctx, kind_, p, false);
      chosen = timed(run, req, "");
      out.timing = kernel_timing;
    } else if (std::unique_ptr<stencil3d::Run> own = paradigm_run(ctx, kind_, p, par)) {
      if (const std::string why = own->check(); !why.empty()) {  // cannot go on these GPUs: said, not run
        out.status = RunStatus::unsupported;
        out.reason = why;
        return out;
      }
      chosen = timed(*own, req, "");
      out.timing = own->timing().empty() ? loop_timing : own->timing();
    } else {
      SlabRun run(ctx, kind_, p, par);
      chosen = timed(run, req, "");
      out.timing = run.timing().empty() ? loop_timing : run.timing();
    }
    out.timing += proact_agent_note(req.paradigm, asked.agent);
  } catch (const gpsm::Error& e) {
    return fail(e.what());
  }
  out.sec_per_iter = chosen.sec_per_iter;
  out.iterations = chosen.iterations;
  out.link_bytes_per_iter = chosen.link_bytes_per_iter;
  out.error = max_rel_error(chosen.got, ref);
  out.tolerance = 1e-6;
  if (const std::string why = check(chosen, ""); !why.empty()) return fail(why);
  if (elided) {  // the opportunity bound computes without its neighbours' planes: not a result
    out.tolerance = std::numeric_limits<double>::infinity();
    out.timing += "; transfers elided, result not checked";
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_heat3d_app() { return std::make_unique<Stencil3DApp>(Kind::heat); }
std::unique_ptr<App> make_wave3d_app() { return std::make_unique<Stencil3DApp>(Kind::wave); }

}  // namespace gpsm::apps
