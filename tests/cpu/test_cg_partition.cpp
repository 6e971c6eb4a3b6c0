// The CG app's row splits and per-GPU plans: contiguous blocks (uneven, nonzero-balanced, a dense
// row), local renumbering, halo slots, send lists and push lists. The exchange is simulated on the
// host both ways the paradigms move it (in-kernel pushes, packed copies), and must fill every halo
// slot with the owner's value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps::cg;

namespace {

void expect_cover(const std::vector<RowRange>& parts, std::int64_t n) {
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts.front().begin, 0);
  EXPECT_EQ(parts.back().end, n);
  for (std::size_t p = 0; p < parts.size(); ++p) {
    EXPECT_GE(parts[p].size(), 1) << "part " << p;
    if (p > 0) EXPECT_EQ(parts[p].begin, parts[p - 1].end);
  }
}

std::int64_t part_nnz(const Matrix& a, const RowRange& r) { return a.row_ptr[r.end] - a.row_ptr[r.begin]; }

// Every value a GPU's local vector holds after an exchange, [rows | halo slots], from global
// values g(j), moved the way the plan says: pushes into the peers' vectors, or packs copied to
// [recv_off] ranges. Slots nobody fills stay NaN.
std::vector<std::vector<double>> exchange(const Plan& plan, bool packed) {
  std::vector<std::vector<double>> vec(static_cast<std::size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    vec[r].assign(static_cast<std::size_t>(p.local_rows() + p.halo_size()), std::nan(""));
    for (std::int64_t i = 0; i < p.local_rows(); ++i) vec[r][i] = static_cast<double>(p.rows.begin + i);
  }
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    if (!packed) {
      for (std::size_t e = 0; e < p.push_row.size(); ++e) vec[p.push_peer[e]][p.push_dst[e]] = vec[r][p.push_row[e]];
      continue;
    }
    std::vector<double> pack(static_cast<std::size_t>(p.sends()), std::nan(""));
    for (std::size_t e = 0; e < p.push_row.size(); ++e) pack[p.push_pack[e]] = vec[r][p.push_row[e]];
    for (int g = 0; g < plan.ranks; ++g) {
      const RankPlan& q = plan.rank[g];
      const std::int64_t count = p.send_off[g + 1] - p.send_off[g];
      if (count != q.recv_off[r + 1] - q.recv_off[r]) {
        ADD_FAILURE() << "rank " << r << " sends " << count << " entries to " << g << ", which expects "
                      << q.recv_off[r + 1] - q.recv_off[r];
        return vec;
      }
      for (std::int64_t k = 0; k < count; ++k) vec[g][q.local_rows() + q.recv_off[r] + k] = pack[p.send_off[g] + k];
    }
  }
  return vec;
}

// The plan reproduces the matrix: local entries map back to the global columns, in order, and
// after an exchange every entry a GPU reads holds its column's global value.
void expect_plan_consistent(const Matrix& a, const Plan& plan) {
  std::int64_t nnz = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    nnz += p.nnz();
    ASSERT_EQ(static_cast<std::int64_t>(p.row_ptr.size()), p.local_rows() + 1);
    EXPECT_TRUE(std::is_sorted(p.halo.begin(), p.halo.end()));
    EXPECT_EQ(std::adjacent_find(p.halo.begin(), p.halo.end()), p.halo.end());
    std::set<std::int64_t> needed;
    for (std::int64_t i = 0; i < p.local_rows(); ++i) {
      const std::int64_t gi = p.rows.begin + i;
      ASSERT_EQ(p.row_ptr[i + 1] - p.row_ptr[i], a.row_nnz(gi));
      for (std::int32_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) {
        const std::int64_t gk = a.row_ptr[gi] + (k - p.row_ptr[i]);
        const std::int64_t j = a.col[gk];
        const std::int64_t local = p.col[k];
        const std::int64_t back = local < p.local_rows() ? p.rows.begin + local : p.halo[local - p.local_rows()];
        ASSERT_EQ(back, j) << "row " << gi;
        EXPECT_EQ(p.val[k], a.val[gk]);
        if (j < p.rows.begin || j >= p.rows.end) needed.insert(j);
      }
    }
    // Exactly the columns outside its rows: nothing more crosses the link.
    EXPECT_EQ(std::vector<std::int64_t>(needed.begin(), needed.end()), p.halo);
    // recv_off groups the slots by owner, in rank order; nothing from itself.
    for (int g = 0; g < plan.ranks; ++g)
      for (std::int64_t s = p.recv_off[g]; s < p.recv_off[g + 1]; ++s) {
        EXPECT_GE(p.halo[s], plan.rank[g].rows.begin);
        EXPECT_LT(p.halo[s], plan.rank[g].rows.end);
      }
    EXPECT_EQ(p.recv_off[r + 1], p.recv_off[r]);
    // Pushes: in row order, bucketed by chunk.
    EXPECT_TRUE(std::is_sorted(p.push_row.begin(), p.push_row.end()));
    ASSERT_EQ(static_cast<std::int64_t>(p.chunk_push.size()), plan.chunks(r) + 1);
    for (std::int64_t c = 0; c < plan.chunks(r); ++c)
      for (std::int32_t e = p.chunk_push[c]; e < p.chunk_push[c + 1]; ++e) EXPECT_EQ(p.push_row[e] / plan.chunk(), c);
    EXPECT_EQ(p.chunk_push.back(), static_cast<std::int32_t>(p.push_row.size()));
    // Interior chunks first; boundary_chunks of them read a halo slot.
    ASSERT_EQ(static_cast<std::int64_t>(p.chunk_order.size()), plan.chunks(r));
    for (std::size_t o = 0; o < p.chunk_order.size(); ++o) {
      const std::int64_t c = p.chunk_order[o];
      bool reads_halo = false;
      for (std::int64_t i = c * plan.chunk(); i < std::min(p.local_rows(), (c + 1) * plan.chunk()); ++i)
        for (std::int32_t k = p.row_ptr[i]; k < p.row_ptr[i + 1]; ++k) reads_halo = reads_halo || p.col[k] >= p.local_rows();
      EXPECT_EQ(reads_halo, static_cast<std::int64_t>(o) >= plan.chunks(r) - p.boundary_chunks) << "chunk " << c;
    }
  }
  EXPECT_EQ(nnz, a.nnz());
  for (bool packed : {false, true}) {
    const auto vec = exchange(plan, packed);
    for (int r = 0; r < plan.ranks; ++r) {
      const RankPlan& p = plan.rank[r];
      for (std::int64_t h = 0; h < p.halo_size(); ++h)
        ASSERT_EQ(vec[r][p.local_rows() + h], static_cast<double>(p.halo[h])) << (packed ? "packed" : "pushed") << ", rank " << r << " slot " << h;
    }
  }
}

}  // namespace

TEST(CgPartition, EqualSplitTakesTheRemainderFirst) {
  const auto p = split_rows(10, 3);
  expect_cover(p, 10);
  EXPECT_EQ(p[0].size(), 4);
  EXPECT_EQ(p[1].size(), 3);
  EXPECT_EQ(p[2].size(), 3);
  expect_cover(split_rows(7, 7), 7);
  EXPECT_THROW(split_rows(3, 4), std::invalid_argument);
  EXPECT_THROW(split_rows(3, 0), std::invalid_argument);
}

TEST(CgPartition, NonzeroSplitBalancesNonzerosNotRows) {
  // Row i of this CSR has i + 1 entries: equal rows would give the last part most nonzeros.
  std::vector<std::int64_t> rp{0};
  for (int i = 0; i < 100; ++i) rp.push_back(rp.back() + i + 1);
  const auto p = split_rows_by_nnz(rp, 4);
  expect_cover(p, 100);
  const std::int64_t nnz = rp.back();
  for (const RowRange& r : p) {
    const std::int64_t got = rp[r.end] - rp[r.begin];
    EXPECT_LT(std::abs(got - nnz / 4), 100) << r.begin << ".." << r.end;  // within the largest row
  }
  EXPECT_GT(p[0].size(), p[3].size());
}

TEST(CgPartition, NonzeroSplitGivesADenseRowItsOwnPart) {
  const Matrix a = arrow(400, 5, 1);  // row 0: 400 entries; the other rows about 6
  ASSERT_EQ(a.row_nnz(0), 400);
  const auto p = split_rows_by_nnz(a.row_ptr, 4);
  expect_cover(p, a.n);
  EXPECT_LT(p[0].size(), p[1].size());  // the dense row fills most of part 0's share
  for (const RowRange& r : p) EXPECT_LE(part_nnz(a, r), a.nnz() / 4 + 400);
  // More parts than the dense row leaves rows for: every part still gets one.
  std::vector<std::int64_t> rp{0, 1000, 1001, 1002};
  const auto q = split_rows_by_nnz(rp, 3);
  expect_cover(q, 3);
  EXPECT_THROW(split_rows_by_nnz(rp, 4), std::invalid_argument);
}

TEST(CgPartition, PlanOfPoissonWithUnevenRows) {
  const Matrix a = poisson2d(37, 29);  // 1073 rows: 358 / 358 / 357 over 3 GPUs
  for (int ranks : {1, 2, 3, 4, 8}) {
    SCOPED_TRACE(std::to_string(ranks) + " GPUs");
    const Plan plan = make_plan(a, split_rows(a.n, ranks));
    EXPECT_EQ(plan.ranks, ranks);
    EXPECT_EQ(plan.lanes, 4);  // about 5 nonzeros per row
    EXPECT_EQ(plan.rows_per_thread, 1);
    expect_plan_consistent(a, plan);
    // A 2D grid split in row blocks: each inner GPU needs one grid row (37 entries) from each side.
    if (ranks >= 3) {
      EXPECT_EQ(plan.rank[1].halo_size(), 2 * 37);
      EXPECT_EQ(plan.rank[1].recv_off[1] - plan.rank[1].recv_off[0], 37);
    }
    if (ranks == 1) EXPECT_EQ(plan.halo_total(), 0);
  }
}

TEST(CgPartition, PlanOfBandedDenseRowAndElastic) {
  for (const Matrix& a : {banded(3001, 9, 7), arrow(2000, 7, 3), elastic3d(4, 3, 5), poisson3d27(6, 5, 4)}) {
    for (int ranks : {2, 3, 5}) {
      for (bool by_nnz : {false, true}) {
        SCOPED_TRACE(std::to_string(a.n) + " rows, " + std::to_string(ranks) + " GPUs" + (by_nnz ? ", by nnz" : ""));
        const Plan plan = make_plan(a, by_nnz ? split_rows_by_nnz(a.row_ptr, ranks) : split_rows(a.n, ranks));
        expect_plan_consistent(a, plan);
      }
    }
  }
  // The dense row and column: every GPU needs row 0's owner's entry 0, and sends all its rows to it.
  const Matrix a = arrow(2000, 7, 3);
  const Plan plan = make_plan(a, split_rows(a.n, 4));
  for (int r = 1; r < 4; ++r) EXPECT_TRUE(std::binary_search(plan.rank[r].halo.begin(), plan.rank[r].halo.end(), 0));
  EXPECT_EQ(plan.rank[0].halo_size(), a.n - plan.rank[0].local_rows());
}

TEST(CgPartition, RowsPerThreadKeepsChunksFew) {
  constexpr auto S = Variant::standard, P = Variant::pipelined;
  auto e = [](std::int64_t rows, int gpus, Variant v) { return rows_per_thread_for(split_rows(rows, gpus), v); };
  EXPECT_EQ(e(512 * 256, 1, S), 1);      // 512 chunks
  EXPECT_EQ(e(512 * 256 + 1, 1, S), 2);  // 257
  EXPECT_EQ(e(256 * 256, 1, P), 1);      // 256 chunks
  EXPECT_EQ(e(256 * 256 + 1, 1, P), 2);  // 129
  EXPECT_EQ(e(512 * 256 + 1, 1, P), 4);  // 129
  EXPECT_EQ(e(1024 * 256 + 1, 1, S), 4);  // 257
  EXPECT_EQ(e(1024 * 256 * 2 + 1, 2, S), 4);  // the largest GPU's rows decide
  EXPECT_EQ(e(1024 * 256 * 2, 2, S), 2);
  for (Variant v : {S, P}) {
    EXPECT_EQ(e(4096 * 1024, 1, v), 4);  // 4096 chunks: 4 rows a thread still
    EXPECT_EQ(e(4096 * 1024 + 1, 1, v), 8);
    EXPECT_EQ(e(std::int64_t{1} << 32, 1, v), 8);  // capped
  }
  const Matrix a = poisson2d(1100, 1000);
  const Plan plan = make_plan(a, split_rows(a.n, 1));
  EXPECT_EQ(plan.rows_per_thread, 4);
  EXPECT_EQ(plan.chunks(0), (a.n + 1023) / 1024);
  EXPECT_NE(plan.rows_per_thread_why.find("1075 chunks of 1024 rows"), std::string::npos) << plan.rows_per_thread_why;
  const Plan small = make_plan(a, split_rows(a.n, 8), SpmvChoice::automatic, ValueChoice::automatic, Variant::pipelined);
  EXPECT_EQ(small.rows_per_thread, 4);  // 137500 rows: 538 chunks at 1 row a thread, 269 at 2, 135 at 4
  EXPECT_EQ(make_plan(a, split_rows(a.n, 8)).rows_per_thread, 2);  // Standard: 269 <= 512
}

TEST(CgPartition, RowsPerThreadCanBeForced) {
  EXPECT_EQ(parse_rows_per_thread(nullptr), 0);
  EXPECT_EQ(parse_rows_per_thread(""), 0);
  EXPECT_EQ(parse_rows_per_thread("auto"), 0);
  EXPECT_EQ(parse_rows_per_thread("8"), 8);
  for (const char* bad : {"3", "16", "0", "two", "4 "}) {
    try {
      parse_rows_per_thread(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const gpsm::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("GPSM_CG_ROWS_PER_THREAD=") + bad), std::string::npos) << e.what();
    }
  }
  const Matrix a = poisson2d(1100, 1000);
  const Plan plan = make_plan(a, split_rows(a.n, 2), SpmvChoice::automatic, ValueChoice::automatic, Variant::standard, 2);
  EXPECT_EQ(plan.rows_per_thread, 2);
  EXPECT_EQ(plan.chunks(0), (a.n / 2 + 511) / 512);
  EXPECT_NE(plan.rows_per_thread_why.find("GPSM_CG_ROWS_PER_THREAD"), std::string::npos);
  EXPECT_THROW(make_plan(a, split_rows(a.n, 2), SpmvChoice::automatic, ValueChoice::automatic, Variant::standard, 3), gpsm::Error);
}

TEST(CgPartition, PlanRejectsWhatTheGpusCannotTake) {
  const Matrix a = poisson2d(8, 8);
  EXPECT_THROW(make_plan(a, split_rows(a.n, kMaxRanks + 1)), gpsm::Error);
  std::vector<RowRange> gap{{0, 10}, {11, 64}};
  EXPECT_THROW(make_plan(a, gap), gpsm::Error);
  std::vector<RowRange> shortp{{0, 10}, {10, 60}};
  EXPECT_THROW(make_plan(a, shortp), gpsm::Error);
}

TEST(CgPartition, LanesFollowTheRowLength) {
  EXPECT_EQ(lanes_for(1.0), 2);
  EXPECT_EQ(lanes_for(3.99), 2);
  EXPECT_EQ(lanes_for(4.88), 4);  // 2D Poisson's average: a bit under 5 with its boundary rows
  EXPECT_EQ(lanes_for(27.0), 16);
  EXPECT_EQ(lanes_for(81.0), 32);
  EXPECT_EQ(lanes_for(500.0), 32);
}

// first_turn_from against walking a block's round robin: the smallest position >= from that
// block `worker` takes (it may lie past the chunks: the caller bounds it).
TEST(CgChunkTurns, FirstTurnFromIsTheBlocksFirstPositionAtOrAfter) {
  for (std::int32_t workers : {1, 2, 3, 7, 395})
    for (std::int32_t worker = 0; worker < std::min(workers, 9); ++worker)
      for (std::int32_t from : {0, 1, 2, 5, 127, 128, 394, 395, 396, 1000}) {
        std::int32_t want = worker;
        while (want < from) want += workers;
        EXPECT_EQ(first_turn_from(worker, workers, from), want) << worker << " of " << workers << " from " << from;
      }
  // 512^2 on 2 GPUs: 128 chunks, 4 of them boundary, 395 workers: blocks 124-127 own one each.
  EXPECT_EQ(first_turn_from(124, 395, 124), 124);
  EXPECT_EQ(first_turn_from(3, 395, 124), 398);  // past the 128 chunks: no boundary chunk
}
