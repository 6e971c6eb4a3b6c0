// heat3d / wave3d on Unified Memory (um, um_hints) and on remote demand loads (rdl), driven by
// the host loop every host-driven paradigm shares: a kernel per GPU per iteration, each GPU
// waiting for its neighbours' previous iteration (stencil3d_host_loop.hpp). The kernel is the
// marching step of the per-box paradigms (stencil3d_kernels.hpp), so what differs from
// `single` / `p2p_inline` is where the bytes live.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/stencil/page_runs.hpp"
#include "apps/stencil3d/stencil3d_cells.hpp"
#include "apps/stencil3d/stencil3d_grid_kernels.hpp"
#include "apps/stencil3d/stencil3d_paradigms.hpp"
#include "apps/stencil3d/stencil3d_slabs.hpp"
#include "common/mem_location.hpp"
#include "gpsm/error.hpp"
#include "common/cuda_check.hpp"

namespace gpsm::apps::stencil3d {
namespace {

// A managed allocation, freed however the run ends (a hint that fails throws from the constructor).
struct ManagedFree {
  void operator()(float* p) const { cudaFree(p); }
};
using Managed = std::unique_ptr<float, ManagedFree>;

// um: both buffers of the whole grid in managed memory. Each GPU first-touches its span of planes
// (stencil3d_cells.hpp: span_of) in init and updates its owned cells of the global grid; the
// planes it reads from its neighbours fault and migrate (or are mapped) on demand.
// hints (um_hints): per page (page_runs.hpp), preferred location on the GPU whose planes hold the
// page's first cell, accessed-by for the neighbour on every page holding planes it reads, and a
// prefetch of each GPU's pages to it before every solve. Every hint is read back with
// cudaMemRangeGetAttribute over exactly the pages it was placed on; one that did not take throws
// gpsm::Error naming the hint, the buffer and the byte range.
class UmRun final : public HostLoop {
 public:
  UmRun(gps::Context& ctx, Kind kind, const Problem& p, bool hints)
      : HostLoop(ctx, p, true), kind_(kind), hints_(hints), cells_(p.n[0] * p.n[1] * p.n[2]) {
    for (int r = 0; r < n_; ++r) {
      slab_.push_back(slab3d(p.n, p.axis, radius_of(kind), n_, r));
      int concurrent = 0;
      GPSM_CUDA(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, ctx.device(r)));
      if (concurrent == 0)
        throw gpsm::Error(fmt::format("gpsm: {}: GPU {} has no concurrent managed access "
                                      "(cudaDevAttrConcurrentManagedAccess = 0): managed pages cannot fault and "
                                      "migrate between GPUs on demand here",
                                      hints ? "um_hints" : "um", ctx.device(r)));
    }
    // Small managed allocations can share pages with others (the driver sub-allocates), so
    // each buffer gets one page more and starts on the first page boundary inside it: the
    // hints' page arithmetic (page_owners) then describes exactly the buffer's pages.
    const auto page = static_cast<std::uintptr_t>(page_bytes());
    for (int b = 0; b < 2; ++b) {
      float* g = nullptr;
      GPSM_CUDA(cudaMallocManaged(&g, bytes() + page));
      mem_[b].reset(g);
      grid_[b] = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(g) + page - 1) / page * page);
    }
    if (hints_) advise();
  }
  ~UmRun() override {  // no kernel may still use the grid when mem_ frees it (a solve that threw)
    for (int r = 0; r < n_; ++r) {
      cudaSetDevice(ctx_.device(r));
      cudaDeviceSynchronize();
    }
  }

  // Each GPU writes its span of both buffers (first touch: its pages start on it); heat3d's
  // buffer 1, written by the first iteration, starts as NaN in the interior. wave3d's buffer 1
  // holds prev, read by the first iteration, so nothing of it can be poisoned.
  void init() override {
    for (int r = 0; r < n_; ++r) {
      GPSM_CUDA(cudaSetDevice(ctx_.device(r)));
      cudaStream_t st = ctx_.stream(r);
      if (hints_) prefetch(r, st);
      const Range span = span_of(slab_[r]);
      for (int b = 0; b < 2; ++b) {
        const Seeds seeds = initial_seeds(kind_, p_.seed, b);
        GridInit in;
        in.buf = grid_[b];
        for (int d = 0; d < 3; ++d) in.n[d] = p_.n[d];
        in.axis = dim_of(p_.axis);
        in.radius = radius_of(kind_);
        in.lo = span.begin;
        in.hi = span.end;
        in.poison = b == 1 && kind_ == Kind::heat;
        in.seed_interior = seeds.interior;
        in.seed_boundary = seeds.boundary;
        launch_grid_init(in, st);
      }
    }
    ctx_.synchronize();
    if (hints_) check_prefetch();
  }

  std::vector<float> gather() const override {
    ctx_.synchronize();
    std::vector<float> g(static_cast<std::size_t>(cells_));
    GPSM_CUDA(cudaMemcpy(g.data(), grid_[p_.iters % 2], bytes(), cudaMemcpyDefault));
    return g;
  }
  // Page migrations and remote mappings between GPUs are not counted: unknown ('?'); one GPU
  // has no other to talk to.
  double link_bytes_per_iter() override { return n_ == 1 ? 0 : -1; }

  UmHintCount hint_count() const {
    UmHintCount c;
    c.preferred = c.prefetched = 2 * static_cast<int>(owners_.size());
    for (const auto& reader : readers_) c.accessed_by += 2 * static_cast<int>(reader.second.size());
    for (int r = 0; r < n_; ++r)
      for (const PageRun& o : owners_)
        if (o.owner == r) {
          ++c.gpus_with_pages;
          break;
        }
    return c;
  }

 private:
  bool graph_ok() const override { return true; }  // kernels only
  // The marching step over the rank's sub-box of the grid (sub_box: its owned planes and the R
  // planes on each side, the grid's strides); the sub-box's updated cells are owned_region's.
  void step(int r, int it) override {
    const int c = it & 1;
    const SubBox g = sub_box(slab_[r]);
    Step s;
    s.in = grid_[c] + g.offset;
    s.out = grid_[1 - c] + g.offset;
    s.box = g.box;
    s.sy = g.sy;
    s.sz = g.sz;
    launch_step(kind_, s, ctx_.stream(r));
  }

  std::size_t bytes() const { return static_cast<std::size_t>(cells_) * sizeof(float); }
  static std::int64_t page_bytes() { return sysconf(_SC_PAGESIZE); }

  // Pages [first, last) of buffer b as an address and a byte count (the last page clipped to the
  // allocation: the driver rounds the end up to the page again).
  float* page_ptr(int b, std::int64_t page) const {
    return reinterpret_cast<float*>(reinterpret_cast<char*>(grid_[b]) + page * page_bytes());
  }
  std::size_t run_bytes(const Range& pages) const {
    const std::int64_t end = std::min<std::int64_t>(pages.end * page_bytes(), static_cast<std::int64_t>(bytes()));
    return static_cast<std::size_t>(end - pages.begin * page_bytes());
  }
  std::string where(int b, const Range& pages) const {
    return fmt::format("bytes [{}, {}) of buffer {}", pages.begin * page_bytes(),
                       pages.begin * page_bytes() + static_cast<std::int64_t>(run_bytes(pages)), b);
  }

  // Split-axis bounds of the ranks' spans (page_owners' parts).
  std::vector<std::int64_t> span_bounds() const {
    std::vector<std::int64_t> bounds{0};
    for (const Slab3D& s : slab_) bounds.push_back(span_of(s).end);
    return bounds;
  }

  void advise() {
    for (auto* g : grid_)
      if (reinterpret_cast<std::uintptr_t>(g) % static_cast<std::uintptr_t>(page_bytes()) != 0)
        throw gpsm::Error("gpsm: um_hints: a managed allocation does not start on a page boundary, so the hints' "
                          "pages are not the buffer's");
    owners_ = page_owners(p_.n, p_.axis, span_bounds(), page_bytes(), sizeof(float));
    // Rank r's first `radius` owned planes are read by r - 1, its last by r + 1.
    for (int r = 0; r < n_; ++r) {
      const Slab3D& s = slab_[r];
      if (s.has_lower()) add_reader(r - 1, s.first, s.first + s.radius);
      if (s.has_upper()) add_reader(r + 1, s.first + s.count - s.radius, s.first + s.count);
    }
    for (int b = 0; b < 2; ++b) {
      for (const PageRun& o : owners_)
        GPSM_CUDA(cudaMemAdvise(page_ptr(b, o.pages.begin), run_bytes(o.pages), cudaMemAdviseSetPreferredLocation,
                                device_location(ctx_.device(o.owner))));
      for (const auto& [reader, pages] : readers_)
        for (const Range& run : pages)
          GPSM_CUDA(cudaMemAdvise(page_ptr(b, run.begin), run_bytes(run), cudaMemAdviseSetAccessedBy,
                                  device_location(ctx_.device(reader))));
    }
    for (int b = 0; b < 2; ++b) check_advice(b);
  }

  void add_reader(int reader, std::int64_t lo, std::int64_t hi) {
    readers_.emplace_back(reader, pages_holding(plane_cells(p_.n, p_.axis, lo, hi), page_bytes(), sizeof(float)));
  }

  // The driver accepts some hints it does not apply (a device without the capability, a range
  // it splits differently): each is read back.
  void check_advice(int b) const {
    for (const PageRun& o : owners_) {
      int got = -2;
      GPSM_CUDA(cudaMemRangeGetAttribute(&got, sizeof(got), cudaMemRangeAttributePreferredLocation,
                                         page_ptr(b, o.pages.begin), run_bytes(o.pages)));
      if (got != ctx_.device(o.owner))
        throw gpsm::Error(fmt::format("gpsm: um_hints: cudaMemAdviseSetPreferredLocation (GPU {}) on {} reads back "
                                      "as {}",
                                      ctx_.device(o.owner), where(b, o.pages), got));
    }
    for (const auto& [reader, pages] : readers_)
      for (const Range& run : pages) {
        std::array<int, 32> by;
        by.fill(-2);
        GPSM_CUDA(cudaMemRangeGetAttribute(by.data(), sizeof(by), cudaMemRangeAttributeAccessedBy,
                                           page_ptr(b, run.begin), run_bytes(run)));
        bool found = false;
        for (int d : by) found = found || d == ctx_.device(reader);
        if (!found)
          throw gpsm::Error(fmt::format("gpsm: um_hints: cudaMemAdviseSetAccessedBy (GPU {}) on {} does not read back",
                                        ctx_.device(reader), where(b, run)));
      }
  }

  // Rank r's pages of both buffers to its GPU, on its stream, before its first touch.
  void prefetch(int r, cudaStream_t st) const {
    for (int b = 0; b < 2; ++b)
      for (const PageRun& o : owners_)
        if (o.owner == r)
          GPSM_CUDA(cudaMemPrefetchAsync(page_ptr(b, o.pages.begin), run_bytes(o.pages),
                                         device_location(ctx_.device(r)), 0, st));
  }
  void check_prefetch() const {
    for (int b = 0; b < 2; ++b)
      for (const PageRun& o : owners_) {
        int got = -2;
        GPSM_CUDA(cudaMemRangeGetAttribute(&got, sizeof(got), cudaMemRangeAttributeLastPrefetchLocation,
                                           page_ptr(b, o.pages.begin), run_bytes(o.pages)));
        if (got != ctx_.device(o.owner))
          throw gpsm::Error(fmt::format("gpsm: um_hints: cudaMemPrefetchAsync to GPU {} of {} reads back as {}",
                                        ctx_.device(o.owner), where(b, o.pages), got));
      }
  }

  Kind kind_;
  bool hints_;
  std::int64_t cells_;
  std::vector<Slab3D> slab_;
  std::array<Managed, 2> mem_;
  std::array<float*, 2> grid_{nullptr, nullptr};  // mem_'s memory from its first page boundary
  std::vector<PageRun> owners_;                               // um_hints: preferred location per page run
  std::vector<std::pair<int, std::vector<Range>>> readers_;  // um_hints: (reading rank, its page runs)
};

// rdl: per-GPU boxes (Slabs) without any halo exchange: the step reads the cells next to the
// split from the neighbours' owned planes through peer pointers (Step::from_lower / from_upper),
// so the values of the box's own halo planes are never used; they stay NaN in both buffers to
// prove it.
class RdlRun final : public HostLoop {
 public:
  RdlRun(gps::Context& ctx, Kind kind, const Problem& p) : HostLoop(ctx, p, true), slabs_(ctx, kind, p), kind_(kind) {}
  void init() override { slabs_.init(true, true); }
  std::vector<float> gather() const override { return slabs_.gather(p_.iters % 2); }
  // The cells read from each neighbour per iteration, each counted once: `radius` planes of the
  // interior cells (the cells next to the split that the updated cells read). The float4 march
  // along y or z loads whole rows along x, the 2R x-boundary cells included. Along x the march
  // loads single cells; wave3d's scalar path loads some twice (two columns reach the farther
  // one); a second load may hit a cache.
  double link_bytes_per_iter() override {
    const Slab3D& s = slabs_.slab(0);
    const double interior = slabs_.halo_bytes(false);
    if (s.axis == Axis::x || !step_float4(march(0, 0))) return interior;
    return interior * static_cast<double>(s.n[0]) / static_cast<double>(s.n[0] - 2 * s.radius);
  }

 private:
  bool graph_ok() const override { return true; }  // kernels only
  // The marching step of rank r reading buffer c, its halo cells loaded from the neighbours'
  // boxes: halo planes of the march axis (split along y or z) or halo columns (along x).
  Step march(int r, int c) const {
    const Slab3D& s = slabs_.slab(r);
    Step st;
    st.in = slabs_.buf(r, c);
    st.out = slabs_.buf(r, 1 - c);
    st.box = box_of(s);
    if (s.has_lower()) st.from_lower = remote(r, r - 1, c);
    if (s.has_upper()) st.from_upper = remote(r, r + 1, c);
    return st;
  }
  void step(int r, int it) override { launch_step(kind_, march(r, it & 1), ctx_.stream(r)); }
  Remote remote(int r, int nb, int b) const { return remote_of(slabs_.slab(r), slabs_.slab(nb), slabs_.buf(nb, b)); }

  Slabs slabs_;
  Kind kind_;
};

}  // namespace

std::unique_ptr<Run> make_um_run(gps::Context& ctx, Kind kind, const Problem& p, bool hints) {
  return std::make_unique<UmRun>(ctx, kind, p, hints);
}

UmHintCount check_um_hints(gps::Context& ctx, Kind kind, const Problem& p) {
  UmRun run(ctx, kind, p, true);
  run.init();
  return run.hint_count();
}

std::unique_ptr<Run> make_rdl_run(gps::Context& ctx, Kind kind, const Problem& p) {
  return std::make_unique<RdlRun>(ctx, kind, p);
}

}  // namespace gpsm::apps::stencil3d
