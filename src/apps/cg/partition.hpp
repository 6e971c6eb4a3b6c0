#pragma once
// How a CG run splits the matrix over GPUs (plain C++, CPU-tested): contiguous row blocks, each
// GPU's rows renumbered locally, and the halo: the entries of the exchanged vector each GPU needs
// from each peer, learned from the sparsity, so only those cross the link, packed.
//
// A GPU's local vectors are [its rows | its halo slots]. Halo slots hold the columns its rows
// reference outside its rows, ascending by global index (so grouped by owner, in rank order):
// slots [recv_off[g], recv_off[g + 1]) come from rank g. A peer sends exactly those entries, in
// that order: send[g] on the owner lists its local rows, and the owner's push list says, per
// entry, where it lands in the peer's local vector (in-kernel pushes) and in the owner's packed
// send buffer (copies by the host-driven paradigms).
#include <cstdint>
#include <string>
#include <vector>

#include "apps/cg/matrix.hpp"
#include "apps/cg/sell.hpp"
#include "apps/cg/sell_deltas.hpp"
#include "apps/cg/value_storage.hpp"
#include "apps/cg/variant.hpp"

namespace gpsm::apps::cg {

struct RowRange {
  std::int64_t begin = 0, end = 0;  // [begin, end)
  std::int64_t size() const { return end - begin; }
};

// parts contiguous ranges covering [0, n) in order, sizes differing by at most one (the larger
// first). Throws std::invalid_argument unless 1 <= parts <= n.
std::vector<RowRange> split_rows(std::int64_t n, int parts);
// parts contiguous ranges covering the rows in order, every one non-empty, cut where the running
// nonzero count first reaches k * nnz / parts (a part may then hold a single dense row, and a
// part's nonzeros exceed nnz / parts by less than its largest row). Throws like split_rows.
std::vector<RowRange> split_rows_by_nnz(const std::vector<std::int64_t>& row_ptr, int parts);

struct RankPlan {
  RowRange rows;                     // global rows owned
  std::vector<std::int32_t> row_ptr;  // local CSR, rows.size() + 1 (a GPU holds < 2^31 nonzeros)
  std::vector<std::int32_t> col;      // < rows.size(): an owned row; else rows.size() + halo slot
  std::vector<double> val;            // the global rows' entries, in their order
  std::vector<std::int64_t> halo;     // global index of each halo slot, ascending
  std::vector<std::int64_t> recv_off;  // ranks + 1: slots from rank g are [recv_off[g], recv_off[g + 1])
  std::vector<std::vector<std::int32_t>> send;  // send[g]: local rows rank g receives, in its slot order
  std::vector<std::int64_t> send_off;  // ranks + 1: send[g] sits at [send_off[g], send_off[g + 1]) of the packed buffer
  // One push per (sent row, destination), in local row order: pushes of chunk c (chunk_rows(E)
  // rows) are [chunk_push[c], chunk_push[c + 1]).
  std::vector<std::int32_t> push_row;
  std::vector<std::int32_t> push_peer;
  std::vector<std::int32_t> push_dst;   // index in the peer's local vector (its rows + slot)
  std::vector<std::int32_t> push_pack;  // index in this rank's packed send buffer
  std::vector<std::int32_t> chunk_push;
  // Chunks whose rows read no halo slot first (they can run before the peers' data arrives), in
  // ascending order, then the others; boundary_chunks of them read the halo.
  std::vector<std::int32_t> chunk_order;
  std::int64_t boundary_chunks = 0;
  std::int64_t sell_entries = 0;  // entries of the sliced layout, all read by its SpMV (sell.hpp)

  std::int64_t local_rows() const { return rows.size(); }
  std::int64_t halo_size() const { return static_cast<std::int64_t>(halo.size()); }
  std::int64_t nnz() const { return static_cast<std::int64_t>(col.size()); }
  std::int64_t sends() const { return send_off.empty() ? 0 : send_off.back(); }
};

struct Plan {
  int ranks = 1;
  int lanes = 2;            // threads per row (cg_math.hpp): a property of the matrix
  int rows_per_thread = 1;  // E: chunks of kThreads * E rows
  std::string rows_per_thread_why;  // how E was chosen (reported with the run)
  LayoutChoice spmv;        // CSR or SELL-32 on every GPU, and why (sell.hpp; same arithmetic either way)
  ValuesChoice values;      // the matrix values as doubles, the floats they are or table indices (value_storage.hpp)
  IndexesChoice index;      // the sliced columns as 32-bit indices or 16-bit deltas (sell_deltas.hpp)
  std::int64_t n = 0, nnz = 0;
  std::vector<RankPlan> rank;

  std::int64_t chunk() const;           // rows per chunk
  std::int64_t chunks(int r) const;     // chunks of rank r
  std::int64_t halo_total() const;      // sum of the halo slots: entries that cross a link per exchange
};

// Rows per thread for a split and variant: the smallest E in {1, 2, 4} that keeps every GPU at or
// below 512 chunks (Standard) or 256 (Pipelined), raised to 8 only past 4096 chunks at E = 4, so
// a GPU's partial sums over its chunks stay short and a block's chunks are few and large. Why
// (one H200, 1000 iterations, the CPU-free kernels, 2026-11-29): each chunk costs block barriers
// and a partial (three in Pipelined), which E = 1 pays four times as often as E = 4 — Standard at
// 1 M rows 58.5-59.0 us an iteration at E = 1 (4096 chunks), 53.4-54.1 at E = 4; at 262 k rows
// Standard is fastest at E = 2 (14.5 against 15.1-15.4 at E = 1), Pipelined at E = 4 (11.0-12.5
// against 12.3-12.9); at 131 k rows Standard at E = 1 (11.3 against 12.1), Pipelined at E = 2
// (8.4 against 9.6); at 65 k rows both at E = 1 (every larger E slower by 20 % or more); E = 8 was
// slower than E = 4 at every size from 1 M to 4.2 M rows.
int rows_per_thread_for(const std::vector<RowRange>& parts, Variant v);

// GPSM_CG_ROWS_PER_THREAD: null, "" or "auto" -> 0 (rows_per_thread_for decides), else 1, 2, 4 or 8.
// Throws gpsm::Error naming the value otherwise.
int parse_rows_per_thread(const char* text);

// The split of `a` over parts.size() GPUs, and its SpMV layout (choose_layout on the largest GPU's
// padding, `spmv` forcing one); E for variant v, or `rows_per_thread` when not 0; the value and
// index storage (`values`, `index` forcing one). 16-bit deltas where every GPU's every slot fits
// in both numberings the runs use: local columns (halo slots after the rows: the CPU-driven,
// CPU-free and NVSHMEM runs) and global ones (gps, gps_pipe). Throws gpsm::Error when a GPU would
// hold 2^31 or more nonzeros or local entries, parts exceed kMaxRanks, or a forced storage does
// not apply.
Plan make_plan(const Matrix& a, const std::vector<RowRange>& parts, SpmvChoice spmv = SpmvChoice::automatic,
               ValueChoice values = ValueChoice::automatic, Variant v = Variant::standard,
               int rows_per_thread = 0, IndexChoice index = IndexChoice::automatic);

// "" when every slot of rank r's sliced rows spans < 65536 columns in both numberings, else the
// first that does not, with its GPU and numbering (choose_index's misfit).
std::string delta_misfit(const RankPlan& p, int r);

}  // namespace gpsm::apps::cg
