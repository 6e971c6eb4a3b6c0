#pragma once
// PWLS-OS across the GPUs of a context (plain declarations; the code is in ct_multi_cuda.cpp),
// split as the PROACT dissertation's case study splits it (§3.2.1, ct_partition.hpp). Per subset:
//   phase 1   GPU r forward-projects its run of the subset's views (view_share) into its rows of
//             the subset's residual;
//   exchange  every GPU's rows go to every other GPU (each back-projects all of the subset's views);
//   phases 2-4 GPU r back-projects, regularizes and updates its y-slab into the other image buffer;
//   exchange  every GPU's slab goes to every other GPU (the next forward projection reads the
//             whole image).
// The exchanges per paradigm:
//   copies   after each phase, one cudaMemcpyAsync of the GPU's part to each peer (a copy stream
//            per peer, so the peers' copies run side by side), every GPU's next phase waiting for
//            every copy (the `memcpy` paradigm; on one GPU this is the `single` run);
//   nccl     after each phase, the parts gathered by one ncclBroadcast per owner in a group (the
//            parts differ by a view or a plane, which ncclAllGather's equal counts cannot take);
//   proact   the residual as copies; the image by readiness counters per chunk of voxel columns
//            (ct_ready.hpp): the update kernel counts finished columns, and per peer a copy stream
//            waits on each chunk's counter (cuStreamWaitValue32) and copies the chunk while the
//            rest of the slab is still being updated (voxel-major order finishes chunks early);
//   elided   no exchange, no cross-GPU ordering: the bound (`infinite`); its image is not a result;
//   gps      both buffers pairs are GPS arrays (include/gpsm/gps): each GPU stores its rows and its
//            slab through its views, and a host fence after each phase publishes them to the
//            subscribers, learned by tracking one untimed iteration at the first solve.
// Two residual buffers alternate between subsets, two image buffers between updates, so a copy
// into a peer never lands in memory the peer may still read (the ordering argument is in the .cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/ct/ct_geometry.hpp"
#include "apps/ct/ct_pwls.hpp"
#include "apps/ct/ct_scan.hpp"

namespace gpsm::gps {
class Context;
}

namespace gpsm::apps::ct {

enum class CtExchange : std::uint8_t { copies, nccl, proact, elided, gps };
const char* exchange_name(CtExchange e);  // "copies", "nccl", "proact", "elided", "gps"

// The proact image chunk when nothing chose one: 1 MiB (1024 columns of 256 voxels at `medium`,
// 512 at `seed`; 32 chunks per slab at medium on 2 GPUs, enough to overlap, few enough that the
// per-peer copy streams' waits stay far below the copy-engine queue limit of docs/proact.md).
inline constexpr std::int64_t kDefaultImageChunkBytes = std::int64_t{1} << 20;

struct MultiOptions {
  CtExchange exchange = CtExchange::copies;
  std::int64_t chunk_bytes = kDefaultImageChunkBytes;  // proact: requested bytes per image chunk
  // d = A^T W A 1 of this geometry and scan when the caller has it (an earlier solver's
  // curvature()): the setup then skips d's forward and back projection of every view (~11 s at the
  // seed's size on one H200, paid once per paradigm before), and every run given the same d starts
  // from the same bits. Null: computed on rank 0.
  std::shared_ptr<const std::vector<float>> curvature;
};

// Where one GPU's iteration went, in milliseconds (CUDA events on its stream between the phases;
// the marks add a few microseconds of enqueue per subset and are read after the host clock
// stops). The four add up to the GPU's iteration:
//   forward            phase 1: its views' forward projection and weighted residual;
//   residual_exchange  from its forward projection's end to its update's start: waiting for the
//                      peers' rows (their projection and the copies; nccl: the broadcasts);
//   update             phases 2-4 on its slab (proact: the chunks' copies run alongside);
//   image_exchange     from its update's end to the next subset's projection: waiting for the
//                      peers' slabs (their update and the copies).
struct PhaseTimes {
  double forward_ms = 0, residual_exchange_ms = 0, update_ms = 0, image_exchange_ms = 0;
};

class MultiGpuPwls {
 public:
  // Uploads the scan to every GPU, computes d = A^T W A 1 on rank 0 (the one-GPU run's
  // arithmetic, so every rank holds the same d to the bit) unless o.curvature gives it, and copies
  // it to the others. Throws gpsm::Error on CUDA or NCCL failures, std::invalid_argument for more
  // GPUs than y-planes or an o.curvature not of the image's size.
  MultiGpuPwls(gps::Context& ctx, const Geometry& g, const Scan& scan, const PwlsSettings& s, MultiOptions o);
  ~MultiGpuPwls();
  MultiGpuPwls(const MultiGpuPwls&) = delete;
  MultiGpuPwls& operator=(const MultiGpuPwls&) = delete;

  // What a solve keeps besides its seconds. The cost costs a forward projection of every view on
  // rank 0 (at the seed's size 5.6 s on one H200, more than an iteration on 2 GPUs): a benchmark
  // records only the rep it verifies.
  enum class Record {
    every_iteration,  // cost and RMSE before the first and after each iteration, and the final image
    nothing           // PwlsRun empty: timing runs
  };

  // `iterations` iterations from x0 (each subset once, subset_order's order). seconds[k]: host
  // wall clock of iteration k's subset updates, exchanges included (enqueue to every GPU idle);
  // the cost and RMSE after each iteration are computed on rank 0 outside it (rank 0 holds the
  // whole image after the exchange; elided: rank 0's image, its peers' slabs stale).
  PwlsRun solve(const std::vector<float>& x0, int iterations, const std::vector<float>& truth,
                std::vector<double>* seconds, Record record = Record::every_iteration);

  std::string timing() const;                 // what the seconds cover, one line
  // Per rank, the latest solve's phase times per iteration (its iterations' mean).
  std::vector<PhaseTimes> phase_times() const;
  // Bytes between GPUs per iteration (0 when elided): the partition's exchanges; gps: what the
  // runtime put on the links in one untimed iteration after the subscriptions were learned.
  double link_bytes_per_iteration() const;
  std::int64_t chunk_bytes() const;           // proact: the image chunk as run (whole columns); else 0
  // d = A^T W A 1 as this solver used it (computed or given), for the next solver of the same scan.
  std::shared_ptr<const std::vector<float>> curvature() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace gpsm::apps::ct
