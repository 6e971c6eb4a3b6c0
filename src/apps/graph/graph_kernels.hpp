#pragma once
// The graph apps' kernels (graph_kernels.cu): one per app, each compiled once per way of reaching
// the published vectors (Access). The host side builds a VecArg per vector, rank and buffer
// (graph_exchange.hpp); the arithmetic is the CPU references' (graph_refs.hpp).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpsm/gps/config.hpp"
#include "apps/graph/row_segments.hpp"
#include "apps/graph/vec_layout.hpp"  // lanes_for
#include "gpsm/gps/view.hpp"

namespace gpsm::apps::graph {

enum class Access : std::uint8_t {
  local,  // this rank's own full copy (single, memcpy, nccl, infinite) or a managed buffer (um)
  owner,  // element e read from its owner's copy over a peer pointer (rdl); writes stay local
  push,   // reads local; each write stored into every rank's copy (p2p_inline)
  gps,    // a GPS replicated array's view (gps, gps_all)
  held,   // a GPS array this rank holds whole (Array::holds_every_page): loads from its replica with no
          // mask, stores through the view (published to the other subscribers)
};

// One published vector as rank r's kernel sees one of its buffers.
struct VecArg {
  Access kind = Access::local;
  float* local = nullptr;                    // local, owner, push: this rank's copy; held: view.local()
  float* rep[gps::kMaxDevices] = {};         // owner, push: every rank's copy
  int ranks = 1;
  std::int64_t chunk_elems = 1;              // owner: element e lives on rank e / chunk_elems
  gps::View<float> view{};                   // gps, held (and a sole GPS vector's, kind local)
};

// A rank's rows (a Slice on the device): columns are slot rows of the read vector.
struct CsrArg {
  const std::int64_t* row_ptr = nullptr;
  const std::int32_t* col = nullptr;
  const float* val = nullptr;
  std::int64_t rows = 0;
  std::int64_t first_slot = 0;  // slot row of local row 0 in the written vector
  // pagerank, sssp: rows with more than long_row edges (0: none) are split (row_segments.hpp):
  // segs[0, nsegs) run as blocks before the row kernel, which skips those rows; partial holds one
  // value per segment, done one finish counter per split row (zero between launches).
  std::int64_t long_row = 0;
  const RowSegment* segs = nullptr;
  std::int64_t nsegs = 0;
  float* partial = nullptr;
  unsigned* done = nullptr;
};

constexpr int kSgdRank = 16;  // factor length the SGD kernel is compiled for

// proact (graph_proact_plan.hpp): the rank's per-chunk counters. Block b writes local rows
// [b rows_per_block, (b + 1) rows_per_block); after they are stored (block barrier, then thread 0
// releases at system scope: the copy engine reads them) it adds 1 to counters[b / blocks_per_chunk].
// counters == nullptr (every other paradigm): the kernels are compiled without the counting.
struct ReadyArg {
  std::uint32_t* counters = nullptr;
  std::int64_t blocks_per_chunk = 1;
  std::int64_t rows_per_block = 0;  // the chunk split's; the launch checks it against its own mapping
};

// y[slot] = base + damping * sum x[col] inv_deg[col]; change (if not null) += |y - x| per row.
void launch_pagerank(const CsrArg& a, const VecArg& x, const VecArg& y, const float* inv_deg, float base,
                     float damping, double* change, int lanes, cudaStream_t s, const ReadyArg& ready = {});
// y[slot] = min(x[slot], min x[col] + val); *changed = 1 where y < x.
void launch_sssp(const CsrArg& a, const VecArg& x, const VecArg& y, int* changed, int lanes, cudaStream_t s,
                 const ReadyArg& ready = {});
// Each row's kSgdRank-float factor in `own` updated over its ratings (a.val) against `other`.
void launch_sgd(const CsrArg& a, const VecArg& own, const VecArg& other, float lr, float lambda, cudaStream_t s,
                const ReadyArg& ready = {});

}  // namespace gpsm::apps::graph
