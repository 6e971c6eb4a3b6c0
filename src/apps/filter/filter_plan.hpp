#pragma once
// What the local-buffer paradigms do per rank and pass, as plain data (filter_runs_cuda.cpp issues
// it; the CPU tests run it over host buffers): the LocalPass of rank r (its buffers, and for
// p2p_inline where its edge rows go in the neighbours' buffers), and for memcpy the rows it copies
// to each neighbour after its pass.
#include <cstdint>
#include <vector>

#include "apps/filter/filter_pass.hpp"
#include "apps/filter/filter_slab.hpp"

namespace gpsm::apps::filter {

// Rank r's pass from its buffer `in` to its buffer `out`; out_of[q] is rank q's output buffer of
// the same pass (p2p_inline stores rank r's edge rows there; nullptr entries are not used
// otherwise). Buffers hold filter_slab's local rows.
LocalPass local_pass_of(const std::vector<FilterSlab>& s, int r, std::int64_t width, std::int64_t height,
                        const float* in, float* out, const std::vector<float*>& out_of, bool push);

// memcpy: after its pass, rank r sends image rows [first_row, first_row + rows) of its output to
// rank `to`, which keeps them as halo rows (local row s[to].local_row(first_row) onwards).
struct HaloSend {
  int to = -1;
  std::int64_t first_row = 0, rows = 0;
};
std::vector<HaloSend> halo_sends(const std::vector<FilterSlab>& s, int r);

}  // namespace gpsm::apps::filter
