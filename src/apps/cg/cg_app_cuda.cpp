// Conjugate gradient (`gpsm bench --app cg`): Standard and Pipelined CG, CPU-controlled and
// CPU-free, on generated or Matrix Market SPD matrices; every run checked against the CPU
// reference (same arithmetic: the residual history must agree to 1e-10, in practice to the bit),
// with ||b - A x|| recomputed on the host. docs/cg.md describes the paradigms and the method.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/cg/cg_nvshmem_run.hpp"
#include "apps/cg/cg_runs.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "apps/cg/run_options.hpp"
#include "apps/cg/traffic.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/stencil/nvshmem_launch.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::cg {
namespace {

// What a paradigm runs: the variant(s), and whether the host launches the kernels.
struct Mode {
  std::vector<Variant> variants;
  bool host = false;
  bool gps = false;  // a GPS-memory run (cg_gps_run_cuda.cpp; Pipelined: cg_gps_pipe_run_cuda.cpp)
  bool nvshmem = false;  // one NVSHMEM worker process per GPU (cg_nvshmem_run.hpp)
};
Mode mode_of(Paradigm p) {
  switch (p) {
    case Paradigm::single:
    case Paradigm::cpu_ctrl_std: return {{Variant::standard}, true};
    case Paradigm::cpu_ctrl_pipe: return {{Variant::pipelined}, true};
    case Paradigm::cpu_free_std: return {{Variant::standard}, false};
    case Paradigm::cpu_free_pipe: return {{Variant::pipelined}, false};
    case Paradigm::infinite: return {{Variant::standard, Variant::pipelined}, false};
    case Paradigm::gps: return {{Variant::standard}, false, true};
    case Paradigm::gps_pipe: return {{Variant::pipelined}, false, true};
    case Paradigm::nvshmem_std: return {{Variant::standard}, false, false, true};
    case Paradigm::nvshmem_pipe: return {{Variant::pipelined}, false, false, true};
    default: return {};
  }
}

// One paradigm's timed repetitions and its last result.
struct Timed {
  std::vector<double> sec_per_iter;
  Solve got;
  std::string timing;
  std::optional<double> link_bytes;  // counted by the runtime (gps), else the model's
  bool q_shared = false;             // CgRun::q_shared: the memory model's q bytes left out
  double median_us() const {
    std::vector<double> s = sec_per_iter;
    std::sort(s.begin(), s.end());
    return s.empty() ? 0 : s[s.size() / 2] * 1e6;
  }
};

class CgApp final : public App {
 public:
  const char* name() const override { return "cg"; }
  const char* description() const override {
    return "Conjugate gradient, double: Standard and Pipelined, CPU-controlled and CPU-free (one process, or one "
           "NVSHMEM process per GPU), and Standard and Pipelined on GPS "
           "memory; generated (Poisson, "
           "elasticity-like, banded) or Matrix Market SPD matrices, b = A*1, x0 = 0, rows split in blocks";
  }
  std::string default_sizes() const override { return "poisson2d:512,poisson2d:2048"; }
  std::vector<std::string> expand_size(const std::string& size) const override { return expand_named_set(size); }
  Problem problem(const std::string& size, int iters) const override {
    cg_env();  // a bad value is bad input, refused before any work
    const MatrixSpec s = parse_spec(size);
    Problem p;
    p.graph = size;
    p.balance_nnz = s.balance_nnz;
    p.tol = static_cast<float>(s.tol);
    p.iters = iters > 0 ? iters : 1000;
    p.n[0] = s.rows;  // 0 for a file (unknown until read)
    return p;
  }
  double host_bytes(const Problem& p) const override { return cg_host_bytes(parse_spec(p.graph)); }
  bool has(Paradigm p) const override { return !mode_of(p).variants.empty(); }
  RunOutcome run(const RunRequest& req) override;

 private:
  const Matrix& matrix(const MatrixSpec& s, const RunRequest& req);
  const Plan& plan(const MatrixSpec& s, int gpus, Variant v, const RunRequest& req);
  const Start& start(const std::string& plan_key, const Plan& p, Variant v, double tol);
  const Solve& reference(const std::string& plan_key, const Plan& p, const Start& st, Variant v, int iters,
                         const RunRequest& req);
  Timed timed(gps::Context& ctx, const Plan& p, const Start& st, Variant v, const Mode& m, bool elided, int iters,
              const RunRequest& req, const std::string& what);

  std::string matrix_key_;
  std::unique_ptr<Matrix> a_;
  std::map<std::string, Plan> plans_;
  std::map<std::string, Start> starts_;
  std::map<std::string, Solve> refs_;
};

// The spec without its modifiers: what the matrix depends on (a file name may hold '@').
std::string matrix_key(const MatrixSpec& s) {
  const std::size_t mtx = s.text.rfind(".mtx");
  return s.text.substr(0, s.text.find('@', mtx == std::string::npos ? 0 : mtx));
}

void say(const RunRequest& req, const std::string& s) {
  if (req.progress) req.progress(s);
}

const Matrix& CgApp::matrix(const MatrixSpec& s, const RunRequest& req) {
  const std::string key = matrix_key(s);
  if (!a_ || key != matrix_key_) {
    a_.reset();  // one matrix at a time: the large ones take much of the host's memory
    plans_.clear();
    starts_.clear();
    refs_.clear();
    say(req, "building " + key);
    a_ = std::make_unique<Matrix>(load(s));
    matrix_key_ = key;
  }
  return *a_;
}

const Plan& CgApp::plan(const MatrixSpec& s, int gpus, Variant v, const RunRequest& req) {
  // The environment's layout, value and index storage and rows a thread (run_options.hpp). The
  // variants share a plan where their rows a thread agree (the larger matrices).
  const CgEnv env = cg_env();
  const auto parts = s.balance_nnz ? split_rows_by_nnz(a_->row_ptr, gpus) : split_rows(a_->n, gpus);
  const int rows = env.rows_per_thread != 0 ? env.rows_per_thread : rows_per_thread_for(parts, v);
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}", gpus, s.balance_nnz ? "nnz" : "rows",
                                      static_cast<int>(env.spmv), value_choice_name(env.values),
                                      index_choice_name(env.index), rows);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    say(req, fmt::format("splitting over {} GPUs", gpus));
    it = plans_.emplace(key, make_plan(*a_, parts, env.spmv, env.values, v, env.rows_per_thread, env.index)).first;
  }
  return it->second;
}

const Start& CgApp::start(const std::string& plan_key, const Plan& p, Variant v, double tol) {
  const std::string key = fmt::format("{}/{}/{}", plan_key, variant_name(v), tol);
  auto it = starts_.find(key);
  if (it == starts_.end()) it = starts_.emplace(key, make_start(*a_, p, v, tol)).first;
  return it->second;
}

const Solve& CgApp::reference(const std::string& plan_key, const Plan& p, const Start& st, Variant v, int iters,
                              const RunRequest& req) {
  const std::string key = fmt::format("{}/{}/{}/{}", plan_key, variant_name(v), st.threshold, iters);
  auto it = refs_.find(key);
  if (it == refs_.end()) {
    auto compute = [&] {
      say(req, fmt::format("CPU reference ({}, split over {} GPU{})", variant_name(v), p.ranks, p.ranks == 1 ? "" : "s"));
      return reference_solve(*a_, p, st, v, iters);
    };
    // Shared between processes the key needs the matrix too (refs_ is cleared with the matrix).
    it = refs_.emplace(key, cached_reference<Solve>(req.references, "cg/" + matrix_key_ + "/" + key, compute, req.progress))
             .first;
  }
  return it->second;
}

Timed CgApp::timed(gps::Context& ctx, const Plan& p, const Start& st, Variant v, const Mode& m, bool elided, int iters,
                   const RunRequest& req, const std::string& what) {
  say(req, what + "setting up");
  const CgEnv env = cg_env();
  std::unique_ptr<CgRun> run = m.gps    ? (v == Variant::pipelined ? make_gps_pipe_run(ctx, p, st, iters)
                                                                   : make_gps_run(ctx, p, st, iters, env.q))
                               : m.host ? make_host_run(ctx, p, st, v, iters, env.host_threads)
                                        : make_free_run(ctx, p, st, v, iters, elided, env.q);
  Timed t;
  std::vector<double> secs;
  for (int k = 0; k < req.warmup + req.reps; ++k) {
    run->init();
    const bool warm = k < req.warmup;
    say(req, fmt::format("{}{} rep {}/{}", what, warm ? "warm-up" : "timed", warm ? k + 1 : k - req.warmup + 1,
                         warm ? req.warmup : req.reps));
    const double sec = run->solve();
    if (!warm) secs.push_back(sec);
  }
  t.got = run->result();
  for (double s : secs) t.sec_per_iter.push_back(s / std::max(1, t.got.iterations));
  t.timing = run->timing();
  t.link_bytes = run->measured_link_bytes();
  t.q_shared = run->q_shared();
  return t;
}

RunOutcome CgApp::run(const RunRequest& req) {
  RunOutcome out;
  const Problem& pr = req.problem;
  const int n = static_cast<int>(req.devices.size());
  const Mode mode = mode_of(req.paradigm);
  auto unsupported = [&](const std::string& why) {
    out.status = RunStatus::unsupported;
    out.reason = why;
    return out;
  };
  auto fail = [&](const std::string& why) {
    out.status = RunStatus::failed;
    out.reason = why;
    out.sec_per_iter.clear();
    return out;
  };
  if (mode.variants.empty())
    return unsupported(std::string("the ") + paradigm_name(req.paradigm) +
                       " paradigm is not implemented for cg (its paradigms: single, cpu_ctrl_std, cpu_ctrl_pipe, "
                       "cpu_free_std, cpu_free_pipe, nvshmem_std, nvshmem_pipe, gps, gps_pipe, infinite; docs/cg.md)");
  if (req.paradigm == Paradigm::single && n != 1) return unsupported("single runs on one GPU");
  if (mode.host && n > 1 && !nccl_built()) return unsupported(kNcclMissing);
  if (n > kMaxRanks) return unsupported(fmt::format("cg runs on at most {} GPUs", kMaxRanks));
  if (mode.nvshmem) {
    if (!jacobi::nvshmem_built()) return unsupported(jacobi::kNvshmemMissing);
    try {
      jacobi::find_nvshmem_worker(jacobi::kNvshmemCgWorkerName);
    } catch (const gpsm::Error& e) {
      return unsupported(e.what());
    }
  }
  MatrixSpec spec;
  try {
    spec = parse_spec(pr.graph);
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  }
  try {
    const Matrix& a = matrix(spec, req);
    if (a.n < n) return unsupported(fmt::format("{} rows cannot be split over {} GPUs", a.n, n));
    // The CPU references first (and cached), so a run's time never includes them.
    // The kernel structures run: the paradigm's (variant, host-launched). `infinite` on one GPU,
    // where nothing is elided, takes the host-launched ones too: the bound is the fastest
    // structure, and the discrete kernels beat the persistent one there (4xH200, poisson2d:512:
    // cpu_ctrl_pipe 16.63 us against 18.27, 110 % of the bound; poisson2d:2048 single 118 %).
    std::vector<std::pair<Variant, bool>> structs;
    for (Variant v : mode.variants) structs.emplace_back(v, mode.host);
    if (req.paradigm == Paradigm::infinite && n == 1)
      for (Variant v : mode.variants) structs.emplace_back(v, true);
    std::vector<const Plan*> plans;
    std::vector<const Start*> starts;
    std::vector<const Solve*> refs;
    for (const auto& [v, host] : structs) {
      plans.push_back(&plan(spec, n, v, req));
      const std::string plan_key = fmt::format("{}/{}/{}", n, spec.balance_nnz, plans.back()->rows_per_thread);
      starts.push_back(&start(plan_key, *plans.back(), v, spec.tol));
      refs.push_back(&reference(plan_key, *plans.back(), *starts.back(), v, pr.iters, req));
    }
    // `infinite` on more than one GPU: every halo push elided; its reductions and barriers kept.
    const bool elided = req.paradigm == Paradigm::infinite && n > 1;
    std::vector<Timed> runs;
    if (mode.nvshmem) {  // worker processes (cg_nvshmem_run.hpp): no context in this one
      say(req, "nvshmem: starting one worker per GPU");
      CgGathered g = run_cg_nvshmem(req, *plans[0], structs[0].first, pr.iters);
      Timed t;
      t.sec_per_iter = std::move(g.sec_per_iter);
      t.got = std::move(g.solve);
      t.timing = "host wall clock of each worker's solve (after an NVSHMEM barrier: the persistent kernel's launch "
                 "to its GPU idle), the slowest worker's, divided by the iterations run";
      runs.push_back(std::move(t));
    } else {
      gps::Context ctx(req.devices, gps::Settings::from_env());
      for (std::size_t k = 0; k < structs.size(); ++k) {
        const auto [v, host] = structs[k];
        Start st = *starts[k];
        int iters = pr.iters;
        if (elided) {  // the bound runs as many iterations as the reference, whatever its residual does
          st.threshold = 0;
          iters = refs[k]->iterations;
        }
        const std::string what =
            structs.size() > 1 ? fmt::format("{}{}: ", variant_name(v), host ? " host-launched" : "") : "";
        Mode m = mode;
        m.host = host;
        runs.push_back(timed(ctx, *plans[k], st, v, m, elided, iters, req, what));
      }
    }
    // The run reported: the only one, or infinite's fastest.
    std::size_t pick = 0;
    for (std::size_t k = 1; k < runs.size(); ++k)
      if (runs[k].median_us() < runs[pick].median_us()) pick = k;
    const auto [v, host] = structs[pick];
    const Plan& p = *plans[pick];
    Timed& t = runs[pick];
    out.sec_per_iter = t.sec_per_iter;
    out.iterations = t.got.iterations;
    out.timing = t.timing;
    const Exchange ex = n == 1 ? Exchange::none : elided ? Exchange::elided : host ? Exchange::host : Exchange::device;
    out.link_bytes_per_iter = t.link_bytes ? *t.link_bytes : link_bytes_per_iter(p, v, ex);
    out.mem_bytes_per_iter = mem_bytes_per_iter(p, v, host, t.q_shared);
    out.choices.push_back({"spmv", layout_name(p.spmv.layout), p.spmv.reason});
    out.choices.push_back({"values", value_storage_name(p.values.storage), p.values.reason});
    out.choices.push_back({"index", index_storage_name(p.index.storage), p.index.reason});
    out.choices.push_back({"rows_per_thread", std::to_string(p.rows_per_thread), p.rows_per_thread_why});
    if (runs.size() > 1) {
      std::string medians;
      for (std::size_t k = 0; k < runs.size(); ++k)
        medians += fmt::format("{}{} {}{:.2f} us", k ? ", " : "", variant_name(structs[k].first),
                               structs[k].second ? "host-launched " : "", runs[k].median_us());
      out.timing = fmt::format("the fastest of {} runs{} (medians: {}): {}{}; ", runs.size(),
                               elided ? " with every halo push elided" : "", medians, variant_name(v),
                               host ? " host-launched" : "") +
                   out.timing;
    }
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const Check c = check_solve(a, *starts[k], *refs[k], runs[k].got, structs[k].first);
      if (k == pick) out.error = c.error();
      if (elided) {
        if (runs[k].got.iterations != refs[k]->iterations)
          return fail(fmt::format("{} ran {} iterations, the reference {}", variant_name(structs[k].first),
                                  runs[k].got.iterations, refs[k]->iterations));
      } else if (!c.failure.empty()) {
        const std::string which = runs.size() > 1 ? fmt::format(" ({}{})", variant_name(structs[k].first),
                                                                 structs[k].second ? " host-launched" : "")
                                                  : "";
        return fail("verification failed" + which + ": " + c.failure);
      }
    }
    out.tolerance = kAgreement;
    if (elided) {  // the bound computes without its peers' entries: not a result
      out.tolerance = std::numeric_limits<double>::infinity();
      out.timing += "; halo pushes elided, result not checked";
    }
  } catch (const gpsm::Error& e) {
    return fail(e.what());
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_cg_app() { return std::make_unique<CgApp>(); }

}  // namespace gpsm::apps::cg
