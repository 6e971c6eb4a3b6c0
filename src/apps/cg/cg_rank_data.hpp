#pragma once
// One GPU's share of a CG run in its memory: its block of the matrix (CSR or sliced), its push
// lists, the vectors of one variant, the chunk partials, the history, and its initial state staged
// on the host so each repetition starts from the same bits. CgData (cg_data.hpp) holds one per GPU
// of a process; an NVSHMEM worker (tools/gpsm-nvshmem-cg) holds its PE's only, with the vectors
// the peers push into (Standard: r; Pipelined: both w) on the symmetric heap (Exchanged).
//
// Halo entries that iteration 0 does not provide start as NaN (the second p of Standard, the
// second w of Pipelined, rows and halo), so an entry an exchange misses poisons the residual
// instead of passing on stale data.
#include <cstdint>
#include <vector>

#include "apps/cg/cg_kernels.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "apps/cg/value_storage.hpp"
#include "common/dev_buf.hpp"

namespace gpsm::apps::cg {

// One GPU's matrix on the device in the plan's layout, index and value storage: row_ptr (CSR) or
// slice_ptr (sliced, sell.hpp: built here, one GPU at a time, so the host keeps only the CSR),
// col or (sliced) col16 and col_base (16-bit deltas: sell_deltas.hpp), and val (doubles), val32
// (the floats they exactly are) or (sliced) val8 and val_table (indices into a table of the
// doubles: value_storage.hpp). The buffers the layout or the storage does not use stay
// unallocated (null in the view).
struct DevMatrixBufs {
  DevBuf<std::int32_t> row_ptr, slice_ptr, col, col_base;
  DevBuf<std::uint16_t> col16;
  DevBuf<double> val, val_table;
  DevBuf<float> val32;
  DevBuf<std::uint8_t> val8;
  // Rank p's rows with columns `cols` (p.col's order: local or global indices); a sliced padding
  // entry's column is pad_base + its row (make_sell).
  void upload(int dev, const Plan& plan, const RankPlan& p, const std::vector<std::int32_t>& cols,
              std::int64_t pad_base);
  // The kernels' view: these buffers' pointers; the caller sets the sizes.
  DevMatrix view() const;
};

// The kernels' template arguments for the plan's storage (DevMatrix::kind of every GPU's matrix).
inline EntryKind entry_kind(const Plan& plan) { return {plan.values.storage, plan.index.storage}; }

// Standard CG with nothing to do (no iterations asked, or b already within the tolerance): the
// runs launch nothing, the state records 0 iterations.
bool cg_done_at_start(const Start& start, Variant v, int iters);

// The vectors peers write into, supplied by the caller (each rows + halo doubles on this GPU,
// owned by the caller); null members are allocated here.
struct Exchanged {
  double* r = nullptr;        // Standard
  double* w[2] = {nullptr, nullptr};  // Pipelined
};

// Blocks of the persistent kernel of variant v on `device` for matrix a (free_blocks), every one
// resident; throws gpsm::Error when the pipelined kernel gets fewer than two (its communication
// block and one that computes).
int persistent_blocks(int device, Variant v, const DevMatrix& a);
// The blocks that arrive at each reduction: all (Standard), all but the communication block (Pipelined).
inline unsigned arriving_blocks(Variant v, int blocks) {
  return static_cast<unsigned>(blocks - (v == Variant::pipelined ? 1 : 0));
}

class CgRankData {
 public:
  // poison: NaN in the entries iteration 0 must write before they are read (false for the
  // elided runs, whose halos are never written: zeros keep their arithmetic finite).
  CgRankData(int device, const Plan& plan, int rank, const Start& start, Variant v, int iters, bool poison,
             const Exchanged& ext = {});
  CgRankData(const CgRankData&) = delete;
  CgRankData& operator=(const CgRankData&) = delete;
  CgRankData(CgRankData&&) = default;

  // Restores the initial state (its copies and sets are queued on the device's null stream; the
  // caller synchronizes the device before the next launch reads them).
  void init() const;

  int device() const { return dev_; }
  bool done_at_start() const { return done_at_start_; }
  DevMatrix matrix() const;
  StdVectors std_vectors() const;
  PipeVectors pipe_vectors() const;
  // The vector peers push into: Standard's r (parity ignored), Pipelined's w[parity].
  double* exchanged(int parity) const { return v_ == Variant::standard ? r_ : w_[parity]; }
  // Pushes along this GPU's push lists into base[parity * kMaxRanks + peer] (a table it keeps on
  // the device): packed, at each entry's packed index (push_pack); else at its index in the peer's
  // local vector (push_dst).
  Pushes pushes(const std::vector<double*>& base, bool packed);
  double* pack() const { return pack_.p; }
  // A buffer of n doubles on this GPU (allocated once; the elided runs' push target).
  double* scratch(std::size_t n);
  const std::int32_t* order() const { return order_.p; }
  double* part(int which) const { return part_[which].p; }
  double* hist() const { return hist_.p; }
  std::int32_t* iterations() const { return iters_.p; }
  Control* control() const { return ctl_.p; }
  const double* x() const { return x_.p; }

  // The persistent kernels' arguments (cg_persistent.cu) over this GPU's data, pushing along
  // `push` and meeting the other GPUs through `sync`.
  FreeStd free_std(const Pushes& push, const CgSync& sync) const;
  FreePipe free_pipe(const Pushes& push, const CgSync& sync) const;

 private:
  int dev_;
  const RankPlan* rp_;
  Variant v_;
  int cap_;  // iteration cap (history length - 1)
  std::int32_t chunks_;
  int rows_per_thread_, lanes_;
  bool done_at_start_;
  double rho0_, threshold_;
  DevMatrixBufs m_;  // local columns
  DevBuf<std::int32_t> push_row_, push_peer_, push_dst_, push_pack_, chunk_push_, order_;
  DevBuf<double> x_, r_own_, p_[2], q_;        // Standard
  DevBuf<double> w_own_[2], z_, s_, pp_, n_;   // Pipelined (pp: p)
  DevBuf<double> part_[2], hist_, pack_, scratch_;
  DevBuf<std::int32_t> iters_;
  DevBuf<Control> ctl_;
  DevBuf<double*> tab_[2];  // Pushes::base tables: [0] in-kernel, [1] packed
  double* r_ = nullptr;     // r_own_ or the caller's
  double* w_[2] = {nullptr, nullptr};
  // Initial local vectors (rows then halo slots where the vector has them).
  std::vector<double> r0_, w0_, part0_;
  std::vector<double> bad_;  // rows + halo of NaN (zeros when not poisoning)
};

}  // namespace gpsm::apps::cg
