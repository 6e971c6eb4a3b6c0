// CG's gps paradigm: columns, chunk ranges, pages and the published bytes (gps_layout.hpp).
#include "apps/cg/gps_layout.hpp"

#include <algorithm>

#include "apps/cg/cg_math.hpp"
#include "apps/cg/traffic.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::cg {

std::vector<std::int32_t> global_columns(const RankPlan& p) {
  const std::int64_t rows = p.local_rows();
  std::vector<std::int32_t> g(p.col.size());
  for (std::size_t k = 0; k < p.col.size(); ++k) {
    const std::int64_t c = p.col[k];
    g[k] = static_cast<std::int32_t>(c < rows ? p.rows.begin + c : p.halo[static_cast<std::size_t>(c - rows)]);
  }
  return g;
}

std::vector<std::int32_t> chunk_column_ranges(const Plan& plan, int r) {
  const RankPlan& p = plan.rank[r];
  const std::vector<std::int32_t> g = global_columns(p);
  const std::int64_t chunk = plan.chunk(), chunks = plan.chunks(r);
  std::vector<std::int32_t> out(static_cast<std::size_t>(2 * chunks));
  for (std::int64_t c = 0; c < chunks; ++c) {
    // A chunk reads at least its own rows' diagonal, and the sliced layout's padding reads the
    // own rows too: the range covers the chunk's rows whatever the matrix (unchanged for an SPD
    // one, whose every row holds its diagonal).
    const std::int64_t last = std::min(p.local_rows(), (c + 1) * chunk);
    auto lo = static_cast<std::int32_t>(p.rows.begin + c * chunk), hi = static_cast<std::int32_t>(p.rows.begin + last - 1);
    for (std::int32_t k = p.row_ptr[c * chunk]; k < p.row_ptr[last]; ++k) {
      lo = std::min(lo, g[k]);
      hi = std::max(hi, g[k]);
    }
    out[2 * c] = lo;
    out[2 * c + 1] = hi;
  }
  return out;
}

std::uint64_t gps_page_bytes(const Plan& plan) {
  const auto bytes = static_cast<std::uint64_t>(plan.chunk()) * sizeof(double);
  if (gps::page_shift_of(bytes) < 0)
    throw gpsm::Error("gpsm: cg: a chunk of " + std::to_string(bytes) + " bytes is not a valid GPS page size");
  return bytes;
}

ChunkOrder interior_first(std::int64_t chunks, const std::function<bool(std::int64_t)>& interior) {
  if (chunks < 0) throw gpsm::Error("gpsm: cg: a negative chunk count");
  ChunkOrder out;
  std::vector<char> inner(static_cast<std::size_t>(chunks));
  for (std::int64_t c = 0; c < chunks; ++c) inner[static_cast<std::size_t>(c)] = interior(c) ? 1 : 0;
  for (const char pass : {1, 0})
    for (std::int64_t c = 0; c < chunks; ++c)
      if (inner[static_cast<std::size_t>(c)] == pass) out.order.push_back(static_cast<std::int32_t>(c));
  out.boundary = chunks - std::count(inner.begin(), inner.end(), 1);
  return out;
}

std::int64_t Pieces::entries() const {
  std::int64_t n = 0;
  for (std::size_t k = 0; k < begin.size(); ++k) n += end[k] - begin[k];
  return n;
}

Pieces remote_pieces(const std::vector<gps::PageRange>& pages, std::uint64_t page_bytes, std::int64_t n, RowRange own,
                     std::int64_t piece) {
  if (piece < 1 || page_bytes < sizeof(double) || page_bytes % sizeof(double) != 0)
    throw gpsm::Error("gpsm: cg: remote pieces need a positive piece and a page of whole doubles");
  const auto per_page = static_cast<std::int64_t>(page_bytes / sizeof(double));
  Pieces out;
  auto add = [&](std::int64_t b, std::int64_t e) {
    for (; b < e; b += piece) {
      out.begin.push_back(b);
      out.end.push_back(std::min(e, b + piece));
    }
  };
  for (const gps::PageRange& r : pages) {
    const std::int64_t b = std::min(n, static_cast<std::int64_t>(r.first) * per_page);
    const std::int64_t e = std::min(n, static_cast<std::int64_t>(r.last) * per_page);
    add(b, std::min(e, own.begin));  // the part below the own rows
    add(std::max(b, own.end), e);    // and above
  }
  return out;
}

std::vector<std::uint32_t> gps_learned_masks(const Plan& plan, std::uint64_t page_bytes) {
  const auto per_page = static_cast<std::int64_t>(page_bytes / sizeof(double));
  std::vector<std::uint32_t> masks(static_cast<std::size_t>((plan.n + per_page - 1) / per_page), 0u);
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    const std::uint32_t bit = 1u << r;
    for (std::int64_t g = p.rows.begin / per_page; g <= (p.rows.end - 1) / per_page; ++g) masks[g] |= bit;
    for (std::int32_t c : global_columns(p)) masks[c / per_page] |= bit;
  }
  return masks;
}

double gps_link_bytes_per_iter(const Plan& plan, const std::vector<std::uint32_t>& masks, std::uint64_t page_bytes) {
  if (plan.ranks == 1) return 0;
  const auto per_page = static_cast<std::int64_t>(page_bytes / sizeof(double));
  constexpr std::int64_t kSectorDoubles = 32 / sizeof(double);
  double bytes = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankPlan& p = plan.rank[r];
    const std::int64_t rows = p.local_rows();
    // A warp's 32 rows: local rows w * 32 .. w * 32 + 31 (chunk and row-per-thread steps are
    // multiples of 32, so the warps tile the local rows).
    for (std::int64_t w0 = 0; w0 < rows; w0 += kWarp) {
      for (int d = 0; d < plan.ranks; ++d) {
        if (d == r) continue;
        std::int64_t last = -1, sectors = 0;  // rows ascend: a sector's rows are adjacent
        for (std::int64_t i = w0; i < std::min(rows, w0 + kWarp); ++i) {
          const std::int64_t g = p.rows.begin + i;
          if (((masks[static_cast<std::size_t>(g / per_page)] >> d) & 1u) && g / kSectorDoubles != last) {
            last = g / kSectorDoubles;
            ++sectors;
          }
        }
        bytes += 32.0 * static_cast<double>(sectors);
      }
    }
  }
  const double pairs = static_cast<double>(plan.ranks) * (plan.ranks - 1);
  return bytes + pairs * device_word_bytes(1) * syncs_per_iter(Variant::standard);
}

}  // namespace gpsm::apps::cg
