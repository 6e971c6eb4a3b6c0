#pragma once
// Every GPU's share of a CG run of one process, one CgRankData (cg_rank_data.hpp) per GPU of the
// context: the pushes into the peers' vectors and the gathering of the result across them.
#include <cstdint>
#include <functional>
#include <vector>

#include "apps/cg/cg_kernels.hpp"
#include "apps/cg/cg_rank_data.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/context.hpp"
namespace gpsm::apps::cg {

class CgData {
 public:
  // poison: NaN in the entries iteration 0 must write before they are read (false for the
  // elided runs, whose halos are never written: zeros keep their arithmetic finite).
  CgData(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters, bool poison);
  CgData(const CgData&) = delete;
  CgData& operator=(const CgData&) = delete;

  // Restores the initial state on every GPU (synchronous).
  void init();

  int ranks() const { return plan_.ranks; }
  // Standard CG with nothing to do (no iterations asked, or b already within the tolerance):
  // the runs launch nothing, the state records 0 iterations.
  bool done_at_start() const { return done_at_start_; }
  const Plan& plan() const { return plan_; }
  Variant variant() const { return v_; }
  const CgRankData& rank(int r) const { return d_[r]; }
  DevMatrix matrix(int r) const { return d_[r].matrix(); }
  StdVectors std_vectors(int r) const { return d_[r].std_vectors(); }
  PipeVectors pipe_vectors(int r) const { return d_[r].pipe_vectors(); }
  // In-kernel pushes into the peers' exchanged vector (Standard: r; Pipelined: w by parity), or,
  // elided, into a scratch buffer on the sending GPU.
  Pushes peer_pushes(int r, bool elided);
  // Pushes into this GPU's packed send buffer (the host-driven paradigms copy it to the peers).
  Pushes packed_pushes(int r);
  // Copies of the packed entries into every peer's halo slots, on stream st of GPU r: Standard's
  // r, Pipelined's w[parity].
  void copy_halos(int r, int parity, cudaStream_t st) const;
  const std::int32_t* order(int r) const { return d_[r].order(); }
  double* part(int r, int which) const { return d_[r].part(which); }
  double* hist(int r) const { return d_[r].hist(); }
  std::int32_t* iterations(int r) const { return d_[r].iterations(); }
  Control* control(int r) const { return d_[r].control(); }

  // After a solve: GPU 0's iteration count and history, after checking every GPU agrees (throws
  // gpsm::Error naming the GPU that does not), and the solution gathered in global row order.
  Solve result(bool from_control);

 private:
  gps::Context& ctx_;
  const Plan& plan_;
  Variant v_;
  int cap_;  // iteration cap (history length - 1)
  std::vector<CgRankData> d_;
  bool done_at_start_ = false;
};

// The solve the ranks recorded on their GPUs: iterations(r) reads rank r's iteration count (at
// most cap), hist[r] its residual history, x[r] its rows of x. Every GPU must have reduced to the
// same history, bit for bit; the first that did not fails the run with its rank.
Solve gather_solve(gps::Context& ctx, const Plan& plan, std::int32_t cap, const std::vector<const double*>& hist,
                   const std::vector<const double*>& x, const std::function<std::int32_t(int)>& iterations);

}  // namespace gpsm::apps::cg
