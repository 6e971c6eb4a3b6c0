#include "apps/graph/graph_app.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "apps/graph/graph_exchange_proact.hpp"
#include "apps/graph/graph_proact_plan.hpp"
#include "apps/harness/gps_link_bytes.hpp"
#include "apps/harness/proact_bench.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::graph {

bool graph_has(Paradigm p) {
  switch (p) {
    case Paradigm::single:
    case Paradigm::memcpy:
    case Paradigm::um:
    case Paradigm::um_hints:
    case Paradigm::rdl:
    case Paradigm::p2p_inline:
    case Paradigm::gps:
    case Paradigm::gps_all:
    case Paradigm::infinite:
    case Paradigm::proact:
      return true;
    case Paradigm::nccl:
      return nccl_built();
    default:
      return false;
  }
}

std::string graph_unsupported(const RunRequest& r, const char* app) {
  const int n = static_cast<int>(r.devices.size());
  if (r.paradigm == Paradigm::nccl && !nccl_built()) return kNcclMissing;
  if (!graph_has(r.paradigm))
    return fmt::format("the {} paradigm is not implemented for {}", paradigm_name(r.paradigm), app);
  if (n < 1) return "no GPUs given";
  if (n > gps::kMaxDevices) return fmt::format("at most {} GPUs", gps::kMaxDevices);
  if (r.paradigm == Paradigm::single && n != 1) return "single runs on one GPU";
  return "";
}

Problem graph_problem(const std::string& size, int iters, int default_iters) {
  const GraphSpec s = parse_graph_spec(size);  // throws std::invalid_argument with the forms
  Problem p;
  p.graph = size;
  p.balance_nnz = s.balance_nnz;
  p.tol = static_cast<float>(s.tol);
  p.iters = iters > 0 ? iters : default_iters;
  return p;
}

double graph_problem_host_bytes(const Problem& p) { return graph_build_host_bytes(parse_graph_spec(p.graph)); }

GraphRun::GraphRun(gps::Context& ctx, Paradigm par, std::uint64_t proact_chunk)
    : ctx_(ctx), par_(par), n_(ctx.size()), ev_(ctx, needs_phase_events(par, ctx.size())), proact_chunk_(proact_chunk) {}

GraphRun::~GraphRun() = default;

Exchange& GraphRun::add(std::unique_ptr<Exchange> e) {
  ex_.push_back(std::move(e));
  return *ex_.back();
}

std::unique_ptr<Exchange> GraphRun::exchange(const VecLayout& l, int buffers, const std::string& name,
                                             std::int64_t rows_per_block) {
  return std::make_unique<Exchange>(ctx_, par_, l, buffers, name, comms(), rows_per_block, proact_chunk_);
}

std::uint64_t GraphRun::proact_chunk_bytes() const {
  std::uint64_t most = 0;
  for (const auto& e : ex_)
    if (const ProactShipper* s = e->proact(); s != nullptr)
      for (int r = 0; r < n_; ++r)
        if (s->split(r).rows > 0) most = std::max(most, s->split(r).chunk_bytes());
  return most;
}

NcclComms* GraphRun::comms() {
  if (par_ != Paradigm::nccl || n_ == 1) return nullptr;
  if (!comms_) comms_ = std::make_unique<NcclComms>(ctx_);
  return comms_.get();
}

void GraphRun::init() {
  if (par_ == Paradigm::gps && !tracked_) {
    write_initial();
    ctx_.tracking_start();
    iterate_untimed(learn_iters());
    ctx_.tracking_stop();
    tracked_ = true;
  }
  write_initial();
  ev_.reset();
}

int GraphRun::solve_timed(double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  const int it = solve();
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return it;
}

double GraphRun::link_bytes_per_iter() {
  if (par_ == Paradigm::gps || par_ == Paradigm::gps_all) {
    std::vector<gps::Array<float>*> arrays;
    for (auto& e : ex_)
      for (int b = 0; b < 2; ++b)
        if (gps::Array<float>* a = e->gps_array(b); a != nullptr) arrays.push_back(a);
    return counted_link_bytes(arrays, [&] { iterate_untimed(1); });
  }
  double bytes = extra_bytes();
  for (auto& e : ex_) {
    const double b = e->publish_bytes();
    if (b < 0) return -1;
    bytes += b;
  }
  return bytes;
}

std::vector<double> GraphRun::subscriber_pages() const {
  if (par_ != Paradigm::gps && par_ != Paradigm::gps_all) return {};
  std::vector<double> h(static_cast<std::size_t>(n_), 0.0);
  for (const auto& e : ex_)
    for (int b = 0; b < 2; ++b)
      if (gps::Array<float>* a = e->gps_array(b); a != nullptr) {
        const auto part = subscriber_histogram(a->subscriptions().masks(), n_);
        for (int k = 0; k < n_; ++k) h[k] += part[k];
      }
  return h;
}

std::string GraphRun::hint_problem() const {
  for (const auto& e : ex_)
    if (!e->hint_problem().empty()) return e->hint_problem();
  return "";
}

std::string exchange_timing_note(const RunRequest& req, const ProactChunk& chunk) {
  if (req.paradigm != Paradigm::proact || req.devices.size() < 2) return "";
  if (proact_runs_as(req.paradigm, chunk.agent) != Paradigm::proact) return proact_agent_note(req.paradigm, chunk.agent);
  return "; each GPU's rows shipped during its kernel, in chunks, by copy engines waiting on per-chunk ready "
         "counters (the phase ends when its copies are done)";
}

ProactChunk graph_proact_chunk(const RunRequest& req, std::uint64_t key_size) {
  if (req.paradigm != Paradigm::proact) return {};
  return resolve_chunk(ask_proact_chunk(req, key_size), std::getenv("GPSM_GRAPH_PROACT_CHUNK"));
}

void note_proact(RunOutcome& out, const RunRequest& req, const ProactChunk& chunk, std::uint64_t key_size,
                 const GraphRun& run) {
  if (req.paradigm != Paradigm::proact) return;
  out.proact.requested = chunk.bytes;
  out.proact.chunk_bytes = run.proact_chunk_bytes();
  out.proact.source = chunk.source;
  out.proact.key_size = key_size;
  out.proact.agent = proact::agent_name(proact_agent_used(chunk.agent));
}

RunOutcome graph_failed(const std::string& why) {
  RunOutcome out;
  out.status = RunStatus::failed;
  out.reason = why;
  return out;
}

RunOutcome guarded_graph_run(const RunRequest& req, const char* app, const std::function<RunOutcome()>& body) {
  RunOutcome out;
  out.reason = graph_unsupported(req, app);
  if (!out.reason.empty()) {
    out.status = RunStatus::unsupported;
    return out;
  }
  try {
    return body();
  } catch (const gpsm::Error& e) {
    return graph_failed(e.what());
  } catch (const std::bad_alloc&) {
    return graph_failed("out of host memory building " + req.problem.graph +
                        " or its reference (try a smaller size)");
  }
}

RunOutcome timed_graph_run(GraphRun& run, const RunRequest& req, const std::function<std::string(RunOutcome&)>& check) {
  RunOutcome out;
  auto fail = [&](const std::string& why) {
    out.status = RunStatus::failed;
    out.reason = why;
    out.sec_per_iter.clear();
    return out;
  };
  try {
    if (const std::string h = run.hint_problem(); !h.empty()) return fail(h);
    for (int k = 0; k < req.warmup + req.reps; ++k) {
      run.init();
      const bool warm = k < req.warmup;
      if (req.progress)
        req.progress(fmt::format("{} rep {}/{}", warm ? "warm-up" : "timed", warm ? k + 1 : k - req.warmup + 1,
                                 warm ? req.warmup : req.reps));
      double sec = 0;
      const int it = run.solve_timed(&sec);
      if (!warm) {
        out.sec_per_iter.push_back(sec / std::max(1, it));
        out.iterations = it;
      }
    }
    // check reads the last rep's result before the counting iteration below changes it.
    if (const std::string why = check(out); !why.empty()) return fail(why);
    out.link_bytes_per_iter = run.link_bytes_per_iter();
    out.subscriber_pages = run.subscriber_pages();
    if (req.progress && !out.subscriber_pages.empty()) {
      double pages = 0;
      for (double v : out.subscriber_pages) pages += v;
      std::string line = fmt::format("{:.0f} pages by subscriber count:", pages);
      for (std::size_t k = 0; k < out.subscriber_pages.size(); ++k)
        line += fmt::format(" {}: {:.1f}%", k + 1, pages > 0 ? 100.0 * out.subscriber_pages[k] / pages : 0.0);
      req.progress(line);
    }
  } catch (const gpsm::Error& e) {
    return fail(e.what());
  } catch (const std::bad_alloc&) {
    return fail("out of host memory during the run (try a smaller graph)");
  }
  return out;
}

}  // namespace gpsm::apps::graph
