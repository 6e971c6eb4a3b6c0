// Row splits and the per-GPU plan: local CSR, halo slots, send lists and the push lists.
#include "apps/cg/partition.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "apps/cg/cg_math.hpp"
#include "common/even_parts.hpp"
#include "common/omp.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

namespace {
void check_parts(std::int64_t n, int parts) {
  if (parts < 1 || parts > n)
    throw std::invalid_argument("cannot split " + std::to_string(n) + " rows into " + std::to_string(parts) +
                                " non-empty parts");
}
constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
}  // namespace

std::vector<RowRange> split_rows(std::int64_t n, int parts) {
  check_parts(n, parts);
  std::vector<RowRange> out(static_cast<std::size_t>(parts));
  for (int p = 0; p < parts; ++p) {
    out[p].begin = even_part_begin(n, parts, p);
    out[p].end = even_part_begin(n, parts, p + 1);
  }
  return out;
}

std::vector<RowRange> split_rows_by_nnz(const std::vector<std::int64_t>& row_ptr, int parts) {
  const std::int64_t n = static_cast<std::int64_t>(row_ptr.size()) - 1;
  check_parts(n, parts);
  const std::int64_t nnz = row_ptr.back();
  std::vector<RowRange> out(static_cast<std::size_t>(parts));
  std::int64_t at = 0;
  for (int p = 0; p < parts; ++p) {
    out[p].begin = at;
    std::int64_t end = n;
    if (p + 1 < parts) {
      // First row boundary r with row_ptr[r] * parts >= (p + 1) * nnz (exact in integers).
      const auto it = std::partition_point(row_ptr.begin() + at, row_ptr.end(), [&](std::int64_t v) {
        return static_cast<long double>(v) * parts < static_cast<long double>(p + 1) * nnz;
      });
      end = it - row_ptr.begin();
      end = std::clamp<std::int64_t>(end, at + 1, n - (parts - 1 - p));  // every part keeps a row
    }
    out[p].end = at = end;
  }
  return out;
}

std::int64_t Plan::chunk() const { return chunk_rows(rows_per_thread); }
std::int64_t Plan::chunks(int r) const { return (rank[r].local_rows() + chunk() - 1) / chunk(); }
std::int64_t Plan::halo_total() const {
  std::int64_t h = 0;
  for (const RankPlan& p : rank) h += p.halo_size();
  return h;
}

namespace {
std::int64_t most_rows(const std::vector<RowRange>& parts) {
  std::int64_t most = 0;
  for (const RowRange& p : parts) most = std::max(most, p.size());
  return most;
}
// The rows a thread the kernels are built for.
bool kernels_take(int rows_per_thread) {
  return rows_per_thread == 1 || rows_per_thread == 2 || rows_per_thread == 4 || rows_per_thread == 8;
}
}  // namespace

int rows_per_thread_for(const std::vector<RowRange>& parts, Variant v) {
  const std::int64_t most = most_rows(parts), few = v == Variant::standard ? 512 : 256;
  auto chunks = [most](int e) { return (most + chunk_rows(e) - 1) / chunk_rows(e); };
  int e = 1;
  while (e < 4 && chunks(e) > few) e *= 2;
  while (e < 8 && chunks(e) > 4096) e *= 2;
  return e;
}

int parse_rows_per_thread(const char* text) {
  const std::string t = text == nullptr ? "" : text;
  if (t.empty() || t == "auto") return 0;
  if (t.size() == 1 && kernels_take(t[0] - '0')) return t[0] - '0';
  throw gpsm::Error("gpsm: GPSM_CG_ROWS_PER_THREAD=" + t + ": not a row count; use 1, 2, 4, 8 or auto (the default)");
}

std::string delta_misfit(const RankPlan& p, int r) {
  const std::int64_t rows = p.local_rows();
  const WideSlot local = first_wide_slot(p.row_ptr, [&](std::int64_t k) { return p.col[static_cast<std::size_t>(k)]; }, 0);
  if (local.found()) return fmt::format("GPU {}'s {} (local columns: halo slots after the rows)", r, describe(local));
  const WideSlot global = first_wide_slot(
      p.row_ptr,
      [&](std::int64_t k) {
        const std::int64_t c = p.col[static_cast<std::size_t>(k)];
        return c < rows ? p.rows.begin + c : p.halo[static_cast<std::size_t>(c - rows)];
      },
      p.rows.begin);
  if (global.found()) return fmt::format("GPU {}'s {} (global columns: gps, gps_pipe)", r, describe(global));
  return "";
}

Plan make_plan(const Matrix& a, const std::vector<RowRange>& parts, SpmvChoice spmv, ValueChoice values, Variant v,
               int rows_per_thread, IndexChoice index) {
  const int ranks = static_cast<int>(parts.size());
  if (ranks < 1 || ranks > kMaxRanks)
    throw gpsm::Error("gpsm: cg: " + std::to_string(ranks) + " GPUs; the solver takes 1 to " + std::to_string(kMaxRanks));
  if (parts.front().begin != 0 || parts.back().end != a.n)
    throw gpsm::Error("gpsm: cg: the row split does not cover the matrix");
  for (int r = 0; r < ranks; ++r)
    if (parts[r].size() < 1 || (r > 0 && parts[r].begin != parts[r - 1].end))
      throw gpsm::Error("gpsm: cg: the row split is not contiguous and non-empty");
  Plan plan;
  plan.ranks = ranks;
  plan.n = a.n;
  plan.nnz = a.nnz();
  plan.lanes = lanes_for(static_cast<double>(a.nnz()) / static_cast<double>(a.n));
  if (rows_per_thread != 0 && !kernels_take(rows_per_thread))
    throw gpsm::Error(fmt::format("gpsm: cg: {} rows per thread; the kernels take 1, 2, 4 or 8", rows_per_thread));
  plan.rows_per_thread = rows_per_thread != 0 ? rows_per_thread : rows_per_thread_for(parts, v);
  plan.rows_per_thread_why =
      rows_per_thread != 0
          ? fmt::format("{} rows a thread (GPSM_CG_ROWS_PER_THREAD)", rows_per_thread)
          : fmt::format("{} rows a thread: {} chunks of {} rows on the largest GPU", plan.rows_per_thread,
                        (most_rows(parts) + chunk_rows(plan.rows_per_thread) - 1) / chunk_rows(plan.rows_per_thread),
                        chunk_rows(plan.rows_per_thread));
  plan.rank.resize(static_cast<std::size_t>(ranks));
  auto owner = [&](std::int64_t j) {
    int lo = 0, hi = ranks - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (parts[mid].begin <= j) lo = mid; else hi = mid - 1;
    }
    return lo;
  };

  // Local CSR and halo slots, rank by rank.
  for (int r = 0; r < ranks; ++r) {
    RankPlan& p = plan.rank[r];
    p.rows = parts[r];
    const std::int64_t b = p.rows.begin, e = p.rows.end, rows = p.rows.size();
    const std::int64_t k0 = a.row_ptr[b], nnz = a.row_ptr[e] - k0;
    if (nnz > kInt32Max) throw gpsm::Error("gpsm: cg: GPU " + std::to_string(r) + " would hold " + std::to_string(nnz) +
                                           " nonzeros; the local CSR takes fewer than 2^31 (use more GPUs)");
    for (std::int64_t k = k0; k < k0 + nnz; ++k)
      if (a.col[k] < b || a.col[k] >= e) p.halo.push_back(a.col[k]);
    std::sort(p.halo.begin(), p.halo.end());
    p.halo.erase(std::unique(p.halo.begin(), p.halo.end()), p.halo.end());
    if (rows + p.halo_size() > kInt32Max) throw gpsm::Error("gpsm: cg: GPU " + std::to_string(r) + "'s local vector exceeds 2^31 entries");
    p.row_ptr.resize(static_cast<std::size_t>(rows) + 1);
    for (std::int64_t i = 0; i <= rows; ++i) p.row_ptr[i] = static_cast<std::int32_t>(a.row_ptr[b + i] - k0);
    p.col.resize(static_cast<std::size_t>(nnz));
    p.val.assign(a.val.begin() + k0, a.val.begin() + k0 + nnz);
    GPSM_OMP(parallel for schedule(static))
    for (std::int64_t k = 0; k < nnz; ++k) {
      const std::int64_t j = a.col[k0 + k];
      p.col[k] = static_cast<std::int32_t>(
          j >= b && j < e ? j - b : rows + (std::lower_bound(p.halo.begin(), p.halo.end(), j) - p.halo.begin()));
    }
    p.recv_off.assign(static_cast<std::size_t>(ranks) + 1, 0);
    for (std::int64_t j : p.halo) ++p.recv_off[owner(j) + 1];
    for (int g = 0; g < ranks; ++g) p.recv_off[g + 1] += p.recv_off[g];
    // Chunks that read a halo slot, and the order interior chunks first.
    const std::int64_t chunk = plan.chunk(), nchunks = plan.chunks(r);
    std::vector<char> boundary(static_cast<std::size_t>(nchunks), 0);
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int32_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k)
        if (p.col[k] >= rows) boundary[i / chunk] = 1;
    for (int pass = 0; pass < 2; ++pass)
      for (std::int64_t c = 0; c < nchunks; ++c)
        if (boundary[c] == pass) p.chunk_order.push_back(static_cast<std::int32_t>(c));
    p.boundary_chunks = std::count(boundary.begin(), boundary.end(), 1);
    p.sell_entries = sell_entries(p.row_ptr);
  }
  // One layout for every GPU, judged by the GPU the padding hurts most. (Either layout computes
  // the same bits: the choice is about speed only.)
  double padding = 1;
  for (const RankPlan& p : plan.rank)
    if (p.nnz() > 0) padding = std::max(padding, static_cast<double>(p.sell_entries) / static_cast<double>(p.nnz()));
  plan.spmv = choose_layout(plan.lanes, padding, spmv);
  std::int64_t stored = 0;
  for (const RankPlan& p : plan.rank) stored = std::max(stored, p.sell_entries);
  if (plan.spmv.layout == SpmvLayout::sell && stored > kInt32Max)
    plan.spmv = {SpmvLayout::csr, padding, "CSR: a GPU's sliced layout would store 2^31 entries or more (int32 offsets)"};
  // One value and one index storage for every GPU (the kernels' template arguments): the values
  // judged on the whole matrix, the deltas on every GPU's slots.
  const bool sliced = plan.spmv.layout == SpmvLayout::sell;
  plan.values = choose_values(a.val, values, sliced);
  std::string misfit;
  if (sliced && index != IndexChoice::i32)
    for (int r = 0; r < ranks && misfit.empty(); ++r) misfit = delta_misfit(plan.rank[r], r);
  plan.index = choose_index(sliced, index, misfit);

  // Send lists: what each peer's halo slots ask of this rank, in the peer's slot order.
  for (int r = 0; r < ranks; ++r) {
    RankPlan& p = plan.rank[r];
    p.send.assign(static_cast<std::size_t>(ranks), {});
    p.send_off.assign(static_cast<std::size_t>(ranks) + 1, 0);
    for (int g = 0; g < ranks; ++g) {
      const RankPlan& q = plan.rank[g];
      if (g != r)
        for (std::int64_t s = q.recv_off[r]; s < q.recv_off[r + 1]; ++s)
          p.send[g].push_back(static_cast<std::int32_t>(q.halo[s] - p.rows.begin));
      p.send_off[g + 1] = p.send_off[g] + static_cast<std::int64_t>(p.send[g].size());
    }
    // Pushes in local row order (then by peer), bucketed by chunk.
    struct Push {
      std::int32_t row, peer, dst, pack;
    };
    std::vector<Push> pushes;
    for (int g = 0; g < ranks; ++g)
      for (std::size_t k = 0; k < p.send[g].size(); ++k)
        pushes.push_back({p.send[g][k], g,
                          static_cast<std::int32_t>(plan.rank[g].local_rows() + plan.rank[g].recv_off[r] + static_cast<std::int64_t>(k)),
                          static_cast<std::int32_t>(p.send_off[g] + static_cast<std::int64_t>(k))});
    std::stable_sort(pushes.begin(), pushes.end(), [](const Push& x, const Push& y) { return x.row < y.row; });
    const std::int64_t nchunks = plan.chunks(r);
    p.chunk_push.assign(static_cast<std::size_t>(nchunks) + 1, 0);
    for (const Push& x : pushes) {
      p.push_row.push_back(x.row);
      p.push_peer.push_back(x.peer);
      p.push_dst.push_back(x.dst);
      p.push_pack.push_back(x.pack);
      ++p.chunk_push[x.row / plan.chunk() + 1];
    }
    for (std::int64_t c = 0; c < nchunks; ++c) p.chunk_push[c + 1] += p.chunk_push[c];
  }
  return plan;
}

}  // namespace gpsm::apps::cg
