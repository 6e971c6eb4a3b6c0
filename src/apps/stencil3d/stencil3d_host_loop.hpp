#pragma once
// heat3d / wave3d: what the app drives (Run) and the host-driven iteration loop (HostLoop) that the
// paradigms with a kernel per GPU per iteration share: single, memcpy, p2p_inline (in
// stencil3d_app_cuda.cpp), um, um_hints, rdl, gps and nccl (in their own files).
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/harness/loop_launch.hpp"
#include "common/multi_gpu_graph.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::stencil3d {

struct Timing {
  double seconds = 0;  // host wall clock of the iterations
  int iterations = 0;
};

class Run {
 public:
  virtual ~Run() = default;
  virtual void init() = 0;                        // initial values, poison (untimed)
  virtual Timing solve() = 0;                     // the timed iterations
  virtual std::vector<float> gather() const = 0;  // the global box after the last iteration
  virtual double link_bytes_per_iter() = 0;       // < 0: not known (page migrations)
  // What the time covers when it is not the app's default (host wall clock of the loop).
  virtual std::string timing() const { return ""; }
  // Why this run cannot go on these GPUs (the app reports it unsupported), or "".
  virtual std::string check() const { return ""; }
};

// for each iteration t: for each rank r: [wait for the neighbours' iteration t - 1]
// before_step, step, after_step [record r's iteration t]; then after_iteration(t).
// With `events`, each rank's stream waits for its direct neighbours' previous iteration (their
// writes it reads, and their reads of what it is about to overwrite, done); paradigms that order
// the ranks otherwise (NCCL's matched send/recv, GPS fences) pass false. Events alternate by
// iteration parity: a neighbour earlier in the host loop has already recorded this iteration's
// event, which must not be the one waited for.
//
// Launch: a paradigm whose hooks only enqueue stream work (kernels, peer copies, the events)
// says so with graph_ok(); its whole loop, every iteration on every GPU, is then captured once
// into one CUDA graph (untimed, like the rest of setup) and each solve() is one graph launch.
// One host thread launching a kernel per GPU per iteration is otherwise what a short iteration
// costs: at 256^3 on 4 GPUs the stream loop measured bimodal, 25 or 35 us per iteration for the
// same run. GPSM_HOST_LOOP=stream keeps the per-iteration launches (apps/harness/loop_launch.hpp).

class HostLoop : public Run {
 public:
  Timing solve() override;
  std::string timing() const override;

 protected:
  HostLoop(gps::Context& ctx, const Problem& p, bool events);
  ~HostLoop() override;
  virtual bool graph_ok() const { return false; }
  virtual void before_step(int /*r*/, int /*iter*/) {}
  virtual void step(int r, int iter) = 0;  // reads buffer iter % 2, writes the other
  virtual void after_step(int /*r*/, int /*iter*/) {}
  virtual void after_iteration(int /*iter*/) {}
  // Forgets the captured graph: the next graph solve() captures again (what a hook enqueues changed).
  void drop_graph();
  // solve() over `iters` iterations launched one by one, never through the graph (setup passes
  // whose kernels must take their arguments at launch: a GPS run's tracking and counting, whose
  // views mark pages or count bytes); p_.iters is kept.
  void iterate_launched(int iters);

  gps::Context& ctx_;
  Problem p_;
  int n_;

 private:
  void enqueue_iterations();  // the loop body: every iteration's hooks, waits and records
  bool use_graph() const;

  bool events_;
  bool launched_ = false;  // in iterate_launched
  LoopLaunch launch_;
  std::vector<std::array<cudaEvent_t, 2>> ev_;  // [rank][iteration parity]
  std::unique_ptr<MultiGpuGraph> graph_;         // made at the first graph solve()
};

}  // namespace gpsm::apps::stencil3d
