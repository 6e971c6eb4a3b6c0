// CG's gps paradigm, host side: global columns, per-chunk column ranges, the page size, the
// remote pieces from subscribed pages, and the learned masks and published bytes the docs quote.
#include <gtest/gtest.h>

#include <algorithm>

#include "apps/cg/gps_layout.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/traffic.hpp"
#include "gpsm/error.hpp"

using namespace gpsm::apps::cg;
using gpsm::gps::PageRange;

TEST(CgGpsLayout, GlobalColumnsAreTheMatrixColumnsInOrder) {
  const Matrix a = arrow(301, 7, 3);
  const Plan plan = make_plan(a, split_rows(a.n, 3));
  for (int r = 0; r < 3; ++r) {
    const RankPlan& p = plan.rank[r];
    const std::vector<std::int32_t> g = global_columns(p);
    const std::vector<std::int32_t> want(a.col.begin() + a.row_ptr[p.rows.begin], a.col.begin() + a.row_ptr[p.rows.end]);
    EXPECT_EQ(g, want) << "rank " << r;
  }
}

TEST(CgGpsLayout, ChunkColumnRangesBoundEveryColumnAChunkReads) {
  const Matrix a = poisson2d(40, 30);  // 1200 rows: 5 chunks of 256 on one GPU
  const Plan plan = make_plan(a, split_rows(a.n, 2));
  for (int r = 0; r < 2; ++r) {
    const RankPlan& p = plan.rank[r];
    const std::vector<std::int32_t> cr = chunk_column_ranges(plan, r);
    ASSERT_EQ(cr.size(), static_cast<std::size_t>(2 * plan.chunks(r)));
    for (std::int64_t c = 0; c < plan.chunks(r); ++c) {
      const std::int64_t first = p.rows.begin + c * plan.chunk();
      const std::int64_t last = std::min(p.rows.end, first + plan.chunk()) - 1;
      // 5-point: a chunk reads one grid row below its first row to one above its last.
      EXPECT_EQ(cr[2 * c], std::max<std::int64_t>(0, first - 40)) << r << " " << c;
      EXPECT_EQ(cr[2 * c + 1], std::min<std::int64_t>(a.n - 1, last + 40)) << r << " " << c;
    }
  }
}

TEST(CgGpsLayout, PageIsOneChunk) {
  const Matrix a = poisson2d(64, 64);
  EXPECT_EQ(gps_page_bytes(make_plan(a, split_rows(a.n, 2))), 256u * 8u);
  Plan big;
  big.rows_per_thread = 8;
  EXPECT_EQ(gps_page_bytes(big), 2048u * 8u);
}

TEST(CgGpsLayout, RemotePiecesAreTheSubscribedPagesLessTheOwnRows) {
  // Pages of 4 doubles (32 bytes), n = 30: pages 0..7 (the last holds 2 entries).
  const std::vector<PageRange> pages{{0, 2}, {3, 6}, {7, 8}};
  const Pieces p = remote_pieces(pages, 32, 30, RowRange{13, 22}, 3);
  // [0, 8) cut by 3; [12, 24) less [13, 22): [12, 13) and [22, 24); [28, 30).
  const std::vector<std::int64_t> b{0, 3, 6, 12, 22, 28}, e{3, 6, 8, 13, 24, 30};
  EXPECT_EQ(p.begin, b);
  EXPECT_EQ(p.end, e);
  EXPECT_EQ(p.entries(), 8 + 1 + 2 + 2);
  // Every page: the complement of the own rows (what the tracking launch must cover).
  const Pieces all = remote_pieces({{0, 8}}, 32, 30, RowRange{13, 22}, 1000);
  EXPECT_EQ(all.entries(), 30 - 9);
  EXPECT_TRUE(remote_pieces({{3, 5}}, 32, 30, RowRange{10, 22}, 4).begin.empty());  // own pages only
  EXPECT_THROW(remote_pieces(pages, 32, 30, RowRange{13, 22}, 0), gpsm::Error);
}

TEST(CgGpsLayout, LearnedMasksAreTheOwnPagesAndThePagesTheSpmvReads) {
  const Matrix a = poisson2d(512, 512);
  const Plan plan = make_plan(a, split_rows(a.n, 2));  // rows 0..131071 | 131072..262143
  const std::uint64_t page = gps_page_bytes(plan);      // 256 doubles: a cut at a page boundary
  const std::vector<std::uint32_t> m = gps_learned_masks(plan, page);
  ASSERT_EQ(m.size(), 1024u);
  // Rank 0 reads the grid row above its cut (512 entries: pages 512, 513), rank 1 the one below
  // (pages 510, 511); every other page is its owner's alone.
  for (std::size_t g = 0; g < m.size(); ++g) {
    const std::uint32_t want = (g == 510 || g == 511 || g == 512 || g == 513) ? 3u : g < 512 ? 1u : 2u;
    EXPECT_EQ(m[g], want) << "page " << g;
  }
  // Those four pages, each published to the other GPU (8 sectors per warp of 32 rows): 4 pages
  // of 2 KiB, plus two fence rounds of a tag and a double per ordered pair.
  EXPECT_EQ(gps_link_bytes_per_iter(plan, m, page), 4 * 2048.0 + 2 * 2 * 16.0);
  // The hand-written halo for comparison: a grid row each way.
  EXPECT_EQ(link_bytes_per_iter(plan, Variant::standard, Exchange::device), 2 * 512 * 8.0 + 2 * 2 * 16.0);
  EXPECT_EQ(gps_link_bytes_per_iter(make_plan(a, split_rows(a.n, 1)), gps_learned_masks(make_plan(a, split_rows(a.n, 1)), page), page), 0.0);
}

TEST(CgGpsLayout, PublishedBytesCountSectorsPerWarpAndDestination) {
  // 101 x 7 grid on 3 GPUs: cuts inside pages and inside warps; a sector straddling a row block
  // cut is counted by each owner for its rows only.
  const Matrix a = poisson2d(101, 7);  // 707 rows: 236 | 236 | 235
  const Plan plan = make_plan(a, split_rows(a.n, 3));
  const std::uint64_t page = 2048;  // 256 doubles
  const std::vector<std::uint32_t> m = gps_learned_masks(plan, page);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0], 0b011u);  // rows 0..255: rank 0, rank 1 (rows 236..255)
  EXPECT_EQ(m[1], 0b111u);  // rows 256..511: rank 1 owns, rank 0 reads 236+101 > 256, rank 2 owns 472..
  EXPECT_EQ(m[2], 0b110u);  // rows 512..706: rank 2, rank 1 reads 471+101
  // Brute force of the rule: per rank, warp of 32 local rows and destination, the distinct
  // sectors (4 doubles) of the rows whose page lists the destination.
  double want = 0;
  for (int r = 0; r < 3; ++r) {
    const RankPlan& p = plan.rank[r];
    for (std::int64_t w0 = 0; w0 < p.local_rows(); w0 += 32)
      for (int d = 0; d < 3; ++d) {
        if (d == r) continue;
        std::vector<std::int64_t> s;
        for (std::int64_t i = w0; i < std::min(p.local_rows(), w0 + 32); ++i) {
          const std::int64_t g = p.rows.begin + i;
          if ((m[g / 256] >> d) & 1u) s.push_back(g / 4);
        }
        s.erase(std::unique(s.begin(), s.end()), s.end());
        want += 32.0 * static_cast<double>(s.size());
      }
  }
  EXPECT_EQ(gps_link_bytes_per_iter(plan, m, page), want + 6 * 16.0 * 2);
  EXPECT_GT(want, 8.0 * static_cast<double>(plan.halo_total()));  // page-granular: more than the halo
}
