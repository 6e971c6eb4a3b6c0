#pragma once
// The exchange layer the graph apps share: how one published vector lives and moves in each
// paradigm (graph_exchange_cuda.cpp), and the phase loop ordering the ranks.
//
//   paradigm     copies                       after a rank's kernel wrote its rows
//   single       one device buffer            -
//   memcpy       a full copy per GPU          cudaMemcpyPeerAsync of its rows to every peer
//   proact       a full copy per GPU          during the kernel: each chunk of its rows, once the
//                                             blocks writing it bumped its counter, copied to every
//                                             peer by a copy stream waiting on the counter
//                                             (graph_exchange_proact.hpp; not yet run on a GPU)
//   infinite     a full copy per GPU          nothing (the memcpy run with its copies elided)
//   nccl         a full copy per GPU          ncclAllGather of the ranks' chunks (after all ranks)
//   p2p_inline   a full copy per GPU          nothing: the kernel stored each value into every copy
//   rdl          a full copy per GPU          nothing: readers load remote rows from the owner's copy
//   um           one managed buffer           nothing (pages fault and migrate)
//   um_hints     one managed buffer, hinted   nothing (preferred location = owner, accessed by all)
//   gps          a GPS array, tracked subs    the kernel stored each value into every subscriber's
//                                             replica (inline mode); Context::fence_async() after
//                                             all ranks (GPSM_PUBLISH_MODE=combine|bulk: fence())
//   gps_all      a GPS array, all subscribed  as gps
#include <cuda_runtime_api.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "apps/graph/graph_kernels.hpp"
#include "apps/graph/vec_layout.hpp"
#include "apps/harness/paradigm.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm {
class NcclComms;
}

namespace gpsm::apps::graph {

class ProactShipper;

class Exchange {
 public:
  // buffers: 2 for vectors read in one phase and written in the next (PageRank, SSSP), 1 for
  // vectors updated in place by their owners (SGD factors). comms: the nccl paradigm's.
  // rows_per_block, proact_chunk: proact's, the block -> rows mapping of the kernel writing the
  // vector (graph_proact_plan.hpp: rows_per_block(lanes)) and the bytes per chunk (0: the default
  // split); the other paradigms ignore them.
  Exchange(gps::Context& ctx, Paradigm par, const VecLayout& l, int buffers, const std::string& name,
           NcclComms* comms = nullptr, std::int64_t rows_per_block = 0, std::uint64_t proact_chunk = 0);
  ~Exchange();
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  const VecLayout& layout() const { return l_; }
  VecArg arg(int r, int b) const;
  // Every copy of buffer b (each replica, subscribed or not) := slots (slot order).
  void upload(int b, const std::vector<float>& slots);
  // Buffer b in slot order, each rank's rows from its own copy (GPS: from the page's home).
  std::vector<float> download(int b) const;
  // Rank r's kernel writing buffer b is about to be launched on its stream, after the phase's
  // waits: proact returns the counters the kernel bumps (and marks where its copies may start);
  // empty for every other paradigm.
  ReadyArg before_kernel(int r, int b);
  // Rank r's kernel writing buffer b was just launched on its stream (memcpy: the copies; proact:
  // the chunk waits and copies on its copy stream, joined back into the rank's stream).
  void after_kernel(int r, int b);
  // Every rank's kernel of the phase was launched (nccl: the allgather; gps: the fence).
  void after_phase(int b);
  // Link bytes of one publication: publish_bytes, or -1 (um, gps: see gps_array's counters).
  double publish_bytes() const;
  // um_hints: the first hint that did not read back, or empty.
  const std::string& hint_problem() const { return hint_problem_; }
  const ProactShipper* proact() const { return proact_.get(); }  // proact only, else null
  gps::Array<float>* gps_array(int b) { return b >= 0 && b < static_cast<int>(gps_.size()) ? &gps_[b] : nullptr; }

 private:
  void advise();

  gps::Context& ctx_;
  Paradigm par_;
  VecLayout l_;
  int n_, buffers_;
  NcclComms* comms_;
  std::vector<std::array<DevBuf<float>, 2>> rep_;  // [rank][buffer]: replicated paradigms
  std::array<float*, 2> managed_{nullptr, nullptr};
  std::vector<gps::Array<float>> gps_;
  std::unique_ptr<ProactShipper> proact_;
  std::string hint_problem_;
};

// Whether each rank must wait for every other rank's previous phase (the copies it reads and their
// reads of what it overwrites): every multi-GPU paradigm but nccl (its collective orders the
// streams) and gps / gps_all (a GPS fence ends every phase: fence_async's barrier on the streams,
// or the host fence); proact included (its copy streams
// start behind these waits and the rank's stream joins them before the phase's event).
bool needs_phase_events(Paradigm p, int ranks);

// The phase loop's cross-rank ordering for paradigms whose exchange needs_events(): at the start
// of phase t each rank's stream waits for every other rank's phase t - 1 (events alternate by
// phase parity: a rank earlier in the host loop has already recorded phase t).
class PhaseEvents {
 public:
  PhaseEvents(gps::Context& ctx, bool on);
  ~PhaseEvents();
  void begin(int r);  // before rank r's work of the phase
  void end(int r);    // after it
  void next() { ++phase_; }
  void reset() { phase_ = 0; }

 private:
  gps::Context& ctx_;
  bool on_;
  int phase_ = 0;
  std::vector<std::array<cudaEvent_t, 2>> ev_;
};

// A rank's CSR slice on its GPU.
struct DeviceSlice {
  DevBuf<std::int64_t> row_ptr;
  DevBuf<std::int32_t> col;
  DevBuf<float> val;
  std::int64_t rows = 0, nnz = 0;
  // pagerank, sssp: rows longer than long_row edges run as block segments (row_segments.hpp);
  // both 0 when no row is split
  std::int64_t long_row = 0, nsegs = 0;
  DevBuf<RowSegment> segs;
  DevBuf<float> partial;
  DevBuf<unsigned> done;
  void upload(int dev, const Slice& s);
  // After upload (s: the uploaded slice): splits the rows longer than GPSM_GRAPH_SPLIT's chain
  // (kChainEdges by default; off: none) x lanes edges.
  void split_long_rows(int dev, const Slice& s, int lanes);
  CsrArg arg(std::int64_t first_slot) const;
};

// Uploads host data into a new device buffer.
void upload_floats(DevBuf<float>& b, int dev, const std::vector<float>& v);

}  // namespace gpsm::apps::graph
