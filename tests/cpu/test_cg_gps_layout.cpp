// CG's gps paradigm, host side: global columns, per-chunk column ranges, the page size, the
// remote pieces from subscribed pages, and the learned masks and published bytes the docs quote.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "apps/cg/gps_layout.hpp"
#include "apps/cg/matrix.hpp"
#include "apps/cg/cg_math.hpp"
#include "apps/cg/partition.hpp"
#include "apps/cg/reference.hpp"
#include "apps/cg/traffic.hpp"
#include "gpsm/error.hpp"
#include "gpsm/gps/subscription.hpp"

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

// The sliced SpMV's padding reads a row's own entry: a chunk's range covers its own rows even
// where its rows read none of them (not an SPD matrix: every row reads column 0 only).
TEST(CgGpsLayout, ChunkColumnRangesCoverTheChunksOwnRows) {
  Matrix a;
  a.n = 300;  // chunks of 256: rows 0..255 and 256..299
  for (std::int64_t i = 0; i <= a.n; ++i) a.row_ptr.push_back(i);
  a.col.assign(300, 0);
  a.val.assign(300, 1.0);
  const Plan plan = make_plan(a, split_rows(a.n, 1), SpmvChoice::sell);
  ASSERT_EQ(plan.spmv.layout, SpmvLayout::sell);
  const std::vector<std::int32_t> cr = chunk_column_ranges(plan, 0);
  ASSERT_EQ(cr.size(), 4u);
  EXPECT_EQ(cr[0], 0);
  EXPECT_EQ(cr[1], 255);
  EXPECT_EQ(cr[2], 0);
  EXPECT_EQ(cr[3], 299);
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

// ---- the gps paradigm's data flow, emulated on the host ---------------------------------------
// Each rank holds a full replica of r (every replica starts as b, as Array::upload writes them)
// and a full-length p pair (p_-1 = 0, the other NaN). Per iteration, as cg_gps.cu does: the SpMV
// gathers p_k = beta p_{k-1} + r from the rank's own replica at every column, forms p_k for its
// rows and for the remote pieces of the pages it subscribes to; the update's r reaches the owner's
// replica and every other subscriber of the row's page, nobody else. The history must equal the
// reference's bit for bit, which shows that the learned pages are all a rank needs.
namespace {

std::vector<double> emulate_gps(const Matrix& a, const Plan& plan, const Start& st, int iters,
                                const std::vector<std::uint32_t>& masks, std::uint64_t page) {
  const int R = plan.ranks;
  const auto n = static_cast<std::size_t>(plan.n);
  const auto per_page = static_cast<std::int64_t>(page / sizeof(double));
  gpsm::gps::SubscriptionTable table(masks.size(), R);
  table.assign(masks);
  std::vector<std::vector<double>> rep(R, st.b), x(R), q(R);
  std::vector<std::vector<double>> p[2];
  p[0].assign(R, std::vector<double>(n, 0.0));
  p[1].assign(R, std::vector<double>(n, std::nan("")));
  std::vector<Pieces> pieces;
  for (int r = 0; r < R; ++r) {
    pieces.push_back(remote_pieces(table.pages_of(r), page, plan.n, plan.rank[r].rows, 256));
    x[r].assign(static_cast<std::size_t>(plan.rank[r].local_rows()), 0.0);
    q[r].assign(x[r].size(), 0.0);
  }
  std::vector<double> hist{st.rho0};
  double rho = st.rho0, beta = 0.0;
  for (int k = 0; k < iters; ++k) {
    const int par = k & 1;
    std::vector<double> pq_rank(R), rr_rank(R);
    std::vector<std::vector<double>> pk_local(R);
    for (int r = 0; r < R; ++r) {
      const RankPlan& rp = plan.rank[r];
      const std::vector<std::int32_t> cols = global_columns(rp);
      const std::vector<double>& pold = p[par][r];
      std::vector<double>& pnew = p[1 - par][r];
      for (std::int64_t i = 0; i < rp.local_rows(); ++i) {
        q[r][i] = row_times(rp.row_ptr[i], rp.row_ptr[i + 1], cols.data(), rp.val.data(), plan.lanes,
                            [&](std::int32_t j) { return fmad(beta, pold[j], rep[r][j]); });
        const std::int64_t g = rp.rows.begin + i;
        pnew[g] = fmad(beta, pold[g], rep[r][g]);
      }
      for (std::size_t h = 0; h < pieces[r].begin.size(); ++h)
        for (std::int64_t j = pieces[r].begin[h]; j < pieces[r].end[h]; ++j) pnew[j] = fmad(beta, pold[j], rep[r][j]);
      pk_local[r].assign(pnew.begin() + rp.rows.begin, pnew.begin() + rp.rows.end);
      const std::vector<double> parts = [&] {
        std::vector<double> v;
        for (std::int64_t c = 0; c < plan.chunks(r); ++c) v.push_back(chunk_partial(plan, r, c, pk_local[r].data(), q[r].data()));
        return v;
      }();
      pq_rank[r] = rank_partial(parts.data(), static_cast<std::int64_t>(parts.size()));
    }
    const double pq = global_sum(pq_rank);
    if (pq == 0.0) break;
    const double alpha = cg_ratio(rho, pq);
    for (int r = 0; r < R; ++r) {
      const RankPlan& rp = plan.rank[r];
      std::vector<double> rl(static_cast<std::size_t>(rp.local_rows()));
      for (std::int64_t i = 0; i < rp.local_rows(); ++i) {
        const std::int64_t g = rp.rows.begin + i;
        x[r][i] = fmad(alpha, pk_local[r][i], x[r][i]);
        rl[i] = fmad(-alpha, q[r][i], rep[r][g]);
      }
      for (std::int64_t i = 0; i < rp.local_rows(); ++i) {  // published: owner and the page's subscribers
        const std::int64_t g = rp.rows.begin + i;
        rep[r][g] = rl[i];
        for (int d = 0; d < R; ++d)
          if (d != r && ((masks[static_cast<std::size_t>(g / per_page)] >> d) & 1u)) rep[d][g] = rl[i];
      }
      std::vector<double> parts;
      for (std::int64_t c = 0; c < plan.chunks(r); ++c) parts.push_back(chunk_partial(plan, r, c, rl.data(), rl.data()));
      rr_rank[r] = rank_partial(parts.data(), static_cast<std::int64_t>(parts.size()));
    }
    const double rr = global_sum(rr_rank);
    hist.push_back(rr);
    beta = cg_ratio(rr, rho);
    rho = rr;
  }
  return hist;
}

void expect_bitwise(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) ASSERT_EQ(got[k], want[k]) << "iteration " << k;
}

}  // namespace

TEST(CgGpsLayout, EmulatedGpsDataFlowReproducesTheReference) {
  struct Case {
    Matrix a;
    int ranks;
  };
  std::vector<Case> cases;
  cases.push_back({poisson2d(37, 29), 3});   // cuts inside pages
  cases.push_back({poisson2d(64, 64), 2});   // cut on a page boundary
  cases.push_back({arrow(1500, 7, 5), 4});   // a dense row and column: rank 0 reads every page
  cases.push_back({banded(2000, 9, 2), 3});
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.a.n) + " rows on " + std::to_string(c.ranks));
    const Plan plan = make_plan(c.a, split_rows(c.a.n, c.ranks));
    const Start st = make_start(c.a, plan, Variant::standard, 0);
    const int iters = 25;
    const Solve ref = reference_solve(c.a, plan, st, Variant::standard, iters);
    const std::uint64_t page = gps_page_bytes(plan);
    expect_bitwise(emulate_gps(c.a, plan, st, iters, gps_learned_masks(plan, page), page), ref.rho);
  }
}

TEST(CgGpsLayout, EmulatedGpsMissingAPageFails) {
  // Rank 1 of two does not subscribe to the page holding the row below its cut: it never receives
  // those rows of r and never forms p there (NaN), so the history leaves the reference.
  const Matrix a = poisson2d(64, 64);
  const Plan plan = make_plan(a, split_rows(a.n, 2));
  const Start st = make_start(a, plan, Variant::standard, 0);
  const std::uint64_t page = gps_page_bytes(plan);
  std::vector<std::uint32_t> masks = gps_learned_masks(plan, page);
  const std::int64_t below = (plan.rank[1].rows.begin - 1) / static_cast<std::int64_t>(page / sizeof(double));
  ASSERT_EQ(masks[below], 3u);
  masks[below] = 1u;
  const std::vector<double> got = emulate_gps(a, plan, st, 10, masks, page);
  const Solve ref = reference_solve(a, plan, st, Variant::standard, 10);
  ASSERT_EQ(got.size(), ref.rho.size());
  EXPECT_FALSE(got.back() == ref.rho.back());  // NaN or different bits
}

TEST(CgGpsLayout, InteriorFirstOrdersInteriorThenBoundaryAscending) {
  const ChunkOrder co = interior_first(7, [](std::int64_t c) { return c % 3 != 1; });
  EXPECT_EQ(co.order, (std::vector<std::int32_t>{0, 2, 3, 5, 6, 1, 4}));
  EXPECT_EQ(co.boundary, 2);
  EXPECT_TRUE(interior_first(0, [](std::int64_t) { return true; }).order.empty());
  const ChunkOrder all = interior_first(3, [](std::int64_t) { return false; });
  EXPECT_EQ(all.order, (std::vector<std::int32_t>{0, 1, 2}));
  EXPECT_EQ(all.boundary, 3);
  EXPECT_THROW(interior_first(-1, [](std::int64_t) { return true; }), gpsm::Error);
}

// gps_pipe's classification as the runtime answers it after tracking (the learned masks, asked
// through SubscriptionTable::reach as Array::reach does): a chunk called interior reads only rows
// its own GPU stores (so it may run before the fence's wait) and stores rows no other GPU holds
// (so it may run the plain code), and on a matrix with rows far from the cut most chunks are interior.
TEST(CgGpsLayout, ReachSoleChunksReadOnlyTheirOwnGpusRows) {
  struct Case {
    Matrix a;
    int ranks;
  };
  std::vector<Case> cases;
  cases.push_back({poisson2d(64, 256), 2});
  cases.push_back({poisson2d(37, 290), 3});  // cuts inside pages
  cases.push_back({arrow(3000, 7, 5), 4});   // a dense row and column
  for (const Case& k : cases) {
    SCOPED_TRACE(std::to_string(k.a.n) + " rows on " + std::to_string(k.ranks));
    const Plan plan = make_plan(k.a, split_rows(k.a.n, k.ranks));
    const std::uint64_t page = gps_page_bytes(plan);
    gpsm::gps::SubscriptionTable t(gps_learned_masks(plan, page).size(), k.ranks);
    t.assign(gps_learned_masks(plan, page));
    const auto per_page = static_cast<std::uint64_t>(page / sizeof(double));
    std::int64_t interior_total = 0, chunks_total = 0;
    for (int r = 0; r < k.ranks; ++r) {
      const RankPlan& p = plan.rank[r];
      const std::vector<std::int32_t> cr = chunk_column_ranges(plan, r), g = global_columns(p);
      const ChunkOrder co = interior_first(plan.chunks(r), [&](std::int64_t c) {
        const auto lo = static_cast<std::uint64_t>(cr[2 * c]), hi = static_cast<std::uint64_t>(cr[2 * c + 1]);
        return t.reach(PageRange{lo / per_page, hi / per_page + 1}, r) == gpsm::gps::Reach::sole;
      });
      ASSERT_EQ(co.order.size(), static_cast<std::size_t>(plan.chunks(r)));
      for (std::size_t idx = 0; idx + co.boundary < co.order.size(); ++idx) {
        const std::int64_t c = co.order[idx];
        const std::int64_t b = c * plan.chunk(), e = std::min(p.local_rows(), b + plan.chunk());
        for (std::int32_t j = p.row_ptr[b]; j < p.row_ptr[e]; ++j)
          ASSERT_TRUE(g[j] >= p.rows.begin && g[j] < p.rows.end) << "rank " << r << " chunk " << c << " reads row " << g[j];
        // and no other GPU subscribes to its own rows' pages, so the plain code that gps and
        // gps_pipe run on such a chunk may store them without publishing
        const auto first = static_cast<std::uint64_t>(p.rows.begin + b), last = static_cast<std::uint64_t>(p.rows.begin + e - 1);
        for (std::uint64_t pg = first / per_page; pg <= last / per_page; ++pg)
          ASSERT_EQ(t.mask(pg), 1u << r) << "rank " << r << " chunk " << c << " page " << pg;
      }
      interior_total += plan.chunks(r) - co.boundary;
      chunks_total += plan.chunks(r);
    }
    if (k.ranks == 2) EXPECT_GE(interior_total * 2, chunks_total);  // poisson2d:64x256: 2 chunks of 32 are near the cut
  }
}
