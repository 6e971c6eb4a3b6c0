#pragma once
// What CG's two GPS runs (gps: Standard, cg_gps_run_cuda.cpp; gps_pipe: Pipelined,
// cg_gps_pipe_run_cuda.cpp) do alike on the host: a GPU's rows uploaded with global column
// indices (the GPS arrays hold the whole vector, so the SpMV gathers by global column), sliced or
// CSR as the plan says, with each chunk's column range; and the solve gathered from the GPUs.
// Each run's per-GPU state is its own struct; both name these buffers the same.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "apps/cg/cg_data.hpp"
#include "apps/cg/gps_layout.hpp"
#include "common/cuda_check.hpp"
#include "common/dev_buf.hpp"
#include "gpsm/gps/context.hpp"

namespace gpsm::apps::cg {

// Rank r's matrix into d.m with global columns (a sliced padding entry at the row's own global
// column) and its chunks' column ranges into d.col_range on device dev; returns the ranges (host
// copy).
template <class Rank>
std::vector<std::int32_t> upload_gps_matrix(Rank& d, const Plan& plan, int r, int dev) {
  const RankPlan& p = plan.rank[r];
  d.m.upload(dev, plan, p, global_columns(p), p.rows.begin);
  std::vector<std::int32_t> ranges = chunk_column_ranges(plan, r);
  d.col_range.assign(dev, ranges);
  return ranges;
}

// Whether rank r alone holds, in each of `arrays`, every page over chunk c's column range (ranges:
// chunk_column_ranges, which covers the chunk's own rows): the chunk then reads only rows its GPU
// stores and stores rows no other GPU holds, so it may run the plain code. The runtime answers
// (Array::reach); false while tracking.
template <class... Arrays>
bool chunk_interior(const std::vector<std::int32_t>& ranges, std::int64_t c, int r, const Arrays&... arrays) {
  const auto lo = static_cast<std::uint64_t>(ranges[2 * c]), hi = static_cast<std::uint64_t>(ranges[2 * c + 1]);
  return ((arrays.reach(lo, hi - lo + 1, r) == gps::Reach::sole) && ...);
}

// The solve from every GPU's d.hist, d.x and d.iters (gather_solve).
template <class Rank>
Solve gather_gps_solve(gps::Context& ctx, const Plan& plan, int iters, const std::vector<Rank>& ranks) {
  std::vector<const double*> hist, x;
  for (const Rank& d : ranks) {
    hist.push_back(d.hist.p);
    x.push_back(d.x.p);
  }
  return gather_solve(ctx, plan, iters, hist, x, [&](int r) {
    std::int32_t it = -1;
    GPSM_CUDA(cudaMemcpy(&it, ranks[r].iters.p, sizeof(it), cudaMemcpyDeviceToHost));
    return it;
  });
}

}  // namespace gpsm::apps::cg
