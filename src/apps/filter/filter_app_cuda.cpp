// Image filtering (`gpsm bench --app filter`; GPU-SM paper §3.3.2, Table 2): a K x K filter with
// clamp-to-edge borders applied `iters` times ping-pong to a generated single-channel float image,
// rows split in contiguous slabs over the GPUs, on every paradigm of filter_runs.hpp, the last
// timed rep checked against the CPU reference bit for bit.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "apps/filter/filter_reference.hpp"
#include "apps/filter/filter_runs.hpp"
#include "apps/filter/filter_spec.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/memory_estimate.hpp"
#include "apps/harness/reference_cache.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps {
namespace {

constexpr std::uint32_t kImageSeed = 1;

// Passes per rep when --iters is not given: about 2^32 pixel updates (256 at 4096^2), at least 10
// and at most 1000, so a rep is a steady state of many launches at every size and the CPU
// reference stays near 2^32 * K^2 multiply-adds.
int default_passes(std::int64_t w, std::int64_t h) {
  const double p = 4294967296.0 / (static_cast<double>(w) * static_cast<double>(h));
  return static_cast<int>(std::clamp(p, 10.0, 1000.0));
}

class FilterApp final : public App {
 public:
  const char* name() const override { return "filter"; }
  const char* description() const override {
    return "image filtering (GPU-SM): a KxK Gaussian, clamp-to-edge, applied repeatedly to a float image split in "
           "row slabs; --size WxH:kK[:constant|replicated|remote] (where the weights live)";
  }
  std::string default_sizes() const override { return "4096x4096:k5,24576x24576:k5"; }
  Problem problem(const std::string& size, int iters) const override {
    const filter::FilterSize f = filter::parse_filter_size(size);
    Problem p;
    p.n[0] = f.width;
    p.n[1] = f.height;
    p.n[2] = f.k;
    p.spec = f.label();  // the label, parsed again by run() for the weights' place
    p.iters = iters > 0 ? iters : default_passes(f.width, f.height);
    return p;
  }
  // The input, the reference's two images while it runs, the one it keeps and the gathered one.
  double host_bytes(const Problem& p) const override {
    return 5.0 * static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]) * sizeof(float);
  }
  // The largest slab's two buffers with their halo rows (the local-buffer paradigms; the
  // distributed array's blocks are smaller, um holds more and says so when it fails); gps: both
  // whole images on every GPU (its replicas).
  double gpu_bytes_per_gpu(const Problem& p, int gpus, Paradigm par) const override {
    if (par == Paradigm::gps) return gps_replica_bytes(static_cast<double>(p.n[0]) * static_cast<double>(p.n[1]));
    const double rows = static_cast<double>((p.n[1] + gpus - 1) / gpus + (p.n[2] - 1));
    return 2.0 * rows * static_cast<double>(p.n[0]) * sizeof(float);
  }
  bool has(Paradigm p) const override { return filter::filter_has(p); }
  RunOutcome run(const RunRequest& r) override;

 private:
  const filter::Image& input(const Problem& p) {
    const std::string key = fmt::format("{}x{}", p.n[0], p.n[1]);
    if (input_key_ != key) {
      input_ = filter::test_image(p.n[0], p.n[1], kImageSeed);
      input_key_ = key;
    }
    return input_;
  }
  const filter::Image& reference(const Problem& p, const filter::FilterSize& f, const RunRequest& r) {
    // Where the weights live does not change the result: one reference for the three places.
    const std::string key = fmt::format("{}x{}:k{}:{}", f.width, f.height, f.k, p.iters);
    auto it = refs_.find(key);
    if (it == refs_.end()) {
      refs_.clear();  // one kept: the large images are gigabytes
      auto compute = [&] {
        if (r.progress) r.progress("CPU reference " + key);
        return filter::filter_repeated(input(p), filter::gauss_weights(f.k), f.k, p.iters);
      };
      it = refs_.emplace(key, cached_reference<filter::Image>(r.references, "filter/" + key, compute, r.progress)).first;
    }
    return it->second;
  }
  std::string input_key_;
  filter::Image input_;
  std::map<std::string, filter::Image> refs_;
};

RunOutcome FilterApp::run(const RunRequest& req) {
  RunOutcome out;
  const Problem& p = req.problem;
  const int n = static_cast<int>(req.devices.size());
  const filter::FilterSize f = filter::parse_filter_size(p.spec);
  if (!has(req.paradigm)) {
    out.status = RunStatus::unsupported;
    out.reason = std::string("the ") + paradigm_name(req.paradigm) + " paradigm is not implemented for filter";
    return out;
  }
  if (req.paradigm == Paradigm::single && n != 1) {
    out.status = RunStatus::unsupported;
    out.reason = "single runs on one GPU";
    return out;
  }
  if (const std::string why = filter::split_problem(f.height, f.k, n); !why.empty()) {
    out.status = RunStatus::unsupported;
    out.reason = why;
    return out;
  }
  const filter::Image& ref = reference(p, f, req);
  filter::FilterJob job;
  job.input = &input(p);
  job.weights = filter::gauss_weights(f.k);
  job.k = f.k;
  job.at = f.at;
  filter::Image got;
  try {
    gps::Context ctx(req.devices, gps::Settings::from_env());
    auto run = filter::make_filter_run(ctx, req.paradigm, job);
    out.timing = run->timing() + fmt::format("; weights in {} memory", filter::weights_at_name(f.at));
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      run->init();
      if (req.progress)
        req.progress(fmt::format("{} rep {}/{}", k < req.warmup ? "warm-up" : "timed",
                                 k < req.warmup ? k + 1 : k - req.warmup + 1, k < req.warmup ? req.warmup : req.reps));
      const double sec = run->solve(p.iters);
      if (k >= req.warmup) out.sec_per_iter.push_back(sec / std::max(1, p.iters));
    }
    out.iterations = p.iters;
    got = run->gather();
    out.link_bytes_per_iter = run->link_bytes_per_iter();
  } catch (const gpsm::Error& e) {
    out.status = RunStatus::failed;
    out.reason = e.what();
    out.sec_per_iter.clear();
    return out;
  }
  // Each pass reads every pixel once from memory and writes it once (the taps beyond the first
  // come from the caches): the compulsory traffic summed over the GPUs.
  out.mem_bytes_per_iter = 2.0 * static_cast<double>(f.width) * static_cast<double>(f.height) * sizeof(float);
  const std::string diff = filter::compare_bits(got, ref);
  if (!diff.empty()) {
    double worst = 0;
    for (std::size_t i = 0; i < got.px.size() && i < ref.px.size(); ++i) {
      const double d = std::abs(static_cast<double>(got.px[i]) - ref.px[i]) / std::max(1e-30, std::abs(static_cast<double>(ref.px[i])));
      worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    }
    out.error = worst;
  }
  if (req.paradigm == Paradigm::infinite && n > 1) {  // computed without its neighbours' rows: not a result
    out.tolerance = std::numeric_limits<double>::infinity();
    out.timing += "; transfers elided, result not checked";
    return out;
  }
  out.tolerance = 0;  // bit for bit
  if (!diff.empty()) {
    out.status = RunStatus::failed;
    out.reason = "verification failed: " + diff;
    out.sec_per_iter.clear();
  }
  return out;
}

}  // namespace

std::unique_ptr<App> make_filter_app() { return std::make_unique<FilterApp>(); }

}  // namespace gpsm::apps
