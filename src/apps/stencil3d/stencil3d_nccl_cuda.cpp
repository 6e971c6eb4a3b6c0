// heat3d / wave3d on NCCL (nccl): per-GPU boxes (Slabs), one process driving every GPU (one
// communicator per GPU, apps/harness/nccl_comms.hpp). Per iteration: the step on each rank's
// stream, then every rank's halo planes by ncclSend / ncclRecv in one group over all ranks
// (required when one thread drives several GPUs), whole planes as the memcpy paradigm copies them.
// Along z the planes are contiguous and go from the owned planes straight into the neighbours'
// halos; along x or y they are packed into contiguous buffers after the step and unpacked after the
// group (BoxCopy, as memcpy does). NCCL's matched send/recv order the ranks: no events.
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/harness/nccl_comms.hpp"
#include "gpsm/error.hpp"

#if GPSM_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

#include <array>
#include <memory>
#include <vector>

#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/dev_buf.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

class NcclRun final : public HostLoop {
 public:
  NcclRun(gps::Context& ctx, Kind kind, const Problem& p)
      : HostLoop(ctx, p, false), slabs_(ctx, kind, p), kind_(kind) {
    if (n_ == 1) return;  // no neighbour: no NCCL
    packed_ = p.axis != Axis::z;
    send_.resize(n_);
    recv_.resize(n_);
    for (int r = 0; r < n_ && packed_; ++r) {
      for (auto& s : send_[r]) s.alloc(ctx.device(r), slabs_.halo_cells(r));
      for (auto& s : recv_[r]) s.alloc(ctx.device(r), slabs_.halo_cells(r));
    }
    comms_ = std::make_unique<NcclComms>(ctx);
  }

  void init() override { slabs_.init(true); }
  std::vector<float> gather() const override { return slabs_.gather(p_.iters % 2); }
  // Whole planes (the other axes' boundary cells included), `radius` of them each way per
  // neighbour pair: the bytes NCCL is asked to move, not its protocol overhead.
  double link_bytes_per_iter() override { return slabs_.halo_bytes(true); }

 private:
  bool has_side(int r, int side) const { return side == 0 ? slabs_.slab(r).has_lower() : slabs_.slab(r).has_upper(); }

  void step(int r, int it) override {
    const int c = it & 1;
    Step k;
    k.in = slabs_.buf(r, c);
    k.out = slabs_.buf(r, 1 - c);
    k.box = box_of(slabs_.slab(r));
    launch_step(kind_, k, ctx_.stream(r));
  }

  // Packed: rank r's first and last `radius` owned planes of the buffer just written, into its
  // send buffers (in stream order: the previous iteration's sends from them are done).
  void after_step(int r, int it) override {
    if (!packed_) return;
    for (int side = 0; side < 2; ++side)
      if (has_side(r, side))
        launch_box_copy(slabs_.region(r, 1 - (it & 1), slabs_.edge_planes(r, side), send_[r][side].p, true),
                        ctx_.stream(r));
  }

  // Side 0 talks to the lower neighbour (its upper halo receives r's first planes), side 1 to the
  // upper one. One send and one receive per neighbour pair and direction per group, so NCCL pairs
  // them unambiguously in any order.
  void after_iteration(int it) override {
    if (n_ == 1) return;
    const int b = 1 - (it & 1);
    GPSM_NCCL(ncclGroupStart());
    for (int r = 0; r < n_; ++r) {
      const std::size_t cells = slabs_.halo_cells(r);
      for (int side = 0; side < 2; ++side) {
        if (!has_side(r, side)) continue;
        const int nb = side == 0 ? r - 1 : r + 1;
        const float* from = packed_ ? send_[r][side].p : slabs_.planes(r, b, slabs_.edge_planes(r, side));
        float* into = packed_ ? recv_[r][side].p : slabs_.planes(r, b, slabs_.halo_planes(r, side));
        GPSM_NCCL(ncclSend(from, cells, ncclFloat, nb, (*comms_)[r], ctx_.stream(r)));
        GPSM_NCCL(ncclRecv(into, cells, ncclFloat, nb, (*comms_)[r], ctx_.stream(r)));
      }
    }
    GPSM_NCCL(ncclGroupEnd());
    for (int r = 0; r < n_ && packed_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      for (int side = 0; side < 2; ++side)
        if (has_side(r, side))
          launch_box_copy(slabs_.region(r, b, slabs_.halo_planes(r, side), recv_[r][side].p, false), ctx_.stream(r));
    }
  }

  Slabs slabs_;
  Kind kind_;
  bool packed_ = false;
  std::vector<std::array<DevBuf<float>, 2>> send_, recv_;  // packed: [rank][side: lower, upper]
  std::unique_ptr<NcclComms> comms_;                       // last: destroyed first, streams idle before buffers go
};

}  // namespace

std::unique_ptr<Run> make_nccl_run(gps::Context& ctx, Kind kind, const Problem& p) {
  return std::make_unique<NcclRun>(ctx, kind, p);
}

}  // namespace gpsm::apps::stencil3d

#else  // built without NCCL

#include <string>

namespace gpsm::apps::stencil3d {

std::unique_ptr<Run> make_nccl_run(gps::Context&, Kind, const Problem&) {
  throw gpsm::Error(std::string("gpsm: nccl: ") + kNcclMissing);
}

}  // namespace gpsm::apps::stencil3d

#endif
