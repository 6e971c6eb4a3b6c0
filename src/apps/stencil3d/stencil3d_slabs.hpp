#pragma once
// heat3d / wave3d: every rank's local box (Slab3D::local, halos included) and its two buffers, the
// initial values, the gather and the neighbour mappings shared by the paradigms that keep one box
// per GPU (single, memcpy, p2p_inline, rdl, nccl, cpu_free, infinite).
//
// Buffers: iteration t reads buffer t % 2 and writes the other, so the last iteration's result is
// in buffer iters % 2.
//   heat3d: both start at initial_value(cell, seed); the boundary layer is never written.
//   wave3d: buffer 0 = cur (seed + 1 everywhere), buffer 1 = prev (seed in the interior, cur's
//           boundary, as the reference gives it); the step overwrites prev with next in place
//           (each cell reads prev only at itself), so the two buffers rotate like the reference's.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/harness/app.hpp"
#include "apps/stencil/decomp.hpp"
#include "apps/stencil3d/stencil3d_kernels.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::stencil3d {

int dim_of(Axis a);
// Stride of local dimension d of a rank's box (x fastest).
std::int64_t stride(const Slab3D& s, int d);
Box box_of(const Slab3D& s);

// Seeds of buffer b's initial values (file comment): global interior cells and boundary layer.
struct Seeds {
  std::uint32_t interior = 1, boundary = 1;
};
Seeds initial_seeds(Kind k, std::uint32_t seed, int b);
// The Init of buffer b of slab s (file comment); poison_halos: the interior cells of the halo
// planes a neighbour fills are NaN.
Init init_of(Kind k, const Slab3D& s, std::uint32_t seed, int b, bool poison_halos, float* buf);
// Peer stores from slab `from` into `dst`, a buffer of its neighbour slab `to` (Slabs::push_to).
Push push_between(const Slab3D& from, const Slab3D& to, float* dst);

class Slabs {
 public:
  // radius 0: the kind's (radius_of); fd3d passes its halo and Kind::heat for heat3d's initial
  // values (both buffers initial_value(cell, seed), the boundary layer `radius` cells thick).
  Slabs(gps::Context& ctx, Kind kind, const Problem& p, int radius = 0);
  int ranks() const { return n_; }
  int radius() const { return radius_; }
  const Slab3D& slab(int r) const { return slab_[r]; }
  float* buf(int r, int b) const { return buf_[r][b].p; }

  // Initial values of both buffers of every rank (file comment). poison: the halo planes of
  // buffer 1 (written first) that a neighbour must fill are NaN, so a missing transfer shows.
  // poison_buffer0_halos: buffer 0's too, for runs that never read their own halos (rdl).
  void init(bool poison, bool poison_buffer0_halos = false);

  // The global box from every rank's buffer b: its owned planes, and for the first and last ranks
  // the boundary planes of the split axis they hold as halos (the reference compares them too).
  std::vector<float> gather(int b) const;

  // Peer stores from rank r into neighbour nb's buffer b: same coordinates but the split one,
  // which moves by the lower neighbour's plane count (into its upper halo) or back by r's own
  // (into the upper neighbour's lower halo). Read instead of written, the same mapping finds r's
  // halo planes in nb's owned ones (rdl).
  Push push_to(int r, int nb, int b) const;

  // Local split coordinates of rank r's first (side 0) or last (side 1) `radius` owned planes
  // (what its lower / upper neighbour reads), and of its lower (0) / upper (1) halo planes.
  std::int64_t edge_planes(int r, int side) const { return side == 0 ? slab_[r].radius : slab_[r].count; }
  std::int64_t halo_planes(int r, int side) const { return side == 0 ? 0 : slab_[r].radius + slab_[r].count; }
  // Local plane l of rank r's buffer b; `radius` planes from there are contiguous along z only.
  float* planes(int r, int b, std::int64_t l) const { return buf(r, b) + l * stride(slab_[r], dim_of(slab_[r].axis)); }
  // Cells in `radius` planes (one side's halo) of rank r.
  std::size_t halo_cells(int r) const { return static_cast<std::size_t>(slab_[r].radius * slab_[r].plane_cells()); }

  // A box of `radius` planes of rank r's buffer b starting at local split coordinate l, copied
  // to or from a contiguous buffer of the same shape (halo planes along x or y are strided).
  BoxCopy region(int r, int b, std::int64_t l, float* flat, bool to_flat) const;

  // The elided runs of `infinite`: rank r's pushes of its lower (side 0) or upper (side 1)
  // boundary planes go into `scratch`, a local box of `radius` planes (scratch_cells(r) cells),
  // the owned planes' split coordinate moved to [0, radius). The same stores, none between GPUs.
  std::size_t scratch_cells(int r) const { return halo_cells(r); }
  Push to_scratch(int r, int side, float* scratch) const;

  // Bytes between GPUs per iteration when every rank sends `radius` planes to each neighbour:
  // whole planes, or only their interior cells (what a kernel's peer stores write).
  double halo_bytes(bool whole_planes) const;

 private:
  gps::Context& ctx_;
  Kind kind_;
  Problem p_;
  int n_;
  int radius_;
  std::vector<Slab3D> slab_;
  std::vector<std::array<DevBuf<float>, 2>> buf_;
};

}  // namespace gpsm::apps::stencil3d
