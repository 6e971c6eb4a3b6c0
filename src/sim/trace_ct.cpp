// The CT app's trace for the simulator (sim/trace_ct.hpp; docs/sim.md "CT").
#include "sim/trace_ct.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/ct/ct_footprint.hpp"
#include "apps/ct/ct_forward_tiles.hpp"
#include "apps/ct/ct_partition.hpp"
#include "apps/ct/ct_subsets.hpp"
#include "sim/kernel_cost.hpp"  // whole_wave_factor: the calibration divides out what the engine multiplies in
#include "sim/trace_addr.hpp"

namespace gpsm::sim {

using apps::ct::CtBenchSpec;
using apps::ct::CtPartition;
using apps::ct::Geometry;
using apps::ct::Span;
using namespace trace_detail;

bool is_ct_app(const std::string& app) { return app == "ct"; }

double ct_view_pairs(const Geometry& g, int v) {
  int iz0 = 0, iz1 = 0;
  apps::ct::column_z_range(g, apps::ct::view_pose(g, v), g.source_detector / g.source_radius, iz0, iz1);
  return double(g.nx) * double(g.ny) * double(iz1 - iz0);
}

namespace {

constexpr int kThreads = 256;                      // every CT kernel's block (ct_project.cu, ct_sums.cu)
constexpr std::int64_t kResidualMaxBlocks = 4096;  // ct_sums.cu's grid-stride cap (blocks_for)
constexpr std::int64_t kFloat = 4;

std::vector<double> view_pairs(const Geometry& g) {
  std::vector<double> p(static_cast<std::size_t>(g.views));
  for (int v = 0; v < g.views; ++v) p[static_cast<std::size_t>(v)] = ct_view_pairs(g, v);
  return p;
}

double pairs_of(const std::vector<double>& pairs, const std::vector<std::int32_t>& views, Span s) {
  double sum = 0;
  for (std::int64_t k = s.begin; k < s.end; ++k) sum += pairs[static_cast<std::size_t>(views[static_cast<std::size_t>(k)])];
  return sum;
}

// The launch shapes of ct_project.cu / ct_sums.cu (the app's own rules: ct_forward_tiles.hpp).
std::int64_t forward_grid(const Geometry& g, std::int64_t views, int sms) {
  const int tiles = apps::ct::forward_tiles(g.rows, apps::ct::forward_tile_rows(g.rows, g.channels));
  const int count = static_cast<int>(views);
  return std::int64_t{tiles} * count * apps::ct::forward_splits(tiles, count, std::int64_t{g.nx} * g.ny, sms, kThreads);
}
int columns_per_block(const Geometry& g) {
  const int cpb = apps::ct::columns_per_block(g.nz, kThreads);
  if (cpb < 1) bad("ct: a voxel column of " + std::to_string(g.nz) + " voxels has more runs than a block has threads");
  return cpb;
}
std::int64_t update_grid(const Geometry& g, std::int64_t planes) {
  const std::int64_t cpb = columns_per_block(g);
  return (planes * g.nx + cpb - 1) / cpb;
}
std::int64_t residual_grid(std::int64_t cells) {
  return std::clamp<std::int64_t>((cells + kThreads - 1) / kThreads, 1, kResidualMaxBlocks);
}

// The buffers each GPU holds (ct_multi_cuda.cpp's Rank): two images, two residuals, y and w.
enum Buf : int { kImage0 = 0, kImage1 = 1, kRes0 = 2, kRes1 = 3, kY = 4, kW = 5 };
std::uint64_t at(int gpu, int buf, std::int64_t byte) { return slab_base(gpu, buf) + static_cast<std::uint64_t>(byte); }

AccessRun run(Op op, std::uint64_t addr, std::int64_t floats) {
  AccessRun a;
  a.op = op;
  a.bytes = kFloat;
  a.count = static_cast<std::uint32_t>(floats);
  a.addr = addr;
  a.stride = kFloat;
  return a;
}

// Fraction of a kernel's blocks recorded: all, the request's, or auto (kCtAutoBlocks).
double fraction(double sample, std::int64_t grid) {
  if (sample >= 1) return 1;
  if (sample > 0) return sample;
  return std::min(1.0, kCtAutoBlocks / double(grid));
}

// A kernel whose blocks `fill(block, bt)` records, sampled by trace_addr.hpp's chunks (ends kept).
template <class Fill>
KernelTrace sampled_kernel(const char* name, int gpu, std::int64_t grid, double sample, Fill fill) {
  KernelTrace kt;
  kt.name = name;
  kt.gpu = gpu;
  kt.grid_blocks = static_cast<std::uint32_t>(grid);
  kt.threads_per_block = kThreads;
  const double s = fraction(sample, grid);
  const Keep keep = end_chunks(static_cast<std::uint64_t>(grid));
  std::vector<char> boundary;
  for (std::int64_t b = 0; b < grid; ++b) {
    const Pick pick = pick_block(static_cast<std::uint64_t>(b), static_cast<std::uint64_t>(grid), s, keep);
    if (pick == Pick::no) continue;
    BlockTrace bt;
    bt.block = static_cast<std::uint32_t>(b);
    fill(b, bt);
    kt.blocks.push_back(std::move(bt));
    boundary.push_back(pick == Pick::boundary ? 1 : 0);
  }
  set_weights(kt, boundary);
  return kt;
}

struct Builder {
  const TraceRequest& r;
  const Geometry& g;
  const CtPartition& part;
  const CtCompute& cc;
  const std::vector<double>& pairs;
  int G;

  // Phase 1's projection: no bytes traced (the scratch and the image reads are inside the
  // measured time); one record for every block.
  KernelTrace forward(int q, const std::vector<std::int32_t>& views, Span share) const {
    KernelTrace kt;
    kt.name = "ct_forward";
    kt.gpu = q;
    kt.grid_blocks = static_cast<std::uint32_t>(forward_grid(g, share.size(), r.sms));
    kt.threads_per_block = kThreads;
    kt.blocks_per_sm = kCtForwardBlocksPerSm;
    kt.compute_s = cc.forward_s * pairs_of(pairs, views, share);
    BlockTrace bt;
    bt.weight = kt.grid_blocks;
    kt.blocks.push_back(bt);
    return kt;
  }

  // r[i] = w (r[i] - y) over q's rows of the subset, grid-stride, into q's residual buffer and
  // every peer's copy of it (the same rows: the app copies its run to the same offset).
  KernelTrace residual(int q, const std::vector<std::int32_t>& views, Span share, int parity) const {
    const std::int64_t cells = g.cells_per_view(), n = share.size() * cells, grid = residual_grid(n);
    const int buf = parity == 0 ? kRes0 : kRes1;
    return sampled_kernel("ct_weighted_residual", q, grid, r.sample, [&](std::int64_t b, BlockTrace& bt) {
      for (std::int64_t i0 = b * kThreads; i0 < n; i0 += grid * kThreads) {
        const std::int64_t i1 = std::min(n, i0 + kThreads), row = (share.begin * cells + i0) * kFloat;
        bt.runs.push_back(run(Op::load, at(q, buf, row), i1 - i0));
        for (std::int64_t a = i0; a < i1;) {  // y and w of the rows' views, view by view
          const std::int64_t k = a / cells, e = std::min(i1, (k + 1) * cells);
          const std::int64_t s = (std::int64_t{views[static_cast<std::size_t>(share.begin + k)]} * cells + a - k * cells) * kFloat;
          bt.runs.push_back(run(Op::load, at(q, kY, s), e - a));
          bt.runs.push_back(run(Op::load, at(q, kW, s), e - a));
          a = e;
        }
        for (int d = 0; d < G; ++d) bt.runs.push_back(run(Op::store, at(d, buf, row), i1 - i0));
      }
    });
  }

  // Phases 2-4 on q's slab: block b updates whole columns [b cpb, (b + 1) cpb) of it (its old
  // voxels loaded, the new ones stored into q's next image and every peer's).
  KernelTrace update(int q, const std::vector<std::int32_t>& views, int cur) const {
    const Span sl = part.slab(q);
    const std::int64_t cpb = columns_per_block(g), columns = sl.size() * g.nx, grid = update_grid(g, sl.size());
    const std::int64_t column = std::int64_t{g.nz} * kFloat, slab0 = sl.begin * g.nx * column;
    const int from = cur == 0 ? kImage0 : kImage1, to = cur == 0 ? kImage1 : kImage0;
    KernelTrace kt = sampled_kernel("ct_update", q, grid, r.sample, [&](std::int64_t b, BlockTrace& bt) {
      const std::int64_t c0 = b * cpb, c1 = std::min(columns, c0 + cpb), floats = (c1 - c0) * g.nz;
      bt.runs.push_back(run(Op::load, at(q, from, slab0 + c0 * column), floats));
      for (int d = 0; d < G; ++d) bt.runs.push_back(run(Op::store, at(d, to, slab0 + c0 * column), floats));
    });
    kt.blocks_per_sm = kCtUpdateBlocksPerSm;
    // the slab's share of every voxel-view pair of the subset's views
    kt.compute_s = cc.update_s * pairs_of(pairs, views, {0, std::int64_t(views.size())}) * double(sl.size()) / g.ny;
    return kt;
  }
};

}  // namespace

CtCompute calibrate_ct_compute(const CtBenchSpec& spec, const CtPhaseMs& one_gpu, int sms) {
  const Geometry& g = spec.g;
  const std::vector<double> pairs = view_pairs(g);
  const double update_factor = engine_detail::whole_wave_factor(double(update_grid(g, g.ny)), double(sms) * kCtUpdateBlocksPerSm);
  double fwd = 0, upd = 0;  // pairs times the whole-wave factor the engine will apply
  for (int m = 0; m < spec.subsets; ++m) {
    const auto views = apps::ct::subset_views(g.views, spec.subsets, m);
    const double p = pairs_of(pairs, views, {0, std::int64_t(views.size())});
    fwd += p * engine_detail::whole_wave_factor(double(forward_grid(g, std::int64_t(views.size()), sms)),
                                          double(sms) * kCtForwardBlocksPerSm);
    upd += p * update_factor;
  }
  if (!(fwd > 0 && upd > 0)) bad("ct: the geometry's views reach no voxel");
  return {one_gpu.forward * 1e-3 / fwd, one_gpu.update * 1e-3 / upd, ""};
}

CtCompute ct_compute_for(const Geometry& g) {
  // One calibration for every geometry: medium's, the only size whose phases were measured. The
  // seed size's measured one-GPU iteration is then a check (sim/ct_scaling.cpp's report): per
  // voxel-view pair and whole wave its compute is medium's within 3 %, where the analytic model's
  // voxels x views scaling is 29 % off (docs/ct.md).
  const CtBenchSpec medium = apps::ct::parse_bench_spec("medium");
  CtCompute c = calibrate_ct_compute(medium, ct_measured_h200x2_medium().one_gpu);
  c.source = g.label() == medium.g.label() ? "medium's measured one-GPU phase times (2x H200, 2026-11-27)"
                                           : "medium's seconds per voxel-view pair (its phases measured on 2x H200)";
  return c;
}

Trace ct_trace(const TraceRequest& r) {
  if (r.layout != "slabs")
    bad("ct has only the slabs layout (a whole image and residual per GPU, as the app holds them): simulate it "
        "under memcpy, proact, p2p_inline or infinite, not '" + r.layout + "'");
  if (r.gpus < 1) bad("gpus must be >= 1 (got " + std::to_string(r.gpus) + ")");
  if (r.sms < 1) bad("sms must be >= 1 (got " + std::to_string(r.sms) + ")");
  if (r.problem.iters < 0) bad("iters must be >= 0");
  const CtBenchSpec spec = apps::ct::parse_bench_spec(r.problem.graph);  // std::invalid_argument on a bad size
  const Geometry& g = spec.g;
  if (r.gpus > g.ny) bad("ct: " + std::to_string(r.gpus) + " GPUs for " + std::to_string(g.ny) + " y-planes");
  const CtPartition part(g, r.gpus, spec.subsets);
  const CtCompute cc = ct_compute_for(g);
  const std::vector<double> pairs = view_pairs(g);
  const int G = r.gpus;

  Trace t;
  t.app = r.app;
  t.problem = g.label() + "@subsets=" + std::to_string(spec.subsets);
  t.gpus = G;
  t.layout = r.layout;
  std::int64_t largest = 0;
  for (int m = 0; m < spec.subsets; ++m) largest = std::max(largest, part.subset_size(m));
  const std::int64_t image = g.voxels() * kFloat, res = largest * g.cells_per_view() * kFloat,
                     sino = g.sinogram_cells() * kFloat;
  const char* names[] = {"image0", "image1", "res0", "res1", "y", "w"};
  const std::int64_t bytes[] = {image, image, res, res, sino, sino};
  for (int q = 0; q < G; ++q)
    for (int b = 0; b < 6; ++b) {
      Allocation a;
      a.name = "gpu" + std::to_string(q) + "." + names[b];
      a.gpu = q;
      a.base = slab_base(q, b);
      a.bytes = static_cast<std::uint64_t>(bytes[b]);
      t.allocations.push_back(a);
    }

  const Builder build{r, g, part, cc, pairs, G};
  int cur = 0, parity = 0;  // the image and residual buffers alternate subset by subset
  for (int i = 0; i < r.problem.iters; ++i) {
    IterationTrace it;
    it.host_named = true;  // one host thread issues every GPU's calls (ct_multi_cuda.cpp)
    for (int m : apps::ct::subset_order(spec.subsets)) {
      const std::vector<std::int32_t> views = apps::ct::subset_views(g.views, spec.subsets, m);
      for (int q = 0; q < G; ++q) {  // phase 1 (a GPU with no view of the subset launches nothing)
        const Span share = part.view_share(m, q);
        if (share.size() == 0) continue;
        it.kernels.push_back(build.forward(q, views, share));
        it.kernels.push_back(build.residual(q, views, share, parity));
      }
      for (int q = 0; q < G; ++q) it.kernels.push_back(build.update(q, views, cur));  // phases 2-4
      cur = 1 - cur;
      parity = 1 - parity;
    }
    t.iterations.push_back(std::move(it));
  }
  return t;
}

}  // namespace gpsm::sim
