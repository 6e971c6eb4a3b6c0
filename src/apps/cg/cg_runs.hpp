#pragma once
// The CG paradigms' solve loops over CgData (cg_host_run_cuda.cpp: single, cpu_ctrl_std,
// cpu_ctrl_pipe; cg_free_run_cuda.cpp: cpu_free_std, cpu_free_pipe, infinite; cg_gps_run_cuda.cpp: gps; cg_gps_pipe_run_cuda.cpp: gps_pipe).
#include <memory>
#include <optional>
#include <string>

#include "apps/cg/cg_data.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/q_storage.hpp"
#include "apps/cg/reference.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::cg {

class CgRun {
 public:
  virtual ~CgRun() = default;
  virtual void init() = 0;     // the initial state on every GPU
  virtual double solve() = 0;  // one solve; host wall clock seconds
  virtual Solve result() = 0;  // after solve(): iterations, history (checked equal on every GPU), x
  virtual std::string timing() const = 0;
  // Link bytes per iteration as the runtime counted them in an extra, untimed solve (after
  // result()), for the paradigms whose bytes depend on what the runtime learned; nullopt: the
  // app's model (traffic.hpp) is exact.
  virtual std::optional<double> measured_link_bytes() { return std::nullopt; }
  // Whether the persistent Standard kernels keep q in shared memory (q_storage.hpp): traffic.hpp's
  // memory bytes count 16 fewer a row.
  virtual bool q_shared() const { return false; }
};

// Discrete kernels launched by the host, one stream per GPU (Pipelined: plus a higher-priority
// stream per GPU for the reduction). More than one GPU: partials by NCCL allgather (then summed
// in rank order on the GPU), halos packed and copied by copy engines. Throws gpsm::Error without
// NCCL on more than one GPU. threads: one host thread per GPU issues that GPU's calls
// (GPSM_CG_HOST_THREADS=1), else one thread issues every GPU's.
std::unique_ptr<CgRun> make_host_run(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters,
                                     bool threads);
// One persistent cooperative kernel per GPU. elided: halo pushes stored on the sending GPU
// (the `infinite` bound; its result is not a result).
// Standard CG on GPS memory (`gps`): r in a GPS array with subscriptions learned by tracking,
// one persistent kernel per GPU with the runtime's device fence (cg_gps_run_cuda.cpp).
// q: where its kernel keeps q between the phases (GPSM_CG_Q, q_storage.hpp).
std::unique_ptr<CgRun> make_gps_run(gps::Context& ctx, const Plan& plan, const Start& start, int iters,
                                    QStorage q = QStorage::shared);
// Pipelined CG on GPS memory (`gps_pipe`): w in two GPS arrays (one per parity) with learned
// subscriptions, one persistent kernel per GPU with the runtime's split-phase device fence
// overlapping the reduction with the SpMV of chunks that read no other GPU's pages
// (cg_gps_pipe_run_cuda.cpp).
std::unique_ptr<CgRun> make_gps_pipe_run(gps::Context& ctx, const Plan& plan, const Start& start, int iters);
// q: where the Standard kernel keeps q between its phases (GPSM_CG_Q, q_storage.hpp; Pipelined
// ignores it).
std::unique_ptr<CgRun> make_free_run(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters,
                                     bool elided, QStorage q = QStorage::shared);

}  // namespace gpsm::apps::cg
