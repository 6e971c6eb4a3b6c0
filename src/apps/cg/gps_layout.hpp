#pragma once
// What CG's `gps` paradigm derives from the matrix and from the runtime's learned subscriptions
// (plain C++, CPU-tested). The residual r lives in one GPS array indexed by global row; each GPU
// stores its rows through its view and its SpMV gathers r by global column, so it needs no halo
// list: the runtime learns from the SpMV's loads which pages each GPU reads (tracking) and
// publishes each store to those pages' subscribers. The search direction p stays per GPU
// (p_k = r_k + beta p_{k-1} needs the last reduction's beta, so publishing p would cost a third
// device fence per iteration); each GPU forms p for its own rows and for every entry of the
// pages of r it subscribes to beyond them: the pages the runtime says it reads.
#include <cstdint>
#include <functional>
#include <vector>

#include "apps/cg/partition.hpp"
#include "gpsm/gps/page_math.hpp"

namespace gpsm::apps::cg {

// Rank r's local CSR with global column ids (same rows, same entry order as plan.rank[r]).
std::vector<std::int32_t> global_columns(const RankPlan& p);

// Per chunk of rank r: the lowest and highest global column its rows read ([2c], [2c + 1]), so the
// SpMV checks the chunk's pages of r once (View::local_span) instead of one mask per load.
std::vector<std::int32_t> chunk_column_ranges(const Plan& plan, int r);

// The page size of the r array: one chunk of rows (chunk_rows(E) doubles), so a chunk's stores
// cover at most two pages and a page published to a peer carries at most a chunk more than it reads.
std::uint64_t gps_page_bytes(const Plan& plan);

// Pipelined CG on GPS memory (gps_pipe): the chunks in the order its blocks take them, those whose
// SpMV reads only pages no other GPU holds (`interior(c)`: the runtime's Array::reach over the
// chunk's column range is sole) first, each class ascending; `boundary` of them at the end may
// read rows other GPUs store, so a block takes the reduction (and every GPU's stores) before them.
struct ChunkOrder {
  std::vector<std::int32_t> order;
  std::int64_t boundary = 0;
};
ChunkOrder interior_first(std::int64_t chunks, const std::function<bool(std::int64_t)>& interior);

// Element ranges [begin, end) of a vector of n doubles in pages of page_bytes: the pages `pages`
// (a rank's subscribed runs) less the rank's own rows, cut into pieces of at most `piece` entries.
struct Pieces {
  std::vector<std::int64_t> begin, end;
  std::int64_t entries() const;
};
Pieces remote_pieces(const std::vector<gps::PageRange>& pages, std::uint64_t page_bytes, std::int64_t n, RowRange own,
                     std::int64_t piece);

// What tracking one iteration of the gps kernel learns: per page of r, the ranks whose kernel
// touched it (its own rows' pages by the stores and row spans, every page its SpMV loads).
std::vector<std::uint32_t> gps_learned_masks(const Plan& plan, std::uint64_t page_bytes);

// Link bytes one iteration publishes through r's array, as the runtime counts inline stores (a
// 32-byte sector per warp, sector and destination): rank r's update stores row g from thread
// (g - first) mod kThreads, so a warp stores 32 consecutive rows; each reaches its page's
// subscribers other than r. Plus the two device-fence rounds (a tag word and one double per
// ordered GPU pair each).
double gps_link_bytes_per_iter(const Plan& plan, const std::vector<std::uint32_t>& masks, std::uint64_t page_bytes);

}  // namespace gpsm::apps::cg
