#pragma once
// Every GPU's share of a CG run in its own memory: its block of the matrix, its push lists, the
// vectors of one variant, the chunk partials, the history, and the initial state staged on the
// host so each repetition starts from the same bits. Halo entries that iteration 0 does not
// provide start as NaN (the second p of Standard, the second w of Pipelined, rows and halo), so an
// entry an exchange misses poisons the residual instead of passing on stale data.
#include <cstdint>
#include <functional>
#include <vector>

#include "apps/cg/cg_kernels.hpp"
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
  DevMatrix matrix(int r) const;
  StdVectors std_vectors(int r) const;
  PipeVectors pipe_vectors(int r) const;
  // In-kernel pushes into the peers' exchanged vector (Standard: r; Pipelined: w by parity), or,
  // elided, into a scratch buffer on the sending GPU.
  Pushes peer_pushes(int r, bool elided);
  // Pushes into this GPU's packed send buffer (the host-driven paradigms copy it to the peers).
  Pushes packed_pushes(int r);
  // Copies of the packed entries into every peer's halo slots, on stream st of GPU r: Standard's
  // r, Pipelined's w[parity].
  void copy_halos(int r, int parity, cudaStream_t st) const;
  const std::int32_t* order(int r) const { return d_[r].order.p; }
  double* part(int r, int which) const { return d_[r].part[which].p; }
  double* hist(int r) const { return d_[r].hist.p; }
  std::int32_t* iterations(int r) const { return d_[r].iters.p; }
  Control* control(int r) const { return d_[r].ctl.p; }

  // After a solve: GPU 0's iteration count and history, after checking every GPU agrees (throws
  // gpsm::Error naming the GPU that does not), and the solution gathered in global row order.
  Solve result(bool from_control);

 private:
  struct Rank {  // the matrix: row_ptr, col, val (CSR) or slice_ptr, col, val (plan().spmv: sell.hpp)
    DevBuf<std::int32_t> row_ptr, slice_ptr, col, push_row, push_peer, push_dst, push_pack, chunk_push, order;
    DevBuf<double> val;
    DevBuf<double> x, r, p[2], q;              // Standard
    DevBuf<double> w[2], z, s, pp, n;          // Pipelined (pp: p)
    DevBuf<double> part[2], hist, pack, scratch;
    DevBuf<std::int32_t> iters;
    DevBuf<Control> ctl;
    DevBuf<double*> peer_tab, pack_tab;  // Pushes::base tables
  };
  // A Pushes::base table on GPU r: base[par][g] = at(par, g).
  template <class At>
  double* const* table(int r, DevBuf<double*>& tab, const At& at) const;
  void upload(int r, const DevBuf<double>& dst, const std::vector<double>& src) const;

  gps::Context& ctx_;
  const Plan& plan_;
  Variant v_;
  int cap_;  // iteration cap (history length - 1)
  std::vector<Rank> d_;
  // Initial local vectors per GPU (rows then halo slots where the vector has them).
  std::vector<std::vector<double>> r0_, w0_, part0_;
  std::vector<std::vector<double>> nan_full_;  // rows + halo of NaN (zeros when not poisoning)
  double start_ = 0;                           // rho_0, history entry 0 of Standard
  bool done_at_start_ = false;
};

// The solve the ranks recorded on their GPUs: iterations(r) reads rank r's iteration count (at
// most cap), hist[r] its residual history, x[r] its rows of x. Every GPU must have reduced to the
// same history, bit for bit; the first that did not fails the run with its rank.
Solve gather_solve(gps::Context& ctx, const Plan& plan, std::int32_t cap, const std::vector<const double*>& hist,
                   const std::vector<const double*>& x, const std::function<std::int32_t(int)>& iterations);

}  // namespace gpsm::apps::cg
