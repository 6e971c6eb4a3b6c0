// One GPU's share of a CG run (cg_rank_data.hpp): allocation, the initial state, push tables.
#include "apps/cg/cg_rank_data.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "apps/cg/sell.hpp"
#include "apps/cg/sell_deltas.hpp"
#include "common/cuda_check.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

void DevMatrixBufs::upload(int dev, const Plan& plan, const RankPlan& p, const std::vector<std::int32_t>& cols,
                           std::int64_t pad_base) {
  const bool sliced = plan.spmv.layout == SpmvLayout::sell;
  const Sell sell = sliced ? make_sell(p.row_ptr, cols, p.val, pad_base) : Sell{};
  if (sliced) {
    slice_ptr.assign(dev, sell.slice_ptr);
    if (plan.index.storage == IndexStorage::i16) {
      const SellDeltas d = make_deltas(sell);  // the plan checked every slot: fits
      col_base.assign(dev, d.base);
      col16.assign(dev, d.delta);
    } else {
      col.assign(dev, sell.col);
    }
  } else {
    row_ptr.assign(dev, p.row_ptr);
    col.assign(dev, cols);
  }
  const std::vector<double>& values = sliced ? sell.val : p.val;
  if (plan.values.storage == ValueStorage::table) {
    const ValueTable t = make_value_table(values);  // this GPU's values and the padding's 0
    val8.assign(dev, t.index);
    val_table.assign(dev, t.table);
  } else if (plan.values.storage == ValueStorage::f32) {
    val32.assign(dev, to_floats(values));
  } else {
    val.assign(dev, values);
  }
}

DevMatrix DevMatrixBufs::view() const {
  DevMatrix m;
  m.row_ptr = row_ptr.p;
  m.slice_ptr = slice_ptr.p;
  m.col = col.p;
  m.col16 = col16.p;
  m.col_base = col_base.p;
  m.val = val.p;
  m.val32 = val32.p;
  m.val8 = val8.p;
  m.val_table = val_table.p;
  return m;
}

namespace {

// A global vector's entries at this GPU's rows, then (halo) at its halo slots.
std::vector<double> local(const RankPlan& p, const std::vector<double>& g, bool halo) {
  std::vector<double> v(g.begin() + p.rows.begin, g.begin() + p.rows.end);
  if (halo)
    for (std::int64_t j : p.halo) v.push_back(g[j]);
  return v;
}

void upload(double* dst, const std::vector<double>& src) {
  GPSM_CUDA(cudaMemcpy(dst, src.data(), src.size() * sizeof(double), cudaMemcpyHostToDevice));
}

}  // namespace

bool cg_done_at_start(const Start& start, Variant v, int iters) {
  return v == Variant::standard &&
         (iters == 0 || start.rho0 == 0.0 || (start.threshold > 0 && std::sqrt(start.rho0) <= start.threshold));
}

CgRankData::CgRankData(int device, const Plan& plan, int rank, const Start& start, Variant v, int iters, bool poison,
                       const Exchanged& ext)
    : dev_(device),
      rp_(&plan.rank.at(static_cast<std::size_t>(rank))),
      v_(v),
      cap_(iters),
      chunks_(static_cast<std::int32_t>(plan.chunks(rank))),
      rows_per_thread_(plan.rows_per_thread),
      lanes_(plan.lanes),
      done_at_start_(cg_done_at_start(start, v, iters)),
      rho0_(start.rho0),
      threshold_(start.threshold) {
  const RankPlan& p = *rp_;
  const int dev = device;
  GPSM_CUDA(cudaSetDevice(dev));
  m_.upload(dev, plan, p, p.col, 0);
  push_row_.assign(dev, p.push_row);
  push_peer_.assign(dev, p.push_peer);
  push_dst_.assign(dev, p.push_dst);
  push_pack_.assign(dev, p.push_pack);
  chunk_push_.assign(dev, p.chunk_push);
  order_.assign(dev, p.chunk_order);
  const auto rows = static_cast<std::size_t>(p.local_rows()), full = rows + static_cast<std::size_t>(p.halo_size());
  const auto chunks = static_cast<std::size_t>(chunks_);
  if (v == Variant::standard) {
    x_.alloc(dev, rows);
    r_ = ext.r;
    if (r_ == nullptr) {
      r_own_.alloc(dev, full);
      r_ = r_own_.p;
    }
    p_[0].alloc(dev, full);
    p_[1].alloc(dev, full);
    q_.alloc(dev, rows);
    part_[0].alloc(dev, chunks);
    part_[1].alloc(dev, chunks);
  } else {
    for (auto* b : {&x_, &r_own_, &z_, &s_, &pp_, &n_}) b->alloc(dev, rows);
    r_ = r_own_.p;
    for (int k = 0; k < 2; ++k) {
      w_[k] = ext.w[k];
      if (w_[k] == nullptr) {
        w_own_[k].alloc(dev, full);
        w_[k] = w_own_[k].p;
      }
    }
    part_[0].alloc(dev, 2 * chunks);
  }
  hist_.alloc(dev, static_cast<std::size_t>(iters) + 1);
  pack_.alloc(dev, static_cast<std::size_t>(p.sends()));
  iters_.alloc(dev, 1);
  ctl_.alloc(dev, 1);
  // Host staging of the initial state.
  r0_ = local(p, start.b, v == Variant::standard);
  if (v == Variant::pipelined) {
    w0_ = local(p, start.w0, true);
    const auto g = chunk_partials(plan, rank, start.b, start.b), dl = chunk_partials(plan, rank, start.w0, start.b);
    part0_.resize(2 * chunks);
    for (std::size_t c = 0; c < chunks; ++c) part0_[2 * c] = g[c], part0_[2 * c + 1] = dl[c];
  }
  bad_.assign(full, poison ? std::numeric_limits<double>::quiet_NaN() : 0.0);
}

void CgRankData::init() const {
  const RankPlan& p = *rp_;
  GPSM_CUDA(cudaSetDevice(dev_));
  const std::size_t rows = static_cast<std::size_t>(p.local_rows()) * sizeof(double);
  const std::size_t full = rows + static_cast<std::size_t>(p.halo_size()) * sizeof(double);
  std::vector<double> hist(static_cast<std::size_t>(cap_) + 1, std::numeric_limits<double>::quiet_NaN());
  if (v_ == Variant::standard) {
    GPSM_CUDA(cudaMemset(x_.p, 0, rows));
    upload(r_, r0_);
    GPSM_CUDA(cudaMemset(p_[0].p, 0, full));  // p_-1 = 0
    upload(p_[1].p, bad_);
    GPSM_CUDA(cudaMemcpy(q_.p, bad_.data(), rows, cudaMemcpyHostToDevice));
    hist[0] = rho0_;  // the persistent kernel records rho_1 onwards
  } else {
    for (const auto* b : {&x_, &z_, &s_, &pp_}) GPSM_CUDA(cudaMemset(b->p, 0, rows));
    upload(r_, r0_);
    upload(w_[0], w0_);
    upload(w_[1], bad_);
    GPSM_CUDA(cudaMemcpy(n_.p, bad_.data(), rows, cudaMemcpyHostToDevice));
    upload(part_[0].p, part0_);
  }
  upload(hist_.p, hist);
  Control c;
  std::int32_t it = -1;
  if (done_at_start_) c.stop = 1, c.iterations = 0, it = 0;
  GPSM_CUDA(cudaMemcpy(ctl_.p, &c, sizeof(c), cudaMemcpyHostToDevice));
  GPSM_CUDA(cudaMemcpy(iters_.p, &it, sizeof(it), cudaMemcpyHostToDevice));
}

DevMatrix CgRankData::matrix() const {
  DevMatrix m = m_.view();
  m.rows = static_cast<std::int32_t>(rp_->local_rows());
  m.halo = static_cast<std::int32_t>(rp_->halo_size());
  m.chunks = chunks_;
  m.rows_per_thread = rows_per_thread_;
  m.lanes = lanes_;
  return m;
}

StdVectors CgRankData::std_vectors() const {
  StdVectors v;
  v.x = x_.p;
  v.r = r_;
  v.p[0] = p_[0].p;
  v.p[1] = p_[1].p;
  v.q = q_.p;
  return v;
}

PipeVectors CgRankData::pipe_vectors() const {
  PipeVectors v;
  v.x = x_.p;
  v.r = r_;
  v.w[0] = w_[0];
  v.w[1] = w_[1];
  v.z = z_.p;
  v.s = s_.p;
  v.p = pp_.p;
  v.n = n_.p;
  return v;
}

Pushes CgRankData::pushes(const std::vector<double*>& base, bool packed) {
  if (base.size() != 2 * static_cast<std::size_t>(kMaxRanks))
    throw gpsm::Error("gpsm: cg: a push table needs 2 x " + std::to_string(kMaxRanks) + " entries");
  Pushes p;
  p.row = push_row_.p;
  p.peer = push_peer_.p;
  p.dst = packed ? push_pack_.p : push_dst_.p;
  p.chunk_off = chunk_push_.p;
  DevBuf<double*>& tab = tab_[packed ? 1 : 0];
  tab.assign(dev_, base);
  p.base = tab.p;
  return p;
}

FreeStd CgRankData::free_std(const Pushes& push, const CgSync& sync) const {
  FreeStd f;
  f.a = matrix();
  f.v = std_vectors();
  f.push = push;
  f.part[0] = part_[0].p;
  f.part[1] = part_[1].p;
  f.sync = sync;
  f.hist = hist_.p;
  f.iterations = iters_.p;
  f.iters = cap_;
  f.rho0 = rho0_;
  f.threshold = threshold_;
  return f;
}

FreePipe CgRankData::free_pipe(const Pushes& push, const CgSync& sync) const {
  FreePipe f;
  f.a = matrix();
  f.v = pipe_vectors();
  f.push = push;
  f.order = order_.p;
  f.boundary_chunks = static_cast<std::int32_t>(rp_->boundary_chunks);
  f.part = part_[0].p;
  f.sync = sync;
  f.hist = hist_.p;
  f.iterations = iters_.p;
  f.iters = cap_;
  f.threshold = threshold_;
  return f;
}

int persistent_blocks(int device, Variant v, const DevMatrix& a) {
  const bool pipe = v == Variant::pipelined;
  const int blocks = free_blocks(device, pipe, a.lanes, a.kind(), a.rows_per_thread, pipe ? a.chunks : std_spmv_items(a));
  if (pipe && blocks < 2)
    throw gpsm::Error("gpsm: cg: the pipelined persistent kernel needs two resident blocks on device " +
                      std::to_string(device));
  return blocks;
}

double* CgRankData::scratch(std::size_t n) {
  if (scratch_.p == nullptr) scratch_.alloc(dev_, n);
  return scratch_.p;
}

}  // namespace gpsm::apps::cg
