// Finite differences at GPU-SM's sizes (`gpsm bench --app fd3d`; GPU-SM paper §3.3.1, Table 1): a
// star of halo R (2, 4, 8, 16) on a float volume with a fixed boundary layer R cells thick, split
// along x, y or z, on single, memcpy, p2p_inline, rdl (the distributed array) and infinite
// (fd3d_runs.hpp), timed with the host wall clock around the iteration loop.
//
// Verification, bit for bit (every paradigm computes fd3d_math.hpp's order, no fused multiply-add):
// against the CPU reference when it costs at most kCpuReferenceFlops; above that (512^3 and up at
// their default iterations, 128^3 with the larger halos) against a one-GPU run of the same problem
// (single's kernel on the first GPU given), itself checked first: its last step recomputed on the
// CPU from its last two buffers on sampled planes (fd3d_reference.hpp's sampled_planes: every plane
// within R + 2 of each face and 16 more). Every run's volume is compared with the reference's on
// every cell.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_reference.hpp"
#include "apps/fd3d/fd3d_runs.hpp"
#include "apps/fd3d/fd3d_spec.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/gpu_memory.hpp"
#include "apps/harness/memory_estimate.hpp"
#include "apps/harness/reference_cache.hpp"
#include "apps/stencil/reference.hpp"  // max_rel_error
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {
namespace {

using fd3d::FdProblem;
using fd3d::FdSize;

// A CPU reference up to this many FLOPs (~1-2 s on a 16-core host; 128^3 at halo 2 and 100
// iterations is 3.6e9, 512^3 at halo 4 and 32 iterations 1.1e11); above it, the checked one-GPU run.
constexpr double kCpuReferenceFlops = 1.0e10;
constexpr int kSampledSpread = 16;

// Iterations per rep when --iters is not given: about 2^32 cell updates, at least 10 and at most
// 100 (768^3: 10, 512^3: 32, 128^3: 100).
int default_iters(const std::int64_t n[3]) {
  const double cells = static_cast<double>(n[0]) * static_cast<double>(n[1]) * static_cast<double>(n[2]);
  return static_cast<int>(std::clamp(4294967296.0 / cells, 10.0, 100.0));
}

FdProblem fd_problem(const Problem& p, int radius) {
  FdProblem f;
  for (int d = 0; d < 3; ++d) f.n[d] = p.n[d];
  f.radius = radius;
  f.iters = p.iters;
  f.seed = p.seed;
  return f;
}

double seconds(const stencil3d::Timing& t) { return t.seconds / std::max(1, t.iterations); }

class Fd3dApp final : public App {
 public:
  const char* name() const override { return "fd3d"; }
  const char* description() const override {
    return "finite differences (GPU-SM Table 1): a star of halo R = 2, 4, 8 or 16 (9R+1 FLOPs per cell), float, "
           "fixed boundary layer R thick, split along x, y or z; --size N:hR[:AXES], NXxNYxNZ:hR[:AXES] or "
           "table1[:AXES] (AXES some of x, y, z; wins over --axis)";
  }
  std::string default_sizes() const override { return "512:h4,768:h16"; }
  std::vector<std::string> expand_size(const std::string& size) const override {
    return fd3d::expand_fd_size(size);
  }
  Problem problem(const std::string& size, int iters) const override {
    const FdSize f = fd3d::parse_fd_size(size);
    Problem p;
    for (int d = 0; d < 3; ++d) p.n[d] = f.n[d];
    p.spec = f.label();
    if (f.axis) p.axis = *f.axis;
    p.iters = iters > 0 ? iters : default_iters(f.n);
    return p;
  }
  // The reference's two volumes while it runs (or the one-GPU run's two gathered buffers), the one
  // kept and the gathered result.
  double host_bytes(const Problem& p) const override {
    return 4.0 * sizeof(float) * static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]) * static_cast<double>(p.n[2]);
  }
  // The largest slab's two boxes with their halo planes (the distributed array's blocks are
  // smaller); gps: the whole volume in both arrays on every GPU (its replicas).
  double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm par) const override {
    if (par == Paradigm::gps)
      return gps_replica_bytes(static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]) * static_cast<double>(p.n[2]));
    const FdSize f = fd3d::parse_fd_size(p.spec);
    return stencil3d_gpu_bytes(p.n, fd3d::axis_of(f, p.axis), f.radius, gpus);
  }
  bool has(Paradigm p) const override { return fd3d::fd_has(p); }
  RunOutcome run(const RunRequest& r) override;

 private:
  struct Reference {
    std::vector<float> volume;
    std::string what;  // how it was made, for the timing text
    // An entry of gpsm bench --isolate's shared references (reference_cache.hpp).
    friend void ref_fields(RefFields& f, Reference& r) {
      f.array(r.volume);
      f.text(r.what);
    }
  };
  // The reference computed: on the CPU up to kCpuReferenceFlops, else a one-GPU run whose last
  // step is checked on sampled planes.
  static Reference compute_reference(const Problem& p, int radius, const std::string& key, const RunRequest& req);
  // The reference of p (any axis: the split does not change the result), computed once per
  // volume, halo, iterations and seed; throws gpsm::Error when the one-GPU run fails its check.
  const Reference& reference(const Problem& p, int radius, const RunRequest& req);
  std::string ref_key_;
  Reference ref_;  // one kept: the large volumes are gigabytes
};

const Fd3dApp::Reference& Fd3dApp::reference(const Problem& p, int radius, const RunRequest& req) {
  const FdProblem f = fd_problem(p, radius);
  const std::string key = fmt::format("{}x{}x{}:h{}:{}:{}", f.n[0], f.n[1], f.n[2], radius, f.iters, f.seed);
  if (key == ref_key_) return ref_;
  ref_key_.clear();
  ref_ = Reference{};  // the old volume goes before the new one is made
  ref_ = cached_reference<Reference>(req.references, "fd3d/" + key,
                                     [&] { return compute_reference(p, radius, key, req); }, req.progress);
  ref_key_ = key;
  return ref_;
}

Fd3dApp::Reference Fd3dApp::compute_reference(const Problem& p, int radius, const std::string& key,
                                               const RunRequest& req) {
  const FdProblem f = fd_problem(p, radius);
  Reference ref;
  if (fd3d::reference_flops(f) <= kCpuReferenceFlops) {
    if (req.progress) req.progress("CPU reference " + key);
    ref.volume = fd3d::fd3d_reference(f);
    ref.what = "the CPU reference";
    return ref;
  }
  // The one-GPU run holds the whole volume twice on the first GPU: said before allocating.
  const double need = stencil3d_gpu_bytes(p.n, Axis::z, radius, 1), free_b = gpu_free_bytes({req.devices.front()});
  if (need > 0 && free_b > 0 && need > free_b)
    throw gpsm::Error(fmt::format(
        "gpsm: fd3d {}: the one-GPU reference run that checks this size needs {:.1f} GiB on GPU {}, which has "
        "{:.1f} GiB free; use a size one GPU holds, or fewer --iters (up to {:.0e} FLOPs the CPU reference "
        "checks instead)",
        p.label(), need / 1073741824.0, req.devices.front(), free_b / 1073741824.0, kCpuReferenceFlops));
  if (req.progress) req.progress("one-GPU reference run " + key);
  Problem one = p;
  one.axis = Axis::z;
  std::vector<float> prev;
  {
    gps::Context ctx({req.devices.front()}, gps::Settings::from_env());
    auto run = fd3d::make_fd_run(ctx, Paradigm::single, one, radius);
    run->init();
    const stencil3d::Timing t = run->solve();
    if (t.iterations != p.iters)
      throw gpsm::Error(fmt::format("gpsm: fd3d: the one-GPU reference ran {} iterations, {} requested",
                                    t.iterations, p.iters));
    ref.volume = run->gather_buffer(p.iters % 2);
    if (p.iters > 0) prev = run->gather_buffer(1 - p.iters % 2);
  }
  if (p.iters > 0) {
    if (req.progress) req.progress("sampled CPU check of the one-GPU reference's last step");
    const std::string why =
        fd3d::check_step(f, prev, ref.volume, fd3d::sampled_planes(f, kSampledSpread));
    if (!why.empty())
      throw gpsm::Error("gpsm: fd3d: the one-GPU reference run's last step disagrees with the CPU: " + why);
  }
  ref.what = fmt::format("a one-GPU run (GPU {}) whose last step matched the CPU on {} sampled planes",
                          req.devices.front(), fd3d::sampled_planes(f, kSampledSpread).size());
  return ref;
}

RunOutcome Fd3dApp::run(const RunRequest& req) {
  RunOutcome out;
  const FdSize f = fd3d::parse_fd_size(req.problem.spec);
  Problem p = req.problem;
  p.axis = fd3d::axis_of(f, req.problem.axis);
  const int n = static_cast<int>(req.devices.size());
  auto stop = [&](RunStatus s, const std::string& why) {
    out.status = s;
    out.reason = why;
    out.sec_per_iter.clear();
    return out;
  };
  if (!has(req.paradigm))
    return stop(RunStatus::unsupported,
                std::string("the ") + paradigm_name(req.paradigm) + " paradigm is not implemented for fd3d");
  if (n < 1) return stop(RunStatus::unsupported, "no GPUs given");
  if (req.paradigm == Paradigm::single && n != 1) return stop(RunStatus::unsupported, "single runs on one GPU");
  // slab3d's limit: halo planes come only from the direct neighbours, which must own R planes.
  const std::int64_t interior = p.n[static_cast<int>(p.axis)] - 2 * f.radius;
  if (interior / n < f.radius)
    return stop(RunStatus::unsupported, fmt::format("{} interior planes along {} leave a GPU fewer than {} (the halo)",
                                                    interior, axis_name(p.axis), f.radius));
  const bool elided = req.paradigm == Paradigm::infinite && n > 1;
  std::vector<float> got;
  std::string ref_what;
  try {
    const Reference& ref = reference(p, f.radius, req);
    ref_what = ref.what;
    gps::Context ctx(req.devices, gps::Settings::from_env());
    auto run = fd3d::make_fd_run(ctx, req.paradigm, p, f.radius);
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      run->init();
      const bool warm = k < req.warmup;
      if (req.progress)
        req.progress(fmt::format("{} rep {}/{}", warm ? "warm-up" : "timed", warm ? k + 1 : k - req.warmup + 1,
                                 warm ? req.warmup : req.reps));
      const stencil3d::Timing t = run->solve();
      if (t.iterations != p.iters)
        return stop(RunStatus::failed, fmt::format("ran {} iterations, {} requested", t.iterations, p.iters));
      if (!warm) out.sec_per_iter.push_back(seconds(t));
    }
    out.iterations = p.iters;
    got = run->gather();
    out.link_bytes_per_iter = run->link_bytes_per_iter();
    out.timing = run->timing();
    out.error = max_rel_error(got, ref.volume);
  } catch (const gpsm::Error& e) {
    return stop(RunStatus::failed, e.what());
  }
  // Each step reads every cell once from memory and writes every updated cell once (the other
  // loads come from the tile, the register queue and the caches), summed over the GPUs.
  out.mem_bytes_per_iter = 2.0 * sizeof(float) * static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]) *
                           static_cast<double>(p.n[2]);
  if (elided) {  // computed without its neighbours' planes: not a result
    out.tolerance = std::numeric_limits<double>::infinity();
    out.timing += "; transfers elided, result not checked";
    return out;
  }
  out.tolerance = 0;  // bit for bit
  out.timing += "; checked bit for bit against " + ref_what;
  if (!(out.error == 0))
    return stop(RunStatus::failed,
                fmt::format("verification failed against {}: max relative error {:.3e} (bit for bit wanted)", ref_what,
                            out.error));
  return out;
}

}  // namespace

std::unique_ptr<App> make_fd3d_app() { return std::make_unique<Fd3dApp>(); }

}  // namespace gpsm::apps
