#pragma once
// What the three graph apps (pagerank, sssp, als) share on top of the exchange layer: the paradigm
// checks, a per-request run (GraphRun) with GPS tracking and link-byte counting, and the timed
// reps with their verification (graph_app_cuda.cpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/graph/graph_exchange.hpp"
#include "apps/graph/graph_spec.hpp"
#include "apps/harness/app.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::graph {

// The paradigms the graph apps implement.
bool graph_has(Paradigm p);
// Why the request cannot run (empty: it can).
std::string graph_unsupported(const RunRequest& r, const char* app);
// The Problem for a --size graph spec (parse_graph_spec) and --iters (0: default_iters).
Problem graph_problem(const std::string& size, int iters, int default_iters);
// Peak host bytes of building p's graph (graph_build_host_bytes); 0 for a file.
double graph_problem_host_bytes(const Problem& p);

// One request's run: the published vectors and the phases of an iteration.
class GraphRun {
 public:
  // proact_chunk: the proact exchanges' bytes per chunk (graph_proact_chunk; 0: the default).
  GraphRun(gps::Context& ctx, Paradigm par, std::uint64_t proact_chunk = 0);
  virtual ~GraphRun();
  // Initial values and poison (untimed). The first call of a gps run learns the subscriptions:
  // initial values, tracking on, learn_iters() iterations, tracking off, initial values again.
  void init();
  // The timed iterations (host wall clock to every GPU idle); returns the iterations run.
  int solve_timed(double* seconds);
  // Bytes between GPUs of one iteration: the exchanges' publish_bytes plus extra_bytes(); gps and
  // gps_all: counted by the runtime over one more iteration; < 0: not known (um, um_hints).
  double link_bytes_per_iter();
  // gps, gps_all: pages of every published array by subscriber count (GPS paper Fig 9).
  std::vector<double> subscriber_pages() const;
  std::string hint_problem() const;
  // proact: a full chunk as built (the largest over the published vectors and ranks); else 0.
  std::uint64_t proact_chunk_bytes() const;

 protected:
  virtual void write_initial() = 0;
  virtual int solve() = 0;                 // all iterations; ends with every GPU idle
  virtual void iterate_untimed(int n) = 0; // n iterations from the current state
  virtual int learn_iters() const { return 2; }
  virtual double extra_bytes() const { return 0; }  // rdl: remote reads of an iteration
  Exchange& add(std::unique_ptr<Exchange> e);
  // A published vector's exchange in this run's paradigm: the nccl communicators and the proact
  // chunk are this run's (rows_per_block: the writing kernel's, for proact).
  std::unique_ptr<Exchange> exchange(const VecLayout& l, int buffers, const std::string& name,
                                     std::int64_t rows_per_block);
  NcclComms* comms();

  gps::Context& ctx_;
  Paradigm par_;
  int n_;
  PhaseEvents ev_;
  std::vector<std::unique_ptr<Exchange>> ex_;

 private:
  std::unique_ptr<NcclComms> comms_;
  bool tracked_ = false;
  std::uint64_t proact_chunk_ = 0;
};

// The timing strings' note on how the vectors moved, where it is not the plain exchange: proact on
// more than one GPU ("; ..."; with the memcpy or inline agent: which paradigm's exchange ran), else
// empty. chunk: graph_proact_chunk's.
std::string exchange_timing_note(const RunRequest& req, const ProactChunk& chunk);

// proact: the agent and chunk for this request: RunRequest::proact_chunk asked with the app's key
// size (the bytes of the vectors it publishes each iteration, docs/proact.md), then resolve_chunk
// (GPSM_GRAPH_PROACT_CHUNK, the default). Other paradigms: {} (the request is not asked). The run
// is built with proact_runs_as(req.paradigm, chunk.agent) (proact_bench.hpp): the memcpy agent
// builds memcpy's exchange, inline p2p_inline's.
ProactChunk graph_proact_chunk(const RunRequest& req, std::uint64_t key_size);
// proact: what the run used, into out.proact (agent, chunk as built by `run`, request, source, key size).
void note_proact(RunOutcome& out, const RunRequest& req, const ProactChunk& chunk, std::uint64_t key_size,
                 const GraphRun& run);

// A failed outcome with its reason and no times.
RunOutcome graph_failed(const std::string& why);

// The frame of every graph app's run(): an unsupported request (graph_unsupported) is said, not
// run; otherwise body() runs, and a gpsm::Error or running out of host memory (building the graph
// or its reference) fails the run with the reason.
RunOutcome guarded_graph_run(const RunRequest& req, const char* app, const std::function<RunOutcome()>& body);

// Warm-ups and timed reps of `run`, then check(out) fills error/tolerance and returns why the
// last rep failed (empty: ok); a failed run keeps no times.
RunOutcome timed_graph_run(GraphRun& run, const RunRequest& req, const std::function<std::string(RunOutcome&)>& check);

}  // namespace gpsm::apps::graph
