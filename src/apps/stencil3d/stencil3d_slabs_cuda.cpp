#include "apps/stencil3d/stencil3d_slabs.hpp"

#include <cuda_runtime.h>

#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {

int dim_of(Axis a) { return static_cast<int>(a); }

std::int64_t stride(const Slab3D& s, int d) { return d == 0 ? 1 : d == 1 ? s.local[0] : s.local[0] * s.local[1]; }

Box box_of(const Slab3D& s) {
  Box b;
  for (int d = 0; d < 3; ++d) b.n[d] = s.local[d];
  b.axis = dim_of(s.axis);
  b.count = s.count;
  return b;
}

Seeds initial_seeds(Kind k, std::uint32_t seed, int b) {
  const bool wave = k == Kind::wave;
  Seeds s;
  s.boundary = wave ? seed + 1 : seed;
  s.interior = wave && b == 0 ? seed + 1 : seed;
  return s;
}

Init init_of(Kind k, const Slab3D& s, std::uint32_t seed, int b, bool poison_halos, float* buf) {
  const Seeds seeds = initial_seeds(k, seed, b);
  Init in;
  in.buf = buf;
  in.box = box_of(s);
  in.radius = s.radius;
  for (int d = 0; d < 3; ++d) in.global[d] = s.n[d];
  in.offset = s.global(dim_of(s.axis), 0);
  in.seed_boundary = seeds.boundary;
  in.seed_interior = seeds.interior;
  in.poison_lower = poison_halos && s.has_lower();
  in.poison_upper = poison_halos && s.has_upper();
  return in;
}

Slabs::Slabs(gps::Context& ctx, Kind kind, const Problem& p, int radius)
    : ctx_(ctx), kind_(kind), p_(p), n_(ctx.size()), radius_(radius > 0 ? radius : radius_of(kind)) {
  slab_.resize(n_);
  buf_.resize(n_);
  for (int r = 0; r < n_; ++r) {
    slab_[r] = slab3d(p.n, p.axis, radius_, n_, r);
    for (auto& b : buf_[r]) b.alloc(ctx.device(r), static_cast<std::size_t>(slab_[r].local_cells()));
  }
}

void Slabs::init(bool poison, bool poison_buffer0_halos) {
  for (int r = 0; r < n_; ++r) {
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    for (int b = 0; b < 2; ++b)
      launch_init(init_of(kind_, slab_[r], p_.seed, b, b == 1 ? poison : poison_buffer0_halos, buf(r, b)),
                  ctx_.stream(r));
  }
  ctx_.synchronize();
}

std::vector<float> Slabs::gather(int b) const {
  const std::int64_t* n = p_.n;
  std::vector<float> g(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  for (int r = 0; r < n_; ++r) {
    const Slab3D& s = slab_[r];
    std::vector<float> h(static_cast<std::size_t>(s.local_cells()));
    GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
    GPSM_CUDA(cudaMemcpy(h.data(), buf(r, b), h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    copy_slab3d_to_global(s, h.data(), g.data());
  }
  return g;
}

Push push_between(const Slab3D& from, const Slab3D& to, float* dst) {
  Push p;
  p.dst = dst;
  p.sy = stride(to, 1);
  p.sz = stride(to, 2);
  p.shift = to.rank < from.rank ? to.count : -from.count;
  return p;
}

Push Slabs::push_to(int r, int nb, int b) const { return push_between(slab_[r], slab_[nb], buf(nb, b)); }

BoxCopy Slabs::region(int r, int b, std::int64_t l, float* flat, bool to_flat) const {
  const Slab3D& s = slab_[r];
  const int a = dim_of(s.axis);
  BoxCopy k;
  for (int d = 0; d < 3; ++d) k.e[d] = d == a ? s.radius : s.local[d];
  float* planes = buf(r, b) + l * stride(s, a);
  const std::int64_t flat_sy = k.e[0], flat_sz = k.e[0] * k.e[1];
  k.src = to_flat ? planes : flat;
  k.src_sy = to_flat ? stride(s, 1) : flat_sy;
  k.src_sz = to_flat ? stride(s, 2) : flat_sz;
  k.dst = to_flat ? flat : planes;
  k.dst_sy = to_flat ? flat_sy : stride(s, 1);
  k.dst_sz = to_flat ? flat_sz : stride(s, 2);
  return k;
}

Push Slabs::to_scratch(int r, int side, float* scratch) const {
  const Slab3D& s = slab_[r];
  const int a = dim_of(s.axis);
  std::int64_t e[3] = {s.local[0], s.local[1], s.local[2]};
  e[a] = s.radius;
  Push p;
  p.dst = scratch;
  p.sy = e[0];
  p.sz = e[0] * e[1];
  p.shift = side == 0 ? -s.radius : -s.count;
  return p;
}

double Slabs::halo_bytes(bool whole_planes) const {
  return slab3d_halo_bytes(p_.n, p_.axis, radius(), n_, whole_planes);
}

}  // namespace gpsm::apps::stencil3d
