// Every GPU's share of a CG run of one process (cg_data.hpp): pushes between them, gathering.
#include "apps/cg/cg_data.hpp"

#include <algorithm>
#include <string>

#include "apps/cg/rank_solves.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

CgData::CgData(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters, bool poison)
    : ctx_(ctx), plan_(plan), v_(v), cap_(iters) {
  if (ctx.size() != plan.ranks) throw gpsm::Error("gpsm: cg: plan and context differ in GPU count");
  done_at_start_ = cg_done_at_start(start, v, iters);
  d_.reserve(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) d_.emplace_back(ctx.device(r), plan, r, start, v, iters, poison);
  init();
}

void CgData::init() {
  for (const CgRankData& d : d_) d.init();
  ctx_.synchronize();
}

Pushes CgData::peer_pushes(int r, bool elided) {
  double* scratch = nullptr;
  if (elided) {  // every push lands in one buffer on this GPU, as large as the largest peer vector
    std::int64_t most = 1;
    for (const RankPlan& q : plan_.rank) most = std::max(most, q.local_rows() + q.halo_size());
    scratch = d_[r].scratch(static_cast<std::size_t>(most));
  }
  std::vector<double*> base(2 * kMaxRanks, nullptr);
  for (int par = 0; par < 2; ++par)
    for (int g = 0; g < plan_.ranks; ++g) base[par * kMaxRanks + g] = elided ? scratch : d_[g].exchanged(par);
  return d_[r].pushes(base, false);
}

Pushes CgData::packed_pushes(int r) {
  return d_[r].pushes(std::vector<double*>(2 * kMaxRanks, d_[r].pack()), true);
}

void CgData::copy_halos(int r, int parity, cudaStream_t st) const {
  const RankPlan& p = plan_.rank[r];
  for (int g = 0; g < plan_.ranks; ++g) {
    const std::int64_t count = p.send_off[g + 1] - p.send_off[g];
    if (count == 0) continue;
    const RankPlan& q = plan_.rank[g];
    GPSM_CUDA(cudaMemcpyPeerAsync(d_[g].exchanged(parity) + q.local_rows() + q.recv_off[r], ctx_.device(g),
                                  d_[r].pack() + p.send_off[g], ctx_.device(r),
                                  static_cast<std::size_t>(count) * sizeof(double), st));
  }
}

Solve CgData::result(bool from_control) {
  std::vector<const double*> hist, x;
  for (const auto& d : d_) {
    hist.push_back(d.hist());
    x.push_back(d.x());
  }
  return gather_solve(ctx_, plan_, cap_, hist, x, [&](int r) {
    std::int32_t it = -1;
    if (from_control) {
      Control c;
      GPSM_CUDA(cudaMemcpy(&c, d_[r].control(), sizeof(c), cudaMemcpyDeviceToHost));
      it = c.stop ? c.iterations : -1;
    } else {
      GPSM_CUDA(cudaMemcpy(&it, d_[r].iterations(), sizeof(it), cudaMemcpyDeviceToHost));
    }
    return it;
  });
}

Solve gather_solve(gps::Context& ctx, const Plan& plan, std::int32_t cap, const std::vector<const double*>& hist,
                   const std::vector<const double*>& x, const std::function<std::int32_t(int)>& iterations) {
  ctx.synchronize();
  std::vector<RankSolve> ranks(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    RankSolve& s = ranks[r];
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    s.iterations = iterations(r);
    if (s.iterations < 0 || s.iterations > cap) continue;  // combine_rank_solves names the rank
    s.rho.resize(static_cast<std::size_t>(s.iterations) + 1);
    GPSM_CUDA(cudaMemcpy(s.rho.data(), hist[r], s.rho.size() * sizeof(double), cudaMemcpyDeviceToHost));
    s.x.resize(static_cast<std::size_t>(plan.rank[r].local_rows()));
    GPSM_CUDA(cudaMemcpy(s.x.data(), x[r], s.x.size() * sizeof(double), cudaMemcpyDeviceToHost));
  }
  return combine_rank_solves(plan, cap, ranks);
}

}  // namespace gpsm::apps::cg
