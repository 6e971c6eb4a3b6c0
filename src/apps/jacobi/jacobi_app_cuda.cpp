// Jacobi 2D (`gpsm bench --app jacobi2d`): NVIDIA multi-gpu-programming-models' problem on every
// paradigm this file implements, timed the way that suite times it (host wall clock around the
// whole solve loop, norm every nccheck iterations), verified against the CPU reference.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/harness/app.hpp"
#include "apps/harness/memory_estimate.hpp"
#include "common/dev_buf.hpp"
#include "apps/jacobi/jacobi_gps.hpp"
#include "apps/jacobi/jacobi_kernels.hpp"
#include "apps/jacobi/jacobi_host_loop.hpp"
#include "apps/jacobi/jacobi_nccl.hpp"
#include "apps/stencil/nvshmem_launch.hpp"
#include "apps/stencil/iter_sync_states.hpp"
#include "apps/harness/proact_bench.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/jacobi/jacobi_proact.hpp"
#include "apps/jacobi/jacobi_um_rdl.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil/reference.hpp"
#include "apps/stencil/stencil_math.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Largest relative difference over the interior rows (1 .. ny-2, every column): halo rows hold
// copies, whose boundary columns differ by design between paradigms.
double interior_error(const std::vector<float>& got, const std::vector<float>& ref, std::int64_t nx, std::int64_t ny) {
  if (got.size() != ref.size()) throw gpsm::Error("gpsm: jacobi2d: gathered grid and reference differ in size");
  return max_rel_error(got.data() + nx, ref.data() + nx, static_cast<std::size_t>((ny - 2) * nx));
}

class JacobiApp final : public App {
 public:
  const char* name() const override { return "jacobi2d"; }
  const char* description() const override {
    return "Jacobi 2D, 5-point, float: NVIDIA multi-gpu-programming-models' problem (periodic top/bottom, "
           "sin boundaries, norm every nccheck iterations)";
  }
  std::string default_sizes() const override { return "4096,16384"; }
  Problem problem(const std::string& size, int iters) const override {
    Problem p;
    std::int64_t nx = 0, ny = 0;
    const auto x = size.find('x');
    try {
      std::size_t used = 0;
      nx = std::stoll(x == std::string::npos ? size : size.substr(0, x), &used);
      ny = x == std::string::npos ? nx : std::stoll(size.substr(x + 1), &used);
    } catch (const std::exception&) {
      nx = ny = 0;
    }
    if (nx < 3 || ny < 3)
      throw std::invalid_argument("bad --size '" + size + "' for jacobi2d (use N or NXxNY, at least 3)");
    p.n[0] = nx;
    p.n[1] = ny;
    p.n[2] = 0;
    p.iters = iters > 0 ? iters : 1000;
    return p;
  }
  double host_bytes(const Problem& p) const override { return jacobi2d_host_bytes(p.n[0], p.n[1]); }
  double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm par) const override {
    if (par == Paradigm::gps) return gps_replica_bytes(static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]));
    return jacobi2d_gpu_bytes(p.n[0], p.n[1], gpus);
  }
  bool has(Paradigm p) const override {
    switch (p) {
      case Paradigm::single:
      case Paradigm::memcpy:
      case Paradigm::p2p_inline:
      case Paradigm::gps:
      case Paradigm::proact:
      case Paradigm::cpu_free:
      case Paradigm::infinite:
      case Paradigm::um:
      case Paradigm::um_hints:
      case Paradigm::rdl:
        return true;
      case Paradigm::nccl:
        return jacobi::nccl_built();
      case Paradigm::nvshmem:
        return jacobi::nvshmem_built();
      default:
        return false;
    }
  }
  RunOutcome run(const RunRequest& r) override;

 private:
  // par: the paradigm whose run is built (req.paradigm, or what proact's agent runs as).
  bool run_in_process(const RunRequest& req, Paradigm par, RunOutcome& out, std::vector<float>& got);
  static RunOutcome verify(const RunRequest& req, const JacobiResult& ref, const std::vector<float>& got, RunOutcome out);
  const JacobiResult& reference(const Problem& p, const RunRequest& r) {
    const std::string key = fmt::format("{}:{}:{}:{}", p.label(), p.iters, p.nccheck, p.tol);
    auto it = refs_.find(key);
    if (it == refs_.end()) {
      auto compute = [&] {
        if (r.progress) r.progress("CPU reference " + p.label());
        JacobiProblem jp;
        jp.nx = p.n[0];
        jp.ny = p.n[1];
        jp.niter = p.iters;
        jp.nccheck = p.nccheck;
        jp.tol = p.tol;
        return jacobi_reference(jp);
      };
      it = refs_.emplace(key, cached_reference<JacobiResult>(r.references, "jacobi2d/" + key, compute, r.progress)).first;
    }
    return it->second;
  }
  std::map<std::string, JacobiResult> refs_;
};

using jacobi::LoopTiming;
using jacobi::Poison;
using jacobi::Slabs;

// Host-driven paradigms over plain slabs: single, memcpy, p2p_inline.
class SlabRun final : public jacobi::HostLoop {
 public:
  SlabRun(gps::Context& ctx, const Problem& p, Paradigm par) : HostLoop(ctx, p), par_(par), s_(ctx, p) {}
  void init() override {
    s_.init(Poison::none, Poison::halo_rows);
    cur_ = 0;
  }
  std::vector<float> gather() override { return s_.gather(cur_); }
  // Rows exchanged per iteration: every rank sends its first and last rows to its neighbours.
  double link_bytes_per_iter() override {
    if (n_ == 1) return 0;
    const double row = static_cast<double>(par_ == Paradigm::memcpy ? p_.n[0] : jacobi::pushed_cells(p_.n[0])) * sizeof(float);
    return 2.0 * n_ * row;
  }

 protected:
  void sweep(int r, float* norm, cudaStream_t st) override {
    jacobi::Sweep w;
    w.a = s_.buf[r][cur_].p;
    w.a_new = s_.buf[r][1 - cur_].p;
    w.nx = p_.n[0];
    w.rows = slabs_[r].chunk;
    w.norm = norm;
    // One GPU keeps its periodic halo by pushing to itself (every paradigm); between GPUs only
    // p2p_inline pushes.
    if (par_ == Paradigm::p2p_inline || n_ == 1) {
      const int t = slabs_[r].top, b = slabs_[r].bottom;
      w.push_top = s_.row(t, 1 - cur_, slabs_[t].chunk + 1);
      w.push_bottom = s_.row(b, 1 - cur_, 0);
    }
    jacobi::launch_sweep(w, st);
  }
  // memcpy: after every sweep, the first and last computed rows go to the neighbours' halos by
  // copy engine (whole rows, as NVIDIA's copy variants do), in stream order after the sweep.
  // The receiver reads them next iteration after waiting for this rank's event; this rank's
  // next copies overwrite halos the receiver read this iteration, after waiting for its event.
  void after_sweeps(int iter, bool) override {
    if (par_ != Paradigm::memcpy || n_ == 1) return;
    const std::size_t row = static_cast<std::size_t>(p_.n[0]) * sizeof(float);
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      const int t = slabs_[r].top, b = slabs_[r].bottom;
      GPSM_CUDA(cudaMemcpyPeerAsync(s_.row(t, 1 - cur_, slabs_[t].chunk + 1), ctx_.device(t), s_.row(r, 1 - cur_, 1),
                                    ctx_.device(r), row, st));
      GPSM_CUDA(cudaMemcpyPeerAsync(s_.row(b, 1 - cur_, 0), ctx_.device(b), s_.row(r, 1 - cur_, slabs_[r].chunk),
                                    ctx_.device(r), row, st));
    }
    for (int r = 0; r < n_; ++r) record(r, iter);  // the copies are part of this iteration's event
  }

 private:
  Paradigm par_;
  Slabs s_;
};

// cpu_free: one persistent cooperative kernel per GPU for the whole solve (CPU-free thesis ch. 3).
// elide (the `infinite` bound on more than one GPU): the same kernel, device barrier and norm
// exchange included, with the halo rows stored to scratch rows on the sending GPU instead of
// the neighbour: every transfer between GPUs costs nothing, the result is not a result.
class CpuFreeRun final : public jacobi::JacobiRun {
 public:
  CpuFreeRun(gps::Context& ctx, const Problem& p, bool elide)
      : ctx_(ctx), p_(p), n_(ctx.size()), elide_(elide), s_(ctx, p), sync_(ctx) {
    scratch_.resize(n_);
    done_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      const int dev = ctx.device(r);
      if (elide_) scratch_[r].alloc(dev, 2 * p.n[0]);
      done_[r].alloc(dev, 4);
      GPSM_CUDA(cudaSetDevice(dev));
      blocks_ = r == 0 ? jacobi::cpu_free_blocks(dev) : std::min(blocks_, jacobi::cpu_free_blocks(dev));
    }
    args_.resize(n_);
    for (int r = 0; r < n_; ++r) {
      auto& c = args_[r];
      const std::int64_t nx = p_.n[0];
      const JacobiSlab& sl = s_.slab[r];
      const int t = sl.top, b = sl.bottom;
      for (int k = 0; k < 2; ++k) {
        c.buf[k] = s_.buf[r][k].p;
        c.top_halo[k] = elide_ ? scratch_[r].p : s_.row(t, k, s_.slab[t].chunk + 1);
        c.bottom_halo[k] = elide_ ? scratch_[r].p + nx : s_.row(b, k, 0);
      }
      c.done = done_[r].p;
      c.sync = sync_.handle(r, static_cast<unsigned>(blocks_), ctx_.wait_policy(r));
      c.nx = nx;
      c.rows = sl.chunk;
      c.niter = p_.iters;
      c.nccheck = p_.nccheck;
      c.tol = p_.tol;
    }
    ctx.check_coresident(jacobi::cpu_free_kernel(args_[0]), blocks_, jacobi::kCpuFreeThreads, 0);
  }
  void init() override {
    s_.init(Poison::none, elide_ ? Poison::none : Poison::halo_rows);
    sync_.reset();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      GPSM_CUDA(cudaMemset(done_[r].p, 0, 4 * sizeof(int)));
    }
    ctx_.synchronize();
  }
  LoopTiming solve() override {
    const auto t0 = Clock::now();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      jacobi::launch_cpu_free(args_[r], blocks_, ctx_.stream(r));
    }
    ctx_.synchronize();
    const double sec = seconds_since(t0);
    int done[4] = {0, 0, 0, 0};
    GPSM_CUDA(cudaSetDevice(ctx_.device(0)));
    GPSM_CUDA(cudaMemcpy(done, done_[0].p, sizeof(done), cudaMemcpyDeviceToHost));
    float norm = 0;
    std::memcpy(&norm, &done[2], sizeof(float));
    final_buf_ = done[0] % 2;  // the buffer the last iteration wrote
    return LoopTiming{sec, done[0], norm};
  }
  std::vector<float> gather() override { return s_.gather(final_buf_); }
  double link_bytes_per_iter() override {
    if (n_ == 1) return 0;
    // one tagged 8-byte word per ordered GPU pair per iteration (barrier and norm partial)
    const double words = static_cast<double>(n_) * (n_ - 1) * sizeof(std::uint64_t);
    if (elide_) return words;
    return 2.0 * n_ * static_cast<double>(jacobi::pushed_cells(p_.n[0])) * sizeof(float) + words;
  }
  std::string timing() const override {
    return "host wall clock from the persistent kernels' launch to every GPU idle, divided by the iterations";
  }

 private:
  gps::Context& ctx_;
  Problem p_;
  int n_;
  int blocks_ = 0;
  bool elide_ = false;
  Slabs s_;
  IterSyncStates sync_;
  std::vector<DevBuf<float>> scratch_;
  std::vector<DevBuf<int>> done_;
  std::vector<jacobi::CpuFree> args_;
  int final_buf_ = 0;
};

RunOutcome JacobiApp::run(const RunRequest& req) {
  RunOutcome out;
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  if (req.paradigm == Paradigm::nccl && !jacobi::nccl_built()) {
    out.status = RunStatus::unsupported;
    out.reason = jacobi::kNcclMissing;
    return out;
  }
  if (req.paradigm == Paradigm::nvshmem && !jacobi::nvshmem_built()) {
    out.status = RunStatus::unsupported;
    out.reason = jacobi::kNvshmemMissing;
    return out;
  }
  if (!has(req.paradigm)) {
    out.status = RunStatus::unsupported;
    out.reason = std::string("the ") + paradigm_name(req.paradigm) + " paradigm is not implemented for jacobi2d yet";
    return out;
  }
  if (req.paradigm == Paradigm::single && n != 1) {
    out.status = RunStatus::unsupported;
    out.reason = "single runs on one GPU";
    return out;
  }
  if (p.n[1] - 2 < n) {
    out.status = RunStatus::unsupported;
    out.reason = "fewer interior rows than GPUs";
    return out;
  }
  const JacobiResult& ref = reference(p, req);
  // proact: the agent asked for (the chunk is structural, one halo row shipped once its one writer
  // block is done: a requested size does not apply). Cache key size: one grid array's bytes.
  const std::uint64_t row = static_cast<std::uint64_t>(p.n[0]) * sizeof(float);
  const std::uint64_t key_size = static_cast<std::uint64_t>(p.n[0]) * static_cast<std::uint64_t>(p.n[1]) * sizeof(float);
  const ProactChunk asked = ask_proact_chunk(req, key_size);
  if (req.paradigm == Paradigm::proact) out.proact = fixed_chunk_use(asked, "halo row", row, key_size);
  std::vector<float> got;
  if (req.paradigm == Paradigm::nvshmem) {
    // One worker process per GPU (nvshmem_launch.hpp); no context in this process.
    try {
      jacobi::NvshmemRun r = jacobi::run_nvshmem(req);
      out.sec_per_iter = std::move(r.gathered.sec_per_iter);
      out.iterations = r.gathered.iterations;
      out.link_bytes_per_iter = r.link_bytes_per_iter;
      got = std::move(r.gathered.grid);
      out.timing = "host wall clock of each worker's solve loop (after an NVSHMEM barrier, setup excluded), the "
                   "slowest worker's, divided by its iterations";
    } catch (const gpsm::Error& e) {
      out.status = RunStatus::failed;
      out.reason = e.what();
      out.sec_per_iter.clear();
      return out;
    }
  } else if (!run_in_process(req, proact_runs_as(req.paradigm, asked.agent), out, got)) {
    return out;
  }
  out.timing += proact_agent_note(req.paradigm, asked.agent);
  return verify(req, ref, got, out);
}

// Every paradigm but nvshmem: a context over the GPUs and a JacobiRun driven from this process.
// False (and `out` says why) when the run failed.
bool JacobiApp::run_in_process(const RunRequest& req, Paradigm par, RunOutcome& out, std::vector<float>& got) {
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  gps::Settings settings = gps::Settings::from_env();
  gps::Context ctx(req.devices, settings);
  auto say = [&](const std::string& s) {
    if (req.progress) req.progress(s);
  };
  try {
    std::unique_ptr<jacobi::JacobiRun> run;
    switch (par) {
      case Paradigm::gps: run = jacobi::make_gps_run(ctx, p); break;
      case Paradigm::cpu_free:
      case Paradigm::infinite: run = std::make_unique<CpuFreeRun>(ctx, p, par == Paradigm::infinite && n > 1); break;
      case Paradigm::nccl: run = jacobi::make_nccl_run(ctx, p); break;
      case Paradigm::rdl: run = jacobi::make_rdl_run(ctx, p); break;
      case Paradigm::proact: run = jacobi::make_proact_run(ctx, p); break;
      case Paradigm::um:
      case Paradigm::um_hints: run = jacobi::make_um_run(ctx, p, par == Paradigm::um_hints); break;
      default: run = std::make_unique<SlabRun>(ctx, p, par); break;
    }
    if (const std::string why = run->check(); !why.empty()) throw gpsm::Error("gpsm: " + why);
    out.timing = run->timing();
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      run->init();
      say(fmt::format("{} rep {}/{}", k < req.warmup ? "warm-up" : "timed", k < req.warmup ? k + 1 : k - req.warmup + 1,
                      k < req.warmup ? req.warmup : req.reps));
      const LoopTiming t = run->solve();
      if (k >= req.warmup) {
        out.sec_per_iter.push_back(t.seconds / std::max(1, t.iterations));
        out.iterations = t.iterations;
      }
    }
    got = run->gather();
    out.link_bytes_per_iter = run->link_bytes_per_iter();
  } catch (const gpsm::Error& e) {
    out.status = RunStatus::failed;
    out.reason = e.what();
    out.sec_per_iter.clear();
    return false;
  }
  return true;
}

// The last timed rep's grid against the CPU reference, the same for every paradigm.
RunOutcome JacobiApp::verify(const RunRequest& req, const JacobiResult& ref, const std::vector<float>& got,
                             RunOutcome out) {
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  out.error = interior_error(got, ref.a, p.n[0], p.n[1]);
  out.tolerance = 1e-6;
  const bool elided = req.paradigm == Paradigm::infinite && n > 1;
  if (elided && out.iterations != ref.iterations) {  // the bound must do the same work
    out.status = RunStatus::failed;
    out.reason = fmt::format("ran {} iterations, the reference {}", out.iterations, ref.iterations);
    out.sec_per_iter.clear();
  } else if (elided) {  // the opportunity bound computes without its neighbours' rows: not a result
    out.tolerance = std::numeric_limits<double>::infinity();
    out.timing += "; transfers elided, result not checked";
  } else if (!(out.error <= out.tolerance) || out.iterations != ref.iterations) {
    out.status = RunStatus::failed;
    out.reason = fmt::format("verification failed: max relative error {:.3e} (bound {:.0e}), {} iterations (reference {})",
                             out.error, out.tolerance, out.iterations, ref.iterations);
    out.sec_per_iter.clear();
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_jacobi_app() { return std::make_unique<JacobiApp>(); }

}  // namespace gpsm::apps
