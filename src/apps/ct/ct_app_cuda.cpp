// X-ray CT reconstruction (`gpsm bench --app ct`): PWLS-OS of a simulated helical scan of the
// 3D phantom, split over GPUs as the PROACT dissertation's case study splits it (ct_multi.hpp).
// Every run is checked against the one-GPU run of the same problem (pwls_os_gpu, itself checked
// against the CPU core by the GPU tests): image within ct_verify.hpp's tolerance in HU, cost
// within 1e-5 and never rising; the RMSE against the phantom per iteration goes into the timing
// text. docs/ct.md describes the app.
#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/ct/ct_bench_spec.hpp"
#include "apps/ct/ct_gpu.hpp"
#include "apps/ct/ct_multi.hpp"
#include "apps/ct/ct_phantom.hpp"
#include "apps/ct/ct_projector.hpp"
#include "apps/ct/ct_slices.hpp"
#include "apps/ct/ct_verify.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "apps/harness/proact_bench.hpp"
#include "apps/harness/reference_cache.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {
namespace {

using namespace gpsm::apps::ct;

struct CtData {
  std::vector<float> mu;  // the phantom (1/mm): the truth the RMSE is taken against
  Scan scan;
  // Shared by gpsm bench --isolate's children (reference_cache.hpp): 14 s to make at the seed's
  // size on one H200 (its projection of every view and the noise), 3.8 GB to read back.
  friend void ref_fields(RefFields& f, CtData& d) {
    f.array(d.mu);
    f.value(d.scan.i0);
    f.value(d.scan.seed);
    f.array(d.scan.y);
    f.array(d.scan.w);
  }
};

class CtApp final : public App {
 public:
  const char* name() const override { return "ct"; }
  const char* description() const override {
    return "X-ray CT model-based reconstruction (PWLS-OS, separable-footprint projector) of a simulated helical "
           "scan of a 3D head phantom: forward projection split over views, back projection and update over "
           "y-slabs, residual rows and image slabs exchanged after each phase (PROACT dissertation ch. III)";
  }
  std::string default_sizes() const override { return "medium,seed"; }
  Problem problem(const std::string& size, int iters) const override {
    const CtBenchSpec s = parse_bench_spec(size);
    Problem p;
    p.graph = size;
    p.n[0] = s.g.nx, p.n[1] = s.g.ny, p.n[2] = s.g.nz;
    p.iters = iters > 0 ? iters : kDefaultIterations;
    return p;
  }
  double host_bytes(const Problem& p) const override { return ct_host_bytes(parse_bench_spec(p.graph)); }
  double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm) const override {
    (void)gpus;  // every GPU holds the whole scan and image; rank 0 also the cost's projection
    return ct_gpu_bytes_per_gpu(parse_bench_spec(p.graph));
  }
  bool has(Paradigm p) const override {
    return p == Paradigm::single || p == Paradigm::memcpy || p == Paradigm::nccl || p == Paradigm::proact ||
           p == Paradigm::gps || p == Paradigm::infinite;
  }
  bool proact_chunk_is_choice() const override { return true; }  // any whole number of voxel columns
  RunOutcome run(const RunRequest& req) override;

 private:
  const CtData& data(const CtBenchSpec& s, int device, const RunRequest& req);
  const PwlsRun& reference(const CtBenchSpec& s, const CtData& d, int iters, int device, const RunRequest& req);
  // --pictures: the reference run's slices and cost curve, once per size and folder (untimed).
  void pictures(const CtBenchSpec& s, const CtData& d, const PwlsRun& ref, const RunRequest& req);
  std::set<std::string> pictured_;

  std::string data_key_;
  std::unique_ptr<CtData> data_;
  // d = A^T W A 1 of data_'s scan from the first solver built for it: the paradigms after it skip
  // its two projections of every view (~11 s at the seed's size on one H200) and share its bits.
  std::shared_ptr<const std::vector<float>> curvature_;
  std::map<std::string, PwlsRun> refs_;
};

void say(const RunRequest& req, const std::string& s) {
  if (req.progress) req.progress(s);
}

// The scan's line integrals come from the GPU projector (the CPU's would take minutes at medium).
const CtData& CtApp::data(const CtBenchSpec& s, int device, const RunRequest& req) {
  const std::string key = s.g.label();
  if (!data_ || key != data_key_) {
    data_.reset();
    curvature_.reset();
    refs_.clear();
    auto make = [&] {
      say(req, "phantom and scan of " + key);
      CtData d;
      d.mu = phantom_mu(s.g);
      d.scan = scan_from_line_integrals(forward_project_gpu(s.g, d.mu, all_views(s.g), device), kBenchI0,
                                        kBenchScanSeed);
      return d;
    };
    data_ = std::make_unique<CtData>(cached_reference<CtData>(req.references, "ct/" + key + "/data", make, req.progress));
    data_key_ = key;
  }
  return *data_;
}

const PwlsRun& CtApp::reference(const CtBenchSpec& s, const CtData& d, int iters, int device,
                                const RunRequest& req) {
  const std::string key = fmt::format("{}/{}/{}", s.g.label(), s.subsets, iters);
  auto it = refs_.find(key);
  if (it == refs_.end()) {
    auto compute = [&] {
      say(req, "one-GPU reference run");
      PwlsSettings set;
      set.subsets = s.subsets;
      return pwls_os_gpu(s.g, d.scan, set, std::vector<float>(static_cast<std::size_t>(s.g.voxels())), iters, d.mu,
                         device);
    };
    it = refs_.emplace(key, cached_reference<PwlsRun>(req.references, "ct/" + key, compute, req.progress)).first;
  }
  return it->second;
}

void CtApp::pictures(const CtBenchSpec& s, const CtData& d, const PwlsRun& ref, const RunRequest& req) {
  if (req.pictures_dir.empty()) return;
  const std::string key = req.pictures_dir + "\n" + req.problem.graph;
  if (!pictured_.insert(key).second) return;
  say(req, "pictures: the first iterate");
  PwlsSettings set;
  set.subsets = s.subsets;
  SlicePictures p;
  p.size = req.problem.graph;
  p.g = s.g;
  p.phantom = d.mu;
  p.first = pwls_os_gpu(s.g, d.scan, set, std::vector<float>(static_cast<std::size_t>(s.g.voxels())), 1, {},
                        req.devices.front())
                .x;
  p.final_image = ref.x;
  p.subsets = s.subsets;
  p.cost = ref.cost;
  p.rmse_hu = ref.rmse_hu;
  say(req, "pictures: wrote " + write_slice_pictures(req.pictures_dir, p));
}

// "a, b, c": general format with `digits` significant digits, or fixed with `digits` decimals.
std::string series(const std::vector<double>& v, int digits, bool fixed) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + (fixed ? fmt::format("{:.{}f}", v[i], digits) : fmt::format("{:.{}g}", v[i], digits));
  return out;
}

RunOutcome CtApp::run(const RunRequest& req) {
  RunOutcome out;
  const int n = static_cast<int>(req.devices.size());
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
  if (!has(req.paradigm))
    return unsupported(std::string("the ") + paradigm_name(req.paradigm) +
                       " paradigm is not implemented for ct (its paradigms: single, memcpy, nccl, proact, gps, infinite; "
                       "docs/ct.md)");
  if (req.paradigm == Paradigm::single && n != 1) return unsupported("single runs on one GPU");
  if (req.paradigm == Paradigm::nccl && n > 1 && !nccl_built()) return unsupported(kNcclMissing);
  CtBenchSpec spec;
  try {
    spec = parse_bench_spec(req.problem.graph);
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  }
  if (n > spec.g.ny) return unsupported(fmt::format("{} y-planes cannot be split over {} GPUs", spec.g.ny, n));
  const int iters = req.problem.iters;
  // proact's cache key size: the image, the array every GPU publishes to every other.
  const std::uint64_t key_size = static_cast<std::uint64_t>(spec.g.voxels()) * 4;
  const ProactChunk asked = ask_proact_chunk(req, key_size);
  MultiOptions opt;
  std::string note;
  switch (req.paradigm) {
    case Paradigm::single:
    case Paradigm::memcpy: opt.exchange = CtExchange::copies; break;
    case Paradigm::nccl: opt.exchange = CtExchange::nccl; break;
    case Paradigm::infinite: opt.exchange = CtExchange::elided; break;
    case Paradigm::gps: opt.exchange = CtExchange::gps; break;
    default:  // proact
      if (asked.agent == proact::Agent::memcpy) {
        opt.exchange = CtExchange::copies;
        note = proact_agent_note(req.paradigm, asked.agent);
      } else {
        opt.exchange = CtExchange::proact;
        if (asked.bytes > 0) opt.chunk_bytes = static_cast<std::int64_t>(asked.bytes);
      }
  }
  try {
    const CtData& d = data(spec, req.devices.front(), req);
    const PwlsRun& ref = reference(spec, d, iters, req.devices.front(), req);
    pictures(spec, d, ref, req);
    gps::Context ctx(req.devices, gps::Settings::from_env());
    say(req, "setting up");
    PwlsSettings set;
    set.subsets = spec.subsets;
    // d is shared with the later children of --isolate too (reference_cache.hpp): its two
    // projections of every view are the longest part of a solver's setup at the seed's size.
    const std::string d_key = "ct/" + spec.g.label() + "/curvature";
    if (!curvature_)
      if (auto c = load_shared<std::vector<float>>(req.references, d_key, req.progress))
        curvature_ = std::make_shared<const std::vector<float>>(std::move(*c));
    opt.curvature = curvature_;
    MultiGpuPwls run(ctx, spec.g, d.scan, set, opt);
    if (!curvature_) share(req.references, d_key, *run.curvature(), req.progress);
    curvature_ = run.curvature();
    const std::vector<float> x0(static_cast<std::size_t>(spec.g.voxels()), 0.0f);
    PwlsRun got;
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      const bool warm = k < req.warmup;
      say(req, fmt::format("{} rep {}/{}", warm ? "warm-up" : "timed", warm ? k + 1 : k - req.warmup + 1,
                           warm ? req.warmup : req.reps));
      std::vector<double> secs;
      // The cost and the image only for the rep that is verified, the last.
      const bool last = k + 1 == req.warmup + req.reps;
      got = run.solve(x0, iters, d.mu, &secs,
                      last ? MultiGpuPwls::Record::every_iteration : MultiGpuPwls::Record::nothing);
      double total = 0;
      for (double t : secs) total += t;
      if (!warm) out.sec_per_iter.push_back(total / std::max(1, iters));
    }
    out.iterations = iters;
    out.link_bytes_per_iter = run.link_bytes_per_iteration();
    out.timing = run.timing();
    out.timing += "; per GPU per iteration of the last rep (CUDA events between the phases, ms):";
    const std::vector<PhaseTimes> ph = run.phase_times();
    for (std::size_t r = 0; r < ph.size(); ++r)
      out.timing += fmt::format(" GPU {}: forward {:.2f}, residual exchange {:.2f}, update {:.2f}, image exchange {:.2f}{}",
                                req.devices[r], ph[r].forward_ms, ph[r].residual_exchange_ms, ph[r].update_ms,
                                ph[r].image_exchange_ms, r + 1 < ph.size() ? ";" : "");
    if (req.paradigm == Paradigm::proact) {
      out.proact.requested = asked.bytes;
      out.proact.chunk_bytes = static_cast<std::uint64_t>(run.chunk_bytes());
      out.proact.key_size = key_size;
      out.proact.agent = proact::agent_name(opt.exchange == CtExchange::proact ? proact::Agent::copy_engine
                                                                                : proact::Agent::memcpy);
      out.proact.source = asked.source.empty() ? "the app's default chunk (1 MiB of whole voxel columns)" : asked.source;
      if (asked.agent == proact::Agent::inline_store)
        out.proact.source += "; ct has no inline agent (no p2p_inline paradigm): copy engines ran";
    }
    const bool elided = opt.exchange == CtExchange::elided && n > 1;
    if (elided) {
      out.tolerance = std::numeric_limits<double>::infinity();
      out.timing += "; exchanges elided, result not checked";
    } else {
      const RunCheck c = check_run(ref, got, spec.subsets);
      out.error = c.difference_hu;
      out.tolerance = c.tolerance_hu;
      if (!c.failure.empty()) return fail("verification failed against the one-GPU run: " + c.failure);
    }
    out.timing += fmt::format("; error and tolerance: the image's largest difference from the one-GPU run, HU; "
                              "{} subsets; cost per iteration {}; RMSE vs the phantom per iteration {} HU",
                              spec.subsets, series(got.cost, 6, false), series(got.rmse_hu, 1, true));
    out.timing += note;
  } catch (const gpsm::Error& e) {
    return fail(e.what());
  } catch (const std::invalid_argument& e) {
    return fail(e.what());
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_ct_app() { return std::make_unique<CtApp>(); }

}  // namespace gpsm::apps
