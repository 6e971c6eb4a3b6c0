// Link and memory bytes per CG iteration (traffic.hpp).
#include "apps/cg/traffic.hpp"

#include <algorithm>
#include <cmath>

namespace gpsm::apps::cg {

double link_bytes_per_iter(const Plan& plan, Variant v, Exchange e) {
  if (e == Exchange::none || plan.ranks == 1) return 0;
  const double pairs = static_cast<double>(plan.ranks) * (plan.ranks - 1);
  const double halo = e == Exchange::elided ? 0.0 : 8.0 * static_cast<double>(plan.halo_total());
  // Values each reduction carries: Standard reduces one scalar twice, Pipelined two scalars once.
  const int values = v == Variant::standard ? 1 : 2;
  const double per_sync = e == Exchange::host ? 8.0 * values  // ring allgather: each rank's values to every other rank
                                              : device_word_bytes(values);
  return halo + pairs * per_sync * syncs_per_iter(v);
}

namespace {
double rank_mem(const Plan& plan, int r, Variant v, bool discrete, bool q_shared) {
  const RankPlan& p = plan.rank[r];
  const double rows = static_cast<double>(p.local_rows()), halo = static_cast<double>(p.halo_size());
  // CSR: every nonzero and the row pointers; SELL-32: every stored entry (the threads read them
  // all, padding included) and the slice pointers. An entry: its column (4 bytes; sliced 16-bit
  // deltas: 2, plus a 4-byte base per slot of 32 entries, sell_deltas.hpp) and its value (8 bytes,
  // 4 where the values are stored as the floats they are, 1 as a table index: value_storage.hpp;
  // the table itself, at most 2 KB read through the cache, is not counted).
  const double slices = std::ceil(rows / kSliceRows);
  const double value = value_bytes(plan.values.storage), entries = static_cast<double>(p.sell_entries);
  const double column = plan.index.storage == IndexStorage::i16 ? index_bytes(IndexStorage::i16) + 4.0 / kSliceRows : 4.0;
  const double matrix = plan.spmv.layout == SpmvLayout::sell ? (column + value) * entries + 4.0 * (slices + 1)
                                                             : (4.0 + value) * static_cast<double>(p.nnz()) + 4.0 * (rows + 1);
  const double sends = 16.0 * static_cast<double>(p.sends());  // a sent entry read, and written to a peer or the pack
  double vectors = 0;
  if (v == Variant::standard) {
    // SpMV: read p_old and r (rows and halo), write p (rows and halo) and q; update: read q, r,
    // write r; x (read and written) and p in the update (discrete kernels) or x in the SpMV
    // (persistent kernels, which read p_old there anyway).
    vectors = 8.0 * (3.0 * (rows + halo) + rows) + 8.0 * 3.0 * rows + (discrete ? 24.0 : 16.0) * rows;
    if (q_shared && !discrete) vectors -= 16.0 * rows;  // q neither written nor read back (q_storage.hpp)
  } else {
    // SpMV: read w (rows and halo); update: read z, s, p, x, r, write z, s, p, x, r, w. Discrete
    // kernels also write A w and read it back.
    vectors = 8.0 * (rows + halo) + 8.0 * 11.0 * rows + (discrete ? 16.0 * rows : 0.0);
  }
  return matrix + vectors + sends;
}
}  // namespace

double mem_bytes_per_iter(const Plan& plan, Variant v, bool discrete, bool q_shared) {
  double b = 0;
  for (int r = 0; r < plan.ranks; ++r) b += rank_mem(plan, r, v, discrete, q_shared);
  return b;
}

double max_rank_mem_bytes(const Plan& plan, Variant v, bool discrete, bool q_shared) {
  double b = 0;
  for (int r = 0; r < plan.ranks; ++r) b = std::max(b, rank_mem(plan, r, v, discrete, q_shared));
  return b;
}

}  // namespace gpsm::apps::cg
