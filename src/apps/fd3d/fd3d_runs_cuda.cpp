// fd3d's paradigms (fd3d_runs.hpp): the local boxes (stencil3d's Slabs with fd3d's halo) and the
// distributed volume (rdl), each step launched through fd3d_kernels.hpp.
#include "apps/fd3d/fd3d_runs.hpp"

#include <cuda_runtime.h>

#include <array>
#include <string>

#include <fmt/format.h>

#include "apps/fd3d/fd3d_kernels.hpp"
#include "apps/fd3d/fd3d_layout.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"  // launch_init, launch_box_copy
#include "apps/stencil3d/stencil3d_halo_copies.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/distributed_array.hpp"
#include "gpsm/error.hpp"

namespace gpsm::apps::fd3d {
namespace {

using stencil3d::Kind;
using stencil3d::Slabs;

// single, memcpy, p2p_inline, infinite: a box per GPU with R halo planes on each side of the
// split (Slabs: heat3d's initial values, fd3d's halo). memcpy's copies are stencil3d's
// (HaloCopies: contiguous planes along z straight into the neighbour's halo, packed along x or y).
class LocalRun final : public FdRun {
 public:
  LocalRun(gps::Context& ctx, Paradigm par, const Problem& p, int radius)
      : FdRun(ctx, p, true),
        slabs_(ctx, Kind::heat, p, radius),
        par_(par),
        w_(fd_weights(radius)),
        copies_(ctx, slabs_, par == Paradigm::memcpy) {
    if (par == Paradigm::single && n_ != 1) throw gpsm::Error("gpsm: fd3d: single runs on one GPU");
  }
  // The halo planes the first step writes (buffer 1) start as NaN where a neighbour must fill
  // them; infinite never fills them, so they keep plausible values there.
  void init() override { slabs_.init(par_ != Paradigm::infinite); }
  std::vector<float> gather_buffer(int b) const override { return slabs_.gather(b); }
  // memcpy copies whole planes (the boundary cells of the other axes too); p2p_inline stores only
  // the cells it updates.
  double link_bytes_per_iter() override {
    if (!linked()) return 0;
    return par_ == Paradigm::memcpy || par_ == Paradigm::p2p_inline ? slabs_.halo_bytes(par_ == Paradigm::memcpy) : 0;
  }
  std::string timing_note() const override {
    return par_ == Paradigm::infinite && n_ > 1 ? "halo copies elided (memcpy's loop without its copies)" : "";
  }

 private:
  bool graph_ok() const override { return true; }  // kernels and peer copies only
  bool linked() const { return n_ > 1 && par_ != Paradigm::infinite; }
  void before_step(int r, int it) override { copies_.before_step(r, it, ctx_.stream(r)); }
  void after_step(int r, int it) override { copies_.after_step(r, it, ctx_.stream(r)); }
  void step(int r, int it) override {
    const int c = it & 1;
    const Slab3D& s = slabs_.slab(r);
    FdStep st;
    st.in.mid = box_piece(s, slabs_.buf(r, c));
    st.out = box_sink(s, slabs_.buf(r, 1 - c));
    st.box = box_of(s);
    st.radius = slabs_.radius();
    st.w = w_;
    if (par_ == Paradigm::p2p_inline && linked()) {
      if (s.has_lower()) st.lower = push_sink(s, slabs_.slab(r - 1), slabs_.buf(r - 1, 1 - c));
      if (s.has_upper()) st.upper = push_sink(s, slabs_.slab(r + 1), slabs_.buf(r + 1, 1 - c));
    }
    launch_fd_step(st, ctx_.stream(r));
  }

  Slabs slabs_;
  Paradigm par_;
  FdWeights w_;
  stencil3d::HaloCopies copies_;  // memcpy's copies (stencil3d_halo_copies.hpp)
};

// rdl: both volumes distributed arrays of the runtime, one slab per GPU (slab_blocks), every
// GPU's slab in its own memory and all of them in one virtual range. A step reads its own block
// and loads the R planes next to it from its neighbours' blocks through the same range (the
// blocks found once, through the array's map, by distributed_sources); nothing is copied and no
// halo plane exists.
class DistributedRun final : public FdRun {
 public:
  DistributedRun(gps::Context& ctx, const Problem& p, int radius)
      : FdRun(ctx, p, true), radius_(radius), launch_(rdl_launch_from_env()) {  // a bad value: refused here
    for (int r = 0; r < n_; ++r) slab_.push_back(slab3d(p.n, p.axis, radius, n_, r));
    for (int b = 0; b < 2; ++b) {
      DistributedOptions o;
      o.name = b == 0 ? "fd3d_a" : "fd3d_b";
      vol_[b] = ctx.alloc_distributed<float>(slab_blocks(slab_[0]), o);
    }
    // Every step's sources and sink, checked against the map here (before any launch).
    const OwnershipLookup host = vol_[0].map().lookup();
    for (int r = 0; r < n_; ++r)
      for (int c = 0; c < 2; ++c) {
        FdStep& st = steps_[c].emplace_back();
        st.in = distributed_sources(slab_[r], host, vol_[c].data(r));
        st.out = distributed_sink(slab_[r], host, vol_[1 - c].data(r));
        st.box = box_of(slab_[r]);
        st.radius = radius;
        st.w = fd_weights(radius);
      }
  }
  // Each GPU writes its own block of both volumes (the boundary layer included): fd3d_initial's
  // values, computed on the device from the global cell index.
  void init() override {
    const OwnershipLookup host = vol_[0].map().lookup();
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      const Slab3D& s = slab_[r];
      const int a = static_cast<int>(s.axis);
      std::uint64_t c[3] = {0, 0, 0};
      c[a] = static_cast<std::uint64_t>(s.first);
      const BlockBox blk = host.box(c[0], c[1], c[2]);
      for (int b = 0; b < 2; ++b) {
        stencil3d::Init in;
        in.buf = reinterpret_cast<float*>(static_cast<char*>(vol_[b].data(r)) + blk.base);
        in.box.n[0] = static_cast<std::int64_t>(blk.wx);
        in.box.n[1] = static_cast<std::int64_t>(blk.wy);
        in.box.n[2] = static_cast<std::int64_t>(blk.wz);
        in.box.axis = a;
        in.box.count = s.count;
        in.radius = radius_;
        for (int d = 0; d < 3; ++d) in.global[d] = s.n[d];
        in.offset = static_cast<std::int64_t>(a == 0 ? blk.x0 : a == 1 ? blk.y0 : blk.z0);
        in.seed_interior = in.seed_boundary = p_.seed;
        stencil3d::launch_init(in, ctx_.stream(r));
      }
    }
    ctx_.synchronize();
  }
  std::vector<float> gather_buffer(int b) const override { return vol_[b].download(); }
  // The halo cells each GPU loads from its neighbours, each counted once: R planes of the interior
  // cells per neighbour (the march also loads the upper boundary cells of those planes, which no
  // update uses, and a chunk shorter than R loads some twice, which a cache may serve).
  double link_bytes_per_iter() override { return slab3d_halo_bytes(p_.n, p_.axis, radius_, n_, false); }
  std::string timing_note() const override {
    return std::string("link bytes: the halo cells, loaded remotely through the distributed array; ") +
           (resolve_rdl_launch(launch_, static_cast<int>(p_.axis)) == RdlLaunch::one
                ? "one kernel picking each load's block"
                : "the items near a halo in the kernel picking each load's block, the rest in the plain one") +
           (launch_ == RdlLaunch::automatic ? " (GPSM_FD3D_RDL_LAUNCH=auto: one along x and y, split along z)"
            : launch_ == RdlLaunch::one     ? " (GPSM_FD3D_RDL_LAUNCH=one)"
                                            : " (GPSM_FD3D_RDL_LAUNCH=split)");
  }

 private:
  bool graph_ok() const override { return true; }  // kernels only
  void step(int r, int it) override {
    launch_fd_step(steps_[it & 1][static_cast<std::size_t>(r)], ctx_.stream(r), launch_);
  }

  int radius_;
  RdlLaunch launch_;
  std::vector<Slab3D> slab_;
  std::array<DistributedArray<float>, 2> vol_;
  std::array<std::vector<FdStep>, 2> steps_;  // [buffer read][rank]
};

}  // namespace

std::string FdRun::timing() const {
  std::string t = HostLoop::timing();
  if (t.empty()) t = "host wall clock of the iteration loop (setup, initial values and verification excluded), divided by its iterations";
  const std::string note = timing_note();
  return note.empty() ? t : t + "; " + note;
}

bool fd_has(Paradigm p) {
  switch (p) {
    case Paradigm::single:
    case Paradigm::memcpy:
    case Paradigm::p2p_inline:
    case Paradigm::rdl:
    case Paradigm::gps:
    case Paradigm::infinite:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<FdRun> make_fd_run(gps::Context& ctx, Paradigm par, const Problem& p, int radius) {
  switch (par) {
    case Paradigm::single:
    case Paradigm::memcpy:
    case Paradigm::p2p_inline:
    case Paradigm::infinite: return std::make_unique<LocalRun>(ctx, par, p, radius);
    case Paradigm::rdl: return std::make_unique<DistributedRun>(ctx, p, radius);
    case Paradigm::gps: return make_fd_gps_run(ctx, p, radius);
    default: break;
  }
  throw gpsm::Error(std::string("gpsm: fd3d: the ") + paradigm_name(par) +
                    " paradigm is not implemented for fd3d; use single, memcpy, p2p_inline, rdl, gps or infinite");
}

}  // namespace gpsm::apps::fd3d
