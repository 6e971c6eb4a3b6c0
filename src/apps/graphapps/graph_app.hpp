#pragma once
// What the three graph apps (pagerank, sssp, als) share on top of the exchange layer: the paradigm
// checks, a per-request run (GraphRun) with GPS tracking and link-byte counting, and the timed
// reps with their verification (graph_app_cuda.cpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "apps/graphapps/graph_exchange.hpp"
#include "apps/graphapps/graph_spec.hpp"
#include "apps/harness/app.hpp"
#include "common/nccl_comms.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::graphapps {

// The paradigms the graph apps implement.
bool graph_has(Paradigm p);
// Why the request cannot run (empty: it can).
std::string graph_unsupported(const RunRequest& r, const char* app);
// The Problem for a --size graph spec (parse_graph_spec) and --iters (0: default_iters).
Problem graph_problem(const std::string& size, int iters, int default_iters);

// One request's run: the published vectors and the phases of an iteration.
class GraphRun {
 public:
  GraphRun(gps::Context& ctx, Paradigm par);
  virtual ~GraphRun();
  // Initial values and poison (untimed). The first call of a gps run learns the subscriptions:
  // initial values, tracking on, learn_iters() iterations, tracking off, initial values again.
  void init();
  // The timed iterations (host wall clock to every GPU idle); returns the iterations run.
  int solve_timed(double* seconds);
  // Bytes between GPUs of one iteration: the exchanges' publish_bytes plus extra_bytes(); gps and
  // gps_all: counted by the runtime over one more iteration; < 0: not known (um, um_hints).
  double link_bytes_per_iter();
  // gps, gps_all: pages of every published array by subscriber count (GPS Fig. 9).
  std::vector<double> subscriber_pages() const;
  std::string hint_problem() const;

 protected:
  virtual void write_initial() = 0;
  virtual int solve() = 0;                 // all iterations; ends with every GPU idle
  virtual void iterate_untimed(int n) = 0; // n iterations from the current state
  virtual int learn_iters() const { return 2; }
  virtual double extra_bytes() const { return 0; }  // rdl: remote reads of an iteration
  Exchange& add(std::unique_ptr<Exchange> e);
  NcclComms* comms();

  gps::Context& ctx_;
  Paradigm par_;
  int n_;
  PhaseEvents ev_;
  std::vector<std::unique_ptr<Exchange>> ex_;

 private:
  std::unique_ptr<NcclComms> comms_;
  bool tracked_ = false;
};

// The timing strings' note on how the vectors moved, where it is not the plain exchange: proact on
// more than one GPU ("; ..."), else empty.
std::string exchange_timing_note(Paradigm p, int gpus);

// A failed outcome with its reason and no times.
RunOutcome graph_failed(const std::string& why);

// The frame of every graph app's run(): an unsupported request (graph_unsupported) is said, not
// run; otherwise body() runs, and a gpsm::Error or running out of host memory (building the graph
// or its reference) fails the run with the reason.
RunOutcome guarded_graph_run(const RunRequest& req, const char* app, const std::function<RunOutcome()>& body);

// Warm-ups and timed reps of `run`, then check(out) fills error/tolerance and returns why the
// last rep failed (empty: ok); a failed run keeps no times.
RunOutcome timed_graph_run(GraphRun& run, const RunRequest& req, const std::function<std::string(RunOutcome&)>& check);

}  // namespace gpsm::apps::graphapps
