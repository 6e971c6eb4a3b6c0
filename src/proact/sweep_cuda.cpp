// `gpsm proact`'s run on the GPUs: calibration of the producer's compute, the baselines and the
// sweep over (agent, chunk size, transfer threads), every run verified. Host logic over the Engine.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scope/results.hpp"
#include "proact/engine.hpp"

namespace gpsm::proact {

namespace {

double median3(const std::function<double()>& f) {
  std::vector<double> v = {f(), f(), f()};
  std::sort(v.begin(), v.end());
  return v[1];
}

}  // namespace

std::uint32_t Engine::calibrate(double ratio, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& s) {
    if (progress) progress(s);
  };
  say("calibrating: copies alone");
  const double transfer = median3([&] { return run_transfer().total_s; });
  const double target = ratio * transfer;
  auto compute_at = [&](std::uint32_t w) {
    set_work(w);
    return median3([&] { return run_compute(false).total_s; });
  };
  const double t0 = compute_at(0);
  std::uint32_t w1 = 16;
  double t1 = compute_at(w1);
  constexpr std::uint32_t kMaxWork = 1u << 20;
  while (t1 < std::min(target, 2 * t0) && w1 < kMaxWork) {
    w1 = std::min(kMaxWork, w1 * 4);
    t1 = compute_at(w1);
    say(fmt::format("calibrating: work {} -> compute {:.1f} us (target {:.1f} us)", w1, t1 * 1e6, target * 1e6));
  }
  if (target <= t0) {
    set_work(0);
    say(fmt::format("calibrating: the bare producer ({:.1f} us) already exceeds the target {:.1f} us: work 0",
                    t0 * 1e6, target * 1e6));
    return 0;
  }
  // time is ~linear in work: two secant steps
  std::uint32_t wa = 0, wb = w1;
  double ta = t0, tb = t1;
  std::uint32_t w = w1;
  for (int step = 0; step < 2 && tb != ta; ++step) {
    const double x = wa + (target - ta) * (static_cast<double>(wb) - wa) / (tb - ta);
    w = static_cast<std::uint32_t>(std::clamp(std::lround(x), 0L, static_cast<long>(kMaxWork)));
    const double t = compute_at(w);
    say(fmt::format("calibrating: work {} -> compute {:.1f} us (target {:.1f} us)", w, t * 1e6, target * 1e6));
    wa = wb, ta = tb, wb = w, tb = t;
  }
  set_work(w);
  return w;
}

ProactRun run_proact(const ProactConfig& cfg) {
  validate(cfg);
  auto say = [&](const std::string& s) {
    if (cfg.progress) cfg.progress(s);
  };
  ProactRun run;
  run.cfg = cfg;
  Engine e(cfg);
  run.ce_support = e.ce_support();
  run.base.work = cfg.work != 0 ? cfg.work : e.calibrate(cfg.compute_ratio, cfg.progress);
  e.set_work(run.base.work);

  auto reps = [&](const std::string& what, const std::function<RunTimes()>& f, std::vector<double>* total,
                  std::vector<double>* tail) {
    for (int i = 0; i < cfg.warmup + cfg.reps; ++i) {
      say(fmt::format("{}: rep {}/{}{}", what, i + 1, cfg.warmup + cfg.reps, i < cfg.warmup ? " (warm-up)" : ""));
      const RunTimes t = f();
      if (i < cfg.warmup) continue;
      total->push_back(t.total_s);
      if (tail) tail->push_back(t.tail_s);
    }
  };
  reps("compute alone", [&] { return e.run_compute(false); }, &run.base.compute_s, nullptr);
  reps("copies alone", [&] { return e.run_transfer(); }, &run.base.transfer_s, nullptr);

  // the configurations: memcpy first (the reference of every speedup), then as asked
  std::vector<ConfigResult> todo;
  auto add = [&](Agent a, std::uint64_t ch, int th) {
    ConfigResult c;
    c.agent = a;
    c.chunk_bytes = ch;
    c.threads = th;
    todo.push_back(c);
  };
  add(Agent::memcpy, 0, 0);
  for (Agent a : cfg.agents) {
    if (a == Agent::memcpy) continue;
    if (!chunked(a)) {
      add(a, 0, 0);
      continue;
    }
    for (std::uint64_t ch : cfg.chunks) {
      if (uses_threads(a))
        for (int th : cfg.threads) add(a, ch, th);
      else
        add(a, ch, 0);
    }
  }
  // copy_engine last, largest chunks first: its enqueued-up-front waits are the one mechanism that
  // can block the host (a stream queue fuller than the machine allows); the gate then opens on its
  // timeout and the run fails. Everything else is measured before it tries, and once it fails
  // with an error the smaller chunks (more operations still) are skipped.
  const auto ce = std::stable_partition(todo.begin(), todo.end(),
                                        [](const ConfigResult& c) { return c.agent != Agent::copy_engine; });
  std::stable_sort(ce, todo.end(),
                   [](const ConfigResult& a, const ConfigResult& b) { return a.chunk_bytes > b.chunk_bytes; });
  bool any_chunked = false;
  for (Agent a : cfg.agents) any_chunked |= chunked(a);
  if (any_chunked)
    for (std::uint64_t ch : cfg.chunks) {
      std::vector<double> t;
      reps(fmt::format("tracked producer, chunk {}", gpsm::format_size(ch)), [&] { return e.run_compute(true, ch); },
           &t, nullptr);
      run.base.tracked_s.emplace_back(ch, t);
    }

  std::string abort_reason, ce_failed;
  for (auto& c : todo) {
    const std::string name =
        fmt::format("{}{}{}", agent_name(c.agent),
                    chunked(c.agent) ? " chunk " + gpsm::format_size(c.chunk_bytes) : std::string(),
                    uses_threads(c.agent) ? fmt::format(" {} threads", c.threads) : std::string());
    if (!abort_reason.empty()) {
      c.status = "skipped";
      c.reason = abort_reason;
      continue;
    }
    if (c.agent == Agent::copy_engine && !ce_failed.empty()) {  // smaller chunks only enqueue more
      c.status = "skipped";
      c.reason = "not run: copy_engine failed at a larger chunk (" + ce_failed + ")";
      continue;
    }
    if (c.agent == Agent::copy_engine) c.mechanism = e.ce_mechanism();
    if (c.agent == Agent::persistent) c.mechanism = "polling_warps";
    if (c.agent == Agent::device_launch) c.mechanism = "cuda_dynamic_parallelism";
    if (c.agent == Agent::inline_store) c.mechanism = "peer_stores";
    if (c.agent == Agent::memcpy) c.mechanism = "cudaMemcpyPeerAsync";
    const std::string why = e.unsupported(c.agent, c.chunk_bytes, c.threads);
    if (!why.empty()) {
      c.status = "skipped";
      c.reason = why;
      say(name + ": skipped: " + why);
      continue;
    }
    try {
      reps(name, [&] { return e.run_agent(c.agent, c.chunk_bytes, c.threads); }, &c.total_s, &c.tail_s);
      c.reps_verified = cfg.warmup + cfg.reps;
    } catch (const VerifyError& err) {
      c.status = "failed";
      c.reason = err.what();
      say(name + ": failed: " + c.reason);
      c.total_s.clear();
      c.tail_s.clear();
    } catch (const Error& err) {
      // a CUDA error or a timed-out wait: go on only while every GPU still runs work
      c.status = "failed";
      c.reason = err.what();
      c.total_s.clear();
      c.tail_s.clear();
      say(name + ": failed: " + c.reason);
      if (c.agent == Agent::copy_engine) ce_failed = gpsm::format_size(c.chunk_bytes);
      if (!e.healthy())
        abort_reason = "not run: the sweep stopped after " + name + " failed and left a GPU unusable";
    }
  }
  run.results = std::move(todo);
  return run;
}

}  // namespace gpsm::proact
