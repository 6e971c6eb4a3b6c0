// Every GPU's share of a CG run (cg_data.hpp): allocation, the initial state, pushes, gathering.
#include "apps/cg/cg_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "apps/cg/sell.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {
namespace {

template <class T>
void put(DevBuf<T>& b, int dev, const std::vector<T>& v) {
  b.alloc(dev, v.size());
  if (!v.empty()) GPSM_CUDA(cudaMemcpy(b.p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// A global vector's entries at this GPU's rows, then (halo) at its halo slots.
std::vector<double> local(const RankPlan& p, const std::vector<double>& g, bool halo) {
  std::vector<double> v(g.begin() + p.rows.begin, g.begin() + p.rows.end);
  if (halo)
    for (std::int64_t j : p.halo) v.push_back(g[j]);
  return v;
}

}  // namespace

CgData::CgData(gps::Context& ctx, const Plan& plan, const Start& start, Variant v, int iters, bool poison)
    : ctx_(ctx), plan_(plan), v_(v), cap_(iters) {
  if (ctx.size() != plan.ranks) throw gpsm::Error("gpsm: cg: plan and context differ in GPU count");
  start_ = start.rho0;
  done_at_start_ = v == Variant::standard &&
                   (iters == 0 || start.rho0 == 0.0 || (start.threshold > 0 && std::sqrt(start.rho0) <= start.threshold));
  d_.resize(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    Rank& d = d_[r];
    const int dev = ctx.device(r);
    GPSM_CUDA(cudaSetDevice(dev));
    if (plan.spmv.layout == SpmvLayout::sell) {  // built here, one GPU at a time: the host keeps only the CSR
      const Sell sell = make_sell(p.row_ptr, p.col, p.val);
      put(d.slice_ptr, dev, sell.slice_ptr);
      put(d.col, dev, sell.col);
      put(d.val, dev, sell.val);
    } else {
      put(d.row_ptr, dev, p.row_ptr);
      put(d.col, dev, p.col);
      put(d.val, dev, p.val);
    }
    put(d.push_row, dev, p.push_row);
    put(d.push_peer, dev, p.push_peer);
    put(d.push_dst, dev, p.push_dst);
    put(d.push_pack, dev, p.push_pack);
    put(d.chunk_push, dev, p.chunk_push);
    put(d.order, dev, p.chunk_order);
    const auto rows = static_cast<std::size_t>(p.local_rows()), full = rows + static_cast<std::size_t>(p.halo_size());
    const auto chunks = static_cast<std::size_t>(plan.chunks(r));
    if (v == Variant::standard) {
      d.x.alloc(dev, rows);
      d.r.alloc(dev, full);
      d.p[0].alloc(dev, full);
      d.p[1].alloc(dev, full);
      d.q.alloc(dev, rows);
      d.part[0].alloc(dev, chunks);
      d.part[1].alloc(dev, chunks);
    } else {
      for (auto* b : {&d.x, &d.r, &d.z, &d.s, &d.pp, &d.n}) b->alloc(dev, rows);
      d.w[0].alloc(dev, full);
      d.w[1].alloc(dev, full);
      d.part[0].alloc(dev, 2 * chunks);
    }
    d.hist.alloc(dev, static_cast<std::size_t>(iters) + 1);
    d.pack.alloc(dev, static_cast<std::size_t>(p.sends()));
    d.iters.alloc(dev, 1);
    d.ctl.alloc(dev, 1);
    // Host staging of the initial state.
    r0_.push_back(local(p, start.b, v == Variant::standard));
    if (v == Variant::pipelined) {
      w0_.push_back(local(p, start.w0, true));
      const auto g = chunk_partials(plan, r, start.b, start.b), dl = chunk_partials(plan, r, start.w0, start.b);
      std::vector<double> parts(2 * chunks);
      for (std::size_t c = 0; c < chunks; ++c) parts[2 * c] = g[c], parts[2 * c + 1] = dl[c];
      part0_.push_back(std::move(parts));
    }
    nan_full_.emplace_back(full, poison ? std::numeric_limits<double>::quiet_NaN() : 0.0);
  }
  init();
}

void CgData::upload(int r, const DevBuf<double>& dst, const std::vector<double>& src) const {
  GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
  GPSM_CUDA(cudaMemcpy(dst.p, src.data(), src.size() * sizeof(double), cudaMemcpyHostToDevice));
}

void CgData::init() {
  for (int r = 0; r < plan_.ranks; ++r) {
    const RankPlan& p = plan_.rank[r];
    Rank& d = d_[r];
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    const std::size_t rows = static_cast<std::size_t>(p.local_rows()) * sizeof(double);
    const std::size_t full = rows + static_cast<std::size_t>(p.halo_size()) * sizeof(double);
    const std::vector<double>& bad = nan_full_[r];  // NaN (or zeros when not poisoning), rows + halo long
    std::vector<double> hist(static_cast<std::size_t>(cap_) + 1, std::numeric_limits<double>::quiet_NaN());
    if (v_ == Variant::standard) {
      GPSM_CUDA(cudaMemset(d.x.p, 0, rows));
      upload(r, d.r, r0_[r]);
      GPSM_CUDA(cudaMemset(d.p[0].p, 0, full));  // p_-1 = 0
      upload(r, d.p[1], bad);
      GPSM_CUDA(cudaMemcpy(d.q.p, bad.data(), rows, cudaMemcpyHostToDevice));
      hist[0] = start_;  // the persistent kernel records rho_1 onwards
    } else {
      for (auto* b : {&d.x, &d.z, &d.s, &d.pp}) GPSM_CUDA(cudaMemset(b->p, 0, rows));
      upload(r, d.r, r0_[r]);
      upload(r, d.w[0], w0_[r]);
      upload(r, d.w[1], bad);
      GPSM_CUDA(cudaMemcpy(d.n.p, bad.data(), rows, cudaMemcpyHostToDevice));
      upload(r, d.part[0], part0_[r]);
    }
    upload(r, d.hist, hist);
    Control c;
    std::int32_t it = -1;
    if (done_at_start_) c.stop = 1, c.iterations = 0, it = 0;
    GPSM_CUDA(cudaMemcpy(d.ctl.p, &c, sizeof(c), cudaMemcpyHostToDevice));
    GPSM_CUDA(cudaMemcpy(d.iters.p, &it, sizeof(it), cudaMemcpyHostToDevice));
  }
  ctx_.synchronize();
}

DevMatrix CgData::matrix(int r) const {
  const RankPlan& p = plan_.rank[r];
  DevMatrix m;
  m.row_ptr = d_[r].row_ptr.p;      // null in the sliced layout
  m.slice_ptr = d_[r].slice_ptr.p;  // null in CSR
  m.col = d_[r].col.p;
  m.val = d_[r].val.p;
  m.rows = static_cast<std::int32_t>(p.local_rows());
  m.halo = static_cast<std::int32_t>(p.halo_size());
  m.chunks = static_cast<std::int32_t>(plan_.chunks(r));
  m.rows_per_thread = plan_.rows_per_thread;
  m.lanes = plan_.lanes;
  return m;
}

StdVectors CgData::std_vectors(int r) const {
  const Rank& d = d_[r];
  StdVectors v;
  v.x = d.x.p;
  v.r = d.r.p;
  v.p[0] = d.p[0].p;
  v.p[1] = d.p[1].p;
  v.q = d.q.p;
  return v;
}

PipeVectors CgData::pipe_vectors(int r) const {
  const Rank& d = d_[r];
  PipeVectors v;
  v.x = d.x.p;
  v.r = d.r.p;
  v.w[0] = d.w[0].p;
  v.w[1] = d.w[1].p;
  v.z = d.z.p;
  v.s = d.s.p;
  v.p = d.pp.p;
  v.n = d.n.p;
  return v;
}

Pushes CgData::peer_pushes(int r, bool elided) {
  Rank& d = d_[r];
  Pushes p;
  p.row = d.push_row.p;
  p.peer = d.push_peer.p;
  p.dst = d.push_dst.p;
  p.chunk_off = d.chunk_push.p;
  if (elided) {  // every push lands in one buffer on this GPU, as large as the largest peer vector
    std::int64_t most = 1;
    for (const RankPlan& q : plan_.rank) most = std::max(most, q.local_rows() + q.halo_size());
    if (d.scratch.p == nullptr) d.scratch.alloc(ctx_.device(r), static_cast<std::size_t>(most));
  }
  p.base = table(r, d.peer_tab, [&](int par, int g) {
    return elided ? d.scratch.p : v_ == Variant::standard ? d_[g].r.p : d_[g].w[par].p;
  });
  return p;
}

Pushes CgData::packed_pushes(int r) {
  Rank& d = d_[r];
  Pushes p;
  p.row = d.push_row.p;
  p.peer = d.push_peer.p;
  p.dst = d.push_pack.p;
  p.chunk_off = d.chunk_push.p;
  p.base = table(r, d.pack_tab, [&](int, int) { return d.pack.p; });
  return p;
}

template <class At>
double* const* CgData::table(int r, DevBuf<double*>& tab, const At& at) const {
  std::vector<double*> t(2 * kMaxRanks, nullptr);
  for (int par = 0; par < 2; ++par)
    for (int g = 0; g < plan_.ranks; ++g) t[par * kMaxRanks + g] = at(par, g);
  put(tab, ctx_.device(r), t);
  return tab.p;
}

void CgData::copy_halos(int r, int parity, cudaStream_t st) const {
  const RankPlan& p = plan_.rank[r];
  for (int g = 0; g < plan_.ranks; ++g) {
    const std::int64_t count = p.send_off[g + 1] - p.send_off[g];
    if (count == 0) continue;
    const RankPlan& q = plan_.rank[g];
    double* base = v_ == Variant::standard ? d_[g].r.p : d_[g].w[parity].p;
    GPSM_CUDA(cudaMemcpyPeerAsync(base + q.local_rows() + q.recv_off[r], ctx_.device(g), d_[r].pack.p + p.send_off[g],
                                  ctx_.device(r), static_cast<std::size_t>(count) * sizeof(double), st));
  }
}

Solve CgData::result(bool from_control) {
  std::vector<const double*> hist, x;
  for (const auto& d : d_) {
    hist.push_back(d.hist.p);
    x.push_back(d.x.p);
  }
  return gather_solve(ctx_, plan_, cap_, hist, x, [&](int r) {
    std::int32_t it = -1;
    if (from_control) {
      Control c;
      GPSM_CUDA(cudaMemcpy(&c, d_[r].ctl.p, sizeof(c), cudaMemcpyDeviceToHost));
      it = c.stop ? c.iterations : -1;
    } else {
      GPSM_CUDA(cudaMemcpy(&it, d_[r].iters.p, sizeof(it), cudaMemcpyDeviceToHost));
    }
    return it;
  });
}

Solve gather_solve(gps::Context& ctx, const Plan& plan, std::int32_t cap, const std::vector<const double*>& hist,
                   const std::vector<const double*>& x, const std::function<std::int32_t(int)>& iterations) {
  ctx.synchronize();
  Solve s;
  std::vector<double> first;
  for (int r = 0; r < plan.ranks; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    const std::int32_t it = iterations(r);
    if (it < 0 || it > cap) throw gpsm::Error("gpsm: cg: GPU " + std::to_string(r) + " did not record how many iterations it ran");
    std::vector<double> h(static_cast<std::size_t>(it) + 1);
    GPSM_CUDA(cudaMemcpy(h.data(), hist[r], h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    if (r == 0) {
      s.iterations = it;
      first = h;
    } else if (it != s.iterations || std::memcmp(h.data(), first.data(), h.size() * sizeof(double)) != 0) {
      throw gpsm::Error("gpsm: cg: GPU " + std::to_string(r) + "'s residual history differs from GPU 0's (every GPU must "
                        "reduce to the same sums)");
    }
  }
  s.rho = std::move(first);
  s.x.resize(static_cast<std::size_t>(plan.n));
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    GPSM_CUDA(cudaSetDevice(ctx.device(r)));
    GPSM_CUDA(cudaMemcpy(s.x.data() + p.rows.begin, x[r], static_cast<std::size_t>(p.local_rows()) * sizeof(double),
                         cudaMemcpyDeviceToHost));
  }
  return s;
}

}  // namespace gpsm::apps::cg
